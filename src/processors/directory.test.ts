// The processor directory's reloads overlap (the 2 s poll of a serving process, and an
// explicit reload after a change): a reading older than one already applied must not undo
// it. CI saw it: the poll's reading, started before `processor set` committed and ending
// after the explicit reload, left a live account without its processor (1016) for a moment.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { ProcessorConfigRow } from '../db/tables/processors.js';
import { ProcessorDirectory } from './directory.js';
import { ScriptedProcessor } from './testing.js';

const row = (processor_id: string, updated_at: number): ProcessorConfigRow => ({
  processor_id,
  account_id: 'acc_live',
  connector: 'stripe',
  base_url: '',
  priority: 1,
  currencies: '',
  brands: '',
  credentials_enc: 'sealed',
  credentials_hint: '{}',
  created_at: updated_at,
  updated_at,
});

test('a reading that ends after a newer one was applied is dropped', async () => {
  // Each reload's read answers when the test says so, with the rows of that moment.
  const reads: Array<(rows: ProcessorConfigRow[]) => void> = [];
  const query = { selectAll: () => query, orderBy: () => query, execute: () => new Promise<ProcessorConfigRow[]>((r) => reads.push(r)) };
  const store = { db: { selectFrom: () => query } } as unknown as Store;
  const keyring = { decrypt: () => '{}' } as unknown as Keyring;
  const dir = new ProcessorDirectory(store, keyring, new ScriptedProcessor(), () => new ScriptedProcessor());
  const account = { account_id: 'acc_live', mode: 'live' as const };

  const poll = dir.reload(); // started before the change
  const explicit = dir.reload(); // after the change
  reads[1]?.([row('prc_new', 2)]);
  await explicit;
  assert.equal(dir.candidates(account).length, 1, 'the change is read');
  reads[0]?.([]);
  await poll;
  assert.equal(dir.candidates(account).length, 1, 'the older reading did not undo it');
  assert.ok(dir.byProcessorId('prc_new'));

  // A later reading applies as usual (the processor removed).
  const later = dir.reload();
  reads[2]?.([]);
  await later;
  assert.equal(dir.candidates(account).length, 0);
});
