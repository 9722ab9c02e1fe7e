// Issue 29: a payout's full IBAN / account number is kept only encrypted (the saved
// beneficiary, under the master keyring). Answers, replays, retrievals and `payout.*`
// events carry them masked to the last four; the connector still gets the full details at
// dispatch; and neither the SQLite file and its WAL nor a pg_dump holds them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import type { CreatedMerchant } from '../merchants/service.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { secretsAtRest } from '../test/at-rest.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { topUp } from './admin.js';
import { ACH, ACH_INVALID, BANK_SECRETS, payoutBody, SEPA_DE, SEPA_FR } from './at-rest-fixtures.js';

type Json = Record<string, any>;

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);

let gw: TestGateway;
let scheduler: Scheduler;
let m: CreatedMerchant;
before(async () => {
  gw = await testGateway({ start_ms: NOW });
  scheduler = createScheduler(gw.runtime);
  m = await gw.newMerchant();
  for (const currency of ['EUR', 'USD']) await topUp(gw.runtime.store, { account_id: m.account_id, currency, amount: '1000.00' }, NOW);
});
after(async () => {
  await gw.close();
});

async function post(url: string, body: Json, headers: Record<string, string> = {}): Promise<Json> {
  const res = await gw.post(url, body, { merchant: m, headers });
  assert.equal(res.statusCode, 200, res.body);
  return JSON.parse(res.body) as Json;
}

/** Every iban / account_number anywhere in a record, events included. */
function bankNumbers(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) bankNumbers(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'iban' || k === 'account_number') && typeof v === 'string') out.push(v);
      else bankNumbers(v, out);
    }
  return out;
}

test('payout answers, replays, retrievals and events carry the bank account masked; storage holds it only encrypted', async () => {
  const answers: Json[] = [];
  const de = payoutBody(m, SEPA_DE);
  answers.push(await post('/v1/payout', de, { 'idempotency-key': `at-rest-${randomUUID()}` }));
  answers.push(await post('/v1/payout', payoutBody(m, SEPA_FR)));
  answers.push(await post('/v1/payout', payoutBody(m, ACH)));
  // Due tomorrow: the dispatch job reads the full number from the encrypted beneficiary.
  const scheduled = await post('/v1/payout', payoutBody(m, ACH_INVALID, { payment_date: '2026-11-25' }));
  answers.push(scheduled);
  assert.equal(scheduled.status, 'SCHEDULED');
  // A repeat of the same request_id replays the stored payout.
  answers.push(await post('/v1/payout', de));

  assert.equal(answers[0]?.beneficiary.bank_details.iban, '••••3000');
  assert.equal(answers[1]?.beneficiary.bank_details.iban, '••••2606');
  assert.equal(answers[2]?.beneficiary.bank_details.account_number, '••••5500');
  assert.equal(answers[3]?.beneficiary.bank_details.account_number, '••••1116');
  assert.equal(answers[4]?.beneficiary.bank_details.iban, '••••3000');
  assert.equal(answers[0]?.beneficiary.bank_details.local_clearing_system, 'SEPA');
  assert.equal(answers[2]?.status, 'COMPLETED');

  gw.clock.advance(86_400_000);
  for (let i = 0; i < 10; i++) if ((await scheduler.runDue(gw.clock.now, 100)).claimed === 0) break;
  const found = await post('/v1/retrievalPayout', {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    start_date: '20261124000000',
    end_date: '20261126000000',
  });
  const dispatched = (found.payouts as Json[]).find((p) => p.transaction_id === scheduled.transaction_id);
  assert.equal(dispatched?.status, 'FAILED', 'the sandbox saw the full account number at dispatch');
  assert.equal(dispatched?.failure_type, 'INVALID_ACCOUNT');

  const events = await gw.runtime.store.db.selectFrom('events').select('payload').where('account_id', '=', m.account_id).execute();
  assert.ok(events.length >= 4);
  const shown = [...bankNumbers(answers), ...bankNumbers(found), ...bankNumbers(events.map((e) => JSON.parse(e.payload)))];
  assert.ok(shown.length >= 12);
  for (const s of shown) assert.match(s, /^••••[0-9A-Z]{4}$/, `"${s}" is shown unmasked`);

  assert.deepEqual(secretsAtRest(gw.database_url, BANK_SECRETS), [], 'the storage holds a full bank account number');
});
