// Routing between an account's processors (docs/contract.md §21), on SQLite and PostgreSQL:
// chosen by currency, brand and priority; a processor that certainly did not take the call
// (connection refused, circuit open) hands the payment to the next; a decline, or a call that
// may have reached the processor, is final; the circuit opens after 5 unanswered calls in a
// row; captures and refunds go to the processor that took the payment; the calls are on
// /metrics. Each configured processor is a scripted one behind the real directory and guard.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, readXml, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { captureBatch, item, refundBatch } from '../test/lifecycle.js';
import { listProcessors, removeProcessor, setProcessor } from './config.js';
import { ProcessorDirectory } from './directory.js';
import { CIRCUIT_FAILURES } from './guard.js';
import { ScriptedProcessor } from './testing.js';

type Connector = 'sandbox' | 'stripe' | 'adyen';
let gw: TestGateway;
let live: CreatedMerchant;
/** The scripted processor behind each connector, made anew for each test. */
let by: Record<Connector, ScriptedProcessor>;
let stamp = Date.now();

const notSent = async () => ({ kind: 'unknown' as const, reason: 'connection refused: nothing was sent', not_sent: true });
const CREDENTIALS: Record<Connector, string[]> = {
  sandbox: [],
  stripe: ['secret_key=sk_test_routing_0001', 'webhook_secret=whsec_routing_0001'],
  adyen: ['api_key=AQE_routing_0001', 'merchant_account=RoutingECOM', 'hmac_key=00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF'],
};

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 500 } });
  live = await gw.newMerchant({ name: 'Routed', mode: 'live', capture_method: 'manual' });
});
beforeEach(async () => {
  const { store, keyring, deps } = gw.runtime;
  for (const p of await listProcessors(store, live.account_id)) await removeProcessor(store, p.processor_id);
  by = { sandbox: new ScriptedProcessor(), stripe: new ScriptedProcessor(), adyen: new ScriptedProcessor() };
  deps.processors = new ProcessorDirectory(store, keyring, by.sandbox, (row) => by[row.connector as Connector], deps.metrics);
});
after(async () => {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});

/** Sets the live account's processor of `connector`; returns its id. */
async function route(connector: Connector, o: { priority: number; currencies?: string; brands?: string }): Promise<string> {
  const { store, keyring, deps } = gw.runtime;
  const row = await setProcessor(
    store,
    keyring,
    { account_id: live.account_id, connector, base_url: connector === 'sandbox' ? 'http://127.0.0.1:9' : '', credentials: CREDENTIALS[connector], ...o },
    ++stamp,
  );
  await deps.processors.reload();
  return row.processor_id;
}

async function pay(overrides: Record<string, unknown> = {}) {
  const body = directPayment(live, overrides);
  const res = await gw.post('/v1/authorise', body, { merchant: live });
  assert.equal(res.statusCode, 200, res.body);
  const x = readXml(res);
  const transaction_id = String(x.transaction_id);
  return {
    result_info: String(x.result_info),
    transaction_id,
    paid: { transaction_id, order_no: String(body.order_no), currency: String(body.currency), amount: String(body.amount) },
  };
}

const attemptsOf = (transaction_id: string) =>
  gw.runtime.store.db
    .selectFrom('processor_attempts')
    .select(['operation', 'status', 'processor_id', 'last_error', 'claim_key'])
    .where('object_id', '=', transaction_id)
    .orderBy('created_at')
    .orderBy('attempt_id')
    .execute();

describe('routing (docs/contract.md §21)', () => {
  test('by priority, currency and brand: the first processor that takes the payment', async () => {
    await route('stripe', { priority: 1, currencies: 'EUR', brands: 'mastercard' });
    await route('adyen', { priority: 2 });
    await route('sandbox', { priority: 3, currencies: 'EUR' });
    const usd = await pay({ currency: 'USD' });
    const eurVisa = await pay({ currency: 'EUR' });
    const eurMastercard = await pay({ currency: 'EUR', card: '5555555555554444' });
    for (const x of [usd, eurVisa, eurMastercard]) assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    assert.deepEqual(
      by.adyen.calls.map((c) => c.input.transaction_id),
      [usd.transaction_id, eurVisa.transaction_id],
    );
    assert.deepEqual(
      by.stripe.calls.map((c) => c.input.transaction_id),
      [eurMastercard.transaction_id],
    );
    assert.equal(by.sandbox.calls.length, 0);
  });

  test('a processor that refused the connection hands the payment to the next; capture and refund go to the one that took it', async () => {
    const adyen = await route('adyen', { priority: 1 });
    const stripe = await route('stripe', { priority: 2 });
    by.adyen.answer = notSent;
    const x = await pay();
    assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
    assert.deepEqual([by.adyen.calls.length, by.stripe.calls.length], [1, 1]);
    // One clock tick: the two attempts are told apart by processor, not by time.
    const rows = await attemptsOf(x.transaction_id);
    const first = rows.find((r) => r.processor_id === adyen);
    const second = rows.find((r) => r.processor_id === stripe);
    assert.equal(rows.length, 2);
    assert.deepEqual([first?.status, first?.processor_id, first?.claim_key], ['declined', adyen, null]);
    assert.match(String(first?.last_error), /^not sent \(connection refused/);
    assert.deepEqual([second?.status, second?.processor_id], ['approved', stripe]);
    assert.match(String(second?.claim_key), /^order:/, 'the order’s claim went with the payment');
    // The same order again is a replay: nothing reaches either processor.
    const again = await gw.post('/v1/authorise', directPayment(live, { order_no: x.paid.order_no }), { merchant: live });
    assert.match(readXml(again).result_info, /^(0000|1011)/);
    assert.deepEqual([by.adyen.calls.length, by.stripe.calls.length], [1, 1]);

    const captured = await captureBatch(gw, [item(x.paid)], live);
    assert.equal(captured.capture_orders?.[0]?.capture_status, '1', JSON.stringify(captured));
    const refunded = await refundBatch(gw, [item(x.paid, { refund_amount: '4.00' })], live);
    assert.equal(refunded.refund_orders?.[0]?.refund_status, '1', JSON.stringify(refunded));
    assert.deepEqual(
      by.stripe.operations.map((o) => o.operation),
      ['capture', 'refund'],
    );
    assert.deepEqual(by.adyen.operations, []);
  });

  test('a decline is final, and so is a call that may have reached the processor: the next is not tried', async () => {
    await route('adyen', { priority: 1 });
    await route('stripe', { priority: 2 });
    by.adyen.answer = async () => ({ kind: 'declined', code: '1002', reference: 'PSP-no' });
    const declined = await pay();
    assert.match(declined.result_info, /^1002/);
    by.adyen.answer = async () => ({ kind: 'unknown', reason: 'connection reset after sending' });
    const open = await pay();
    assert.equal(open.result_info, '0006:Pending at the processor');
    assert.equal(by.stripe.calls.length, 0);
  });

  test('sent nowhere (the only processor refused the connection): 1007 at once, nothing held, safe to retry', async () => {
    await route('adyen', { priority: 1 });
    by.adyen.answer = notSent;
    const x = await pay();
    assert.match(x.result_info, /^1007/);
    const p = await gw.runtime.store.db
      .selectFrom('payments')
      .select(['status', 'authorised_minor'])
      .where('transaction_id', '=', x.transaction_id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([p.status, Number(p.authorised_minor)], ['declined', 0]);
  });

  test(`after ${CIRCUIT_FAILURES} unanswered calls in a row the circuit opens: the processor is not called and payments go to the next at once`, async () => {
    const adyen = await route('adyen', { priority: 1 });
    await route('stripe', { priority: 2 });
    by.adyen.answer = async () => ({ kind: 'unknown', reason: 'the processor answered 502' });
    for (let i = 0; i < CIRCUIT_FAILURES; i++) assert.equal((await pay()).result_info, '0006:Pending at the processor');
    const routed = await pay();
    assert.equal(routed.result_info, '0000:Success');
    assert.deepEqual([by.adyen.calls.length, by.stripe.calls.length], [CIRCUIT_FAILURES, 1]);
    const first = (await attemptsOf(routed.transaction_id)).find((r) => r.processor_id === adyen);
    assert.match(String(first?.last_error), /circuit open/);
    const metrics = await gw.runtime.deps.metrics.registry.metrics();
    assert.match(metrics, new RegExp(`tollgate_processor_circuit_open\\{connector="scripted",processor_id="${adyen}"\\} 1`));
    assert.match(
      metrics,
      new RegExp(
        `tollgate_processor_call_duration_seconds_count\\{connector="scripted",processor_id="${adyen}",operation="authorise",outcome="circuit_open"\\} 1`,
      ),
    );
    assert.match(
      metrics,
      new RegExp(
        `tollgate_processor_call_duration_seconds_count\\{connector="scripted",processor_id="${adyen}",operation="authorise",outcome="unknown"\\} ${CIRCUIT_FAILURES}`,
      ),
    );
    // The operator's view, from the attempts (every process's): `processor status`.
    useDatabase(gw.database_url, TEST_MASTER_KEY);
    const status = await runCli('processor', 'status', '--account', live.account_id, '--json');
    assert.equal(status.code, 0, status.stderr);
    const shown = (JSON.parse(status.stdout) as { processors: Array<{ processor_id: string; last_24h: Record<string, unknown> }> }).processors;
    assert.deepEqual(shown.find((p) => p.processor_id === adyen)?.last_24h, {
      calls: CIRCUIT_FAILURES + 1,
      approval_rate: null,
      unanswered: CIRCUIT_FAILURES,
      not_sent: 1,
      p50_ms: null,
      p99_ms: null,
    });
    assert.deepEqual(
      shown.filter((p) => p.processor_id !== adyen).map((p) => [p.last_24h.calls, p.last_24h.approval_rate]),
      [[1, 100]],
    );
  });

  test('a processor without status queries: the sweeper’s questions, answered unknown without a call, neither open its circuit nor count as answers', async () => {
    by.adyen.status_queries = false;
    const adyen = await route('adyen', { priority: 1 });
    await route('stripe', { priority: 2 });
    const guarded = gw.runtime.deps.processors.byProcessorId(adyen)?.processor;
    assert.ok(guarded && guarded.status_queries === false);
    const call = { attempt_id: 'att_status_only', deadline_at: Date.now() + 1_000, signal: new AbortController().signal };
    for (let i = 0; i < 2 * CIRCUIT_FAILURES; i++) {
      assert.equal((await guarded.authoriseStatus({ transaction_id: 'x' }, call)).kind, 'unknown');
      assert.equal((await guarded.operationStatus({ operation: 'capture', transaction_id: 'x' }, call)).kind, 'unknown');
    }
    assert.equal((await pay()).result_info, '0000:Success', 'the circuit is closed: the payment went to Adyen');
    assert.deepEqual([by.adyen.calls.length, by.stripe.calls.length], [1, 0]);
    // Unanswered calls, with status questions between them: still ${CIRCUIT_FAILURES} in a row.
    by.adyen.answer = async () => ({ kind: 'unknown', reason: 'the processor answered 502' });
    for (let i = 0; i < CIRCUIT_FAILURES; i++) {
      assert.equal((await pay()).result_info, '0006:Pending at the processor');
      await guarded.authoriseStatus({ transaction_id: 'x' }, call);
    }
    assert.equal((await pay()).result_info, '0000:Success');
    assert.deepEqual([by.adyen.calls.length, by.stripe.calls.length], [1 + CIRCUIT_FAILURES, 1], 'the circuit opened: routed to Stripe');
  });
});
