// `/v1/disputes` through the platform family's official client library (docs/contract.md §22, §24;
// issue 34 item 4): a PaymentIntent paid with the sandbox's dispute cards is disputed after the
// scheduler runs (the test clock moved), listed, retrieved and updated with text evidence and
// `submit` (won by `winning_evidence` after the sandbox's decision), staged and closed (lost), an
// inquiry closed (`warning_closed`); another platform's or mode's dispute is not found; a
// closed dispute takes no evidence and keeps none; file evidence (File ids) is refused; list
// filters; `charge.dispute.*` events carry the dispute. The object against the family's example.
// Both engines.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { createScheduler } from '../cli/background.js';
import { openDispute } from '../disputes/service.js';
import { verifyLedger } from '../ledger/verify.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { shapeProblems } from '../test/platform-shapes.js';

let gw: TestGateway;
let port: number;
let stripe: Stripe;
let scheduler: Scheduler;
const client = (k: string) => new Stripe(k, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
const YEAR = new Date().getUTCFullYear() + 2;

/** Fields of the family's example Tollgate never sets (docs/interface.md "What is not offered"). */
const DISPUTE_NOT_OFFERED: string[] = [];

before(async () => {
  gw = await testGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as AddressInfo).port;
  stripe = client(await gw.apiKey());
  scheduler = createScheduler(gw.runtime);
  await gw.runtime.store.transaction((tx) =>
    tx.insertInto('dispute_fees').values({ account_id: gw.merchant.account_id, currency: 'USD', fee_minor: 1500, updated_at: 0 }).execute(),
  );
});
after(async () => gw.close());

async function rejection(p: Promise<unknown>): Promise<InstanceType<typeof Stripe.errors.StripeError>> {
  try {
    const v = await p;
    assert.fail(`expected the call to be refused, it answered ${JSON.stringify(v).slice(0, 300)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    assert.ok(e instanceof Stripe.errors.StripeError, `not a StripeError: ${String(e)}`);
    return e;
  }
}

/** Moves the clock past the sandbox's delay and runs what fell due (disputes opened, evidence decided). */
async function later(ms = 6_000): Promise<void> {
  gw.clock.advance(ms);
  await scheduler.runDue(gw.runtime.deps.now());
}

/** A PaymentIntent confirmed with card `number` (no pm_ name for the dispute cards: payment_method_data), then its dispute. */
async function disputed(number: string, sdk = stripe, amount = 5000): Promise<{ pi: Stripe.PaymentIntent; dispute: Stripe.Dispute }> {
  const pi = await sdk.paymentIntents.create({
    amount,
    currency: 'usd',
    confirm: true,
    payment_method_data: { type: 'card', card: { number, exp_month: 12, exp_year: YEAR, cvc: '123' } } as never,
  });
  assert.equal(pi.status, 'succeeded');
  await later();
  const list = await sdk.disputes.list({ payment_intent: pi.id });
  assert.equal(list.data.length, 1, `one dispute of ${pi.id}`);
  return { pi, dispute: list.data[0] as Stripe.Dispute };
}

const evidenceRows = async (dispute_id: string) =>
  (await gw.runtime.store.db.selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', dispute_id).execute()).length;

describe('/v1/disputes through the official client library', () => {
  test('4000000000000259: disputed after capture; evidence with submit is under review, then won; events carry the dispute', async () => {
    const { pi, dispute } = await disputed('4000000000000259');
    assert.match(dispute.id, /^dp_/);
    assert.equal(dispute.object, 'dispute');
    assert.equal(dispute.status, 'needs_response');
    assert.equal(dispute.reason, 'fraudulent');
    assert.equal(dispute.amount, 5000);
    assert.equal(dispute.currency, 'usd');
    assert.equal(dispute.charge, pi.latest_charge);
    assert.equal(dispute.payment_intent, pi.id);
    assert.equal(dispute.livemode, false);
    assert.equal(dispute.evidence_details.has_evidence, false);
    assert.equal(dispute.evidence_details.submission_count, 0);
    assert.ok(dispute.evidence_details.due_by && dispute.evidence_details.due_by > dispute.created);
    assert.equal(dispute.payment_method_details?.card?.brand, 'visa');
    assert.equal(dispute.payment_method_details?.card?.case_type, 'chargeback');
    assert.deepEqual(shapeProblems('dispute', dispute as unknown as Record<string, unknown>, DISPUTE_NOT_OFFERED), []);

    const retrieved = await stripe.disputes.retrieve(dispute.id, { expand: ['charge', 'payment_intent'] });
    assert.equal((retrieved.charge as Stripe.Charge).id, pi.latest_charge);
    assert.equal((retrieved.charge as Stripe.Charge).disputed, true, 'the charge says it is disputed');
    assert.equal((retrieved.payment_intent as Stripe.PaymentIntent).id, pi.id);

    const updated = await stripe.disputes.update(dispute.id, {
      evidence: {
        uncategorized_text: 'Delivered and signed for. winning_evidence',
        product_description: 'A desk lamp',
        shipping_tracking_number: '1Z999AA10123456784',
        customer_email_address: 'jenny@example.com',
        customer_name: 'Jenny Rosen',
        billing_address: '1 Main St, Springfield',
      },
      metadata: { case: '17' },
      submit: true,
    });
    assert.equal(updated.status, 'under_review');
    assert.equal(updated.evidence.uncategorized_text, 'Delivered and signed for. winning_evidence');
    assert.equal(updated.evidence.product_description, 'A desk lamp');
    assert.equal(updated.evidence.shipping_tracking_number, '1Z999AA10123456784');
    assert.equal(updated.evidence.customer_name, 'Jenny Rosen');
    assert.equal(updated.evidence.receipt, null);
    assert.equal(updated.evidence_details.has_evidence, true);
    assert.equal(updated.evidence_details.submission_count, 1);
    assert.equal(updated.evidence_details.past_due, false);
    assert.deepEqual(updated.metadata, { case: '17' });
    assert.deepEqual(shapeProblems('dispute', updated as unknown as Record<string, unknown>, DISPUTE_NOT_OFFERED), []);
    const stored = await gw.runtime.store.db.selectFrom('dispute_evidence').selectAll().where('dispute_id', '=', dispute.id).execute();
    assert.equal(stored.length, 6);
    assert.doesNotMatch(JSON.stringify(stored), /winning_evidence|Jenny/, 'evidence is encrypted at rest');

    await later();
    const won = await stripe.disputes.retrieve(dispute.id);
    assert.equal(won.status, 'won');

    // Closed: evidence is refused and nothing is kept; metadata still merges.
    const n = await evidenceRows(dispute.id);
    const refused = await rejection(stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'more' } }));
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.code, 'status_transition_invalid');
    assert.equal(await evidenceRows(dispute.id), n, 'nothing kept');
    const refusedWithMetadata = await rejection(stripe.disputes.update(dispute.id, { evidence: { product_description: 'x' }, metadata: { late: '1' } }));
    assert.equal(refusedWithMetadata.code, 'status_transition_invalid');
    assert.deepEqual((await stripe.disputes.retrieve(dispute.id)).metadata, { case: '17' }, 'a refused update changes no metadata either');
    const tagged = await stripe.disputes.update(dispute.id, { metadata: { reviewed: 'yes' } });
    assert.deepEqual(tagged.metadata, { case: '17', reviewed: 'yes' });
    assert.equal(tagged.status, 'won');

    // Events: charge.dispute.created, .updated (submitted), .closed, each with the dispute (its evidence text withheld).
    const events = await stripe.events.list({ type: 'charge.dispute.*', limit: 100 });
    const mine = events.data.filter((e) => (e.data.object as { id: string }).id === dispute.id);
    assert.deepEqual(mine.map((e) => e.type).sort(), ['charge.dispute.closed', 'charge.dispute.created', 'charge.dispute.updated']);
    for (const e of mine) {
      const o = e.data.object as Stripe.Dispute;
      assert.equal(o.object, 'dispute');
      assert.equal(o.charge, pi.latest_charge);
      assert.equal(o.evidence.uncategorized_text, null, 'no evidence text in events');
      assert.deepEqual(shapeProblems('dispute', o as unknown as Record<string, unknown>, DISPUTE_NOT_OFFERED), []);
    }
    const closed = mine.find((e) => e.type === 'charge.dispute.closed');
    assert.ok(closed);
    assert.equal((closed.data.object as Stripe.Dispute).status, 'won');
    assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, []);
  });

  test('4000000000002685: staged evidence (submit false) stays needs_response; close accepts it: lost; closed twice is refused', async () => {
    const { dispute } = await disputed('4000000000002685');
    assert.equal(dispute.reason, 'product_not_received');
    const staged = await stripe.disputes.update(dispute.id, { evidence: { product_description: 'first' }, submit: false });
    assert.equal(staged.status, 'needs_response');
    const restaged = await stripe.disputes.update(dispute.id, { evidence: { product_description: 'second', service_date: '2030-01-01' }, submit: false });
    assert.equal(restaged.evidence.product_description, 'second', 'the latest of a field counts');
    assert.equal(restaged.evidence.service_date, '2030-01-01');
    assert.equal(restaged.evidence_details.submission_count, 0);
    // The family's file fields name File objects: not offered, nothing kept.
    const n = await evidenceRows(dispute.id);
    const file = await rejection(stripe.disputes.update(dispute.id, { evidence: { receipt: 'file_1234', uncategorized_text: 'x' } }));
    assert.equal(file.statusCode, 400);
    assert.equal(file.code, 'resource_missing');
    assert.equal(file.param, 'evidence[receipt]');
    assert.match(file.message, /\/v1\/disputeEvidence/);
    const unknown = await rejection(stripe.disputes.update(dispute.id, { evidence: { nonsense: 'x' } as never }));
    assert.equal(unknown.code, 'parameter_unknown');
    assert.equal(await evidenceRows(dispute.id), n);

    const closed = await stripe.disputes.close(dispute.id);
    assert.equal(closed.status, 'lost');
    assert.equal(closed.evidence.product_description, 'second');
    const again = await rejection(stripe.disputes.close(dispute.id));
    assert.equal(again.statusCode, 400);
    assert.equal(again.code, 'status_transition_invalid');
    const submit = await rejection(stripe.disputes.update(dispute.id, { submit: true }));
    assert.equal(submit.code, 'status_transition_invalid');
    assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, []);
  });

  test('4000000000001976: an inquiry is warning_needs_response; closed it is warning_closed', async () => {
    const { dispute } = await disputed('4000000000001976');
    assert.equal(dispute.status, 'warning_needs_response');
    assert.equal(dispute.payment_method_details?.card?.case_type, 'inquiry');
    const submitted = await stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'see the receipt' } });
    assert.equal(submitted.status, 'warning_under_review', 'submit is the default when evidence is given');
    const other = await disputed('4000000000001976');
    const closed = await stripe.disputes.close(other.dispute.id);
    assert.equal(closed.status, 'warning_closed');
  });

  test('another platform’s dispute and another mode’s are not found; nothing changes', async () => {
    const b = await gw.newMerchant({ name: 'other platform' });
    const theirs = await disputed('4000000000000259', client(await gw.apiKey(b)));
    // One call at a time (promises made at once reject before they are awaited: an unhandled rejection).
    for (const call of [
      () => stripe.disputes.retrieve(theirs.dispute.id),
      () => stripe.disputes.update(theirs.dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } }),
      () => stripe.disputes.close(theirs.dispute.id),
    ]) {
      const e = await rejection(call());
      assert.equal(e.statusCode, 404);
      assert.equal(e.code, 'resource_missing');
    }
    assert.equal(await evidenceRows(theirs.dispute.id), 0);
    assert.equal((await client(await gw.apiKey(b)).disputes.retrieve(theirs.dispute.id)).status, 'needs_response');
    const charge = await rejection(stripe.disputes.list({ charge: String(theirs.pi.latest_charge) }));
    assert.equal(charge.statusCode, 404);
    assert.equal(charge.param, 'charge');
    const intent = await rejection(stripe.disputes.list({ payment_intent: theirs.pi.id }));
    assert.equal(intent.param, 'payment_intent');
    assert.ok(!(await stripe.disputes.list({ limit: 100 })).data.some((d) => d.id === theirs.dispute.id));

    // A live platform's dispute (a live account has no sandbox: opened by the core's command, as a
    // processor's notification would): a test key never sees it, the live key does.
    const l = await gw.newMerchant({ name: 'live platform', mode: 'live' });
    const payment = await gw.runtime.store.db
      .selectFrom('payments')
      .selectAll()
      .where('transaction_id', '=', String(theirs.pi.latest_charge).slice(3))
      .executeTakeFirstOrThrow();
    const live = await openDispute(
      gw.runtime.deps,
      {
        connector: 'test',
        processor_ref: `live:${payment.transaction_id}`,
        payment: { ...payment, merchant_id: l.merchant_id, account_id: l.account_id, livemode: 1 },
        kind: 'inquiry',
        reason: 'general',
      },
      gw.runtime.deps.now(),
    );
    const e = await rejection(stripe.disputes.retrieve(live.dispute.dispute_id));
    assert.equal(e.statusCode, 404);
    assert.ok(!(await stripe.disputes.list({ limit: 100 })).data.some((d) => d.id === live.dispute.dispute_id));
    const seen = await client(await gw.apiKey(l)).disputes.retrieve(live.dispute.dispute_id);
    assert.equal(seen.livemode, true);
    assert.equal(seen.status, 'warning_needs_response');
  });

  test('list: newest first, charge, payment_intent and created filters, pagination', async () => {
    const a = await disputed('4000000000000259', stripe, 1111);
    const b = await disputed('4000000000002685', stripe, 2222);
    const all = await stripe.disputes.list({ limit: 100 });
    const ids = all.data.map((d) => d.id);
    assert.ok(ids.indexOf(b.dispute.id) < ids.indexOf(a.dispute.id), 'newest first');
    for (const d of all.data) assert.deepEqual(shapeProblems('dispute', d as unknown as Record<string, unknown>, DISPUTE_NOT_OFFERED), []);
    const byCharge = await stripe.disputes.list({ charge: String(a.pi.latest_charge) });
    assert.deepEqual(
      byCharge.data.map((d) => d.id),
      [a.dispute.id],
    );
    const byIntent = await stripe.disputes.list({ payment_intent: b.pi.id });
    assert.deepEqual(
      byIntent.data.map((d) => d.id),
      [b.dispute.id],
    );
    const plain = await stripe.paymentIntents.create({ amount: 100, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    assert.equal((await stripe.disputes.list({ payment_intent: plain.id })).data.length, 0);
    const created = await stripe.disputes.list({ created: { gte: b.dispute.created }, limit: 100 });
    assert.ok(created.data.some((d) => d.id === b.dispute.id));
    assert.ok(created.data.every((d) => d.created >= b.dispute.created));
    const first = await stripe.disputes.list({ limit: 1 });
    assert.equal(first.has_more, true);
    const next = await stripe.disputes.list({ limit: 1, starting_after: (first.data[0] as Stripe.Dispute).id });
    assert.notEqual((next.data[0] as Stripe.Dispute).id, (first.data[0] as Stripe.Dispute).id);
    const seen: string[] = [];
    for await (const d of stripe.disputes.list({ limit: 2 })) seen.push(d.id);
    assert.deepEqual(seen, ids, 'auto-pagination walks the same list');
    const bad = await rejection(stripe.disputes.list({ starting_after: 'dp_none' }));
    assert.equal(bad.code, 'resource_missing');
  });
});
