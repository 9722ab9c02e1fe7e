// A merchant's answer to a Stripe dispute, sent to Stripe end to end (issue 34 item 3): a live
// merchant on the Stripe mock pays, the mock disputes the payment (its charge.dispute.created
// delivered to the gateway), and evidence given and submitted through the dispute core goes, by
// the `dispute.respond` job, to the mock: each file uploaded (POST /v1/files) and named by its
// `file_…` id in the evidence, which is submitted; an acceptance closes the dispute at Stripe.
// Each send is a recorded processor attempt; a retry after no answer sends again under the same
// attempt id (nothing twice); a refusal puts the dispute back with the merchant with Stripe's
// reason. The mock's events are held and delivered by hand, so nothing decides a dispute behind
// a test's back. Both engines.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../../cli/background.js';
import { acceptDispute, type EvidenceItem, giveEvidence } from '../../disputes/service.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { setProcessor } from '../config.js';
import { type MockDispute, type MockEvent, type MockStripe, type MockStripeOptions, startMockStripe } from './mock.js';

const SECRET_KEY = 'sk_test_dispute_answers_51HxYzSecret0003';
const WEBHOOK_SECRET = 'whsec_dispute_answers_stripe_0003';
/** Bytes an upload must carry as they are: every byte value, CR LF and something like a boundary. */
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n% receipt\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\r\n--x\r\n%%EOF\n')]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('\r\n\r\n'), Buffer.alloc(200, 0xfe)]);

let gw: TestGateway;
let mock: MockStripe;
const mockOptions: MockStripeOptions = { secret_key: SECRET_KEY, hold_webhooks: true };
let live: CreatedMerchant;
let scheduler: Scheduler;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const { store, keyring, deps } = gw.runtime;
  mock = await startMockStripe(mockOptions);
  live = await gw.newMerchant({ mode: 'live', name: 'Live on Stripe, answering', capture_method: 'automatic' });
  const row = await setProcessor(
    store,
    keyring,
    { account_id: live.account_id, connector: 'stripe', base_url: mock.url, credentials: [`secret_key=${SECRET_KEY}`, `webhook_secret=${WEBHOOK_SECRET}`] },
    Date.now(),
  );
  mockOptions.webhook = { url: `http://127.0.0.1:${port}/hooks/stripe/${row.processor_id}`, secret: WEBHOOK_SECRET };
  await deps.processors.reload();
  scheduler = createScheduler(gw.runtime);
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
const deps = () => gw.runtime.deps;

/** The mock's latest event of this type about this dispute, delivered to the gateway. */
async function deliverLatest(type: string, dp: string): Promise<void> {
  const ev = mock.events.findLast((e) => e.type === type && e.data.object.id === dp);
  assert.ok(ev, `the mock sent ${type} for ${dp}`);
  assert.equal(await mock.deliver(ev), 200);
}

/** A payment captured through Stripe and disputed there: the gateway's dispute id and the mock's dispute. */
async function disputed(): Promise<{ dispute_id: string; at: MockDispute }> {
  const res = await gw.post('/v1/authorise', directPayment(live, { card: freshCard() }), { merchant: live });
  assert.equal(res.statusCode, 200, res.body);
  const { transaction_id } = readXml(res) as { transaction_id: string };
  const pi = (
    await db()
      .selectFrom('processor_attempts')
      .select('reference')
      .where('object_id', '=', transaction_id)
      .where('operation', '=', 'authorise')
      .executeTakeFirstOrThrow()
  ).reference;
  const at = mock.openDispute(pi);
  await deliverLatest('charge.dispute.created', at.id);
  const d = await db().selectFrom('disputes').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
  assert.deepEqual([d.status, d.connector, d.processor_ref], ['needs_response', 'stripe', at.id]);
  return { dispute_id: d.dispute_id, at };
}

const row = (id: string) => db().selectFrom('disputes').selectAll().where('dispute_id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (id: string) => db().selectFrom('processor_attempts').selectAll().where('object_id', '=', id).orderBy('created_at').execute();
const eventsOf = async (id: string) =>
  (await db().selectFrom('events').select('event_type').where('object_id', '=', id).orderBy('created_at').execute()).map((e) => e.event_type);
/** The requests the mock took that submit evidence to, or close, this dispute. */
const disputeCalls = (dp: string) => mock.requests.filter((r) => r.method === 'POST' && r.path.startsWith(`/v1/disputes/${dp}`));

async function submit(id: string, items: EvidenceItem[]): Promise<void> {
  await giveEvidence(deps(), await row(id), items, true, deps().now());
}

/** Runs the jobs due now, and again after `ms` (a retry's backoff). */
async function runJobs(ms = 0): Promise<void> {
  if (ms > 0) gw.clock.advance(ms);
  await scheduler.runDue(deps().now());
}

describe('answering Stripe disputes', () => {
  test('text, a PDF and a PNG reach Stripe: the texts in their fields, the files uploaded and named by id, submitted; closed won by Stripe’s event', async () => {
    const { dispute_id, at } = await disputed();
    const files = mock.files.size;
    await submit(dispute_id, [
      { field: 'product_description', text: 'Blue (wool) jumper, size M — shipped 3 May' },
      { field: 'receipt', file_name: 'receipt.pdf', bytes: PDF },
      { field: 'shipping_documentation', file_name: 'label.png', bytes: PNG },
    ]);
    assert.equal(disputeCalls(at.id).length, 0, 'nothing sent inside the submit: the job sends it');
    await runJobs();
    assert.equal(at.status, 'under_review');
    assert.equal(at.evidence_details.submission_count, 1);
    assert.equal(at.evidence.product_description, 'Blue (wool) jumper, size M — shipped 3 May');
    const receipt = mock.files.get(at.evidence.receipt ?? '');
    const label = mock.files.get(at.evidence.shipping_documentation ?? '');
    assert.match(at.evidence.receipt ?? '', /^file_/);
    assert.match(at.evidence.shipping_documentation ?? '', /^file_/);
    assert.deepEqual([receipt?.purpose, receipt?.type, receipt?.filename], ['dispute_evidence', 'application/pdf', 'receipt.pdf']);
    assert.deepEqual([label?.purpose, label?.type, label?.filename], ['dispute_evidence', 'image/png', 'label.png']);
    assert.ok(receipt?.bytes.equals(PDF), 'the PDF as given');
    assert.ok(label?.bytes.equals(PNG), 'the PNG as given');
    assert.equal(mock.files.size, files + 2);
    const attempts = await attemptsOf(dispute_id);
    assert.deepEqual(
      attempts.map((a) => [a.operation, a.status, a.connector, a.reference]),
      [['dispute_defend', 'approved', 'stripe', at.id]],
    );
    assert.equal(disputeCalls(at.id)[0]?.idempotency_key, attempts[0]?.attempt_id, 'the submit under the attempt id');
    assert.equal((await row(dispute_id)).status, 'under_review', 'Stripe decides later, by its event');
    await deliverLatest('charge.dispute.updated', at.id);
    assert.equal((await row(dispute_id)).status, 'under_review');
    at.status = 'won';
    const closed: MockEvent = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      type: 'charge.dispute.closed',
      created: Math.floor(Date.now() / 1000),
      data: { object: structuredClone(at) },
    };
    assert.equal(await mock.deliver(closed), 200);
    const won = await row(dispute_id);
    assert.deepEqual([won.status, won.response_error], ['won', '']);
    assert.equal((await eventsOf(dispute_id)).at(-1), 'dispute.closed');
  });

  test('no answer (a 500 on the submit): the attempt is unknown; the retry sends again under the same attempt id; Stripe holds one submission and each file once', async () => {
    const { dispute_id, at } = await disputed();
    const files = mock.files.size;
    await submit(dispute_id, [
      { field: 'uncategorized_text', text: 'retry me' },
      { field: 'receipt', file_name: 'receipt.pdf', bytes: PDF },
    ]);
    mock.fault('server_error', 1, new RegExp(`^/v1/disputes/${at.id}$`));
    await runJobs();
    const [first] = await attemptsOf(dispute_id);
    assert.equal(first?.status, 'unknown');
    assert.equal(at.status, 'needs_response');
    await runJobs(40_000);
    const all = await attemptsOf(dispute_id);
    assert.equal(all.length, 1, 'one attempt, sent twice');
    assert.deepEqual([all[0]?.attempt_id, all[0]?.status, all[0]?.reference], [first?.attempt_id, 'approved', at.id]);
    assert.deepEqual(
      disputeCalls(at.id).map((r) => r.idempotency_key),
      [first?.attempt_id, first?.attempt_id],
    );
    assert.deepEqual([at.status, at.evidence_details.submission_count, at.evidence.uncategorized_text], ['under_review', 1, 'retry me']);
    assert.equal(mock.files.size, files + 1, 'the file uploaded once (its upload replayed under its key)');
    assert.ok(mock.files.get(at.evidence.receipt ?? '')?.bytes.equals(PDF));
    assert.equal((await row(dispute_id)).status, 'under_review');
    // The job ran to its end: running what is due sends nothing more.
    const calls = mock.requests.length;
    await runJobs(700_000);
    assert.equal(mock.requests.length, calls);
  });

  test('closed at Stripe before the evidence came: refused; the dispute is back with the merchant with Stripe’s reason', async () => {
    const { dispute_id, at } = await disputed();
    at.status = 'lost';
    await submit(dispute_id, [{ field: 'uncategorized_text', text: 'too late' }]);
    await runJobs();
    const back = await row(dispute_id);
    assert.equal(back.status, 'needs_response');
    assert.match(back.response_error, /^Stripe refused the dispute evidence: 400 invalid_request_error/);
    assert.equal(back.submitted_at, null);
    const [a] = await attemptsOf(dispute_id);
    assert.deepEqual([a?.operation, a?.status, a?.claim_key], ['dispute_defend', 'declined', null]);
    assert.equal((await eventsOf(dispute_id)).at(-1), 'dispute.updated');
    assert.deepEqual([at.status, at.evidence], ['lost', {}], 'Stripe kept nothing');
  });

  test('accepting closes the dispute at Stripe (lost) under the attempt id; the gateway’s dispute is accepted and stays so', async () => {
    const { dispute_id, at } = await disputed();
    await acceptDispute(deps(), await row(dispute_id), deps().now());
    await runJobs();
    assert.equal(at.status, 'lost');
    const attempts = await attemptsOf(dispute_id);
    assert.deepEqual(
      attempts.map((a) => [a.operation, a.status, a.reference]),
      [['dispute_accept', 'approved', at.id]],
    );
    assert.deepEqual(
      disputeCalls(at.id).map((r) => [r.path, r.idempotency_key]),
      [[`/v1/disputes/${at.id}/close`, attempts[0]?.attempt_id]],
    );
    assert.equal((await row(dispute_id)).status, 'accepted');
    // Stripe's own charge.dispute.closed (lost) then changes nothing: accepted is closed already.
    await deliverLatest('charge.dispute.closed', at.id);
    assert.equal((await row(dispute_id)).status, 'accepted');
    assert.deepEqual((await verifyLedger(db())).problems, []);
  });
});

// Issue 34 review, item 7: Stripe's limits are checked when the evidence is given (as Adyen's files are), not only when the job
// sends it: a 400 naming the request's field, nothing stored, and nothing sent.
describe('evidence Stripe would refuse is refused when given', () => {
  const give = (dispute_id: string, more: Record<string, unknown>) =>
    gw.post('/v1/disputeEvidence', { merchant_id: live.merchant_id, account_id: live.account_id, dispute_id, ...more }, { merchant: live });
  const held = async (id: string) => (await db().selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', id).execute()).length;
  const b64 = PDF.toString('base64');

  test('a text field over Stripe’s 5,000 characters; 150,000 in all with what the dispute holds; a third file of one field', async () => {
    const { dispute_id } = await disputed();
    const calls = mock.requests.length;
    const long = await give(dispute_id, { customer_name: 'x'.repeat(5_001), product_description: 'Blue tee' });
    assert.equal(long.statusCode, 400, long.body);
    assert.equal(long.json().error_field, 'customer_name');
    assert.match(long.body, /customer_name is 5001 characters; Stripe takes at most 5000/);
    assert.equal(await held(dispute_id), 0, 'nothing stored');

    // 7 × 19,000 characters fit; an eighth field of 19,000, given later, makes 152,000.
    const wide = [
      'product_description',
      'uncategorized_text',
      'access_activity_log',
      'cancellation_policy_disclosure',
      'cancellation_rebuttal',
      'refund_policy_disclosure',
      'refund_refusal_explanation',
    ];
    const first = await give(dispute_id, Object.fromEntries(wide.map((f) => [f, 'z'.repeat(19_000)])));
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(await held(dispute_id), 7);
    const more = await give(dispute_id, { duplicate_charge_explanation: 'z'.repeat(19_000) });
    assert.equal(more.statusCode, 400, more.body);
    assert.equal(more.json().error_field, 'duplicate_charge_explanation');
    assert.match(more.body, /152000 characters in all; Stripe takes at most 150000/);
    assert.equal(await held(dispute_id), 7, 'nothing more stored');

    const files = await give(dispute_id, {
      files: [0, 1, 2].map((i) => ({ field: 'receipt', file_name: `r${i}.pdf`, content_base64: b64 })),
    });
    assert.equal(files.statusCode, 400, files.body);
    assert.equal(files.json().error_field, 'files[2].content_base64', 'the third receipt: the second took uncategorized_file');
    assert.match(files.body, /one file per evidence field/);
    assert.equal(await held(dispute_id), 7);
    assert.equal((await row(dispute_id)).status, 'needs_response');
    assert.equal(mock.requests.length, calls, 'nothing sent to Stripe');
  });
});
