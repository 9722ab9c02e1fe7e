// Portal: one transaction (docs/contract.md §19).
//   GET  /portal/transactions/:id                                      summary, disputes, timeline, risk, 3-D Secure, refunds, ledger, notifications
//   POST /portal/transactions/:id/capture | cancel | refund | review   the actions the status and the role allow
//   POST /portal/transactions/:id/notifications/:event_id/replay       deliver an event again
// Every read is scoped by the selected account: another merchant's or the other mode's id is
// 404. Every action goes through `portalAction` (role, once per form token, audit line) and
// calls the same domain function as the API, so the checks, ledger postings and events are
// the API's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import type { Outcome, Refusal } from '../core/outcomes.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import type { LedgerEntryRow, LedgerPostingRow } from '../db/tables/ledger.js';
import type { EventAttemptRow } from '../db/tables/notifications.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { currencyExponent, formatAmount } from '../money/currency.js';
import { EventService } from '../notifications/service.js';
import { attrs, field, hidden, html, type SafeHtml } from '../pages/index.js';
import { cancelPayment } from '../payments/cancel.js';
import { capturePayment } from '../payments/capture.js';
import { accountPayment } from '../payments/reader.js';
import { canApply } from '../payments/states.js';
import { makeRefund } from '../refunds/refund.js';
import { ReviewService } from '../review/service.js';
import { acquiringMessage } from '../web/outcomes.js';
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
import { disputeMoney, disputePath, dueFlag, reasonWords } from './disputes.js';
import { resultWords, statusWords, when } from './format.js';
import { cardOf, majorToMinor, shopperEmailOf } from './search.js';

const Id = PathId;
const Params = Type.Object({ transaction_id: Id });
const EventParams = Type.Object({ transaction_id: Id, event_id: Id });
const secrets = { csrf: Type.String({ maxLength: 100 }), form_token: Type.Optional(Type.String({ maxLength: 255 })) };
/** `confirm=yes`: sent by the confirmation page's form; a cancel or refund without it shows that page and changes nothing. */
const confirm = { confirm: Type.Optional(Type.Literal('yes')) };
const AmountBody = Type.Object(
  {
    ...secrets,
    ...confirm,
    amount: Type.String({ maxLength: 24 }),
    reason: Type.Optional(Type.String({ maxLength: 255, pattern: '^[^\\x00-\\x1F\\x7F]*$' })),
  },
  { additionalProperties: false },
);
const PlainBody = Type.Object(secrets, { additionalProperties: false });
const CancelBody = Type.Object({ ...secrets, ...confirm }, { additionalProperties: false });
const ReviewBody = Type.Object({ ...secrets, decision: Type.Union([Type.Literal('accept'), Type.Literal('reject')]) }, { additionalProperties: false });
type IdParams = Static<typeof Params>;

/** Most events and ledger rows one page lists (a payment has a handful; the bound is docs/style.md §9). */
const MAX_ROWS = 200;

const time = when;
const detailPath = (id: string) => `/portal/transactions/${encodeURIComponent(id)}`;

/** The payment of the selected account, or 404 (another account's id included). */
async function owned(deps: PortalDeps, request: FastifyRequest, transaction_id: string): Promise<PaymentRow> {
  const row = await accountPayment(deps.store.db, ctx(request).account.account_id, transaction_id);
  if (!row) throw notFound();
  return row;
}

/** The portal's table of the core's outcomes: the page's status (422 is shown on the form, filled in). */
const PORTAL_STATUS: Readonly<Record<Outcome, number>> = {
  invalid_input: 422,
  amount_exceeds: 422,
  insufficient_funds: 422,
  order_mismatch: 422,
  not_found: 404,
  not_processed: 503,
  invalid_state: 409,
  authorisation_expired: 409,
  no_processor: 409,
  conflict: 409,
  processor_declined: 409,
};

/**
 * A command's refusal as a page: what the amount or the state does not allow, with the way
 * back. The words are the result code and message the merchant's API answers carry.
 */
function refusal(r: Refusal, back: string): PortalError {
  return new PortalError(PORTAL_STATUS[r.outcome], acquiringMessage(r), back);
}

/** The form's amount (major units, up to the currency's digits) in minor units, or a 422 naming the field. */
function amountOf(text: string, row: PaymentRow, back: string): number {
  const exp = currencyExponent(row.currency) ?? 2;
  const minor = majorToMinor(text.trim(), exp);
  if (minor === null || minor <= 0)
    throw new PortalError(422, `amount: "${text}" is not an amount in ${row.currency} (a positive decimal with at most ${exp} decimal places).`, back);
  return minor;
}

/** The audit words of an amount (never card data). */
function amountDetail(text: string, row: PaymentRow): string {
  const minor = majorToMinor(text.trim(), currencyExponent(row.currency) ?? 2);
  return minor === null ? 'amount not readable' : `amount ${formatAmount(minor, row.currency)} ${row.currency}`;
}

interface Detail {
  row: PaymentRow;
  refunds: Array<{
    refund_reference_id: string;
    refund_reference: string;
    refund_amount_minor: number;
    status: string;
    created_at: number;
    refund_reason: string;
  }>;
  events: Awaited<ReturnType<EventService['listEvents']>>;
  attempts: Map<string, EventAttemptRow[]>;
  postings: LedgerPostingRow[];
  entries: Map<string, LedgerEntryRow[]>;
  challenge?: { status: string; created_at: number; decided_at: number | null };
  review?: { decision: string; note: string; source: string; decided_at: number };
}

async function loadDetail(deps: PortalDeps, row: PaymentRow): Promise<Detail> {
  const db = deps.store.db;
  const { transaction_id, account_id } = row;
  const [refunds, events, postings, entryRows, challenge, review] = await Promise.all([
    db
      .selectFrom('refunds')
      .select(['refund_reference_id', 'refund_reference', 'refund_amount_minor', 'status', 'created_at', 'refund_reason'])
      .where('transaction_id', '=', transaction_id)
      .where('account_id', '=', account_id)
      .orderBy('created_at')
      .orderBy('refund_reference_id')
      .limit(MAX_ROWS)
      .execute(),
    new EventService(deps.store).listEvents(account_id, { transaction_id }),
    db
      .selectFrom('ledger_postings')
      .selectAll()
      .where('transaction_id', '=', transaction_id)
      .where('account_id', '=', account_id)
      .orderBy('created_at')
      .orderBy('posting_id')
      .limit(MAX_ROWS)
      .execute(),
    db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('transaction_id', '=', transaction_id)
      .where('account_id', '=', account_id)
      .orderBy('entry_id')
      .limit(MAX_ROWS * 4)
      .execute(),
    db.selectFrom('threeds_challenges').select(['status', 'created_at', 'decided_at']).where('transaction_id', '=', transaction_id).executeTakeFirst(),
    db.selectFrom('risk_reviews').select(['decision', 'note', 'source', 'decided_at']).where('transaction_id', '=', transaction_id).executeTakeFirst(),
  ]);
  // Oldest first: the timeline reads in the order things happened.
  events.reverse();
  const ids = events.slice(0, MAX_ROWS).map((e) => e.event_id);
  const attemptRows = ids.length
    ? await db.selectFrom('event_attempts').selectAll().where('event_id', 'in', ids).orderBy('started_at').orderBy('attempt_id').limit(MAX_ROWS).execute()
    : [];
  const attempts = new Map<string, EventAttemptRow[]>();
  for (const a of attemptRows) attempts.set(a.event_id, [...(attempts.get(a.event_id) ?? []), a]);
  const entries = new Map<string, LedgerEntryRow[]>();
  for (const e of entryRows) entries.set(e.posting_id, [...(entries.get(e.posting_id) ?? []), e]);
  return { row, refunds, events, attempts, postings, entries, challenge, review };
}

function money(minor: number, currency: string): string {
  return `${formatAmount(Number(minor), currency)} ${currency}`;
}

function summary(row: PaymentRow): SafeHtml {
  const capturable = row.status === 'authorised' ? Number(row.authorised_minor) : 0;
  return html`<section id="summary" aria-labelledby="h-summary"><h2 id="h-summary">Summary</h2><dl>
<dt>Status</dt><dd id="status">${statusWords(row.status)}</dd>
<dt>Amount</dt><dd id="amount">${money(row.amount_minor, row.currency)}</dd>
<dt>Capturable</dt><dd id="capturable">${money(capturable, row.currency)}</dd>
<dt>Captured</dt><dd id="captured">${money(row.captured_minor, row.currency)}</dd>
<dt>Refunded</dt><dd id="refunded">${money(row.refunded_minor, row.currency)}</dd>
<dt>Order no</dt><dd id="order-no">${row.order_no}</dd>
<dt>Shopper e-mail</dt><dd id="shopper-email">${shopperEmailOf(row) || '—'}</dd>
<dt>Card</dt><dd id="card">${cardOf(row) || '—'}</dd>
<dt>Method</dt><dd id="method">${row.card_brand || row.kind}</dd>
<dt>Capture</dt><dd id="capture-method">${row.capture_method}</dd>
<dt>Result</dt><dd id="result-code">${resultWords(row.result_code)}</dd>
<dt>Created (UTC)</dt><dd id="created">${time(row.created_at)}</dd>
<dt>Updated (UTC)</dt><dd id="updated">${time(row.updated_at)}</dd>
${row.expires_at !== null && html`<dt>Lapses (UTC)</dt><dd id="expires">${time(row.expires_at)}</dd>`}
</dl></section>`;
}

function timeline(d: Detail): SafeHtml {
  return html`<section id="timeline" aria-labelledby="h-timeline"><h2 id="h-timeline">Timeline</h2><ol>
<li data-event="created"><time>${time(d.row.created_at)}</time> payment created</li>
${d.events.map((e) => html`<li ${attrs({ 'data-event': e.event_type, 'data-event-id': e.event_id })}><time>${time(e.created_at)}</time> ${e.event_type} (${e.object_id})</li>`)}
${d.review && html`<li data-event="review"><time>${time(d.review.decided_at)}</time> review ${d.review.decision} (${d.review.source})</li>`}
</ol></section>`;
}

function risk(d: Detail): SafeHtml {
  let reasons: Array<{ name?: unknown; status?: unknown }> = [];
  try {
    const parsed = JSON.parse(d.row.risk_reasons || '[]');
    if (Array.isArray(parsed)) reasons = parsed;
  } catch {
    reasons = [];
  }
  return html`<section id="risk" aria-labelledby="h-risk"><h2 id="h-risk">Risk</h2><dl>
<dt>Score</dt><dd id="risk-score">${d.row.risk_score ?? '—'}</dd>
<dt>Action</dt><dd id="risk-action">${d.row.risk_action || '—'}</dd>
${d.review && html`<dt>Review</dt><dd id="risk-review">${d.review.decision}${d.review.note && html` — ${d.review.note}`}</dd>`}
</dl>${
    reasons.length
      ? html`<ul id="risk-reasons">${reasons.map((r) => html`<li>${String(r.name ?? '')}: ${String(r.status ?? '')}</li>`)}</ul>`
      : html`<p>No rule fired.</p>`
  }</section>`;
}

const THREEDS_WORDS: Record<string, string> = { Y: 'authenticated (Y)', A: 'attempted (A)', N: 'not authenticated (N)', U: 'unavailable (U)' };

function threeds(d: Detail): SafeHtml {
  return html`<section id="threeds" aria-labelledby="h-threeds"><h2 id="h-threeds">3-D Secure</h2><dl>
<dt>Used</dt><dd id="threeds-used">${Number(d.row.is3ds) === 1 || d.challenge ? 'yes' : 'no'}</dd>
<dt>Result</dt><dd id="threeds-result">${THREEDS_WORDS[d.row.threeds_result] ?? (d.row.threeds_result || '—')}</dd>
${d.challenge && html`<dt>Challenge</dt><dd id="threeds-challenge">${statusWords(d.challenge.status)}, opened ${time(d.challenge.created_at)}${d.challenge.decided_at !== null && html`, decided ${time(d.challenge.decided_at)}`}</dd>`}
</dl></section>`;
}

function refunds(d: Detail): SafeHtml {
  const cur = d.row.currency;
  return html`<section id="refunds" aria-labelledby="h-refunds"><h2 id="h-refunds">Refunds</h2>${
    d.refunds.length
      ? html`<div class="scroll"><table><thead><tr><th scope="col">Refund</th><th scope="col">Reference</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Created (UTC)</th><th scope="col">Reason</th></tr></thead><tbody>
${d.refunds.map(
  (r) =>
    html`<tr data-refund-id="${r.refund_reference_id}"><td>${r.refund_reference_id}</td><td>${r.refund_reference}</td><td class="num">${money(r.refund_amount_minor, cur)}</td><td>${statusWords(r.status)}</td><td>${time(r.created_at)}</td><td>${r.refund_reason}</td></tr>`,
)}</tbody></table></div>`
      : html`<p>No refunds.</p>`
  }</section>`;
}

function ledger(d: Detail): SafeHtml {
  return html`<section id="ledger" aria-labelledby="h-ledger"><h2 id="h-ledger">Ledger</h2>${
    d.postings.length
      ? html`<div class="scroll"><table><thead><tr><th scope="col">Posting</th><th scope="col">Reason</th><th scope="col">Time (UTC)</th><th scope="col">Ledger account</th><th scope="col" class="num">Amount</th></tr></thead><tbody>
${d.postings.map((p) =>
  (d.entries.get(p.posting_id) ?? []).map(
    (e, i) =>
      html`<tr data-posting-id="${p.posting_id}"><td>${i === 0 ? p.posting_id : ''}</td><td>${i === 0 ? `${p.reason}${p.ref ? ` (${p.ref})` : ''}` : ''}</td><td>${i === 0 ? time(p.created_at) : ''}</td><td>${e.ledger_account}</td><td class="num">${money(e.amount_minor, e.currency)}</td></tr>`,
  ),
)}</tbody></table></div>`
      : html`<p>No postings.</p>`
  }</section>`;
}

function notifications(request: FastifyRequest, d: Detail, operate: boolean): SafeHtml {
  const base = detailPath(d.row.transaction_id);
  return html`<section id="notifications" aria-labelledby="h-notifications"><h2 id="h-notifications">Notifications</h2>${
    d.events.length
      ? d.events.map(
          (e) =>
            html`<article ${attrs({ class: 'card', 'data-event-id': e.event_id })}><p><strong>${e.event_type}</strong> — ${statusWords(e.status)}, ${e.attempts} attempt(s)${
              e.delivered_at !== null && html`, delivered ${time(e.delivered_at)}`
            }${e.last_error && html`, last error: ${e.last_error}`}</p>${
              (d.attempts.get(e.event_id) ?? []).length > 0 &&
              html`<ol>${(d.attempts.get(e.event_id) ?? []).map(
                (a) => html`<li>${time(a.started_at)}: ${a.outcome}, HTTP ${a.status_code ?? '—'}, ${a.latency_ms} ms${a.error && html` (${a.error})`}</li>`,
              )}</ol>`
            }${
              operate &&
              e.status !== 'no_target' &&
              html`<form method="post" action="${base}/notifications/${e.event_id}/replay" class="inline">${formSecrets(request)}<button type="submit" ${attrs({ id: `replay-${e.event_id}` })}>Replay</button></form>`
            }</article>`,
        )
      : html`<p>No notifications.</p>`
  }</section>`;
}

/** The payment's disputes (docs/contract.md §22), oldest first; a payment has one or two. */
function paymentDisputes(deps: PortalDeps, row: PaymentRow) {
  return deps.store.db
    .selectFrom('disputes')
    .selectAll()
    .where('transaction_id', '=', row.transaction_id)
    .where('account_id', '=', row.account_id)
    .orderBy('created_at')
    .orderBy('dispute_id')
    .limit(MAX_ROWS)
    .execute();
}

/** Its disputes, when it has any: status, amount, due date (flagged within 3 days), a link to each. */
function disputesOf(rows: readonly DisputeRow[], now: number): SafeHtml {
  if (rows.length === 0) return html``;
  return html`<section id="disputes" aria-labelledby="h-disputes"><h2 id="h-disputes">Disputes</h2><ul>${rows.map(
    (x) =>
      html`<li ${attrs({ 'data-dispute-id': x.dispute_id })}><a href="${disputePath(x.dispute_id)}">${x.dispute_id}</a>: ${statusWords(x.status)}, ${reasonWords(x.reason)}, ${disputeMoney(x)}, evidence due ${when(x.evidence_due_by)} UTC${dueFlag(x, now)}</li>`,
  )}</ul></section>`;
}

/** A capture or refund refused before or when it ran, shown on its form again with what was typed. */
interface FormProblem {
  form: 'capture' | 'refund';
  error: string;
  amount: string;
  reason?: string;
}

/** The forms the payment's status allows; only for a role that may operate (the server checks again). */
function actions(request: FastifyRequest, row: PaymentRow, problem?: FormProblem): SafeHtml {
  const base = detailPath(row.transaction_id);
  const refundable = Number(row.captured_minor) - Number(row.refunded_minor);
  const forms: SafeHtml[] = [];
  const captureProblem = problem?.form === 'capture' ? problem : undefined;
  const refundProblem = problem?.form === 'refund' ? problem : undefined;
  const captureForm = canApply('capture', row.status);
  if (captureForm)
    forms.push(html`<form method="post" action="${base}/capture" class="inline" id="capture-form">${formSecrets(request)}
${field({ name: 'amount', id: 'f-capture-amount', label: `Amount to capture (${row.currency}, up to ${formatAmount(Number(row.authorised_minor), row.currency)})`, value: captureProblem?.amount ?? formatAmount(Number(row.authorised_minor), row.currency), required: true, maxlength: 24, inputmode: 'decimal', error: captureProblem?.error })}
<button type="submit" class="primary" id="capture">Capture</button></form>`);
  if (canApply('cancel', row.status))
    forms.push(
      html`<form method="post" action="${base}/cancel" class="inline" id="cancel-form">${formSecrets(request)}<button type="submit" id="cancel">Cancel the payment</button></form>`,
    );
  const refundForm = canApply('refund_partial', row.status) && refundable > 0;
  if (refundForm)
    forms.push(html`<form method="post" action="${base}/refund" class="inline" id="refund-form">${formSecrets(request)}
${field({ name: 'amount', id: 'f-refund-amount', label: `Amount to refund (${row.currency}, up to ${formatAmount(refundable, row.currency)})`, required: true, maxlength: 24, inputmode: 'decimal', value: refundProblem?.amount, error: refundProblem?.error })}
${field({ name: 'reason', id: 'f-refund-reason', label: 'Reason (optional)', maxlength: 255, value: refundProblem?.reason })}
<button type="submit" id="refund">Refund</button></form>`);
  if (row.status === 'review')
    forms.push(html`<form method="post" action="${base}/review" class="inline" id="review-form">${formSecrets(request)}
<button type="submit" name="decision" value="accept" id="review-accept" class="primary">Accept</button>
<button type="submit" name="decision" value="reject" id="review-reject">Reject</button></form>`);
  // A refusal whose form is not shown (nothing left to refund, no longer capturable): the reason still shows.
  const shown = problem?.form === 'capture' ? captureForm : refundForm;
  const unshown = problem && !shown ? html`<p class="error" ${attrs({ id: `${problem.form}-error` })} role="alert">${problem.error}</p>` : html``;
  if (forms.length === 0 && !problem) return html``;
  return html`<section id="actions" aria-labelledby="h-actions"><h2 id="h-actions">Actions</h2>${unshown}${forms}</section>`;
}

// Actions are declared `read` (a session is needed) and checked for `operate` by
// portalAction, so a refused role is written in the audit log too.
export const TRANSACTION_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/transactions/:transaction_id', access: 'read', params: Params, handler: transactionPage },
  { method: 'POST', url: '/transactions/:transaction_id/capture', access: 'read', params: Params, body: AmountBody, handler: captureAction },
  { method: 'POST', url: '/transactions/:transaction_id/cancel', access: 'read', params: Params, body: CancelBody, handler: cancelAction },
  { method: 'POST', url: '/transactions/:transaction_id/refund', access: 'read', params: Params, body: AmountBody, handler: refundAction },
  { method: 'POST', url: '/transactions/:transaction_id/review', access: 'read', params: Params, body: ReviewBody, handler: reviewAction },
  {
    method: 'POST',
    url: '/transactions/:transaction_id/notifications/:event_id/replay',
    access: 'read',
    params: EventParams,
    body: PlainBody,
    handler: replayAction,
  },
];

type ActionRequest<B extends TSchema> = FastifyRequest<{ Params: IdParams; Body: Static<B> }>;

async function transactionPage(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) {
  return detailPage(deps, request, reply, await owned(deps, request, request.params.transaction_id));
}

/** The detail page; with `problem` (status 409 or 422), the capture or refund form shows it with what was typed. */
async function detailPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, row: PaymentRow, problem?: FormProblem & { status: number }) {
  const [d, disputes] = await Promise.all([loadDetail(deps, row), paymentDisputes(deps, row)]);
  const operate = can(ctx(request).user.role, 'operate');
  return sendPortalPage(request, reply, {
    title: `Transaction ${row.transaction_id}`,
    nav: 'transactions',
    status: problem?.status,
    body: html`<p><a href="/portal/transactions" id="back-to-list">All transactions</a></p>${summary(row)}${disputesOf(disputes, deps.now())}${operate && actions(request, row, problem)}${timeline(d)}${risk(
      d,
    )}${threeds(d)}${refunds(d)}${ledger(d)}${notifications(request, d, operate)}`,
  });
}

/**
 * A refusal of the amount or the state (422, 409) as the detail page, the form filled in as
 * typed and the reason under the amount (issue 36 item 4: it was a page of its own). The
 * page is read again, so it shows the payment as it is now.
 */
function onForm(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, row: PaymentRow, typed: Omit<FormProblem, 'error'>) {
  return async (e: unknown) => {
    if (!(e instanceof PortalError && (e.status === 422 || e.status === 409))) throw e;
    const now = (await accountPayment(deps.store.db, row.account_id, row.transaction_id)) ?? row;
    return detailPage(deps, request, reply, now, { ...typed, error: e.message, status: e.status });
  };
}

async function captureAction(deps: PortalDeps, request: ActionRequest<typeof AmountBody>, reply: FastifyReply) {
  const row = await owned(deps, request, request.params.transaction_id);
  const back = detailPath(row.transaction_id);
  return portalAction(deps, request, reply, {
    action: 'payment.capture',
    target: row.transaction_id,
    need: 'operate',
    detail: amountDetail(request.body.amount, row),
    run: async () => {
      const minor = amountOf(request.body.amount, row, back);
      const outcome = await capturePayment(deps, request.log, { account_id: row.account_id, transaction_id: row.transaction_id, amount_minor: minor });
      if (!outcome.ok) throw refusal(outcome, back);
      return withNotice(back, outcome.ok === 'pending' ? 'capture_pending' : 'captured');
    },
  }).catch(onForm(deps, request, reply, row, { form: 'capture', amount: request.body.amount }));
}

const described = (row: PaymentRow) => `${money(row.amount_minor, row.currency)}, order ${row.order_no}, transaction ${row.transaction_id}`;

async function cancelAction(deps: PortalDeps, request: ActionRequest<typeof CancelBody>, reply: FastifyReply) {
  const row = await owned(deps, request, request.params.transaction_id);
  const back = detailPath(row.transaction_id);
  // Nothing to confirm when the status refuses it: the domain's refusal (409) is the answer.
  if (request.body.confirm !== 'yes' && can(ctx(request).user.role, 'operate') && canApply('cancel', row.status))
    return sendConfirmPage(request, reply, {
      title: 'Cancel the payment?',
      nav: 'transactions',
      question: `Cancel the payment of ${described(row)}?`,
      consequence: 'The shopper is not charged and the authorisation is released. This cannot be undone.',
      action: `${back}/cancel`,
      id: 'confirm-cancel',
      label: 'Yes, cancel the payment',
      back,
    });
  return portalAction(deps, request, reply, {
    action: 'payment.cancel',
    target: row.transaction_id,
    need: 'operate',
    detail: `amount ${money(row.amount_minor, row.currency)}`,
    run: async () => {
      const outcome = await cancelPayment(deps, request.log, { account_id: row.account_id, transaction_id: row.transaction_id });
      if (!outcome.ok) throw refusal(outcome, back);
      return withNotice(back, outcome.ok === 'pending' ? 'cancel_pending' : 'cancelled');
    },
  });
}

/** A refund the amount alone refuses (not an amount, or more than is left): a 422 naming it. */
function refundable(text: string, row: PaymentRow, back: string): number {
  const minor = amountOf(text, row, back);
  const left = Number(row.captured_minor) - Number(row.refunded_minor);
  if (minor > left)
    throw new PortalError(
      422,
      `The refund (${money(minor, row.currency)}) is more than what is left to refund: ${formatAmount(left, row.currency)} left to refund.`,
      back,
    );
  return minor;
}

async function refundAction(deps: PortalDeps, request: ActionRequest<typeof AmountBody>, reply: FastifyReply) {
  const c = ctx(request);
  const row = await owned(deps, request, request.params.transaction_id);
  const back = detailPath(row.transaction_id);
  const typed = { form: 'refund' as const, amount: request.body.amount, reason: request.body.reason ?? '' };
  // A refusal of the amount (now, or by the domain when it runs) is shown on the form, filled in.
  const refused = onForm(deps, request, reply, row, typed);
  if (request.body.confirm !== 'yes' && can(c.user.role, 'operate')) {
    let minor: number;
    try {
      minor = refundable(request.body.amount, row, back);
    } catch (e) {
      return refused(e);
    }
    return sendConfirmPage(request, reply, {
      title: 'Make this refund?',
      nav: 'transactions',
      question: `Refund ${money(minor, row.currency)} of the payment of ${described(row)}?`,
      consequence: `The shopper gets the money back; ${typed.reason ? `the reason given: “${typed.reason}”. ` : ''}A refund cannot be undone.`,
      action: `${back}/refund`,
      fields: html`${hidden('amount', typed.amount)}${hidden('reason', typed.reason)}`,
      id: 'confirm-refund',
      label: 'Yes, refund',
      back,
    });
  }
  return portalAction(deps, request, reply, {
    action: 'payment.refund',
    target: row.transaction_id,
    need: 'operate',
    detail: amountDetail(request.body.amount, row),
    run: async () => {
      const minor = amountOf(request.body.amount, row, back);
      // The form token also marks the refund itself, as an Idempotency-Key does for the
      // API: a re-run after a lost answer finds the refund it made instead of refunding twice.
      const idempotency_ref = `portal:${c.user.user_id}:${request.body.form_token ?? ''}`;
      const reason = request.body.reason?.trim() ?? '';
      const cmd = { account: c.account, transaction_id: row.transaction_id, amount_minor: minor, reason, idempotency_ref, metadata: '{}' };
      const outcome = await makeRefund(deps, request.log, cmd);
      if (!outcome.ok) throw refusal(outcome, back);
      return withNotice(back, 'refunded');
    },
  }).catch(refused);
}

async function reviewAction(deps: PortalDeps, request: ActionRequest<typeof ReviewBody>, reply: FastifyReply) {
  const c = ctx(request);
  const row = await owned(deps, request, request.params.transaction_id);
  const back = detailPath(row.transaction_id);
  const decision = request.body.decision === 'accept' ? 'ACCEPT' : 'REJECT';
  return portalAction(deps, request, reply, {
    action: `payment.review_${request.body.decision}`,
    target: row.transaction_id,
    need: 'operate',
    detail: decision,
    run: async () => {
      const outcome = await new ReviewService(deps).reviewPayment({
        account_id: c.account.account_id,
        transaction_id: row.transaction_id,
        decision,
        note: `portal: ${c.user.email}`,
      });
      if (!outcome.ok) throw new PortalError(409, `The review was refused: ${acquiringMessage(outcome)}.`, back);
      return withNotice(back, decision === 'ACCEPT' ? 'review_accepted' : 'review_rejected');
    },
  });
}

async function replayAction(
  deps: PortalDeps,
  request: FastifyRequest<{ Params: Static<typeof EventParams>; Body: Static<typeof PlainBody> }>,
  reply: FastifyReply,
) {
  const row = await owned(deps, request, request.params.transaction_id);
  const back = detailPath(row.transaction_id);
  // The event must be this payment's (or one of its refunds'), on this account.
  const event = await deps.store.db
    .selectFrom('events')
    .select(['event_id', 'object_id', 'event_type'])
    .where('event_id', '=', request.params.event_id)
    .where('account_id', '=', row.account_id)
    .executeTakeFirst();
  if (!event || !(event.object_id === row.transaction_id || event.object_id.startsWith(`${row.transaction_id}-`))) throw notFound();
  return portalAction(deps, request, reply, {
    action: 'notification.replay',
    target: event.event_id,
    need: 'operate',
    detail: `${event.event_type} of ${row.transaction_id}`,
    run: async () => {
      if (!(await new EventService(deps.store).replayEvent(event.event_id, deps.now())))
        throw new PortalError(409, 'This event has no notify_url to deliver to, so it cannot be sent again.', back);
      return withNotice(back, 'notification_replayed');
    },
  });
}
