// A merchant's answer to an Adyen dispute, sent to Adyen (issue 34 item 3): evidence given and
// submitted through the dispute core goes, by the `dispute.respond` job, to the Adyen mock's
// Disputes API v30 as defence documents (files as they are, the text as a PDF) under a reason
// they satisfy; an acceptance goes as `acceptDispute`. Each send is a recorded processor
// attempt; no answer is sent again under the same attempt id (nothing twice); a refusal puts
// the dispute back with the merchant with Adyen's reason. A PNG is refused before anything is
// stored (Adyen takes none). Both engines.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../../cli/background.js';
import { acceptDispute, DisputeRefused, type EvidenceItem, giveEvidence } from '../../disputes/service.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import type { Scheduler } from '../../scheduler/scheduler.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { setProcessor } from '../config.js';
import { disputesUrlOf } from './connector.js';
import { type AdyenMock, startAdyenMock } from './mock.js';
import { textPdf, wrapLines } from './text-pdf.js';
import { type NotificationRequestItem, signItem } from './webhooks.js';

const API_KEY = 'AQE_live_dispute_answers_9c1e';
const HMAC_KEY = 'C1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F92';
const MERCHANT = 'TollgateDefenceECOM';
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n% receipt\n'), Buffer.alloc(300, 0x20)]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 7)]);
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]);

let gw: TestGateway;
let mock: AdyenMock;
let live: CreatedMerchant;
let scheduler: Scheduler;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 1_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const { store, keyring, deps } = gw.runtime;
  mock = await startAdyenMock({ api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
  live = await gw.newMerchant({ mode: 'live', name: 'Live on Adyen, defending' });
  const row = await setProcessor(
    store,
    keyring,
    {
      account_id: live.account_id,
      connector: 'adyen',
      base_url: mock.url,
      credentials: [`api_key=${API_KEY}`, `merchant_account=${MERCHANT}`, `hmac_key=${HMAC_KEY}`],
    },
    Date.now(),
  );
  mock.webhook_url = `http://127.0.0.1:${port}/hooks/adyen/${row.processor_id}`;
  await deps.processors.reload();
  scheduler = createScheduler(gw.runtime);
});
after(async () => {
  await mock?.close();
  await gw?.close();
});

function freshCard(): string {
  const body = `4${Array.from({ length: 14 }, () => randomInt(10)).join('')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

const db = () => gw.runtime.store.db;
const deps = () => gw.runtime.deps;

/** A captured payment at Adyen, charged back: the dispute's row and its pspReference at the mock. */
async function disputed(): Promise<{ dispute_id: string; psp: string; payment: string; transaction_id: string }> {
  const res = await gw.post('/v1/authorise', directPayment(live, { card: freshCard(), currency: 'EUR', amount: '10.00' }), { merchant: live });
  assert.equal(res.statusCode, 200, res.body);
  const { transaction_id } = readXml(res) as { transaction_id: string };
  mock.queued = [];
  const payment = [...mock.payments.values()].find((p) => p.reference === transaction_id)?.psp as string;
  const psp = mock.openDispute(payment);
  const n: NotificationRequestItem = {
    pspReference: psp,
    originalReference: payment,
    merchantAccountCode: MERCHANT,
    merchantReference: transaction_id,
    amount: { currency: 'EUR', value: 1000 },
    eventCode: 'CHARGEBACK',
    eventDate: new Date().toISOString(),
    paymentMethod: 'visa',
    reason: '',
    success: 'true',
    additionalData: { chargebackReasonCode: '13.1' },
  };
  n.additionalData = { ...n.additionalData, hmacSignature: signItem(HMAC_KEY, n) };
  assert.equal((await mock.post([n])).status, 200);
  const d = await db().selectFrom('disputes').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
  assert.equal(d.status, 'needs_response');
  return { dispute_id: d.dispute_id, psp, payment, transaction_id };
}

const row = (id: string) => db().selectFrom('disputes').selectAll().where('dispute_id', '=', id).executeTakeFirstOrThrow();
const attemptsOf = (id: string) => db().selectFrom('processor_attempts').selectAll().where('object_id', '=', id).orderBy('created_at').execute();
const disputeCalls = () => mock.requests.filter((r) => r.path.startsWith('/ca/services/DisputeService/v30/')).map((r) => r.path.split('/').pop());

async function submit(id: string, items: EvidenceItem[]): Promise<void> {
  await giveEvidence(deps(), await row(id), items, true, deps().now());
}

/** Runs the jobs due now, and again after `ms` (a retry's backoff). */
async function runJobs(ms = 0): Promise<void> {
  if (ms > 0) gw.clock.advance(ms);
  await scheduler.runDue(deps().now());
}

describe('answering Adyen disputes', () => {
  test('evidence goes to Adyen: the receipt as TIDorInvoice, a JPEG and the text (as a PDF) as DefenseMaterial, defended under the reason they satisfy', async () => {
    const d = await disputed();
    const before = mock.requests.length;
    await submit(d.dispute_id, [
      { field: 'product_description', text: 'Blue (wool) jumper, size M — shipped 3 May' },
      { field: 'receipt', file_name: 'receipt.pdf', bytes: PDF },
      { field: 'shipping_documentation', file_name: 'label.jpg', bytes: JPEG },
    ]);
    assert.deepEqual(mock.requests.length, before, 'nothing sent inside the request: the job sends it');
    await runJobs();
    const at = mock.disputes.get(d.psp);
    assert.equal(at?.status, 'defended');
    assert.equal(at?.reason, 'GoodsWereAsDescribed');
    // Files of one request in any order; the text's PDF last.
    const docs = at?.documents ?? [];
    const named = (code: string, type: string) => docs.find((x) => x.defenseDocumentTypeCode === code && x.contentType === type);
    assert.equal(docs.length, 3);
    assert.ok(Buffer.from(named('TIDorInvoice', 'application/pdf')?.content ?? '', 'base64').equals(PDF), 'the receipt as given');
    assert.ok(Buffer.from(named('DefenseMaterial', 'image/jpeg')?.content ?? '', 'base64').equals(JPEG), 'the JPEG as given');
    assert.deepEqual([docs[2]?.defenseDocumentTypeCode, docs[2]?.contentType], ['DefenseMaterial', 'application/pdf']);
    const written = Buffer.from(docs[2]?.content ?? '', 'base64').toString('latin1');
    assert.match(written, /\(Blue \\\(wool\\\) jumper, size M \? shipped 3 May\) Tj/, 'the text in the PDF, delimiters escaped, non-Latin-1 as ?');
    const [a] = await attemptsOf(d.dispute_id);
    assert.deepEqual([a?.operation, a?.status, a?.connector, a?.reference], ['dispute_defend', 'approved', 'adyen', d.psp]);
    assert.equal((await row(d.dispute_id)).status, 'under_review', 'Adyen decides later, by notification');
    assert.deepEqual(disputeCalls().slice(-3), ['retrieveApplicableDefenseReasons', 'supplyDefenseDocument', 'defendDispute']);
  });

  test('text alone: one PDF of DefenseMaterial, defended as SupplyDefenseMaterial', async () => {
    const d = await disputed();
    await submit(d.dispute_id, [{ field: 'uncategorized_text', text: 'The cardholder signed for the parcel.' }]);
    await runJobs();
    const at = mock.disputes.get(d.psp);
    assert.deepEqual([at?.status, at?.reason, at?.documents.length], ['defended', 'SupplyDefenseMaterial', 1]);
  });

  test('no answer (a 500): the attempt is left unknown and the retry sends again under the same attempt id; Adyen holds the documents once', async () => {
    const d = await disputed();
    await submit(d.dispute_id, [{ field: 'uncategorized_text', text: 'retry me' }]);
    mock.fault('500');
    await runJobs();
    const [first] = await attemptsOf(d.dispute_id);
    assert.equal(first?.status, 'unknown');
    assert.equal(mock.disputes.get(d.psp)?.status, 'open');
    await runJobs(40_000);
    const all = await attemptsOf(d.dispute_id);
    assert.equal(all.length, 1, 'one attempt, sent twice');
    assert.deepEqual([all[0]?.attempt_id, all[0]?.status], [first?.attempt_id, 'approved']);
    assert.equal(mock.disputes.get(d.psp)?.status, 'defended');
    assert.equal(mock.disputes.get(d.psp)?.documents.length, 1);
    // The job ran to its end: running what is due sends nothing more.
    const calls = disputeCalls().length;
    await runJobs(700_000);
    assert.equal(disputeCalls().length, calls);
  });

  test('Adyen refuses (the dispute was accepted in its Customer Area): the dispute is back with the merchant, with the reason, and can be answered again', async () => {
    const d = await disputed();
    const at = mock.disputes.get(d.psp);
    if (at) at.status = 'accepted';
    await submit(d.dispute_id, [{ field: 'uncategorized_text', text: 'too late' }]);
    await runJobs();
    const back = await row(d.dispute_id);
    assert.equal(back.status, 'needs_response');
    assert.match(back.response_error, /^Adyen offers no defense reason/, 'Adyen lists no reason to defend an accepted dispute');
    assert.equal(back.submitted_at, null);
    const [a] = await attemptsOf(d.dispute_id);
    assert.deepEqual([a?.status, a?.claim_key], ['declined', null]);
    const events = await db().selectFrom('events').select('event_type').where('object_id', '=', d.dispute_id).orderBy('created_at').execute();
    assert.equal(events.at(-1)?.event_type, 'dispute.updated');
    if (at) at.status = 'open';
    await submit(d.dispute_id, []);
    await runJobs();
    assert.equal(mock.disputes.get(d.psp)?.status, 'defended');
    const after = await row(d.dispute_id);
    assert.deepEqual([after.status, after.response_error], ['under_review', '']);
    assert.equal((await attemptsOf(d.dispute_id)).length, 2);
  });

  test('accepting sends acceptDispute: accepted at Adyen, the attempt approved', async () => {
    const d = await disputed();
    await acceptDispute(deps(), await row(d.dispute_id), deps().now());
    await runJobs();
    assert.equal(mock.disputes.get(d.psp)?.status, 'accepted');
    const [a] = await attemptsOf(d.dispute_id);
    assert.deepEqual([a?.operation, a?.status], ['dispute_accept', 'approved']);
    assert.equal((await row(d.dispute_id)).status, 'accepted');
    assert.deepEqual((await verifyLedger(db())).problems, []);
  });

  test('a PNG for an Adyen dispute is refused before anything is stored, naming the file', async () => {
    const d = await disputed();
    await assert.rejects(
      giveEvidence(deps(), await row(d.dispute_id), [{ field: 'receipt', file_name: 'r.png', bytes: PNG }], false, deps().now()),
      (e: unknown) => e instanceof DisputeRefused && e.field === 'evidence[0]' && /PDF and JPEG/.test(e.message),
    );
    const held = await db().selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', d.dispute_id).execute();
    assert.equal(held.length, 0);
  });
});

describe('the Disputes API address and the evidence PDF', () => {
  test('Adyen’s Customer Area host for its own Checkout addresses, the same origin for any other', () => {
    assert.equal(disputesUrlOf(new URL('https://checkout-test.adyen.com/v71')), 'https://ca-test.adyen.com/ca/services/DisputeService/v30');
    assert.equal(
      disputesUrlOf(new URL('https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/v71')),
      'https://ca-live.adyen.com/ca/services/DisputeService/v30',
    );
    assert.equal(disputesUrlOf(new URL('http://127.0.0.1:9/v71')), 'http://127.0.0.1:9/ca/services/DisputeService/v30');
    assert.equal(disputesUrlOf(new URL('https://adyen.com.evil.example/v71')), 'https://adyen.com.evil.example/ca/services/DisputeService/v30');
  });

  test('the PDF’s cross-reference table points at its objects, and long text wraps onto pages', () => {
    const text = Array.from({ length: 130 }, (_, i) => `line ${i}`).join('\n');
    const pdf = textPdf([{ heading: 'uncategorized text', text }]).toString('latin1');
    assert.ok(pdf.startsWith('%PDF-1.4\n') && pdf.endsWith('%%EOF\n'));
    const startxref = Number(/startxref\n(\d+)\n/.exec(pdf)?.[1]);
    assert.ok(pdf.slice(startxref).startsWith('xref\n'));
    const offsets = [...pdf.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
    for (const [i, o] of offsets.entries()) assert.ok(pdf.slice(o).startsWith(`${i + 1} 0 obj\n`), `object ${i + 1} at ${o}`);
    assert.match(pdf, /\/Count 3 /, '131 lines: three pages of 60');
    assert.deepEqual(wrapLines(`${'a'.repeat(60)} ${'b'.repeat(60)}`), ['a'.repeat(60), 'b'.repeat(60)]);
  });
});
