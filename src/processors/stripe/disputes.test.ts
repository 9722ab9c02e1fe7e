// Stripe's charge.dispute.* events end to end (issue 34 item 2): a live merchant on the Stripe
// mock pays, then signed dispute events are delivered to /hooks/stripe/<processor_id>. created
// opens the dispute (an inquiry for `warning_needs_response`), closed decides it, a repeat
// changes nothing, an event that comes before created opens it all the same; a dispute of a
// PaymentIntent Tollgate does not know is kept and acknowledged. Both engines.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { accountBalances } from '../../ledger/balances.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { setProcessor } from '../config.js';
import { type MockEvent, type MockStripe, type MockStripeOptions, startMockStripe } from './mock.js';

const SECRET_KEY = 'sk_test_disputes_51HxYzSecretKey0002';
const WEBHOOK_SECRET = 'whsec_disputes_stripe_0002';
let gw: TestGateway;
let mock: MockStripe;
const mockOptions: MockStripeOptions = { secret_key: SECRET_KEY, hold_webhooks: true };
let live: CreatedMerchant;
let processor_id: string;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  mock = await startMockStripe(mockOptions);
  live = await gw.newMerchant({ mode: 'live', capture_method: 'automatic' });
  const { store, keyring, deps } = gw.runtime;
  const row = await setProcessor(
    store,
    keyring,
    { account_id: live.account_id, connector: 'stripe', base_url: mock.url, credentials: [`secret_key=${SECRET_KEY}`, `webhook_secret=${WEBHOOK_SECRET}`] },
    Date.now(),
  );
  processor_id = row.processor_id;
  mockOptions.webhook = { url: `http://127.0.0.1:${port}/hooks/stripe/${processor_id}`, secret: WEBHOOK_SECRET };
  await deps.processors.reload();
});
after(async () => {
  await mock?.idle();
  await mock?.close();
  await gw?.close();
});

let serial = 0;
function freshCard(): string {
  const body = `4111${String(Date.now() % 1e6).padStart(6, '0')}${String(++serial).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

const db = () => gw.runtime.store.db;

/** A captured payment through Stripe: its transaction id, PaymentIntent, amount and currency. */
async function paid() {
  const body = directPayment(live, { card: freshCard() });
  const res = await gw.post('/v1/authorise', body, { merchant: live });
  assert.equal(res.statusCode, 200, res.body);
  const x = readXml(res) as { transaction_id: string };
  const attempt = await db()
    .selectFrom('processor_attempts')
    .selectAll()
    .where('object_id', '=', x.transaction_id)
    .where('operation', '=', 'authorise')
    .executeTakeFirstOrThrow();
  assert.match(attempt.reference, /^pi_/);
  const p = await db().selectFrom('payments').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
  assert.ok(Number(p.captured_minor) > 0, 'captured');
  return { transaction_id: x.transaction_id, pi: attempt.reference, amount: Number(p.captured_minor), currency: p.currency };
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

function disputeEvent(
  type: string,
  o: { dp: string; pi: string; amount: number; currency: string; status: string; reason?: string; due_by?: number; created?: number },
): MockEvent {
  return {
    id: newId('evt'),
    type,
    created: o.created ?? Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: o.dp,
        object: 'dispute',
        amount: o.amount,
        currency: o.currency.toLowerCase(),
        charge: newId('ch'),
        payment_intent: o.pi,
        reason: o.reason ?? 'fraudulent',
        status: o.status,
        evidence_details: { due_by: o.due_by ?? null, has_evidence: false, past_due: false, submission_count: 0 },
        is_charge_refundable: false,
        livemode: false,
        metadata: {},
        created: Math.floor(Date.now() / 1000),
      },
    },
  };
}

const disputeOf = (tid: string) => db().selectFrom('disputes').selectAll().where('transaction_id', '=', tid).executeTakeFirst();
const available = async (currency: string) => Number((await accountBalances(db(), live.account_id)).find((b) => b.currency === currency)?.available_minor ?? 0);

async function ledgerOk(): Promise<void> {
  assert.deepEqual((await verifyLedger(db())).problems, []);
}

describe('Stripe charge.dispute.* events', () => {
  test('charge.dispute.created (needs_response) opens a chargeback with the debit; a repeat changes nothing; charge.dispute.closed won gives it back', async () => {
    const p = await paid();
    const before = await available(p.currency);
    const dp = newId('dp');
    const due = Math.floor(Date.now() / 1000) + 7 * 86400;
    const created = disputeEvent('charge.dispute.created', { ...p, dp, status: 'needs_response', reason: 'product_not_received', due_by: due });
    assert.equal(await mock.deliver(created), 200);
    assert.equal(await mock.deliver(created), 200);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.funds_withdrawn', { ...p, dp, status: 'needs_response' })), 200);
    const d = await disputeOf(p.transaction_id);
    assert.ok(d);
    assert.deepEqual(
      [d.status, d.kind, d.reason, d.connector, d.processor_ref, Number(d.amount_minor), Number(d.evidence_due_by)],
      ['needs_response', 'chargeback', 'product_not_received', 'stripe', dp, p.amount, due * 1000],
    );
    assert.equal(await available(p.currency), before - p.amount, 'debited once');
    await ledgerOk();
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.updated', { ...p, dp, status: 'under_review' })), 200);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'under_review');
    const closed = disputeEvent('charge.dispute.closed', { ...p, dp, status: 'won' });
    assert.equal(await mock.deliver(closed), 200);
    assert.equal(await mock.deliver(closed), 200);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.funds_reinstated', { ...p, dp, status: 'won' })), 200);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(p.currency), before, 'the amount came back once');
    const events = await db().selectFrom('events').select('event_type').where('object_id', '=', d.dispute_id).orderBy('created_at').execute();
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['dispute.created', 'dispute.updated', 'dispute.closed'],
    );
    await ledgerOk();
  });

  test('warning_needs_response opens an inquiry (no money); funds_withdrawn escalates it; closed lost', async () => {
    const p = await paid();
    const before = await available(p.currency);
    const dp = newId('dp');
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.created', { ...p, dp, status: 'warning_needs_response', reason: 'general' })), 200);
    let d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind], ['warning_needs_response', 'inquiry']);
    assert.equal(await available(p.currency), before);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.funds_withdrawn', { ...p, dp, status: 'needs_response' })), 200);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.updated', { ...p, dp, status: 'needs_response' })), 200);
    d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind], ['needs_response', 'chargeback']);
    assert.equal(await available(p.currency), before - p.amount);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.closed', { ...p, dp, status: 'lost' })), 200);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'lost');
    assert.equal(await available(p.currency), before - p.amount);
    await ledgerOk();
  });

  test('charge.dispute.closed before charge.dispute.created: opened and decided at once; the late created changes nothing', async () => {
    const p = await paid();
    const before = await available(p.currency);
    const dp = newId('dp');
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.closed', { ...p, dp, status: 'lost' })), 200);
    assert.equal(await mock.deliver(disputeEvent('charge.dispute.created', { ...p, dp, status: 'needs_response' })), 200);
    const d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind], ['lost', 'chargeback']);
    assert.equal(await available(p.currency), before - p.amount);
    await ledgerOk();
  });

  test('a dispute of a PaymentIntent Tollgate does not know is kept and acknowledged', async () => {
    const dp = newId('dp');
    const pi = newId('pi');
    const ev = disputeEvent('charge.dispute.created', { dp, pi, amount: 500, currency: 'USD', status: 'needs_response' });
    assert.equal(await mock.deliver(ev), 200);
    assert.equal(await mock.deliver(ev), 200);
    const kept = await db().selectFrom('dispute_orphans').selectAll().where('processor_ref', '=', dp).execute();
    assert.deepEqual(
      kept.map((k) => [k.state, k.payment_ref, k.event, k.connector]),
      [['unknown_payment', pi, 'charge.dispute.created', 'stripe']],
    );
    const noted = await db()
      .selectFrom('processor_notifications')
      .select('result')
      .where('processor_id', '=', processor_id)
      .where('reference', '=', dp)
      .execute();
    assert.deepEqual(
      noted.map((n) => n.result),
      ['unmatched'],
    );
  });
});
