// Issue 29: a database written before the at-rest changes (payout details and payout events
// with the full IBAN / account number, card tokens in `cards.token_id` and in the stored
// answers, Idempotency-Key answers in clear) is rewritten by migrations 0070-0072 at the next
// start: afterwards neither the SQLite file and its WAL nor a pg_dump holds any of them, and
// everything still works (the token pays, repeats answer it, a scheduled payout dispatches
// with the full account number).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type Kysely, Migrator } from 'kysely';
import { createScheduler } from '../cli/background.js';
import { openBody } from '../idempotency/plugin.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { openAnswer } from '../payments/stored-answer.js';
import { topUp } from '../payouts/admin.js';
import { ACH, ACH_INVALID, BANK, BANK_SECRETS, payoutBody, SEPA_DE } from '../payouts/at-rest-fixtures.js';
import { secretsAtRest } from '../test/at-rest.js';
import { createPgDatabase, directPayment, ENGINE, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { migrationsFor } from './migrations.js';
import { migrationDb } from './store.js';

type Json = Record<string, any>;
const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
/** The last migration before issue 29's. */
const BEFORE = '0061_portal_search';

let database_url: string;
let drop: () => Promise<void>;
before(async () => {
  if (ENGINE === 'postgres') {
    const db = await createPgDatabase();
    database_url = db.url;
    drop = db.drop;
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-at-rest-'));
    database_url = `sqlite:${path.join(dir, 'tollgate.db')}`;
    drop = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
});
after(async () => {
  await drop();
});

/** Puts back what the code wrote before issue 29: the schema of 0061 and the clear values. */
async function toOldForm(gw: TestGateway, clear: Map<string, string>, tokens: Map<string, string>): Promise<void> {
  const db = migrationDb(gw.runtime.store) as Kysely<any>;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrationsFor({ keyring: gw.runtime.keyring, engine: ENGINE, rewritten: 0 }) } });
  const down = await migrator.migrateTo(BEFORE);
  if (down.error) throw down.error;
  const unmask = (text: string) => [...clear].reduce((t, [masked, full]) => t.split(masked).join(full), text);
  for (const r of await db.selectFrom('payouts').select(['transaction_id', 'details']).execute())
    await db
      .updateTable('payouts')
      .set({ details: unmask(r.details) })
      .where('transaction_id', '=', r.transaction_id)
      .execute();
  for (const r of await db.selectFrom('events').select(['event_id', 'payload']).where('event_type', 'like', 'payout.%').execute())
    await db
      .updateTable('events')
      .set({ payload: unmask(r.payload) })
      .where('event_id', '=', r.event_id)
      .execute();
  for (const r of await db.selectFrom('idempotency_keys').select(['id', 'response_body']).where('status', '=', 'done').execute())
    await db
      .updateTable('idempotency_keys')
      .set({ response_body: unmask(openBody(gw.runtime.keyring, r.response_body)) })
      .where('id', '=', r.id)
      .execute();
  for (const r of await db.selectFrom('payments').select(['transaction_id', 'answer', 'card_id']).execute()) {
    const answer = openAnswer(gw.runtime.keyring, r.answer);
    await db
      .updateTable('payments')
      .set({ answer: JSON.stringify(answer) })
      .where('transaction_id', '=', r.transaction_id)
      .execute();
    const token = tokens.get(r.transaction_id);
    if (token) await db.updateTable('cards').set({ token_id: token }).where('card_id', '=', r.card_id).execute();
  }
}

test('migrations 0070-0072 rewrite what was stored in clear; everything still works after', async () => {
  // 1. Today's code writes payouts, tokens and keyed answers.
  const gw1 = await testGateway({ start_ms: NOW, settings: { database_url } });
  const m: CreatedMerchant = await gw1.newMerchant();
  for (const currency of ['EUR', 'USD']) await topUp(gw1.runtime.store, { account_id: m.account_id, currency, amount: '1000.00' }, NOW);
  const payoutKey = { 'idempotency-key': `payout-${randomUUID()}` };
  const de = payoutBody(m, SEPA_DE);
  const sent = async (gw: TestGateway, url: string, body: Json, headers: Record<string, string> = {}) => {
    const res = await gw.post(url, body, { merchant: m, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res;
  };
  await sent(gw1, '/v1/payout', de, payoutKey);
  await sent(gw1, '/v1/payout', payoutBody(m, ACH));
  const scheduled = JSON.parse((await sent(gw1, '/v1/payout', payoutBody(m, ACH_INVALID, { payment_date: '2026-11-25' }))).body) as Json;
  const clear = new Map<string, string>([
    ['••••3000', BANK.de_iban],
    ['••••5500', BANK.ach_account],
    ['••••1116', BANK.invalid_account],
  ]);
  const cardKey = { 'idempotency-key': `card-${randomUUID()}` };
  const keyed = directPayment(m, { token_flag: '1', card: '5555555555554444', order_no: 'MIG-KEYED' });
  const plain = directPayment(m, { token_flag: '1', order_no: 'MIG-PLAIN' });
  const first = readXml(await sent(gw1, '/v1/authorise', keyed, cardKey));
  const second = readXml(await sent(gw1, '/v1/authorise', plain));
  const tokens = new Map([
    [first.transaction_id as string, first.token_id as string],
    [second.transaction_id as string, second.token_id as string],
  ]);
  const secrets = [...BANK_SECRETS.filter((s) => [...clear.values()].includes(s)), ...tokens.values()];

  // 2. The database as the code before issue 29 left it.
  await toOldForm(gw1, clear, tokens);
  assert.deepEqual(secretsAtRest(database_url, secrets).sort(), [...secrets].sort(), 'the old form holds every secret in clear');
  await gw1.close();

  // 3. The next start migrates.
  const gw2 = await testGateway({ start_ms: NOW, settings: { database_url } });
  try {
    assert.deepEqual(secretsAtRest(database_url, secrets), [], 'a secret is still stored in clear after the migration');

    const search = JSON.parse(
      (
        await sent(gw2, '/v1/retrievalPayout', {
          merchant_id: m.merchant_id,
          account_id: m.account_id,
          start_date: '20261124000000',
          end_date: '20261126000000',
        })
      ).body,
    ) as Json;
    const shown = (search.payouts as Json[]).map((p) => p.beneficiary.bank_details.iban ?? p.beneficiary.bank_details.account_number);
    assert.deepEqual(shown.sort(), ['••••1116', '••••3000', '••••5500']);
    const events = await gw2.runtime.store.db.selectFrom('events').select('payload').where('event_type', 'like', 'payout.%').execute();
    for (const e of events) for (const full of clear.values()) assert.ok(!e.payload.includes(full));

    // The token pays; the order and the Idempotency-Key replay it.
    const byToken = directPayment(m, { token_id: first.token_id, order_no: 'MIG-TOKEN' });
    for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code']) delete byToken[f];
    const paid = readXml(await sent(gw2, '/v1/authorise', byToken));
    assert.equal(paid.result_info, '0000:Success');
    assert.equal(paid.card, '555555******4444');
    assert.equal(readXml(await sent(gw2, '/v1/authorise', plain)).token_id, second.token_id);
    const replay = await sent(gw2, '/v1/authorise', keyed, cardKey);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(readXml(replay).token_id, first.token_id);
    const payoutReplay = await sent(gw2, '/v1/payout', de, payoutKey);
    assert.equal(payoutReplay.headers['idempotent-replayed'], 'true');

    // The scheduled payout dispatches with the full account number from the encrypted beneficiary.
    const scheduler = createScheduler(gw2.runtime);
    gw2.clock.advance(86_400_000);
    for (let i = 0; i < 10; i++) if ((await scheduler.runDue(gw2.clock.now, 100)).claimed === 0) break;
    const row = await gw2.runtime.store.db
      .selectFrom('payouts')
      .select(['status', 'failure_type'])
      .where('transaction_id', '=', scheduled.transaction_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'FAILED', failure_type: 'INVALID_ACCOUNT' });
  } finally {
    await gw2.close();
  }
});
