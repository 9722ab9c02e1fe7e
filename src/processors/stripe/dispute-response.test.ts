// The Stripe connector's dispute responses against the mock (docs/contract.md §22): evidence
// mapped onto Stripe's fields, files uploaded (to base_url, not files.stripe.com) and submitted;
// a repeat under the same attempt id uploads and submits nothing twice; accept closes; a closed
// or unknown dispute, a 500, a dropped connection, a refused key; evidence that cannot fit is
// refused before any call. Each test reads what the mock holds, not only the outcome's kind.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EVIDENCE_FILE_FIELDS, EVIDENCE_TEXT_FIELDS } from '../../disputes/schema.js';
import type { DisputeEvidence, DisputeResponseInput, ProcessorCall } from '../types.js';
import { createStripeProcessor } from './connector.js';
import { planStripeEvidence, STRIPE_FILE_FIELDS, STRIPE_TEXT_MAX } from './dispute-response.js';
import { type MockStripe, startMockStripe } from './mock.js';

const KEY = 'sk_test_disputes_51ZyXwSecret';
let mock: MockStripe;
const logged: string[] = [];
const log = (fields: Record<string, unknown>, message: string) => logged.push(JSON.stringify({ ...fields, message }));
let stripe: ReturnType<typeof createStripeProcessor>;
before(async () => {
  mock = await startMockStripe({ secret_key: KEY });
  stripe = createStripeProcessor({ secret_key: KEY, base_url: mock.url, log });
});
after(async () => mock?.close());

let n = 0;
const call = (attempt_id = `att_dsp_${++n}`, ms = 5_000): ProcessorCall => {
  const c = new AbortController();
  setTimeout(() => c.abort(), ms).unref();
  return { attempt_id, deadline_at: Date.now() + ms, signal: c.signal };
};

/** A captured PaymentIntent at the mock, and a dispute of its charge. */
async function disputed(status?: string) {
  const transaction_id = `pay_dsp_${++n}`;
  const card = { pan: '4242424242424242', brand: 'visa', exp_month: 1, exp_year: 2030 };
  const paid = await stripe.authorise({ transaction_id, amount_minor: 4200, currency: 'EUR', card }, call());
  assert.equal(paid.kind, 'approved');
  const d = mock.openDispute(paid.reference, status ? { status } : {});
  return { d, transaction_id, pi: paid.reference };
}

/** Bytes a multipart reader must keep as they are: every byte value, CR LF, and a fake boundary. */
const awkward = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\r\n--boundary\r\n\r\n--')]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), awkward, Buffer.from('\n%%EOF\n')]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), awkward]);

const EVIDENCE: DisputeEvidence[] = [
  { field: 'product_description', text: 'Blue widget, size M.' },
  { field: 'customer_communication', text: 'The customer wrote on 2 May: “arrived, thanks”.' },
  { field: 'receipt', file_name: 'receipt.pdf', content_type: 'application/pdf', bytes: PDF },
  { field: 'product_description', text: 'Shipped with tracking.' },
  { field: 'shipping_documentation', file_name: 'label.png', content_type: 'image/png', bytes: PNG },
  { field: 'customer_name', text: 'Jane Doe' },
  { field: 'uncategorized_text', text: 'See the attached receipt.' },
];

const defendInput = (d: { id: string }, transaction_id: string, evidence = EVIDENCE): DisputeResponseInput => ({
  action: 'defend',
  processor_ref: d.id,
  transaction_id,
  reference: '',
  evidence,
});
const uploads = () => mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');
const submits = (id: string) => mock.requests.filter((r) => r.method === 'POST' && r.path === `/v1/disputes/${id}`);

describe('Stripe dispute responses', () => {
  test('defend: texts, a PDF and a PNG reach the mock at base_url; the evidence fields name the uploaded files; submitted once', async () => {
    const { d, transaction_id } = await disputed();
    const c = call();
    const before = uploads().length;
    const outcome = await stripe.respondToDispute?.(defendInput(d, transaction_id), c);
    assert.deepEqual(outcome, { kind: 'approved', reference: d.id });
    assert.equal(d.status, 'under_review');
    assert.equal(d.evidence_details.submission_count, 1);
    const receipt = mock.files.get(d.evidence.receipt ?? '');
    const label = mock.files.get(d.evidence.shipping_documentation ?? '');
    assert.ok(receipt && label, JSON.stringify(d.evidence));
    assert.deepEqual([receipt.purpose, receipt.filename, receipt.type], ['dispute_evidence', 'receipt.pdf', 'application/pdf']);
    assert.deepEqual([label.purpose, label.filename, label.type], ['dispute_evidence', 'label.png', 'image/png']);
    assert.ok(receipt.bytes.equals(PDF), 'the PDF bytes as sent');
    assert.ok(label.bytes.equals(PNG), 'the PNG bytes as sent');
    assert.deepEqual(d.evidence, {
      product_description: 'Blue widget, size M.\n\nShipped with tracking.',
      uncategorized_text: 'customer_communication:\nThe customer wrote on 2 May: “arrived, thanks”.\n\nSee the attached receipt.',
      customer_name: 'Jane Doe',
      receipt: receipt.id,
      shipping_documentation: label.id,
    });
    assert.deepEqual(
      uploads()
        .slice(before)
        .map((r) => r.idempotency_key),
      [`${c.attempt_id}.file.0`, `${c.attempt_id}.file.1`],
    );
    assert.deepEqual(
      submits(d.id).map((r) => [r.idempotency_key, r.body.submit]),
      [[c.attempt_id, 'true']],
    );
  });

  test('a repeat under the same attempt id uploads no second file and submits once (Stripe replays its answers)', async () => {
    const { d, transaction_id } = await disputed();
    const c = call();
    const first = await stripe.respondToDispute?.(defendInput(d, transaction_id), c);
    const files = mock.files.size;
    const again = await stripe.respondToDispute?.(defendInput(d, transaction_id), call(c.attempt_id));
    assert.deepEqual(again, first);
    assert.equal(mock.files.size, files, 'no file uploaded twice');
    assert.equal(d.evidence_details.submission_count, 1);
    assert.equal(submits(d.id).length, 2, 'sent twice, taken once');
    assert.equal(mock.events.filter((e) => e.type === 'charge.dispute.updated' && e.data.object.id === d.id).length, 1);
  });

  test('no answer: a 500 on an upload, then connections dropped after the submit was taken, are unknown; the repeat ends approved with one submission and each file once', async () => {
    const { d, transaction_id } = await disputed();
    const c = call();
    const files = mock.files.size;
    mock.fault('server_error', 1, /^\/v1\/files$/);
    const e500 = await stripe.respondToDispute?.(defendInput(d, transaction_id), c);
    assert.deepEqual(e500, { kind: 'unknown', reason: 'Stripe: StripeAPIError 500' });
    assert.equal(mock.files.size, files, 'the 500 stored nothing');
    assert.equal(d.status, 'needs_response');
    // Twice: stripe-node sends a request once more, under the same key, when its connection closes (even with retries off).
    mock.fault('drop', 2, /^\/v1\/disputes\//);
    const dropped = await stripe.respondToDispute?.(defendInput(d, transaction_id), call(c.attempt_id));
    assert.deepEqual(dropped, { kind: 'unknown', reason: 'Stripe: StripeConnectionError' });
    assert.deepEqual([d.status, d.evidence_details.submission_count], ['under_review', 1], 'the mock did the work before dropping');
    assert.deepEqual(
      submits(d.id).map((r) => r.idempotency_key),
      [c.attempt_id, c.attempt_id],
    );
    const again = await stripe.respondToDispute?.(defendInput(d, transaction_id), call(c.attempt_id));
    assert.deepEqual(again, { kind: 'approved', reference: d.id });
    assert.equal(d.evidence_details.submission_count, 1);
    assert.equal(mock.files.size, files + 2, 'two files, each uploaded once');
  });

  test('accept closes the dispute (lost) under the attempt id; a repeat replays it', async () => {
    const { d, transaction_id } = await disputed();
    const c = call();
    const input: DisputeResponseInput = { action: 'accept', processor_ref: d.id, transaction_id, reference: '', evidence: [] };
    assert.deepEqual(await stripe.respondToDispute?.(input, c), { kind: 'approved', reference: d.id });
    assert.equal(d.status, 'lost');
    assert.deepEqual(await stripe.respondToDispute?.(input, call(c.attempt_id)), { kind: 'approved', reference: d.id });
    const closes = mock.requests.filter((r) => r.path === `/v1/disputes/${d.id}/close`);
    assert.deepEqual(
      closes.map((r) => r.idempotency_key),
      [c.attempt_id, c.attempt_id],
    );
    assert.equal(mock.events.filter((e) => e.type === 'charge.dispute.closed' && e.data.object.id === d.id).length, 1);
  });

  test('refusals: a closed dispute, an unknown one, an accept after a submit: declined with Stripe’s status, type and code, no message', async () => {
    const lost = await disputed('lost');
    const closed = await stripe.respondToDispute?.(defendInput(lost.d, lost.transaction_id), call());
    assert.deepEqual(closed, { kind: 'declined', reason: 'Stripe refused the dispute evidence: 400 invalid_request_error' });
    assert.deepEqual([lost.d.status, lost.d.evidence], ['lost', {}]);
    const missing = await stripe.respondToDispute?.(
      { ...defendInput({ id: 'dp_nosuchdispute' }, 'pay_x'), evidence: [{ field: 'customer_name', text: 'x' }] },
      call(),
    );
    assert.deepEqual(missing, { kind: 'declined', reason: 'Stripe refused the dispute evidence: 404 invalid_request_error resource_missing' });
    const { d, transaction_id } = await disputed();
    assert.equal((await stripe.respondToDispute?.(defendInput(d, transaction_id), call()))?.kind, 'approved');
    const late = await stripe.respondToDispute?.({ action: 'accept', processor_ref: d.id, transaction_id, reference: '', evidence: [] }, call());
    assert.deepEqual(late, { kind: 'declined', reason: 'Stripe refused the dispute acceptance: 400 invalid_request_error' });
    assert.equal(d.status, 'under_review');
  });

  test('a refused key declines with credentials_refused and one log line that holds no key', async () => {
    const { d, transaction_id } = await disputed();
    const wrong = createStripeProcessor({ secret_key: 'sk_test_wrongkey_9876', base_url: mock.url, log });
    logged.length = 0;
    const files = mock.files.size;
    const outcome = await wrong.respondToDispute?.(defendInput(d, transaction_id), call());
    assert.deepEqual(outcome, { kind: 'declined', reason: 'processor refused our credentials (401)', credentials_refused: true });
    assert.equal(logged.length, 1);
    assert.match(logged[0] ?? '', /refused our credentials/);
    assert.doesNotMatch(logged.join('\n') + JSON.stringify(outcome), /sk_test_/);
    assert.deepEqual([mock.files.size, d.status], [files, 'needs_response']);
  });

  test('evidence Stripe cannot take is declined naming the field, without any call', async () => {
    const pdf = (field: string): DisputeEvidence => ({ field, file_name: `${field}.pdf`, content_type: 'application/pdf', bytes: PDF });
    const cases: Array<[string, DisputeEvidence[], RegExp]> = [
      ['a third receipt (the second took uncategorized_file)', [pdf('receipt'), pdf('receipt'), pdf('receipt')], /second receipt file does not fit/],
      ['a second receipt when uncategorized_file is given', [pdf('receipt'), pdf('uncategorized_file'), pdf('receipt')], /second receipt file does not fit/],
      [
        'customer_name over 5,000 characters',
        [{ field: 'customer_name', text: 'x'.repeat(5_001) }],
        /customer_name is 5001 characters; Stripe takes at most 5000/,
      ],
      [
        'product_description joined over 20,000',
        [
          { field: 'product_description', text: 'x'.repeat(10_000) },
          { field: 'product_description', text: 'y'.repeat(10_000) },
        ],
        /product_description is 20002 characters/,
      ],
      [
        'over 150,000 characters in all',
        Object.keys(STRIPE_TEXT_MAX)
          .filter((f) => STRIPE_TEXT_MAX[f] === 20_000)
          .map((field) => ({ field, text: 'z'.repeat(19_000) })),
        /152000 characters in all; Stripe takes at most 150000/,
      ],
      ['a field Stripe does not have', [{ field: 'shoe_size', text: '42' }], /no evidence field for shoe_size/],
    ];
    const { d, transaction_id } = await disputed();
    const sent = mock.requests.length;
    for (const [what, evidence, reason] of cases) {
      const outcome = await stripe.respondToDispute?.(defendInput(d, transaction_id, evidence), call());
      assert.equal(outcome?.kind, 'declined', what);
      assert.match(outcome?.kind === 'declined' ? outcome.reason : '', reason, what);
    }
    assert.equal(mock.requests.length, sent, 'no request made');
    assert.deepEqual([d.status, d.evidence], ['needs_response', {}]);
  });
});

describe('the evidence mapping', () => {
  test('every evidence field the gateway takes has a place at Stripe', () => {
    for (const field of EVIDENCE_TEXT_FIELDS) {
      const plan = planStripeEvidence([{ field, text: 'a' }]);
      assert.equal(plan.kind, 'plan', field);
      const text = plan.kind === 'plan' ? plan.plan.text : {};
      assert.deepEqual(text, field in STRIPE_TEXT_MAX ? { [field]: 'a' } : { uncategorized_text: `${field}:\na` }, field);
    }
    for (const field of EVIDENCE_FILE_FIELDS) assert.ok(STRIPE_FILE_FIELDS.has(field), field);
  });

  test('a second file of a field goes to uncategorized_file; empty texts are left out; characters are code points', () => {
    const file = (field: string, file_name: string): DisputeEvidence => ({ field, file_name, content_type: 'image/jpeg', bytes: Buffer.from('x') });
    const plan = planStripeEvidence([
      file('receipt', 'a.jpg'),
      file('receipt', 'b.jpg'),
      file('refund_policy', 'c.jpg'),
      { field: 'billing_address', text: '  ' },
      { field: 'customer_name', text: '😀'.repeat(5_000) },
    ]);
    assert.equal(plan.kind, 'plan');
    if (plan.kind !== 'plan') return;
    assert.deepEqual(
      plan.plan.files.map((f) => [f.stripe_field, f.file.file_name]),
      [
        ['receipt', 'a.jpg'],
        ['uncategorized_file', 'b.jpg'],
        ['refund_policy', 'c.jpg'],
      ],
    );
    assert.deepEqual(Object.keys(plan.plan.text), ['customer_name']);
  });
});
