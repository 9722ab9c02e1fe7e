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
import { spreadsheetSafe } from '../web/csv.js';
import { ctx, type PortalDeps, PortalError, type PortalRoute, sendPortalPage } from './context.js';
import { cell, resultWords, statusWords, when } from './format.js';
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
  shopperEmailOf,
  type TransactionFilter,
  withOrderRange,
} from './search.js';

const str = (maxLength: number, pattern?: string) => Type.Optional(Type.String({ maxLength, ...(pattern ? { pattern } : {}) }));
/** Free text without control characters (PostgreSQL refuses NUL in text). */
const TEXT = '^[^\\x00-\\x1F\\x7F]*$';

/**
 * The filters of the GET form ('' is "any"). Only length and control characters are refused
 * here; the formats are parseFilters', whose message names the field in words and is shown
 * on the list page above the form (a schema's refusal would be a page quoting a pattern).
 */
export const TransactionsQuery = Type.Object(
  {
    from: str(40, TEXT),
    to: str(40, TEXT),
    status: str(40, TEXT),
    order_no: str(64, TEXT),
    email: str(254, TEXT),
    transaction_id: str(64, TEXT),
    last4: str(40, TEXT),
    amount: str(40, TEXT),
    /** The keyset cursor: the last transaction of the previous page. */
    after: str(64, TEXT),
    done: str(40, '^[a-z_]*$'),
  },
  { additionalProperties: false },
);
type Query = Static<typeof TransactionsQuery>;

/** The columns of the CSV, in order: the list's, with the amounts and the result a spreadsheet reconciles. */
export const COLUMNS = [
  'Created (UTC)',
  'Transaction ID',
  'Order no',
  'Amount',
  'Currency',
  'Status',
  'Card',
  'Method',
  // Added by issue 36 after the export's first eight, so a script reading by position keeps working.
  'Shopper e-mail',
  'Captured',
  'Refunded',
  'Fee',
  'Result',
] as const;
type Column = (typeof COLUMNS)[number];

/**
 * One row's values by column, as the CSV writes them (the time in full ISO 8601 and the status
 * as the API names it, as the export always had them); the list shows some of these, in words.
 * `fee_minor`: the sum of the payment's fee entries in the ledger.
 */
export function cellsOf(r: ListedPayment, fee_minor = 0): Record<Column, string> {
  const amount = (minor: number) => formatAmount(Number(minor), r.currency);
  return {
    'Created (UTC)': new Date(Number(r.created_at)).toISOString(),
    'Transaction ID': r.transaction_id,
    'Order no': r.order_no,
    Amount: amount(r.amount_minor),
    Currency: r.currency,
    Status: r.status,
    Card: cardOf(r),
    Method: r.card_brand || r.kind,
    'Shopper e-mail': shopperEmailOf(r),
    Captured: amount(r.captured_minor),
    Refunded: amount(r.refunded_minor),
    Fee: amount(fee_minor),
    Result: resultWords(r.result_code),
  };
}

/** The filters, or the problem with them (shown on the list page, above the form). */
function filterOf(query: Query): { filter: TransactionFilter; problem?: undefined } | { filter?: undefined; problem: FilterProblem } {
  try {
    return { filter: parseFilters(query) };
  } catch (e) {
    if (e instanceof FilterProblem) return { problem: e };
    throw e;
  }
}

const FIELD_LABELS: Record<string, string> = {
  from: 'From',
  to: 'To',
  status: 'Status',
  order_no: 'Order no',
  email: 'Shopper e-mail',
  transaction_id: 'Transaction ID',
  last4: 'Card last four',
  amount: 'Amount',
  after: 'Page link (after)',
};

/** A filter problem in words: `Card last four: must be the four last digits of the card.` */
function problemText(p: FilterProblem): string {
  return `${FIELD_LABELS[p.field] ?? p.field}: ${p.problem}.`;
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
    name: 'order_no' | 'email' | 'transaction_id' | 'last4' | 'amount',
    label: string,
    extra: { maxlength: number; pattern?: string; inputmode?: 'numeric' | 'decimal' | 'email' },
  ) => html`<div>${field({ name, label, value: query[name] ?? '', ...extra })}</div>`;
  return html`<form method="get" action="/portal/transactions" id="filters" class="filters" role="search">
${date('from', 'From (UTC)')}${date('to', 'To (UTC, inclusive)')}
<div><label for="f-status">Status</label><select id="f-status" name="status"><option value="">Any</option>${PAYMENT_STATUSES.map(
    (s) => html`<option ${attrs({ value: s, selected: (query.status as string | undefined) === s })}>${statusWords(s)}</option>`,
  )}</select></div>
${text('order_no', 'Order no (or its beginning)', { maxlength: 64 })}${text('email', 'Shopper e-mail (or its beginning)', { maxlength: 254, inputmode: 'email' })}${text('transaction_id', 'Transaction ID', { maxlength: 64 })}
${text('last4', 'Card last four', { maxlength: 4, pattern: '\\d{4}', inputmode: 'numeric' })}
${text('amount', 'Amount (any currency)', { maxlength: 24, pattern: '\\d{1,15}(\\.\\d{1,4})?', inputmode: 'decimal' })}
<div class="actions"><button type="submit" class="primary" id="search">Search</button><a class="button" href="/portal/transactions" id="clear-filters">Clear</a></div>
</form>`;
}

/** The list's columns: head, and the cell's class (the browser test and the phone layout find cells by it). */
const LIST: ReadonlyArray<readonly [head: string, cls: string]> = [
  ['Created (UTC)', 'created'],
  ['Transaction ID', 'id wrap'],
  ['Order no', 'order-no wrap'],
  ['Shopper e-mail', 'email wrap'],
  ['Amount', 'amount num'],
  ['Status', 'status'],
  ['Card', 'card-no'],
  ['Method', 'method'],
];

/** The list: a table at a desk, labelled cards on a phone (class `stack`, src/pages/layout.ts). */
function table(rows: ListedPayment[]): SafeHtml {
  if (rows.length === 0) return html`<p id="no-transactions">No transactions match.</p>`;
  return html`<div class="scroll"><table id="transactions" class="stack"><thead><tr>${LIST.map(
    ([head, cls]) => html`<th scope="col" ${attrs({ class: cls.includes('num') ? 'num' : undefined })}>${head}</th>`,
  )}</tr></thead><tbody>
${rows.map((r) => {
  const c = cellsOf(r);
  const values = [
    when(r.created_at),
    html`<a href="/portal/transactions/${r.transaction_id}">${r.transaction_id}</a>`,
    c['Order no'],
    c['Shopper e-mail'],
    `${c.Amount} ${c.Currency}`,
    statusWords(r.status),
    c.Card,
    c.Method,
  ];
  return html`<tr data-transaction-id="${r.transaction_id}">${LIST.map(([head, cls], i) => cell(head, values[i], cls))}</tr>
`;
})}</tbody></table></div>`;
}

export const TRANSACTIONS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/transactions', access: 'read', querystring: TransactionsQuery, handler: transactionsPage },
  { method: 'GET', url: '/transactions.csv', access: 'read', querystring: TransactionsQuery, handler: transactionsCsv },
];

type ListRequest = FastifyRequest<{ Querystring: Query }>;

async function transactionsPage(deps: PortalDeps, request: ListRequest, reply: FastifyReply) {
  const account_id = ctx(request).account.account_id;
  const { filter, problem } = filterOf(request.query);
  let after: Cursor | undefined;
  if (filter && request.query.after) {
    after = await cursorOf(deps.store.db, account_id, request.query.after);
    if (!after) return refusedFilters(request, reply, new FilterProblem('after', 'names no transaction of this account; start from the first page'));
  }
  if (!filter) return refusedFilters(request, reply, problem);
  const f = await withOrderRange(deps.store.db, filter);
  const lead = await chooseLead(deps.store.db, account_id, f);
  const rows = await searchPayments(deps.store.db, account_id, f, after, PAGE_SIZE + 1, lead);
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
  const { filter, problem } = filterOf(request.query);
  if (!filter) throw new PortalError(400, `The filters were refused: ${problemText(problem)}`, '/portal/transactions');
  const f: TransactionFilter = await withOrderRange(deps.store.db, filter);
  const account_id = c.account.account_id;
  const db = deps.store.db;
  // Every matching row, whatever their number: the keyset is read CSV_BATCH rows a query and
  // written as the client takes them (the stream's backpressure holds the next query back).
  const lead = await chooseLead(db, account_id, f);
  async function* rows(): AsyncGenerator<string[]> {
    let after: Cursor | undefined;
    for (;;) {
      const batch = await searchPayments(db, account_id, f, after, CSV_BATCH, lead);
      const fees = await feesOf(db, account_id, batch);
      for (const r of batch) {
        const cells = cellsOf(r, fees.get(r.transaction_id) ?? 0);
        yield COLUMNS.map((k) => spreadsheetSafe(cells[k]));
      }
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

/** The fee entries of the payments in `batch`, summed per payment (one query per CSV batch). */
async function feesOf(db: PortalDeps['store']['db'], account_id: string, batch: ListedPayment[]): Promise<Map<string, number>> {
  if (batch.length === 0) return new Map();
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['transaction_id', (eb) => eb.fn.sum<number>('amount_minor').as('fee')])
    .where('account_id', '=', account_id)
    .where('ledger_account', '=', 'fees')
    .where(
      'transaction_id',
      'in',
      batch.map((r) => r.transaction_id),
    )
    .groupBy('transaction_id')
    .execute();
  return new Map(rows.map((r) => [r.transaction_id, Number(r.fee)]));
}

/** The list page with the form as sent and what is wrong with it, instead of rows (400). */
function refusedFilters(request: ListRequest, reply: FastifyReply, problem: FilterProblem) {
  return sendPortalPage(request, reply, {
    title: 'Transactions',
    nav: 'transactions',
    status: 400,
    body: html`<p class="error" id="filter-error" role="alert">${problemText(problem)}</p>${filterForm(request.query)}`,
  });
}

function logFailure(request: FastifyRequest, err: Error): void {
  request.log.error({ err: { message: err.message, stack: err.stack } }, 'portal: the CSV export stopped');
}
