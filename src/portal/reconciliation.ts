// Portal: reconciliation runs (docs/contract.md §19, §23; issue 35 item 3; docs/finance.md
// "Reconciling with your processor").
//   GET /portal/reconciliation            the account's kept runs of `npx tollgate reconcile`, newest first, with
//                                         their counts per category; a run with mismatches is flagged
//   GET /portal/reconciliation/:run_id    a run: its file, counts, and the mismatches it kept (in the order found)
// Read through the reconcile module's own readers (listRuns, readRun: what `reconcile list` and
// `reconcile show` print). Access `manage` (owners and admins): a processor's report, its fees
// and what disagrees with it are the finance side of the account, as settings and payouts are.
// A run of another account is 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { ReconciliationItemRow, ReconciliationRunRow } from '../db/tables/reconciliation.js';
import { currencyExponent, formatAmount } from '../money/currency.js';
import { attrs, html, type SafeHtml } from '../pages/index.js';
import { listRuns, readRun } from '../settlement/reconcile/runs.js';
import { ctx, notFound, PathId, type PortalDeps, type PortalRoute, sendPortalPage } from './context.js';
import { cell, statusWords, when } from './format.js';

/** Runs the list shows (the newest; `reconcile list` shows as many). */
export const RUNS_SHOWN = 100;
/** Mismatches a run's page shows at most (a run keeps up to 10,000; `reconcile show --limit` reads more). */
export const ITEMS_SHOWN = 500;

const Params = Type.Object({ run_id: PathId });
type IdParams = Static<typeof Params>;

export const RECONCILIATION_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/reconciliation', access: 'manage', handler: runsPage },
  { method: 'GET', url: '/reconciliation/:run_id', access: 'manage', params: Params, handler: runPage },
];

/** The categories of a run, as `reconcile --help` words them (docs/finance.md). */
const CATEGORIES: ReadonlyArray<readonly [key: keyof ReconciliationRunRow, label: string, meaning: string, mismatch: boolean]> = [
  ['matched', 'Matched', 'the line and a Tollgate movement agree: same payment, amount, currency and fee', false],
  ['missing_here', 'Missing here', 'a line of the processor Tollgate has no movement for', true],
  ['missing_at_processor', 'Missing at processor', 'a Tollgate movement within the file’s dates that no line reports', true],
  ['amount_differs', 'Amount differs', 'the same movement, another amount or currency', true],
  ['fee_differs', 'Fee differs', 'the processor’s fee is not the fee Tollgate charged for the movement', true],
  ['not_applicable', 'Not applicable', 'lines of types Tollgate does not track (fees invoiced, payouts, transfers, …)', false],
];

export const runPath = (id: string) => `/portal/reconciliation/${encodeURIComponent(id)}`;

/** A count, flagged in words and colour when it is a mismatch count above 0. */
function countCell(r: ReconciliationRunRow, key: keyof ReconciliationRunRow, label: string, mismatch: boolean): SafeHtml {
  const n = Number(r[key]);
  return cell(label, mismatch && n > 0 ? html`<strong class="error">${String(n)}</strong>` : String(n), `num ${key.replace(/_/g, '-')}`);
}

function mismatchesCell(r: ReconciliationRunRow): SafeHtml {
  const n = r.mismatches;
  return cell('Mismatches', n > 0 ? html`<strong class="error">${`${n} mismatch${n === 1 ? '' : 'es'}`}</strong>` : 'none', 'mismatches');
}

function runRow(r: ReconciliationRunRow): SafeHtml {
  return html`<tr ${attrs({ 'data-run-id': r.run_id, 'data-mismatches': String(r.mismatches), class: r.mismatches > 0 ? 'mismatched' : undefined })}>
${cell('When (UTC)', html`<a href="${runPath(r.run_id)}">${when(r.started_at)}</a>`, 'when')}${cell('Processor', r.connector, 'connector')}
${cell('File', r.file_name, 'file wrap')}${cell('Lines', String(r.lines), 'num lines')}${mismatchesCell(r)}
${CATEGORIES.map(([key, label, , mismatch]) => countCell(r, key, label, mismatch))}</tr>`;
}

function runTable(runs: readonly ReconciliationRunRow[]): SafeHtml {
  const heads = ['When (UTC)', 'Processor', 'File', 'Lines', 'Mismatches', ...CATEGORIES.map(([, label]) => label)];
  const num = new Set(['Lines', ...CATEGORIES.map(([, label]) => label)]);
  return html`<div class="scroll"><table id="runs" class="stack"><thead><tr>${heads.map(
    (h) => html`<th scope="col" ${attrs({ class: num.has(h) ? 'num' : undefined })}>${h}</th>`,
  )}</tr></thead><tbody>${runs.map(runRow)}</tbody></table></div>`;
}

async function runsPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const runs = await listRuns(deps.store.db, ctx(request).account.account_id, RUNS_SHOWN);
  const flagged = runs.filter((r) => r.mismatches > 0).length;
  const body = html`<p class="note">Each run matched a processor’s settlement report (Adyen’s settlement details report, Stripe’s balance transactions) line by line with this account’s ledger. Runs are made with <code>npx tollgate reconcile</code>; the ${RUNS_SHOWN} newest are listed.</p>
${
  runs.length === 0
    ? html`<p id="no-runs">No reconciliation runs for this account yet.</p>`
    : html`<p id="runs-count">${String(runs.length)} run${runs.length === 1 ? '' : 's'}${flagged > 0 && html`, <strong class="error" id="flagged-count">${String(flagged)} with mismatches</strong>`}.</p>${runTable(runs)}`
}`;
  return sendPortalPage(request, reply, { title: 'Reconciliation', nav: 'reconciliation', body });
}

/** Minor units as the currency writes them; '—' for a side that has nothing. */
function money(minor: number | null, currency: string): string {
  if (minor === null) return '—';
  return currencyExponent(currency) === null ? `${minor} (minor units)` : `${formatAmount(minor, currency)} ${currency}`;
}

function runSummary(r: ReconciliationRunRow): SafeHtml {
  const range = r.from_ms === null ? '—' : `${when(r.from_ms)} to ${when(r.to_ms)}`;
  return html`<section id="summary" aria-labelledby="h-summary"><h2 id="h-summary">Summary</h2><dl>
<dt>Processor</dt><dd id="connector">${r.connector}</dd><dt>File</dt><dd id="file-name">${r.file_name}</dd>
<dt>File SHA-256</dt><dd id="file-sha256"><code>${r.file_sha256}</code></dd><dt>Lines</dt><dd id="lines">${String(r.lines)}</dd>
<dt>Report’s dates (UTC)</dt><dd id="range">${range}</dd><dt>Run (UTC)</dt><dd id="started">${when(r.started_at)}</dd>
<dt>Mismatches</dt><dd id="mismatches">${r.mismatches > 0 ? html`<strong class="error">${String(r.mismatches)}</strong>` : 'none'}</dd>
</dl>
<div class="scroll"><table id="counts" class="stack"><thead><tr><th scope="col">Category</th><th scope="col" class="num">Lines</th><th scope="col">Meaning</th></tr></thead><tbody>${CATEGORIES.map(
    ([key, label, meaning, mismatch]) =>
      html`<tr ${attrs({ 'data-category': key })}>${cell('Category', label)}${countCell(r, key, 'Lines', mismatch)}${cell('Meaning', meaning, 'wrap')}</tr>`,
  )}</tbody></table></div></section>`;
}

function itemRow(i: ReconciliationItemRow): SafeHtml {
  // A line missing here names a payment Tollgate may not have: its id as the report gives it, not a link.
  const linked = i.transaction_id !== '' && i.kind !== 'missing_here';
  const tx = linked ? html`<a href="/portal/transactions/${encodeURIComponent(i.transaction_id)}">${i.transaction_id}</a>` : i.transaction_id || '—';
  return html`<tr ${attrs({ 'data-seq': String(i.seq), 'data-kind': i.kind })}>
${cell('Kind', html`<strong class="error">${statusWords(i.kind)}</strong>`, 'kind')}${cell('Movement', statusWords(i.movement), 'movement')}
${cell('Line', i.line_no === null ? 'ledger' : String(i.line_no), 'num line')}${cell('Reference', i.reference, 'reference wrap')}
${cell('Transaction', tx, 'wrap')}${cell('Amount here', money(i.ours_amount_minor, i.currency), 'num ours-amount')}
${cell('Amount at processor', money(i.theirs_amount_minor, i.currency), 'num theirs-amount')}${cell('Fee here', money(i.ours_fee_minor, i.currency), 'num ours-fee')}
${cell('Fee at processor', money(i.theirs_fee_minor, i.currency), 'num theirs-fee')}${cell('Why', i.detail, 'detail wrap')}</tr>`;
}

function itemTable(r: ReconciliationRunRow, items: readonly ReconciliationItemRow[]): SafeHtml {
  if (items.length === 0) return html`<p id="no-mismatches">No mismatches: every line this run tracks matched.</p>`;
  const heads = ['Kind', 'Movement', 'Line', 'Reference', 'Transaction', 'Amount here', 'Amount at processor', 'Fee here', 'Fee at processor', 'Why'];
  const num = new Set(['Line', 'Amount here', 'Amount at processor', 'Fee here', 'Fee at processor']);
  const more = r.items_kept - items.length;
  return html`<div class="scroll"><table id="items" class="stack"><thead><tr>${heads.map(
    (h) => html`<th scope="col" ${attrs({ class: num.has(h) ? 'num' : undefined })}>${h}</th>`,
  )}</tr></thead><tbody>${items.map(itemRow)}</tbody></table></div>${
    (more > 0 || r.items_dropped > 0) &&
    html`<p class="note" id="items-cut">The first ${String(items.length)} of ${String(r.mismatches)} mismatches; <code>npx tollgate reconcile show --run ${r.run_id} --limit N</code> lists the ${String(r.items_kept)} kept.</p>`
  }`;
}

async function runPage(deps: PortalDeps, request: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) {
  const db = deps.store.db;
  // The account's run or 404, before anything of the run is read (readRun takes any id).
  const mine = await db
    .selectFrom('reconciliation_runs')
    .select('run_id')
    .where('run_id', '=', request.params.run_id)
    .where('account_id', '=', ctx(request).account.account_id)
    .executeTakeFirst();
  const found = mine ? await readRun(db, mine.run_id, ITEMS_SHOWN) : null;
  if (!found) throw notFound();
  const r = found.run;
  return sendPortalPage(request, reply, {
    title: `Reconciliation ${when(r.started_at)}`,
    nav: 'reconciliation',
    body: html`<p><a href="/portal/reconciliation" id="back-to-list">All runs</a></p>${runSummary(r)}
<section id="mismatch-list" aria-labelledby="h-items"><h2 id="h-items">Mismatches</h2>${itemTable(r, found.items)}</section>`,
  });
}
