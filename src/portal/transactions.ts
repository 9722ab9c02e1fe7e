// Portal: the transaction list (docs/contract.md §19).
//   GET /portal/transactions       the selected account's payments, filtered, 50 a page newest first (keyset)
//   GET /portal/transactions.csv   every payment the same filters match, streamed as CSV
// Both read through search.ts, and both render a row with `cellsOf`, so the CSV holds exactly
// what the pages show. Cards appear as BIN + last four only.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { formatAmount } from '../money/currency.js';
import { attrs, field, html, type SafeHtml } from '../pages/index.js';
import { ctx, type PortalDeps, PortalError, type PortalRoute, sendPortalPage } from './context.js';
import {
  CSV_BATCH,
  type Cursor,
  cardOf,
  chooseLead,
  cursorOf,
  FILTER_FIELDS,
  FilterProblem,
  type ListedPayment,
  PAGE_SIZE,
  PAYMENT_STATUSES,
  parseFilters,
  searchPayments,
  type TransactionFilter,
} from './search.js';

const str = (maxLength: number, pattern?: string) => Type.Optional(Type.String({ maxLength, ...(pattern ? { pattern } : {}) }));
/** Free text without control characters (PostgreSQL refuses NUL in text). */
const TEXT = '^[^\\x00-\\x1F\\x7F]*$';

/** The filters of the GET form ('' is "any"); formats and dates are checked again by parseFilters with a message naming the field. */
export const TransactionsQuery = Type.Object(
  {
    from: str(10, '^(\\d{4}-\\d{2}-\\d{2})?$'),
    to: str(10, '^(\\d{4}-\\d{2}-\\d{2})?$'),
    status: Type.Optional(Type.Union([Type.Literal(''), ...PAYMENT_STATUSES.map((s) => Type.Literal(s))])),
    order_no: str(64, TEXT),
    transaction_id: str(64, TEXT),
    last4: str(4, '^(\\d{4})?$'),
    amount: str(24, '^(\\d{1,15}(\\.\\d{1,4})?)?$'),
    /** The keyset cursor: the last transaction of the previous page. */
    after: str(64, TEXT),
    done: str(40, '^[a-z_]*$'),
  },
  { additionalProperties: false },
);
type Query = Static<typeof TransactionsQuery>;

/** The columns of the list and of the CSV, in order. */
export const COLUMNS = ['Created (UTC)', 'Transaction ID', 'Order no', 'Amount', 'Currency', 'Status', 'Card', 'Method'] as const;

/** One row's cells, as text: the list shows these, the CSV writes these. */
export function cellsOf(r: ListedPayment): string[] {
  return [
    new Date(Number(r.created_at)).toISOString(),
    r.transaction_id,
    r.order_no,
    formatAmount(Number(r.amount_minor), r.currency),
    r.currency,
    r.status,
    cardOf(r),
    r.card_brand || r.kind,
  ];
}

function filterOf(query: Query): TransactionFilter {
  try {
    return parseFilters(query);
  } catch (e) {
    if (e instanceof FilterProblem) throw new PortalError(400, `The filter ${e.field} was refused: ${e.problem}.`, '/portal/transactions');
    throw e;
  }
}

/** The filters that are set, as a query string (for the next page and the CSV link). */
function filterQuery(query: Query, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  for (const k of FILTER_FIELDS) {
    const v = query[k]?.trim();
    if (v) p.set(k, v);
  }
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

function filterForm(query: Query): SafeHtml {
  const date = (name: 'from' | 'to', label: string) =>
    html`<div><label for="f-${name}">${label}</label><input ${attrs({ id: `f-${name}`, name, type: 'date', value: query[name] ?? '' })}></div>`;
  const text = (
    name: 'order_no' | 'transaction_id' | 'last4' | 'amount',
    label: string,
    extra: { maxlength: number; pattern?: string; inputmode?: 'numeric' | 'decimal' },
  ) => html`<div>${field({ name, label, value: query[name] ?? '', ...extra })}</div>`;
  return html`<form method="get" action="/portal/transactions" id="filters" class="filters" role="search">
${date('from', 'From (UTC)')}${date('to', 'To (UTC, inclusive)')}
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any</option>${PAYMENT_STATUSES.map(
    (s) => html`<option ${attrs({ value: s, selected: (query.status as string | undefined) === s })}>${s}</option>`,
  )}</select></div>
${text('order_no', 'Order no', { maxlength: 64 })}${text('transaction_id', 'Transaction ID', { maxlength: 64 })}
${text('last4', 'Card last four', { maxlength: 4, pattern: '\\d{4}', inputmode: 'numeric' })}
${text('amount', 'Amount (any currency)', { maxlength: 24, pattern: '\\d{1,15}(\\.\\d{1,4})?', inputmode: 'decimal' })}
<div class="actions"><button type="submit" class="primary" id="search">Search</button><a class="button" href="/portal/transactions" id="clear-filters">Clear</a></div>
</form>`;
}

function table(rows: ListedPayment[]): SafeHtml {
  if (rows.length === 0) return html`<p id="no-transactions">No transactions match.</p>`;
  return html`<div class="scroll"><table id="transactions"><thead><tr>${COLUMNS.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>
${rows.map((r) => {
  const [created, id, order_no, amount, currency, status, card, method] = cellsOf(r);
  return html`<tr data-transaction-id="${r.transaction_id}"><td>${created}</td><td><a href="/portal/transactions/${id}">${id}</a></td><td>${order_no}</td><td class="num">${amount}</td><td>${currency}</td><td>${status}</td><td>${card}</td><td>${method}</td></tr>
`;
})}</tbody></table></div>`;
}

/** A spreadsheet reads a cell starting with = + - @ (or a tab or CR) as a formula: such a text cell gets a leading apostrophe (OWASP "CSV injection"). */
function spreadsheetSafe(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

export const TRANSACTIONS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/transactions', access: 'read', querystring: TransactionsQuery, handler: transactionsPage },
  { method: 'GET', url: '/transactions.csv', access: 'read', querystring: TransactionsQuery, handler: transactionsCsv },
];

type ListRequest = FastifyRequest<{ Querystring: Query }>;

async function transactionsPage(deps: PortalDeps, request: ListRequest, reply: FastifyReply) {
  const account_id = ctx(request).account.account_id;
  const filter = filterOf(request.query);
  let after: Cursor | undefined;
  if (request.query.after) {
    after = await cursorOf(deps.store.db, account_id, request.query.after);
    if (!after) throw new PortalError(400, 'The page link (after) names no transaction of this account; start from the first page.', '/portal/transactions');
  }
  const lead = await chooseLead(deps.store.db, account_id, filter);
  const rows = await searchPayments(deps.store.db, account_id, filter, after, PAGE_SIZE + 1, lead);
  const more = rows.length > PAGE_SIZE;
  const page = rows.slice(0, PAGE_SIZE);
  const last = page[page.length - 1];
  const pager = html`<p class="actions">${after && html`<a class="button" href="/portal/transactions${filterQuery(request.query)}" id="first-page">First page</a>`}${
    more &&
    last &&
    html`<a class="button" href="/portal/transactions${filterQuery(request.query, { after: last.transaction_id })}" id="next-page">Next page</a>`
  }<a class="button" href="/portal/transactions.csv${filterQuery(request.query)}" id="export-csv" download>Export CSV (all matching)</a></p>`;
  return sendPortalPage(request, reply, {
    title: 'Transactions',
    nav: 'transactions',
    body: html`${filterForm(request.query)}${table(page)}${pager}`,
  });
}

async function transactionsCsv(deps: PortalDeps, request: ListRequest, reply: FastifyReply) {
  const c = ctx(request);
  const filter = filterOf(request.query);
  const account_id = c.account.account_id;
  const db = deps.store.db;
  // Every matching row, whatever their number: the keyset is read CSV_BATCH rows a query and
  // written as the client takes them (the stream's backpressure holds the next query back).
  const lead = await chooseLead(db, account_id, filter);
  async function* rows(): AsyncGenerator<string[]> {
    let after: Cursor | undefined;
    for (;;) {
      const batch = await searchPayments(db, account_id, filter, after, CSV_BATCH, lead);
      for (const r of batch) yield cellsOf(r).map(spreadsheetSafe);
      const last = batch[batch.length - 1];
      if (batch.length < CSV_BATCH || !last) return;
      after = { created_at: Number(last.created_at), transaction_id: last.transaction_id };
    }
  }
  const csv = stringify({ header: true, columns: [...COLUMNS], record_delimiter: 'windows' });
  // A storage fault half-way destroys the stream: the download ends short, never looks complete.
  pipeline(Readable.from(rows()), csv).catch((err: Error) => logFailure(request, err));
  const day = new Date(deps.now()).toISOString().slice(0, 10);
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="transactions-${account_id}-${day}.csv"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(csv);
}

function logFailure(request: FastifyRequest, err: Error): void {
  request.log.error({ err: { message: err.message, stack: err.stack } }, 'portal: the CSV export stopped');
}
