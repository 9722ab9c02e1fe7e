// Processor webhooks (docs/contract.md §20): `POST /hooks/<connector>/<processor_id>` verified
// by the connector, each outcome settled as the sweeper would, duplicates and unknown
// references acknowledged and changing nothing twice, a bad signature refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyLedger } from '../ledger/verify.js';
import { setProcessor } from '../processors/config.js';
import { ProcessorDirectory } from '../processors/directory.js';
import { ScriptedProcessor, signTestWebhook } from '../processors/testing.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { captureBatch, item, orderOf, pay } from '../test/lifecycle.js';

let gw: TestGateway;
let scripted: ScriptedProcessor;
let processor_id: string;
before(async () => {
  gw = await testGateway();
  const { deps, store, keyring } = gw.runtime;
  scripted = new ScriptedProcessor();
  const row = await setProcessor(
    store,
    keyring,
    { account_id: gw.merchant.account_id, connector: 'sandbox', credentials: ['webhook_secret=whsec_test'] },
    Date.now(),
  );
  processor_id = row.processor_id;
  deps.processors = new ProcessorDirectory(store, keyring, scripted, () => scripted);
  await deps.processors.reload();
});
after(async () => {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});

function hook(notifications: unknown[], opts: { secret?: string; path?: string } = {}) {
  const raw = JSON.stringify({ notifications });
  return gw.app.inject({
    method: 'POST',
    url: opts.path ?? `/hooks/sandbox/${processor_id}`,
    headers: { 'content-type': 'application/json', 'x-test-signature': signTestWebhook(opts.secret ?? 'whsec_test', raw) },
    payload: raw,
  });
}

const capturedEvents = async (transaction_id: string) =>
  (
    await gw.runtime.store.db
      .selectFrom('events')
      .select('event_type')
      .where('object_id', '=', transaction_id)
      .where('event_type', '=', 'payment.captured')
      .execute()
  ).length;

describe('processor webhooks', () => {
  test('a capture confirmed later by webhook: bad signature refused, then settled once, a duplicate changes nothing', async () => {
    const p = await pay(gw, { manual: true });
    scripted.operation = async () => ({ kind: 'pending', reference: 'PSP-cap' });
    assert.equal((await captureBatch(gw, [item(p)])).capture_orders[0].capture_status, '2');
    const [a] = await gw.runtime.store.db
      .selectFrom('processor_attempts')
      .selectAll()
      .where('object_id', '=', p.transaction_id)
      .where('operation', '=', 'capture')
      .execute();
    assert.ok(a);
    const note = { id: 'n-1', operation: 'capture', attempt_id: a.attempt_id, outcome: { kind: 'approved', reference: 'PSP-cap' }, occurred_at: Date.now() };

    const forged = await hook([note], { secret: 'not-the-secret' });
    assert.equal(forged.statusCode, 401);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '2000', 'a forged webhook changes nothing');

    const first = await hook([note]);
    assert.deepEqual([first.statusCode, first.body], [200, '[accepted]']);
    assert.equal((await orderOf(gw, p.transaction_id)).payment_status, '3000');
    const again = await hook([note, { ...note, id: 'n-2' }]);
    assert.equal(again.statusCode, 200);
    assert.equal(await capturedEvents(p.transaction_id), 1, 'captured once');
    const kept = await gw.runtime.store.db
      .selectFrom('processor_notifications')
      .select(['notification_id', 'result'])
      .where('processor_id', '=', processor_id)
      .orderBy('notification_id')
      .execute();
    assert.deepEqual(
      kept.map((k) => [k.notification_id, k.result]),
      [
        ['n-1', 'settled'],
        ['n-2', 'stale'],
      ],
    );
  });

  test('one notification delivered twice at once: the capture settles once and the kept record says settled', async () => {
    const p = await pay(gw, { manual: true });
    scripted.operation = async () => ({ kind: 'pending', reference: 'PSP-cap2' });
    assert.equal((await captureBatch(gw, [item(p)])).capture_orders[0].capture_status, '2');
    const a = await gw.runtime.store.db
      .selectFrom('processor_attempts')
      .selectAll()
      .where('object_id', '=', p.transaction_id)
      .where('operation', '=', 'capture')
      .executeTakeFirstOrThrow();
    const note = {
      id: 'n-twice',
      operation: 'capture',
      attempt_id: a.attempt_id,
      outcome: { kind: 'approved', reference: 'PSP-cap2' },
      occurred_at: Date.now(),
    };
    const answers = await Promise.all([hook([note]), hook([note]), hook([note])]);
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [200, 200, 200],
    );
    assert.equal(await capturedEvents(p.transaction_id), 1, 'captured once');
    const kept = await gw.runtime.store.db.selectFrom('processor_notifications').select('result').where('notification_id', '=', 'n-twice').execute();
    assert.deepEqual(
      kept.map((k) => k.result),
      ['settled'],
      'the delivery that moved the capture is the one on record, whichever finished first',
    );
  });

  test('a notification naming no attempt is acknowledged and kept as unmatched; another processor’s path is 404', async () => {
    const r = await hook([{ id: 'n-x', operation: 'refund', attempt_id: 'att_unknown', outcome: { kind: 'approved', reference: 'R' }, occurred_at: 0 }]);
    assert.equal(r.statusCode, 200);
    const row = await gw.runtime.store.db.selectFrom('processor_notifications').selectAll().where('notification_id', '=', 'n-x').executeTakeFirstOrThrow();
    assert.equal(row.result, 'unmatched');
    assert.equal((await hook([], { path: `/hooks/adyen/${processor_id}` })).statusCode, 404);
    assert.equal((await hook([], { path: '/hooks/sandbox/prc_nothing' })).statusCode, 404);
  });
});
