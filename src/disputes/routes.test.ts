// The acquiring interface's disputes (docs/contract.md §22; issue 34 item 4) through signed
// requests and the client library, on both engines: a dispute from each of the sandbox's dispute
// cards (the scheduler and the test clock), found by dispute_ids, transaction_ids, order_nos
// and a date range; evidence as text and base64 files in JSON, form and XML bodies, submitted
// with `winning_evidence` and won after the decision job; files checked by content (an HTML
// page named .pdf is refused naming its field) and 5 MB in all, nothing stored when refused;
// another merchant's dispute not found; accept; a closed dispute refused with 409.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Static } from 'typebox';
import { createScheduler } from '../cli/background.js';
import { ConflictError, InvalidRequestError, NotFoundError } from '../client/errors.js';
import type { AcceptDisputeRequest, DisputeEvidenceRequest, RetrieveDisputesRequest } from '../client/types.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { encodeBody, type TestGateway, testGateway } from '../test/harness.js';
import { pay } from '../test/lifecycle.js';
import { EVIDENCE_BODY_LIMIT } from './routes.js';
import type { AcceptDisputeBody, DisputeEvidenceBody, RetrievalDisputeBody } from './schema.js';
import { EVIDENCE_MAX_BYTES } from './service.js';

// ---------- the client's request types against the route schemas (checked by tsc) ----------
type Wire<T> = Omit<T, 'merchant_id' | 'account_id' | 'encryption_data'>;
type Shape<T> = T extends readonly (infer E)[] ? Shape<E> : T extends object ? { [K in keyof T]-?: Shape<NonNullable<T[K]>> } : 'leaf';
type Matches<A, B> = [A] extends [B] ? ([Shape<A>] extends [Shape<B>] ? ([Shape<B>] extends [Shape<A>] ? true : false) : false) : false;
const requestTypesMatchSchemas: [
  Matches<RetrieveDisputesRequest, Wire<Static<typeof RetrievalDisputeBody>>>,
  Matches<DisputeEvidenceRequest, Wire<Static<typeof DisputeEvidenceBody>>>,
  Matches<AcceptDisputeRequest, Wire<Static<typeof AcceptDisputeBody>>>,
] = [true, true, true];

type Json = Record<string, any>;

let gw: TestGateway;
let other: CreatedMerchant;
let scheduler: Scheduler;
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(300, 0x20)]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]);
const b64 = (b: Buffer) => b.toString('base64');

before(async () => {
  gw = await testGateway();
  other = await gw.newMerchant({ name: 'Other shop' });
  scheduler = createScheduler(gw.runtime);
  await gw.runtime.store.transaction((tx) =>
    tx.insertInto('dispute_fees').values({ account_id: gw.merchant.account_id, currency: 'USD', fee_minor: 1500, updated_at: 0 }).execute(),
  );
});
after(async () => gw.close());

const ids = (m: CreatedMerchant = gw.merchant) => ({ merchant_id: m.merchant_id, account_id: m.account_id });

/** Moves the clock past the sandbox's delay and runs what fell due. */
async function later(ms = 6_000): Promise<void> {
  gw.clock.advance(ms);
  await scheduler.runDue(gw.runtime.deps.now());
}

/** A captured payment of a dispute card, and its dispute once the sandbox opened it. */
async function disputed(card: string, merchant: CreatedMerchant = gw.merchant): Promise<{ transaction_id: string; order_no: string; dispute_id: string }> {
  const p = await pay(gw, { card, amount: '100.00', merchant });
  await later();
  const d = await gw.runtime.store.db.selectFrom('disputes').select('dispute_id').where('transaction_id', '=', p.transaction_id).executeTakeFirst();
  assert.ok(d, `the sandbox disputed ${card}`);
  return { transaction_id: p.transaction_id, order_no: p.order_no, dispute_id: d.dispute_id };
}

const evidenceCount = async (dispute_id: string) =>
  (await gw.runtime.store.db.selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', dispute_id).execute()).length;
const statusOf = async (dispute_id: string) =>
  (await gw.runtime.store.db.selectFrom('disputes').select('status').where('dispute_id', '=', dispute_id).executeTakeFirstOrThrow()).status;

async function ledgerOk(): Promise<void> {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, []);
}

describe('POST /v1/retrievalDispute', () => {
  test('by dispute_ids, transaction_ids, order_nos and a date range; unknown and another merchant’s ids are not found; the IP allow-list holds', async () => {
    const t0 = gw.clock.now;
    const a = await disputed('4000000000000259');
    const b = await disputed('4000000000002685');
    const res = await gw.post('/v1/retrievalDispute', { ...ids(), dispute_ids: [a.dispute_id, 'dp_unknown'] });
    assert.equal(res.statusCode, 200, res.body);
    const x = res.json();
    assert.equal(x.return_status, '1');
    assert.match(x.encryption_data, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      x.disputes.map((d: Json) => [d.dispute_id, d.query_result]),
      [
        [a.dispute_id, '1'],
        ['dp_unknown', '0'],
      ],
    );
    const found = x.disputes[0];
    assert.equal(found.transaction_id, a.transaction_id);
    assert.equal(found.order_no, a.order_no);
    assert.deepEqual(
      [found.amount, found.currency, found.fee, found.reason, found.kind, found.status],
      ['100.00', 'USD', '15.00', 'fraudulent', 'chargeback', 'needs_response'],
    );
    assert.ok(Date.parse(found.evidence_due_by) > gw.clock.now, 'evidence is due later');
    assert.deepEqual(found.evidence, []);

    const byTx = (await gw.post('/v1/retrievalDispute', { ...ids(), transaction_ids: b.transaction_id })).json();
    assert.deepEqual(
      byTx.disputes.map((d: Json) => [d.dispute_id, d.reason]),
      [[b.dispute_id, 'product_not_received']],
    );
    const byOrder = (await gw.post('/v1/retrievalDispute', { ...ids(), order_nos: [a.order_no, b.order_no] }, { format: 'form' })).json();
    assert.deepEqual(byOrder.disputes.map((d: Json) => d.dispute_id).sort(), [a.dispute_id, b.dispute_id].sort());

    const day = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace(/\D/g, '');
    const range = (await gw.post('/v1/retrievalDispute', { ...ids(), start_date: day(t0), end_date: day(gw.clock.now) }, { format: 'xml' })).json();
    assert.deepEqual(
      range.disputes.map((d: Json) => d.dispute_id),
      [a.dispute_id, b.dispute_id],
      'oldest first',
    );

    // Another merchant's key finds none of them, by any id; its own retrieval is empty.
    const foreign = await gw.post(
      '/v1/retrievalDispute',
      { ...ids(other), dispute_ids: [a.dispute_id], transaction_ids: [a.transaction_id], order_nos: [a.order_no] },
      { merchant: other },
    );
    assert.equal(foreign.statusCode, 200);
    assert.deepEqual(
      foreign.json().disputes.map((d: Json) => [d.dispute_id, d.transaction_id, d.order_no, d.status, d.query_result]),
      [
        [a.dispute_id, '', '', '', '0'],
        ['', a.transaction_id, '', '', '0'],
        ['', '', a.order_no, '', '0'],
      ],
    );

    const refused = await gw.post('/v1/retrievalDispute', { ...ids(), dispute_ids: [a.dispute_id] }, { remoteAddress: '203.0.113.9' });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().return_message, '0403:IP not allowed');
    const none = await gw.post('/v1/retrievalDispute', ids());
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().error_field, 'dispute_ids');
    const many = await gw.post('/v1/retrievalDispute', { ...ids(), dispute_ids: Array.from({ length: 101 }, (_, i) => `dp_${i}`) });
    assert.equal(many.statusCode, 400);
    assert.match(many.json().error_message, /at most 100 ids/);
  });
});

describe('POST /v1/disputeEvidence', () => {
  test('a PDF and text, then submit with winning_evidence: under review, then won after the decision job; the amount comes back', async () => {
    const d = await disputed('4000000000000259');
    const given = await gw.post('/v1/disputeEvidence', {
      ...ids(),
      dispute_id: d.dispute_id,
      product_description: 'Blue tee, size M',
      shipping_tracking_number: '1Z999AA10123456784',
      files: [{ field: 'receipt', file_name: 'receipt.pdf', content_base64: b64(PDF) }],
    });
    assert.equal(given.statusCode, 200, given.body);
    const g = given.json();
    assert.equal(g.status, 'needs_response', 'evidence without submit does not submit');
    assert.deepEqual(g.evidence.map((e: Json) => [e.field, e.type, e.content_type, e.file_name, e.size]).sort(), [
      ['product_description', 'text', 'text', '', 16],
      ['receipt', 'file', 'application/pdf', 'receipt.pdf', PDF.length],
      ['shipping_tracking_number', 'text', 'text', '', 18],
    ]);
    assert.doesNotMatch(given.body, /Blue tee|JVBERi/, 'the evidence’s content is never answered');

    // In XML: one file element (read as a list of one), the deciding words, submit.
    const submitted = await gw.post(
      '/v1/disputeEvidence',
      {
        ...ids(),
        dispute_id: d.dispute_id,
        uncategorized_text: 'Delivered and signed for. winning_evidence',
        files: [{ field: 'shipping_documentation', file_name: 'label.png', content_base64: b64(PNG) }],
        submit: '1',
      },
      { format: 'xml' },
    );
    assert.equal(submitted.statusCode, 200, submitted.body);
    const s = submitted.json();
    assert.equal(s.status, 'under_review');
    assert.ok(s.evidence_submitted_at);
    assert.equal(s.evidence.length, 5);
    assert.equal(await evidenceCount(d.dispute_id), 5);
    await later();
    const won = (await gw.post('/v1/retrievalDispute', { ...ids(), dispute_ids: [d.dispute_id] })).json().disputes[0];
    assert.equal(won.status, 'won');
    assert.ok(won.closed_at);
    await ledgerOk();

    // A closed dispute takes no more evidence: 409 naming dispute_id, nothing stored.
    const late = await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: d.dispute_id, uncategorized_text: 'more' });
    assert.equal(late.statusCode, 409, late.body);
    assert.deepEqual([late.json().return_message, late.json().error_field], ['0409:Conflict', 'dispute_id']);
    assert.match(late.json().error_message, /is won: it takes no more evidence/);
    assert.equal(await evidenceCount(d.dispute_id), 5);
  });

  test('refused before anything is kept: a file that is not a PDF, PNG or JPEG by content, bad base64, over 5 MB, nothing at all; the body limit', async () => {
    const d = await disputed('4000000000002685');
    const html = Buffer.from('<html><body>not a pdf</body></html>');
    const wrong = await gw.post('/v1/disputeEvidence', {
      ...ids(),
      dispute_id: d.dispute_id,
      uncategorized_text: 'winning_evidence',
      files: [
        { field: 'receipt', file_name: 'receipt.pdf', content_base64: b64(PDF) },
        { field: 'customer_signature', file_name: 'signature.pdf', content_base64: b64(html) },
      ],
      submit: '1',
    });
    assert.equal(wrong.statusCode, 400, wrong.body);
    assert.equal(wrong.json().return_message, '0400:Invalid input');
    assert.equal(wrong.json().error_field, 'files[1].content_base64');
    assert.match(wrong.json().error_message, /customer_signature: the file is not a PDF, PNG or JPEG/);

    const garbled = await gw.post(
      '/v1/disputeEvidence',
      { ...ids(), dispute_id: d.dispute_id, files: [{ field: 'receipt', file_name: 'r.pdf', content_base64: 'JVBERi0x*LjQ=' }] },
      { format: 'form' },
    );
    assert.equal(garbled.statusCode, 400, garbled.body);
    assert.equal(garbled.json().error_field, 'files[0].content_base64');
    assert.match(garbled.json().error_message, /not well-formed base64/);

    const big = Buffer.concat([PDF, Buffer.alloc(EVIDENCE_MAX_BYTES - PDF.length + 1, 0x20)]);
    const over = await gw.post('/v1/disputeEvidence', {
      ...ids(),
      dispute_id: d.dispute_id,
      files: [{ field: 'receipt', file_name: 'big.pdf', content_base64: b64(big) }],
    });
    assert.equal(over.statusCode, 400, over.body.slice(0, 500));
    assert.equal(over.json().error_field, 'files');
    assert.match(over.json().error_message, /at most 5 MB in all/);

    const empty = await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: d.dispute_id });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().error_field, 'files');

    const badField = await gw.post('/v1/disputeEvidence', {
      ...ids(),
      dispute_id: d.dispute_id,
      files: [{ field: 'selfie', file_name: 'a.png', content_base64: b64(PNG) }],
    });
    assert.equal(badField.statusCode, 400);
    assert.equal(badField.json().error_field, 'files[0].field');

    const { payload, contentType } = encodeBody({ ...ids(), dispute_id: d.dispute_id, uncategorized_text: 'n'.repeat(EVIDENCE_BODY_LIMIT) }, 'json');
    const tooLarge = await gw.app.inject({ method: 'POST', url: '/v1/disputeEvidence', payload, headers: { 'content-type': contentType } });
    assert.equal(tooLarge.statusCode, 413);
    assert.match(tooLarge.json().error_message, new RegExp(`larger than ${EVIDENCE_BODY_LIMIT} bytes`));
    // Every other route keeps the operator's limit.
    const elsewhere = encodeBody({ ...ids(), dispute_id: d.dispute_id, note: 'n'.repeat(gw.settings.body_limit_bytes) }, 'json');
    const accept = await gw.app.inject({
      method: 'POST',
      url: '/v1/acceptDispute',
      payload: elsewhere.payload,
      headers: { 'content-type': elsewhere.contentType },
    });
    assert.equal(accept.statusCode, 413);

    assert.equal(await evidenceCount(d.dispute_id), 0, 'nothing kept of refused evidence');
    assert.equal(await statusOf(d.dispute_id), 'needs_response', 'nothing submitted');
    const events = await gw.runtime.store.db.selectFrom('events').select('event_type').where('object_id', '=', d.dispute_id).execute();
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['dispute.created'],
    );
  });

  test('another merchant’s dispute id is not found, for evidence and accept; nothing changes', async () => {
    const d = await disputed('4000000000000259');
    for (const [path, body] of [
      ['/v1/disputeEvidence', { dispute_id: d.dispute_id, uncategorized_text: 'winning_evidence', submit: '1' }],
      ['/v1/acceptDispute', { dispute_id: d.dispute_id }],
    ] as const) {
      const res = await gw.post(path, { ...ids(other), ...body }, { merchant: other });
      assert.equal(res.statusCode, 404, `${path}: ${res.body}`);
      assert.deepEqual([res.json().return_message, res.json().error_field], ['0404:Record not found', 'dispute_id']);
    }
    assert.equal(await evidenceCount(d.dispute_id), 0);
    assert.equal(await statusOf(d.dispute_id), 'needs_response');
  });
});

describe('POST /v1/acceptDispute', () => {
  test('an inquiry accepted closes as accepted; again answers it; one under review is refused with 409', async () => {
    const inquiry = await disputed('4000000000001976');
    const res = await gw.post('/v1/acceptDispute', { ...ids(), dispute_id: inquiry.dispute_id }, { format: 'form' });
    assert.equal(res.statusCode, 200, res.body);
    const x = res.json();
    assert.deepEqual([x.status, x.kind], ['accepted', 'inquiry']);
    assert.ok(x.closed_at);
    const again = await gw.post('/v1/acceptDispute', { ...ids(), dispute_id: inquiry.dispute_id });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().status, 'accepted');

    const d = await disputed('4000000000000259');
    await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: d.dispute_id, uncategorized_text: 'still thinking', submit: '1' });
    const late = await gw.post('/v1/acceptDispute', { ...ids(), dispute_id: d.dispute_id });
    assert.equal(late.statusCode, 409, late.body);
    assert.equal(late.json().error_field, 'dispute_id');
    assert.equal(await statusOf(d.dispute_id), 'under_review');
    await ledgerOk();
  });
});

describe('the client library', () => {
  test('retrieveDisputes, disputeEvidence (with submit), acceptDispute; refusals as typed errors naming the field', async () => {
    assert.ok(requestTypesMatchSchemas.every(Boolean));
    const client = gw.client();
    const d = await disputed('4000000000002685');
    const found = await client.retrieveDisputes({ transaction_ids: [d.transaction_id, 'T-UNKNOWN'] });
    const [first, missing] = found.disputes;
    assert.equal(first?.query_result, '1');
    assert.equal(first?.dispute_id, d.dispute_id);
    assert.equal(missing?.query_result, '0');
    assert.equal(missing?.transaction_id, 'T-UNKNOWN');

    const wrong = await client
      .disputeEvidence({ dispute_id: d.dispute_id, files: [{ field: 'receipt', file_name: 'r.pdf', content_base64: b64(Buffer.from('MZ\x90\x00 an exe')) }] })
      .catch((e: unknown) => e);
    assert.ok(wrong instanceof InvalidRequestError, String(wrong));
    assert.equal(wrong.error_field, 'files[0].content_base64');
    const unknown = await client.acceptDispute({ dispute_id: 'dp_nope' }).catch((e: unknown) => e);
    assert.ok(unknown instanceof NotFoundError, String(unknown));

    const given = await client.disputeEvidence({
      dispute_id: d.dispute_id,
      customer_communication: 'The shopper confirmed delivery by e-mail. losing_evidence',
      files: [{ field: 'customer_communication', file_name: 'mail.pdf', content_base64: b64(PDF) }],
      submit: '1',
    });
    assert.equal(given.status, 'under_review');
    assert.equal(given.evidence.length, 2);
    await later();
    const [lost] = (await client.retrieveDisputes({ dispute_ids: d.dispute_id })).disputes;
    assert.equal(lost?.status, 'lost');
    const closed = await client.acceptDispute({ dispute_id: d.dispute_id }).catch((e: unknown) => e);
    assert.ok(closed instanceof ConflictError, String(closed));
    assert.equal(closed.error_field, 'dispute_id');

    const inquiry = await disputed('4000000000001976');
    const accepted = await client.acceptDispute({ dispute_id: inquiry.dispute_id });
    assert.equal(accepted.status, 'accepted');
    assert.equal(accepted.dispute_id, inquiry.dispute_id);
    await ledgerOk();
  });
});
