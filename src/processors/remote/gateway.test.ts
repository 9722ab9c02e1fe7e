// End to end (issue 31 item 5): a test gateway whose account is pointed at a remote sandbox
// started here (`processor set --connector sandbox --base-url …`), through real HTTP both
// ways: authorisations approved and declined by the test cards, one whose answer never comes
// (`hang-after`: 0006, then the sweeper settles it approved because the sandbox remembers
// the attempt), a capture the sandbox confirms later by its signed webhook to the gateway's
// `/hooks/sandbox/<processor_id>` (a duplicated delivery changing nothing twice), a refund.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sweepAttempts } from '../../attempts/sweeper.js';
import { verifyLedger } from '../../ledger/verify.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { captureBatch, item, orderOf, refundBatch } from '../../test/lifecycle.js';
import { setProcessor } from '../config.js';
import { type RemoteSandbox, startRemoteSandbox } from './server.js';

const API_KEY = 'sbx_e2e_key_1';
const SECRET = 'whsec_e2e_secret_1';
let gw: TestGateway;
let sandbox: RemoteSandbox;
let processor_id: string;

before(async () => {
  // A deadline the sandbox meets easily on a loaded machine; `hang-after` waits it out.
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  // The gateway listens on a real port for the sandbox's webhooks.
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const { store, keyring, deps } = gw.runtime;
  // The processor id is known once set; the webhook address names it, so the sandbox starts after.
  const row = await setProcessor(
    store,
    keyring,
    {
      account_id: gw.merchant.account_id,
      connector: 'sandbox',
      base_url: 'http://127.0.0.1:9',
      credentials: [`api_key=${API_KEY}`, `webhook_secret=${SECRET}`],
    },
    Date.now(),
  );
  processor_id = row.processor_id;
  sandbox = await startRemoteSandbox({
    api_key: API_KEY,
    webhook: { url: `http://127.0.0.1:${port}/hooks/sandbox/${processor_id}`, secret: SECRET },
    confirm_by_webhook: ['capture'],
    confirm_delay_ms: 100,
  });
  await setProcessor(store, keyring, { account_id: gw.merchant.account_id, connector: 'sandbox', base_url: sandbox.url, credentials: [] }, Date.now() + 1);
  await deps.processors.reload();
});
after(async () => {
  await sandbox?.close();
  if (gw) assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw?.close();
});

/** The direct answer's fields these tests read, with what `item()` needs for a capture or refund. */
interface Answer {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
  order_status: string;
  result_info: string;
}

async function pay(overrides: Record<string, unknown> = {}): Promise<Answer> {
  const body = directPayment(gw.merchant, overrides);
  const res = await gw.post('/v1/authorise', body);
  assert.equal(res.statusCode, 200, res.body);
  return { ...(readXml(res) as Answer), order_no: body.order_no as string, currency: body.currency as string, amount: body.amount as string };
}

const attemptOf = (object_id: string, operation: 'authorise' | 'capture') =>
  gw.runtime.store.db
    .selectFrom('processor_attempts')
    .selectAll()
    .where('object_id', '=', object_id)
    .where('operation', '=', operation)
    .executeTakeFirstOrThrow();
const events = async (object_id: string, type: string) =>
  (await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', object_id).where('event_type', '=', type).execute()).length;
const until = async (ok: () => Promise<boolean>, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await ok()) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return ok();
};

describe('a gateway on the remote sandbox', () => {
  test('authorise: approved and declined by the test cards, the attempt carrying the sandbox’s reference', async () => {
    const acted = sandbox.stats().acted;
    const ok = await pay();
    assert.equal(ok.result_info, '0000:Success');
    const a = await attemptOf(ok.transaction_id, 'authorise');
    assert.equal(a.status, 'approved');
    assert.match(a.reference, /^SBX[0-9A-F]{12}$/);
    const no = await pay({ card: '4000000000000002' });
    assert.equal(no.result_info, '1002:Card declined');
    assert.equal((await attemptOf(no.transaction_id, 'authorise')).result_code, '1002');
    assert.equal(sandbox.stats().acted - acted, 2, 'two calls reached the sandbox');
  });

  test('hang-after (and its webhook lost): the merchant gets 0006; the sweeper asks the sandbox by attempt id and settles it approved', async () => {
    // Its webhook lost too, so only the sweeper's question can settle it.
    sandbox.queueFaults('authorise', ['hang-after', 'drop-webhooks']);
    const x = await pay();
    assert.deepEqual([x.order_status, x.result_info], ['4', '0006:Pending at the processor']);
    const a = await attemptOf(x.transaction_id, 'authorise');
    assert.equal(a.status, 'unknown');
    assert.match(a.last_error, /no answer within/);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '1100');
    const r = await sweepAttempts(gw.runtime.deps, gw.clock.now + 60_000);
    assert.ok(r.settled >= 1, JSON.stringify(r));
    const settled = await attemptOf(x.transaction_id, 'authorise');
    assert.equal(settled.status, 'approved');
    assert.match(settled.reference, /^SBX[0-9A-F]{12}$/, 'the sandbox’s reference, learnt from its status answer');
    assert.notEqual((await orderOf(gw, x.transaction_id)).payment_status, '1100');
    assert.equal(await events(x.transaction_id, 'payment.succeeded'), 1);
  });

  test('a capture confirmed later by the sandbox’s signed webhook, delivered twice: captured once; then a refund', async () => {
    const p = await pay({ capture_method: 'manual' });
    assert.equal(p.result_info, '0000:Success');
    sandbox.queueFaults('capture', ['dup-webhooks']);
    const cap = (await captureBatch(gw, [item(p)])).capture_orders[0];
    assert.equal(cap.capture_status, '2', 'pending at the processor until its webhook');
    const captured = await until(async () => (await orderOf(gw, p.transaction_id)).payment_status === '3000');
    assert.ok(captured, 'the webhook settled the capture');
    const kept = async () =>
      gw.runtime.store.db.selectFrom('processor_notifications').select(['notification_id', 'result', 'operation']).where('operation', '=', 'capture').execute();
    const hooks = () => sandbox.stats().webhooks ?? { delivered: -1, queued: 0 };
    assert.ok(await until(async () => hooks().delivered === hooks().queued + 1), 'every delivery made, the duplicate too');
    const rows = await kept();
    assert.equal(rows.length, 1, 'the duplicate is the same notification, kept once');
    assert.equal(rows[0]?.result, 'settled');
    assert.equal(await events(p.transaction_id, 'payment.captured'), 1, 'captured once');
    assert.equal((await attemptOf(p.transaction_id, 'capture')).status, 'approved');

    const refunded = (await refundBatch(gw, [{ ...item(p), refund_amount: '4.00', refund_reason: 'e2e' }])).refund_orders[0];
    assert.equal(refunded.refund_status, '1', JSON.stringify(refunded));
    assert.equal((await orderOf(gw, p.transaction_id)).refunded_amount, '4.00');
    const refundAttempt = await gw.runtime.store.db.selectFrom('processor_attempts').selectAll().where('operation', '=', 'refund').executeTakeFirstOrThrow();
    assert.equal(refundAttempt.status, 'approved');
  });

  test('a forged webhook is refused and changes nothing', async () => {
    const port = (gw.app.server.address() as AddressInfo).port;
    const raw = JSON.stringify({ notifications: [{ id: 'ntf_forged', attempt_id: 'att_x', operation: 'capture', outcome: { status: 'approved' } }] });
    const res = await fetch(`http://127.0.0.1:${port}/hooks/sandbox/${processor_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'sandbox-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
      body: raw,
    });
    assert.equal(res.status, 401);
    const found = await gw.runtime.store.db.selectFrom('processor_notifications').selectAll().where('notification_id', '=', 'ntf_forged').execute();
    assert.deepEqual(found, []);
  });
});
