// Disputes in the portal (docs/contract.md §19, §22; issue 34 item 4): the list by due date with
// the 3-day flag, a dispute's detail with its payment and evidence, evidence given through a
// form (text, and files as multipart) and submitted through the same core as the API (the
// sandbox then decides by the words), accept behind a confirmation, a viewer reading only, a
// refused file shown on the form with nothing stored, audit lines; the transaction detail
// shows its dispute and the dashboard counts them. Both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { EVIDENCE_MAX_BYTES } from '../disputes/service.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { DAY_MS } from './dashboard.js';
import { monthBounds } from './dashboard-disputes.js';
import { formFields, type PortalAgent, type PortalAnswer, signedInUser } from './testing.js';

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
const YEAR = new Date(NOW).getUTCFullYear() + 2;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([0, 0xff, 0xfe, 0x80, 0x81]), Buffer.alloc(100)]);

let gw: TestGateway;
let key: string;
let scheduler: Scheduler;
/** Opened first (fraudulent), then 4.5 days later a product_not_received and an inquiry. */
let early = { tid: '', did: '' };
let late = { tid: '', did: '' };
let inquiry = { tid: '', did: '' };

const db = () => gw.runtime.store.db;

async function pay(card: string): Promise<string> {
  const r = await gw.generic('POST', '/v1/payments', key, {
    amount: 10000,
    currency: 'usd',
    payment_method: { type: 'card', card: { number: card, exp_month: 12, exp_year: YEAR, cvc: '123' } },
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json().transaction_id;
}

async function later(ms = 6_000): Promise<void> {
  gw.clock.advance(ms);
  await scheduler.runDue(gw.runtime.deps.now());
}

async function disputed(card: string): Promise<{ tid: string; did: string }> {
  const tid = await pay(card);
  await later();
  const d = await db().selectFrom('disputes').select('dispute_id').where('transaction_id', '=', tid).executeTakeFirstOrThrow();
  return { tid, did: d.dispute_id };
}

const statusOf = async (did: string) => (await db().selectFrom('disputes').select('status').where('dispute_id', '=', did).executeTakeFirstOrThrow()).status;
const evidenceCount = async (did: string) => (await db().selectFrom('dispute_evidence').select('evidence_id').where('dispute_id', '=', did).execute()).length;
const auditOf = (target: string) => db().selectFrom('portal_audit').selectAll().where('target', '=', target).orderBy('audit_id').execute();

/** Posts the form of `page` that goes to `action` as multipart/form-data, with `fields` and `files`, as a browser does. */
async function postMultipart(
  agent: PortalAgent,
  page: string,
  action: string,
  fields: Record<string, string>,
  files: Array<{ name: string; file_name: string; bytes: Buffer }> = [],
): Promise<PortalAnswer> {
  const shown = await agent.get(page);
  const form = new FormData();
  for (const [k, v] of Object.entries({ ...formFields(shown.body, action), ...fields })) form.append(k, v);
  for (const f of files) form.append(f.name, new Blob([f.bytes]), f.file_name);
  const encoded = new Response(form);
  const payload = Buffer.from(await encoded.arrayBuffer());
  const r = await gw.app.inject({
    method: 'POST',
    url: action,
    remoteAddress: agent.ip,
    headers: { cookie: [...agent.jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': encoded.headers.get('content-type') ?? '' },
    payload,
  });
  return { status: r.statusCode, headers: r.headers as Record<string, string>, body: r.body, location: String(r.headers.location ?? '') };
}

before(async () => {
  gw = await testGateway({ start_ms: NOW });
  key = await gw.apiKey();
  scheduler = createScheduler(gw.runtime);
  early = await disputed('4000000000000259');
  gw.clock.advance(4.5 * DAY_MS);
  late = await disputed('4000000000002685');
  inquiry = await disputed('4000000000001976');
});
after(() => gw.close());

describe('the dispute list', () => {
  test('open disputes soonest due first, the one due within 3 days flagged; amount, reason, status in words, due date', async () => {
    const { agent } = await signedInUser(gw, { role: 'owner' });
    const page = await agent.get('/portal/disputes');
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /<a href="\/portal\/disputes" aria-current="page">Disputes<\/a>/);
    const ids = [...page.body.matchAll(/data-dispute-id="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(ids[0], early.did, 'the earliest due first');
    assert.ok(ids.includes(late.did) && ids.includes(inquiry.did));
    const row = (did: string) => new RegExp(`<tr data-dispute-id="${did}"[^>]*>[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? '';
    assert.match(row(early.did), /data-due-soon="yes"/);
    assert.match(row(early.did), /Due within 3 days/);
    assert.match(row(early.did), /100\.00 USD/);
    assert.match(row(early.did), /fraudulent/);
    assert.match(row(early.did), /needs response/);
    const due = await db().selectFrom('disputes').select('evidence_due_by').where('dispute_id', '=', early.did).executeTakeFirstOrThrow();
    assert.match(row(early.did), new RegExp(new Date(Number(due.evidence_due_by)).toISOString().slice(0, 16).replace('T', ' ')));
    assert.doesNotMatch(row(late.did), /data-due-soon/);
    assert.match(row(late.did), /product not received/);
    assert.match(row(inquiry.did), /warning needs response/);
    assert.match(page.body, /id="due-soon-count">1 due within 3 days/);
  });
});

describe('the dashboard', () => {
  test('the counts (open, due within 3 days) and the dispute rate per month against the 0.9% line', async () => {
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const page = await agent.get('/portal/dashboard');
    assert.equal(page.status, 200, page.body.slice(0, 500));
    assert.match(page.body, /<a href="\/portal\/disputes" id="disputes-open">3<\/a>/);
    assert.match(page.body, /id="disputes-due-soon" class="error">1 <strong>respond now/);
    // Three payments captured in November 2026, all three disputed: 100%, above the line; the months before had none.
    const nov = /<tr data-month="2026-11"[^>]*>[\s\S]*?<\/tr>/.exec(page.body)?.[0] ?? '';
    assert.match(nov, /data-over="yes"/);
    assert.match(
      nov,
      /<td data-label="Disputes" class="num">3<\/td><td data-label="Captured payments" class="num">3<\/td><td data-label="Rate" class="num rate">100\.00%/,
    );
    assert.match(page.body, /<tr data-month="2026-06">[\s\S]*?no captured payments/);
    assert.doesNotMatch(page.body, /data-month="2026-05"/, 'six months');
  });

  test('monthBounds: the starts of the last months and of the next', () => {
    assert.deepEqual(
      monthBounds(Date.UTC(2026, 0, 15, 12), 3).map((t) => new Date(t).toISOString().slice(0, 10)),
      ['2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01'],
    );
  });
});

describe('a dispute', () => {
  test('the detail shows the payment (linked), the evidence list and, for an owner, the forms', async () => {
    const { agent } = await signedInUser(gw, { role: 'owner' });
    const page = await agent.get(`/portal/disputes/${early.did}`);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, new RegExp(`<a href="/portal/transactions/${early.tid}" id="payment-link">`));
    assert.match(page.body, /id="evidence-empty"/);
    assert.match(page.body, /<form method="post" enctype="multipart\/form-data" action="\/portal\/disputes\/[^"]+\/evidence" id="evidence-form">/);
    assert.match(page.body, /id="accept-form"/);
    assert.doesNotMatch(page.body, /id="response-error"/, 'nothing refused yet');
    // A processor's refusal of the last answer is shown, escaped.
    const setError = (response_error: string) =>
      gw.runtime.store.transaction((tx) => tx.updateTable('disputes').set({ response_error }).where('dispute_id', '=', early.did).execute());
    await setError('Adyen refused defendDispute: <late>');
    const refused = await agent.get(`/portal/disputes/${early.did}`);
    assert.match(refused.body, /id="response-error"><strong class="error">Adyen refused defendDispute: &lt;late&gt;<\/strong>/);
    await setError('');
    // The transaction's detail shows its dispute, linked.
    const tx = await agent.get(`/portal/transactions/${early.tid}`);
    assert.match(tx.body, new RegExp(`<a href="/portal/disputes/${early.did}"`));
  });

  test('a file that is not a PDF, PNG or JPEG by its content is refused on the form, naming the field; nothing stored; audited', async () => {
    const { agent } = await signedInUser(gw, { role: 'operator' });
    const path = `/portal/disputes/${early.did}`;
    const r = await postMultipart(agent, path, `${path}/evidence`, { text_field: 'product_description', text: 'kept when refused', submit: '0' }, [
      { name: 'file', file_name: 'receipt.pdf', bytes: Buffer.from('this is plain text, not a PDF') },
    ]);
    assert.equal(r.status, 422, r.body.slice(0, 2000));
    assert.match(r.body, /<p class="error" id="f-file-error" role="alert">Files: [^<]*not a PDF, PNG or JPEG/);
    assert.match(r.body, /aria-invalid="true" aria-describedby="f-file-error"/);
    assert.match(r.body, /<textarea[^>]*>kept when refused<\/textarea>/, 'what was typed is kept');
    assert.equal(await evidenceCount(early.did), 0, 'nothing stored: not the text either');
    const lines = await auditOf(early.did);
    assert.equal(lines.at(-1)?.action, 'dispute.evidence');
    assert.equal(lines.at(-1)?.outcome, 'refused');
    assert.doesNotMatch(lines.at(-1)?.detail ?? '', /kept when refused/, 'the audit line holds no evidence text');
    // Over 5 MB in all: refused on the form, naming the files, nothing stored.
    const big = Buffer.concat([PNG, Buffer.alloc(EVIDENCE_MAX_BYTES - PNG.length + 1)]);
    const tooBig = await postMultipart(agent, path, `${path}/evidence`, { text: '', submit: '1' }, [{ name: 'file', file_name: 'scan.png', bytes: big }]);
    assert.equal(tooBig.status, 422, tooBig.body.slice(0, 2000));
    assert.match(tooBig.body, /<p class="error" id="f-file-error" role="alert">Files: evidence of a dispute is at most 5 MB in all/);
    assert.equal(await evidenceCount(early.did), 0);
    assert.equal(await statusOf(early.did), 'needs_response', 'not submitted either');
  });

  test('an owner adds a PNG, then text with winning_evidence and submits; the decision job makes it won', async () => {
    const { agent } = await signedInUser(gw, { role: 'owner' });
    const path = `/portal/disputes/${early.did}`;
    const png = await postMultipart(agent, path, `${path}/evidence`, { text: '', file_field: 'receipt', submit: '0' }, [
      { name: 'file', file_name: 'receipt.png', bytes: PNG },
    ]);
    assert.equal(png.status, 303, png.body.slice(0, 2000));
    assert.equal(png.location, `${path}?done=evidence_added`);
    assert.equal(await statusOf(early.did), 'needs_response');
    const r = await agent.submit(path, `${path}/evidence`, {
      text_field: 'uncategorized_text',
      text: 'Delivered and signed for: winning_evidence',
      submit: '1',
    });
    assert.equal(r.status, 303, r.body.slice(0, 2000));
    assert.equal(r.location, `${path}?done=evidence_submitted`);
    assert.equal(await statusOf(early.did), 'under_review');
    const page = await agent.get(r.location);
    assert.match(page.body, /id="notice">The evidence was submitted/);
    assert.match(page.body, /data-field="receipt"[\s\S]*?image\/png[\s\S]*?receipt\.png[\s\S]*?113 bytes/);
    assert.match(page.body, /data-field="uncategorized_text"/);
    assert.doesNotMatch(page.body, /winning_evidence/, 'the evidence list never shows the content');
    assert.doesNotMatch(page.body, /id="evidence-form"/, 'under review: no more evidence');
    await later();
    assert.equal(await statusOf(early.did), 'won');
    assert.match((await agent.get(path)).body, /<dd id="status">won<\/dd>/);
    // (Both lines have the same time on the test clock: compared as a set.)
    const actions = (await auditOf(early.did)).filter((l) => l.outcome === 'ok').map((l) => l.action);
    assert.deepEqual(actions.sort(), ['dispute.evidence', 'dispute.evidence_submit']);
    // A closed dispute takes no more: a stale form's post is refused on the page, nothing stored.
    const stale = await agent.request('POST', `${path}/evidence`, {
      ...formFields((await agent.get(`/portal/disputes/${late.did}`)).body, '/portal/account'),
      text: 'more',
      submit: '0',
    });
    assert.equal(stale.status, 409, stale.body.slice(0, 1000));
    assert.match(stale.body, /id="evidence-error" role="alert">[^<]*takes no more evidence/);
    assert.equal(await evidenceCount(early.did), 2);
  });

  test('a viewer sees no forms, and a post as viewer is refused (403), audited, nothing stored', async () => {
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const path = `/portal/disputes/${late.did}`;
    const page = await agent.get(path);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /id="evidence-form"|id="accept-form"/);
    const secrets = formFields(page.body, '/portal/account');
    const r = await agent.request('POST', `${path}/evidence`, { ...secrets, text: 'winning_evidence', submit: '1' });
    assert.equal(r.status, 403, r.body.slice(0, 500));
    const a = await agent.request('POST', `${path}/accept`, { ...formFields((await agent.get(path)).body, '/portal/account'), confirm: 'yes' });
    assert.equal(a.status, 403);
    assert.equal(await evidenceCount(late.did), 0);
    assert.equal(await statusOf(late.did), 'needs_response');
    const refused = (await auditOf(late.did)).filter((l) => l.outcome === 'refused').map((l) => l.action);
    assert.deepEqual(refused.sort(), ['dispute.accept', 'dispute.evidence_submit']);
  });

  test('accept asks first; confirmed, the dispute closes as accepted, audited', async () => {
    const { agent } = await signedInUser(gw, { role: 'admin' });
    const path = `/portal/disputes/${late.did}`;
    const asked = await agent.submit(path, `${path}/accept`);
    assert.equal(asked.status, 200, asked.body.slice(0, 500));
    assert.match(asked.body, /<p id="confirm-question">Accept the dispute of 100\.00 USD \(product not received\)/);
    assert.equal(await statusOf(late.did), 'needs_response', 'asking changes nothing');
    const r = await agent.request('POST', `${path}/accept`, formFields(asked.body, `${path}/accept`));
    assert.equal(r.status, 303, r.body.slice(0, 500));
    assert.equal(r.location, `${path}?done=dispute_accepted`);
    assert.equal(await statusOf(late.did), 'accepted');
    const ok = (await auditOf(late.did)).filter((l) => l.outcome === 'ok').map((l) => l.action);
    assert.deepEqual(ok, ['dispute.accept']);
    // Closed: listed after the open ones.
    const list = await agent.get('/portal/disputes');
    const closed = /<table id="closed-disputes"[\s\S]*?<\/table>/.exec(list.body)?.[0] ?? '';
    assert.match(closed, new RegExp(late.did));
    assert.match(closed, new RegExp(early.did));
  });

  test('another merchant’s dispute is 404; a file on a form that takes none is refused', async () => {
    const other = await gw.newMerchant();
    const { agent } = await signedInUser(gw, { role: 'owner', merchant_id: other.merchant_id });
    assert.equal((await agent.get(`/portal/disputes/${inquiry.did}`)).status, 404);
    const r = await agent.request('POST', `/portal/disputes/${inquiry.did}/accept`, {
      ...formFields((await agent.get('/portal/disputes')).body, '/portal/account'),
      confirm: 'yes',
    });
    assert.equal(r.status, 404);
    assert.equal(await statusOf(inquiry.did), 'warning_needs_response');
    const own = await signedInUser(gw, { role: 'owner' });
    const wrong = await postMultipart(own.agent, '/portal/payouts', '/portal/payouts', {}, [{ name: 'file', file_name: 'a.png', bytes: PNG }]);
    assert.equal(wrong.status, 415, wrong.body.slice(0, 500));
  });
});
