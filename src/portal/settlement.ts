// Portal: settlement batches (docs/contract.md §19, §23; issue 35 item 2).
//   GET /portal/settlement                    the account's daily batches, newest day first, 50 a page (keyset on day,
//                                             then currency), filtered by a month or a from/to range of days
//   GET /portal/settlement/:batch_id          a batch's summary and its lines (each payment linked), with the download
//   GET /portal/settlement/:batch_id.csv      the batch's report as CSV (the same reportCsv as the CLI and the API), streamed
// Batches and lines are read through src/settlement/report.ts (batchRecord, reportLines,
// lineRecord, reportCsv): the page, the CSV, the CLI and /v1/retrievalSettlement say the same.
// Every read is scoped by the selected account: another account's batch id is 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { type Static, Type } from 'typebox';
import type { DB } from '../db/schema.js';
import type { SettlementBatchRow } from '../db/tables/settlement.js';
import { formatAmount } from '../money/currency.js';
import { attrs, html, type SafeHtml } from '../pages/index.js';
import { batchRecord, lineRecord, type ReportLine, reportCsv, reportLines } from '../settlement/report.js';
import { ctx, notFound, PathId, type PortalDeps, type PortalRoute, sendPortalPage } from './context.js';
import { cell, statusWords, when } from './format.js';

export const PAGE_SIZE = 50;
/** Lines one batch page shows at most (a day of 100,000 payments is one batch); the CSV has them all. */
export const LINES_SHOWN = 500;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MONTH = /^(\d{4})-(\d{2})$/;
/** The keyset cursor: the last batch of the previous page, `day.currency`. */
const CURSOR = /^(\d{4}-\d{2}-\d{2})\.([A-Z]{3})$/;

/** Free text without control characters: the formats are checked by rangeOf, whose message is shown on the page (400). */
const text = (maxLength: number) => Type.Optional(Type.String({ maxLength, pattern: '^[^\\x00-\\x1F\\x7F]*$' }));
const ListQuery = Type.Object({ month: text(20), from: text(20), to: text(20), after: text(40) }, { additionalProperties: false });
type Query = Static<typeof ListQuery>;
const Params = Type.Object({ batch_id: PathId });
type IdParams = Static<typeof Params>;

export const SETTLEMENT_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/settlement', access: 'read', querystring: ListQuery, handler: settlementPage },
  { method: 'GET', url: '/settlement/:batch_id.csv', access: 'read', params: Params, handler: batchCsv },
  { method: 'GET', url: '/settlement/:batch_id', access: 'read', params: Params, handler: batchPage },
];

export const batchPath = (id: string) => `/portal/settlement/${encodeURIComponent(id)}`;

/** What the list shows: an inclusive range of days (either end open) and the cursor. */
interface ListFilter {
  from?: string;
  to?: string;
  after?: { day: string; currency: string };
}

/** A filter the page cannot read: the message shown above the form. */
class FilterProblem extends Error {}

/** YYYY-MM-DD, a real day. */
function isDay(v: string): boolean {
  const t = Date.parse(`${v}T00:00:00Z`);
  return DAY.test(v) && !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === v;
}

/** The query as a filter, or a FilterProblem naming the field in words. */
function filterOf(q: Query): ListFilter {
  const month = q.month?.trim() ?? '';
  const from = q.from?.trim() ?? '';
  const to = q.to?.trim() ?? '';
  const f: ListFilter = {};
  if (month) {
    if (from || to) throw new FilterProblem('Give a month or a range of days (from, to), not both.');
    const m = MONTH.exec(month);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 12) throw new FilterProblem('Month: give it as YYYY-MM, for example 2026-11.');
    f.from = `${month}-01`;
    f.to = `${month}-31`; // days compare as text: every day of the month
  }
  if (from) {
    if (!isDay(from)) throw new FilterProblem('From: give a day as YYYY-MM-DD, for example 2026-11-01.');
    f.from = from;
  }
  if (to) {
    if (!isDay(to)) throw new FilterProblem('To: give a day as YYYY-MM-DD, for example 2026-11-30.');
    f.to = to;
  }
  if (from && to && to < from) throw new FilterProblem('To: is before From.');
  const after = q.after?.trim() ?? '';
  if (after) {
    const c = CURSOR.exec(after);
    if (!c || !isDay(c[1] as string)) throw new FilterProblem('Page link (after): not one this page made; start from the first page.');
    f.after = { day: c[1] as string, currency: c[2] as string };
  }
  return f;
}

/** The account's batches of the filter after the cursor, newest day first (currencies A–Z within a day), one more than a page. */
function batchesOf(db: Kysely<DB>, account_id: string, f: ListFilter): Promise<SettlementBatchRow[]> {
  let q = db.selectFrom('settlement_batches').selectAll().where('account_id', '=', account_id);
  if (f.from) q = q.where('day', '>=', f.from);
  if (f.to) q = q.where('day', '<=', f.to);
  const after = f.after;
  if (after) q = q.where((eb) => eb.or([eb('day', '<', after.day), eb.and([eb('day', '=', after.day), eb('currency', '>', after.currency)])]));
  return q
    .orderBy('day', 'desc')
    .orderBy('currency')
    .limit(PAGE_SIZE + 1)
    .execute();
}

/** The filters that are set, as a query string (the next page's link keeps them). */
function filterQuery(q: Query, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  for (const k of ['month', 'from', 'to'] as const) {
    const v = q[k]?.trim();
    if (v) p.set(k, v);
  }
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

function filterForm(q: Query): SafeHtml {
  const input = (name: 'month' | 'from' | 'to', label: string, type: string) =>
    html`<div><label for="f-${name}">${label}</label><input ${attrs({ id: `f-${name}`, name, type, value: q[name] ?? '' })}></div>`;
  return html`<form method="get" action="/portal/settlement" id="filters" class="filters" role="search">
${input('month', 'Month (UTC)', 'month')}${input('from', 'From day (UTC)', 'date')}${input('to', 'To day (UTC, inclusive)', 'date')}
<div class="actions"><button type="submit" class="primary" id="search">Show</button><a class="button" href="/portal/settlement" id="clear-filters">Clear</a></div>
</form>`;
}

function batchRow(b: SettlementBatchRow): SafeHtml {
  const r = batchRecord(b);
  return html`<tr ${attrs({ 'data-batch-id': b.batch_id, 'data-status': b.status })}>
${cell('Day (UTC)', html`<a href="${batchPath(b.batch_id)}">${b.day}</a>`, 'day')}${cell('Currency', b.currency, 'currency')}
${cell('Status', statusWords(b.status), 'status')}${cell('Lines', String(r.lines), 'num lines')}
${cell('Gross', r.gross, 'num gross')}${cell('Fee', r.fee, 'num fee')}${cell('Net', r.net, 'num net')}
${cell('Available at (UTC)', when(b.available_at), 'available')}</tr>`;
}

function batchTable(rows: readonly SettlementBatchRow[], filtered: boolean): SafeHtml {
  if (rows.length === 0) return html`<p id="no-batches">No settlement batches${filtered ? ' in these days' : ' yet'}.</p>`;
  const heads = ['Day (UTC)', 'Currency', 'Status', 'Lines', 'Gross', 'Fee', 'Net', 'Available at (UTC)'];
  const num = new Set(['Lines', 'Gross', 'Fee', 'Net']);
  return html`<div class="scroll"><table id="batches" class="stack"><thead><tr>${heads.map(
    (h) => html`<th scope="col" ${attrs({ class: num.has(h) ? 'num' : undefined })}>${h}</th>`,
  )}</tr></thead><tbody>${rows.map(batchRow)}</tbody></table></div>`;
}

type ListRequest = FastifyRequest<{ Querystring: Query }>;

async function settlementPage(deps: PortalDeps, request: ListRequest, reply: FastifyReply) {
  const c = ctx(request);
  let f: ListFilter;
  try {
    f = filterOf(request.query);
  } catch (e) {
    if (!(e instanceof FilterProblem)) throw e;
    return sendPortalPage(request, reply, {
      title: 'Settlement',
      nav: 'settlement',
      status: 400,
      body: html`<p class="error" id="filter-error" role="alert">${e.message}</p>${filterForm(request.query)}`,
    });
  }
  const rows = await batchesOf(deps.store.db, c.account.account_id, f);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page[page.length - 1];
  const next = rows.length > PAGE_SIZE && last ? filterQuery(request.query, { after: `${last.day}.${last.currency}` }) : '';
  const body = html`<p class="note">Each UTC day’s balance movements close into one batch per currency at midnight: gross, the fees, and net (gross less fees). Net from payments waits as pending until the batch’s available time, then is available for payouts.</p>
${filterForm(request.query)}${batchTable(page, f.from !== undefined || f.to !== undefined)}
<p class="actions">${f.after && html`<a class="button" href="/portal/settlement${filterQuery(request.query)}" id="first-page">Newest first</a>`}${
    next && html`<a class="button" href="/portal/settlement${next}" id="next-page">Older batches</a>`
  }</p>`;
  return sendPortalPage(request, reply, { title: 'Settlement', nav: 'settlement', body });
}

/** The batch of the selected account, or 404 (another account's id included). */
async function owned(deps: PortalDeps, request: FastifyRequest, batch_id: string): Promise<SettlementBatchRow> {
  const row = await deps.store.db
    .selectFrom('settlement_batches')
    .selectAll()
    .where('batch_id', '=', batch_id)
    .where('account_id', '=', ctx(request).account.account_id)
    .executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

/** The payouts that took part of the batch, oldest first. */
function paidBy(db: Kysely<DB>, b: SettlementBatchRow) {
  return db
    .selectFrom('payout_batches as x')
    .innerJoin('payouts as p', 'p.transaction_id', 'x.transaction_id')
    .select(['p.transaction_id', 'p.short_reference_id', 'p.status', 'x.amount_minor'])
    .where('x.batch_id', '=', b.batch_id)
    .where('p.account_id', '=', b.account_id)
    .orderBy('p.transaction_id')
    .limit(LINES_SHOWN)
    .execute();
}

function payoutsOf(b: SettlementBatchRow, paid: Awaited<ReturnType<typeof paidBy>>): SafeHtml {
  const money = (minor: number) => `${formatAmount(minor, b.currency)} ${b.currency}`;
  return html`<section id="payouts" aria-labelledby="h-payouts"><h2 id="h-payouts">Paid out</h2>
<p id="paid-out">${money(Number(b.paid_minor))} of the ${money(Number(b.payable_minor))} this batch brought (its net without payouts)${
    b.status === 'available' ? '' : html`: payouts take from it once it is available`
  }.</p>${
    paid.length > 0 &&
    html`<ul id="payout-list">${paid.map(
      (x) =>
        html`<li data-payout-id="${x.transaction_id}">${x.short_reference_id} (${statusWords(x.status)}): ${money(Number(x.amount_minor))} <small>${x.transaction_id}</small></li>`,
    )}</ul>`
  }</section>`;
}

function summary(b: SettlementBatchRow): SafeHtml {
  const r = batchRecord(b);
  const money = (amount: string) => `${amount} ${b.currency}`;
  return html`<section id="summary" aria-labelledby="h-summary"><h2 id="h-summary">Summary</h2><dl>
<dt>Day (UTC)</dt><dd id="day">${b.day}</dd><dt>Currency</dt><dd id="currency">${b.currency}</dd>
<dt>Status</dt><dd id="status">${statusWords(b.status)}</dd><dt>Lines</dt><dd id="lines">${String(r.lines)}</dd>
<dt>Gross</dt><dd id="gross">${money(r.gross)}</dd><dt>Fee</dt><dd id="fee">${money(r.fee)}</dd><dt>Net</dt><dd id="net">${money(r.net)}</dd>
<dt>Pending part</dt><dd id="pending">${money(r.pending)}</dd><dt>Delay</dt><dd id="delay">${r.delay_days} day${r.delay_days === 1 ? '' : 's'}</dd>
<dt>Closed (UTC)</dt><dd id="closed">${when(b.closes_at)}</dd><dt>Available at (UTC)</dt><dd id="available">${when(b.available_at)}</dd>
<dt>Settled (UTC)</dt><dd id="settled">${when(b.settled_at) || '—'}</dd><dt>Batch</dt><dd id="batch-id">${b.batch_id}</dd>
</dl></section>`;
}

function lineRow(b: SettlementBatchRow, l: ReportLine): SafeHtml {
  const r = lineRecord(b, l);
  const tx = r.transaction_id ? html`<a href="/portal/transactions/${encodeURIComponent(r.transaction_id)}">${r.transaction_id}</a>` : '—';
  return html`<tr ${attrs({ 'data-transaction-id': r.transaction_id || undefined, 'data-kind': r.kind })}>
${cell('Kind', statusWords(r.kind), 'kind')}${cell('Transaction', tx, 'wrap')}${cell('Order no', r.order_no, 'order-no wrap')}
${cell('Reference', r.reference, 'reference wrap')}${cell('Created (UTC)', when(l.created_at), 'created')}
${cell('Gross', r.gross, 'num gross')}${cell('Fee', r.fee, 'num fee')}${cell('Net', r.net, 'num net')}</tr>`;
}

function lineTable(b: SettlementBatchRow, lines: readonly ReportLine[]): SafeHtml {
  if (lines.length === 0) return html`<p id="no-lines">This batch has no lines.</p>`;
  const shown = lines.slice(0, LINES_SHOWN);
  const heads = ['Kind', 'Transaction', 'Order no', 'Reference', 'Created (UTC)', 'Gross', 'Fee', 'Net'];
  return html`<div class="scroll"><table id="lines-table" class="stack"><thead><tr>${heads.map(
    (h) => html`<th scope="col" ${attrs({ class: ['Gross', 'Fee', 'Net'].includes(h) ? 'num' : undefined })}>${h}</th>`,
  )}</tr></thead><tbody>${shown.map((l) => lineRow(b, l))}</tbody></table></div>${
    lines.length > shown.length && html`<p class="note" id="lines-cut">The first ${shown.length} of ${lines.length} lines; the CSV has every line.</p>`
  }`;
}

async function batchPage(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) {
  const b = await owned(deps, request, request.params.batch_id);
  const lines = await reportLines(deps.store.db, b);
  const paid = await paidBy(deps.store.db, b);
  return sendPortalPage(request, reply, {
    title: `Settlement ${b.day} ${b.currency}`,
    nav: 'settlement',
    body: html`<p><a href="/portal/settlement" id="back-to-list">All batches</a></p>${summary(b)}${payoutsOf(b, paid)}
<section id="lines" aria-labelledby="h-lines"><h2 id="h-lines">Lines</h2>
<p class="actions"><a class="button" href="${batchPath(b.batch_id)}.csv" id="download-csv" download>Download CSV</a></p>
${lineTable(b, lines)}</section>`,
  });
}

async function batchCsv(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) {
  const b = await owned(deps, request, request.params.batch_id);
  const csv = reportCsv(deps.store.db, [b]);
  // A storage fault half-way destroys the stream: the download ends short, never looks complete.
  csv.once('error', (err: Error) => request.log.error({ err: { message: err.message, stack: err.stack } }, 'portal: the settlement CSV stopped'));
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="settlement-${b.account_id}-${b.day}-${b.currency}.csv"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(csv);
}
