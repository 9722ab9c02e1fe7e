// Portal: one dispute (docs/contract.md §19, §22; issue 34 item 4).
//   GET  /portal/disputes/:dispute_id            the dispute, its payment (linked), its evidence (what it is, never its content)
//   POST /portal/disputes/:dispute_id/evidence   add evidence (a text field and files; multipart) and, with submit=1, submit it
//   POST /portal/disputes/:dispute_id/accept     accept the dispute: first a page that asks, whose form sends confirm=yes
// The actions are the API's (giveEvidence, acceptDispute of the dispute core), through
// `portalAction` (role `operate`, once per form token, audit line); viewers see no forms and
// are refused. A refusal of the evidence (a file that is not a PDF, PNG or JPEG by its
// content, more than 5 MB in all, a dispute that takes no more) is shown on the form, naming
// the field, with nothing stored. Every read is scoped by the selected account: another
// merchant's or the other mode's dispute id is 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { DisputeRow } from '../db/tables/disputes.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { EVIDENCE_FILE_FIELDS, EVIDENCE_TEXT_FIELDS, EVIDENCE_TEXT_MAX } from '../disputes/schema.js';
import { acceptDispute, DisputeRefused, EVIDENCE_MAX_BYTES, type EvidenceItem, giveEvidence } from '../disputes/service.js';
import { takesEvidence } from '../disputes/states.js';
import { formatAmount } from '../money/currency.js';
import { attrs, html, type SafeHtml } from '../pages/index.js';
import { accountPayment } from '../payments/reader.js';
import {
  can,
  ctx,
  formSecrets,
  notFound,
  PathId,
  type PortalDeps,
  PortalError,
  type PortalRoute,
  portalAction,
  sendConfirmPage,
  sendPortalPage,
  withNotice,
} from './context.js';
import { accountDisputes, disputeMoney, disputePath, dueFlag, reasonWords } from './disputes.js';
import { cell, statusWords, when } from './format.js';
import type { UploadedFile } from './multipart.js';

/** The evidence form's body limit: 5 MB of files and the text, with the multipart framing (as /v1/disputeEvidence's 8 MiB). */
export const EVIDENCE_FORM_LIMIT = 8 * 1024 * 1024;
/** Most evidence rows one page lists (the API takes at most 20 files per request; the bound is docs/style.md §9). */
const MAX_EVIDENCE = 200;

const Params = Type.Object({ dispute_id: PathId });
const secrets = { csrf: Type.String({ maxLength: 100 }), form_token: Type.Optional(Type.String({ maxLength: 255 })) };
const literals = (values: readonly string[]) => Type.String({ enum: [...values] });
const EvidenceBody = Type.Object(
  {
    ...secrets,
    text_field: Type.Optional(literals(EVIDENCE_TEXT_FIELDS)),
    text: Type.Optional(Type.String({ maxLength: EVIDENCE_TEXT_MAX })),
    file_field: Type.Optional(literals(EVIDENCE_FILE_FIELDS)),
    submit: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')])),
  },
  { additionalProperties: false },
);
const AcceptBody = Type.Object({ ...secrets, confirm: Type.Optional(Type.Literal('yes')) }, { additionalProperties: false });
type IdParams = Static<typeof Params>;
type EvidenceForm = Static<typeof EvidenceBody>;
/** What was typed, shown again with a refusal (the secrets are fresh on each page). */
type Typed = Omit<EvidenceForm, 'csrf' | 'form_token'>;

// Actions are declared `read` (a session is needed) and checked for `operate` by portalAction,
// so a refused role is written in the audit log too (as transaction.ts does).
export const DISPUTE_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/disputes/:dispute_id', access: 'read', params: Params, handler: disputePage },
  {
    method: 'POST',
    url: '/disputes/:dispute_id/evidence',
    access: 'read',
    params: Params,
    body: EvidenceBody,
    upload: EVIDENCE_FORM_LIMIT,
    handler: evidenceAction,
  },
  { method: 'POST', url: '/disputes/:dispute_id/accept', access: 'read', params: Params, body: AcceptBody, handler: acceptAction },
];

/** The dispute of the selected account, or 404 (another account's or mode's id included). */
async function owned(deps: PortalDeps, request: FastifyRequest, dispute_id: string): Promise<DisputeRow> {
  const row = await accountDisputes(deps.store.db, ctx(request).account).where('dispute_id', '=', dispute_id).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

/** The dispute's evidence: what each piece is, never its content (data_enc is not read). */
function evidenceOf(deps: PortalDeps, dispute_id: string) {
  return deps.store.db
    .selectFrom('dispute_evidence')
    .select(['evidence_id', 'field', 'content_type', 'file_name', 'size_bytes', 'created_at'])
    .where('dispute_id', '=', dispute_id)
    .orderBy('created_at')
    .orderBy('evidence_id')
    .limit(MAX_EVIDENCE)
    .execute();
}
type EvidenceMeta = Awaited<ReturnType<typeof evidenceOf>>[number];

/** Bytes in words: `812 bytes`, `12.4 KB`, `1.2 MB` (1024-based, as the 5 MB limit is). */
export function sizeWords(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1048576).toFixed(1)} MB`;
}

const fieldWords = (f: string) => f.replace(/_/g, ' ');

function summary(d: DisputeRow, payment: PaymentRow | undefined, now: number): SafeHtml {
  const tx = `/portal/transactions/${encodeURIComponent(d.transaction_id)}`;
  return html`<section id="summary" aria-labelledby="h-summary"><h2 id="h-summary">Summary</h2><dl>
<dt>Status</dt><dd id="status">${statusWords(d.status)}</dd>
<dt>Reason</dt><dd id="reason">${reasonWords(d.reason)}</dd>
<dt>Kind</dt><dd id="kind">${d.kind === 'inquiry' ? 'inquiry (no money has moved yet)' : 'chargeback'}</dd>
<dt>Amount</dt><dd id="amount">${disputeMoney(d)}</dd>
<dt>Dispute fee</dt><dd id="fee">${formatAmount(Number(d.fee_minor), d.currency)} ${d.currency}</dd>
<dt>Evidence due (UTC)</dt><dd id="due">${when(d.evidence_due_by)}${dueFlag(d, now)}</dd>
<dt>Evidence submitted (UTC)</dt><dd id="submitted">${when(d.submitted_at) || '—'}</dd>
${d.response_error !== '' && html`<dt>Refused by the processor</dt><dd id="response-error"><strong class="error">${d.response_error}</strong> — add to the evidence and submit again</dd>`}
<dt>Opened (UTC)</dt><dd id="created">${when(d.created_at)}</dd>
${d.closed_at !== null && html`<dt>Closed (UTC)</dt><dd id="closed">${when(d.closed_at)}</dd>`}
<dt>Processor</dt><dd id="connector">${d.connector}</dd>
</dl></section>
<section id="payment" aria-labelledby="h-payment"><h2 id="h-payment">Payment</h2><dl>
<dt>Transaction</dt><dd><a href="${tx}" id="payment-link">${d.transaction_id}</a></dd>
<dt>Order no</dt><dd id="order-no">${d.order_no}</dd>
${payment && html`<dt>Payment amount</dt><dd id="payment-amount">${formatAmount(Number(payment.amount_minor), payment.currency)} ${payment.currency}</dd><dt>Payment status</dt><dd id="payment-status">${statusWords(payment.status)}</dd><dt>Paid (UTC)</dt><dd>${when(payment.created_at)}</dd>`}
</dl></section>`;
}

function evidenceList(rows: readonly EvidenceMeta[]): SafeHtml {
  const total = rows.reduce((a, r) => a + Number(r.size_bytes), 0);
  return html`<section id="evidence" aria-labelledby="h-evidence"><h2 id="h-evidence">Evidence</h2>${
    rows.length
      ? html`<div class="scroll"><table id="evidence-list" class="stack"><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">File name</th><th scope="col" class="num">Size</th><th scope="col">Added (UTC)</th></tr></thead><tbody>
${rows.map(
  (e) =>
    html`<tr ${attrs({ 'data-evidence-id': e.evidence_id, 'data-field': e.field })}>${cell('Field', fieldWords(e.field))}${cell('Type', e.content_type === 'text' ? 'text' : e.content_type)}${cell('File name', e.file_name || '—', 'wrap')}${cell('Size', sizeWords(Number(e.size_bytes)), 'num')}${cell('Added (UTC)', when(e.created_at))}</tr>`,
)}</tbody></table></div><p class="note" id="evidence-total">${sizeWords(total)} of the ${sizeWords(EVIDENCE_MAX_BYTES)} a dispute may hold.</p>`
      : html`<p id="evidence-empty">No evidence yet.</p>`
  }</section>`;
}

/** A refusal of the evidence form: its message, the form field it names, and what was typed. */
interface EvidenceProblem {
  field: 'text' | 'file' | 'dispute';
  error: string;
  status: number;
  values: Typed;
}

function options(values: readonly string[], chosen: string | undefined): SafeHtml[] {
  return values.map((v) => html`<option ${attrs({ value: v, selected: v === chosen })}>${fieldWords(v)}</option>`);
}

/** The error line under a field, and its id for aria-describedby. */
function errorOf(p: EvidenceProblem | undefined, name: EvidenceProblem['field']): SafeHtml {
  return p?.field === name ? html`<p class="error" id="f-${name}-error" role="alert">${p.error}</p>` : html``;
}
const invalid = (p: EvidenceProblem | undefined, name: EvidenceProblem['field']) =>
  p?.field === name ? { 'aria-invalid': 'true', 'aria-describedby': `f-${name}-error` } : {};

function evidenceForm(request: FastifyRequest, d: DisputeRow, p?: EvidenceProblem): SafeHtml {
  const v = p?.values ?? {};
  return html`<form method="post" enctype="multipart/form-data" action="${disputePath(d.dispute_id)}/evidence" id="evidence-form">${formSecrets(request)}
<h3>Add evidence</h3>
<p class="note">A text field, files (PDF, PNG or JPEG, read by their content, not their name), or both; at most ${sizeWords(EVIDENCE_MAX_BYTES)} of evidence in all. Submitting puts the dispute under review (decided by the processor; on a test account by the sandbox): it then takes no more.</p>
<label for="f-text_field">Text field</label><select id="f-text_field" name="text_field">${options(EVIDENCE_TEXT_FIELDS, v.text_field ?? 'uncategorized_text')}</select>
<label for="f-text">Text</label><textarea ${attrs({ id: 'f-text', name: 'text', rows: '5', maxlength: String(EVIDENCE_TEXT_MAX), ...invalid(p, 'text') })}>${v.text ?? ''}</textarea>${errorOf(p, 'text')}
<label for="f-file_field">File shows</label><select id="f-file_field" name="file_field">${options(EVIDENCE_FILE_FIELDS, v.file_field ?? 'uncategorized_file')}</select>
<label for="f-file">Files</label><input ${attrs({ id: 'f-file', name: 'file', type: 'file', multiple: true, accept: 'application/pdf,image/png,image/jpeg', ...invalid(p, 'file') })}>${errorOf(p, 'file')}
<p class="actions"><button type="submit" name="submit" value="0" id="add-evidence">Add evidence</button><button type="submit" name="submit" value="1" class="primary" id="submit-evidence">Add and submit</button></p></form>`;
}

/** What the role and the dispute's status allow: the evidence form and the accept button (operate only; the server checks again). */
function actions(request: FastifyRequest, d: DisputeRow, p?: EvidenceProblem): SafeHtml {
  const open = takesEvidence(d.status);
  // A refusal whose form is not shown (the dispute took no more meanwhile): the reason still shows.
  const unshown = p && !open ? html`<p class="error" id="evidence-error" role="alert">${p.error}</p>` : html``;
  if (!open && !p) return html``;
  return html`<section id="actions" aria-labelledby="h-actions"><h2 id="h-actions">Respond</h2>${unshown}${
    open &&
    html`${p?.field === 'dispute' ? html`<p class="error" id="evidence-error" role="alert">${p.error}</p>` : html``}${evidenceForm(request, d, p)}
<form method="post" action="${disputePath(d.dispute_id)}/accept" class="inline" id="accept-form">${formSecrets(request)}<button type="submit" id="accept">Accept the dispute</button></form>`
  }</section>`;
}

async function disputePage(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) {
  return detailPage(deps, request, reply, await owned(deps, request, request.params.dispute_id));
}

async function detailPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, d: DisputeRow, p?: EvidenceProblem) {
  const c = ctx(request);
  const [payment, evidence] = await Promise.all([accountPayment(deps.store.db, c.account.account_id, d.transaction_id), evidenceOf(deps, d.dispute_id)]);
  const operate = can(c.user.role, 'operate');
  return sendPortalPage(request, reply, {
    title: `Dispute ${d.dispute_id}`,
    nav: 'disputes',
    status: p?.status,
    body: html`<p><a href="/portal/disputes" id="back-to-list">All disputes</a></p>${summary(d, payment, deps.now())}${operate && actions(request, d, p)}${evidenceList(evidence)}${
      !takesEvidence(d.status) && html`<p class="note" id="no-more-evidence">This dispute is ${statusWords(d.status)}: it takes no more evidence.</p>`
    }`,
  });
}

/** The form's evidence in the core's terms, and for each item the form field it came from (for a refusal's field). */
function itemsOf(body: EvidenceForm, files: readonly UploadedFile[]): { items: EvidenceItem[]; origin: Array<'text' | 'file'> } {
  const items: EvidenceItem[] = [];
  const origin: Array<'text' | 'file'> = [];
  const text = body.text?.trim() ?? '';
  if (text) {
    items.push({ field: body.text_field ?? 'uncategorized_text', text });
    origin.push('text');
  }
  for (const f of files) {
    if (f.field !== 'file') throw new PortalError(422, `${f.field}: the form takes files in its “file” field only.`);
    items.push({ field: body.file_field ?? 'uncategorized_file', file_name: f.file_name || 'file', bytes: f.bytes });
    origin.push('file');
  }
  return { items, origin };
}

/** The core's refusal as the form's: the field it names (text, file, or the dispute itself) and the page's status. */
function problemOf(e: unknown, origin: readonly ('text' | 'file')[], values: Typed): EvidenceProblem | undefined {
  if (e instanceof PortalError && e.status === 422) return { field: origin.includes('file') ? 'file' : 'text', error: e.message, status: 422, values };
  if (!(e instanceof DisputeRefused)) return undefined;
  if (e.outcome === 'invalid_state') return { field: 'dispute', error: `${e.message}.`, status: 409, values };
  if (e.outcome !== 'invalid_input') return undefined;
  const at = /^evidence\[(\d+)\]$/.exec(e.field);
  const field = at ? (origin[Number(at[1])] ?? 'file') : origin.includes('file') ? 'file' : 'text';
  const label = field === 'file' ? 'Files' : 'Text';
  return { field, error: `${label}: ${e.message}.`, status: 422, values };
}

/** The audit words of the evidence given (names and sizes, never the text or the bytes). */
function evidenceDetail(body: EvidenceForm, files: readonly UploadedFile[]): string {
  const parts: string[] = [];
  const text = body.text?.trim() ?? '';
  if (text) parts.push(`text ${body.text_field ?? 'uncategorized_text'} (${Buffer.byteLength(text)} bytes)`);
  for (const f of files) parts.push(`file ${body.file_field ?? 'uncategorized_file'} ${f.file_name} (${f.bytes.length} bytes)`);
  if (body.submit === '1') parts.push('submit');
  return parts.join('; ') || 'nothing given';
}

async function evidenceAction(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams; Body: EvidenceForm }>, reply: FastifyReply) {
  const d = await owned(deps, request, request.params.dispute_id);
  const back = disputePath(d.dispute_id);
  const files = request.portalFiles ?? [];
  const submit = request.body.submit === '1';
  let origin: Array<'text' | 'file'> = [];
  const { csrf: _csrf, form_token: _token, ...values } = request.body;
  try {
    return await portalAction(deps, request, reply, {
      action: submit ? 'dispute.evidence_submit' : 'dispute.evidence',
      target: d.dispute_id,
      need: 'operate',
      detail: evidenceDetail(request.body, files),
      run: async () => {
        const given = itemsOf(request.body, files);
        origin = given.origin;
        if (given.items.length === 0 && !submit) throw new PortalError(422, 'Text: give a text or a file, or submit the evidence given so far.', back);
        try {
          await giveEvidence(deps, d, given.items, submit, deps.now());
        } catch (e) {
          if (e instanceof DisputeRefused) throw new RefusedOnForm(e);
          throw e;
        }
        return withNotice(back, submit ? 'evidence_submitted' : 'evidence_added');
      },
    });
  } catch (e) {
    // The core's refusal becomes a PortalError for the audit line; shown on the form, filled in, the page read again.
    const p = problemOf(e instanceof RefusedOnForm ? e.refusal : e, origin, values);
    if (!p) throw e;
    return detailPage(deps, request, reply, await owned(deps, request, d.dispute_id), p);
  }
}

/** A refusal of the core carried through portalAction as a PortalError (so it is audited as refused), with the original. */
class RefusedOnForm extends PortalError {
  constructor(readonly refusal: DisputeRefused) {
    super(refusal.outcome === 'invalid_state' ? 409 : 422, refusal.message);
  }
}

async function acceptAction(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams; Body: Static<typeof AcceptBody> }>, reply: FastifyReply) {
  const d = await owned(deps, request, request.params.dispute_id);
  const back = disputePath(d.dispute_id);
  // Asks first; nothing to confirm when the status refuses it (the refusal is the answer) or the role may not (refused, audited).
  if (request.body.confirm !== 'yes' && can(ctx(request).user.role, 'operate') && takesEvidence(d.status))
    return sendConfirmPage(request, reply, {
      title: 'Accept the dispute?',
      nav: 'disputes',
      question: `Accept the dispute of ${disputeMoney(d)} (${reasonWords(d.reason)}) on order ${d.order_no}, transaction ${d.transaction_id}?`,
      consequence:
        d.kind === 'chargeback'
          ? 'The dispute closes as lost: the disputed amount and the dispute fee stay with the cardholder’s side. This cannot be undone.'
          : 'The inquiry closes as lost without a defence. This cannot be undone.',
      action: `${back}/accept`,
      id: 'confirm-accept',
      label: 'Yes, accept the dispute',
      back,
    });
  return portalAction(deps, request, reply, {
    action: 'dispute.accept',
    target: d.dispute_id,
    need: 'operate',
    detail: `amount ${disputeMoney(d)}`,
    run: async () => {
      try {
        await acceptDispute(deps, d, deps.now());
      } catch (e) {
        if (e instanceof DisputeRefused) throw new PortalError(409, `${e.message}.`, back);
        throw e;
      }
      return withNotice(back, 'dispute_accepted');
    },
  });
}
