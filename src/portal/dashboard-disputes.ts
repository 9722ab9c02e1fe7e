// The dashboard's disputes (docs/contract.md §19, §22; issue 34 item 4): how many are open and how
// many are due within 3 days, and the dispute rate of each of the last months against the card
// schemes' warning line. The rate of a UTC calendar month is the disputes opened in it ÷ the
// payments of it that were captured (created in the month, captured_minor > 0): the ratio the
// schemes' monitoring programmes watch (Visa's and Mastercard's early-warning level is 0.9%).
// Each figure is one aggregate query over an index of the account (disputes_account_due and
// disputes_account_created, payments_portal_created): nothing is loaded row by row.
import { sql } from 'kysely';
import type { AccountRow } from '../db/tables/merchants.js';
import { OPEN_STATUSES } from '../disputes/states.js';
import { attrs, html, type SafeHtml } from '../pages/index.js';
import { accountPaymentsQuery } from '../payments/reader.js';
import type { PortalDeps } from './context.js';
import { accountDisputes, DUE_SOON_MS } from './disputes.js';

/** The schemes' warning line: disputes ÷ captured payments of a month, in percent. */
export const DISPUTE_RATE_WARNING = 0.9;
/** Months shown, the current one included. */
export const RATE_MONTHS = 6;

export interface MonthRate {
  /** `YYYY-MM` (UTC). */
  month: string;
  disputes: number;
  captured: number;
  /** Percent, or null for a month without captured payments. */
  rate: number | null;
}

export interface DisputeFacts {
  open: number;
  due_soon: number;
  months: MonthRate[];
}

/** The starts of the last `n` UTC months (oldest first) and the start of the next one: n + 1 bounds. */
export function monthBounds(now: number, n: number): number[] {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return Array.from({ length: n + 1 }, (_, i) => Date.UTC(y, m - n + 1 + i, 1));
}

/** `sum(case when col in [bounds[i], bounds[i+1]) …)` for each month: one row of n counts. */
function perMonth(bounds: readonly number[], extra = sql`1 = 1`) {
  return bounds
    .slice(0, -1)
    .map((from, i) =>
      sql<number>`sum(case when ${sql.ref('created_at')} >= ${sql.lit(from)} and ${sql.ref('created_at')} < ${sql.lit(bounds[i + 1])} and ${extra} then 1 else 0 end)`.as(
        `m${i}`,
      ),
    );
}

export async function disputeFacts(deps: PortalDeps, account: AccountRow, now: number): Promise<DisputeFacts> {
  const db = deps.store.db;
  const bounds = monthBounds(now, RATE_MONTHS);
  const from = bounds[0] as number;
  const to = bounds[RATE_MONTHS] as number;
  const [counts, opened, captured] = await Promise.all([
    accountDisputes(db, account)
      .clearSelect()
      .select([
        sql<number>`count(*)`.as('open'),
        sql<number>`sum(case when ${sql.ref('status')} in ('warning_needs_response', 'needs_response') and ${sql.ref('evidence_due_by')} <= ${sql.lit(now + DUE_SOON_MS)} then 1 else 0 end)`.as(
          'due_soon',
        ),
      ])
      .where('status', 'in', [...OPEN_STATUSES])
      .executeTakeFirst(),
    accountDisputes(db, account).clearSelect().select(perMonth(bounds)).where('created_at', '>=', from).where('created_at', '<', to).executeTakeFirst(),
    accountPaymentsQuery(db, account.account_id)
      .select(perMonth(bounds, sql`${sql.ref('captured_minor')} > 0`))
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .executeTakeFirst(),
  ]);
  // PostgreSQL answers bigint sums as strings, and a sum over no rows as null.
  const n = (row: Record<string, unknown> | undefined, k: string) => Number(row?.[k] ?? 0);
  const months = bounds.slice(0, -1).map((start, i) => {
    const disputes = n(opened, `m${i}`);
    const cap = n(captured, `m${i}`);
    return { month: new Date(start).toISOString().slice(0, 7), disputes, captured: cap, rate: cap > 0 ? (disputes / cap) * 100 : null };
  });
  return { open: n(counts, 'open'), due_soon: n(counts, 'due_soon'), months };
}

const percent = (r: number) => `${r.toFixed(2)}%`;

/** The dashboard's section: two counts (linked to the list) and the table of monthly rates, each month above the line said so in words. */
export function disputesSection(f: DisputeFacts): SafeHtml {
  return html`<h2 id="disputes">Disputes</h2>
<section class="cards"><div class="card"><strong>Open disputes</strong><p><a href="/portal/disputes" id="disputes-open">${f.open}</a></p></div>
<div class="card"><strong>Due within 3 days</strong><p id="disputes-due-soon" ${attrs({ class: f.due_soon > 0 ? 'error' : undefined })}>${f.due_soon}${f.due_soon > 0 && html` <strong>respond now</strong>`}</p></div></section>
<div class="scroll"><table id="dispute-rate" class="stack"><caption>Dispute rate per month (UTC): disputes opened ÷ captured payments, against the schemes’ ${DISPUTE_RATE_WARNING}% warning line</caption>
<thead><tr><th scope="col">Month</th><th scope="col" class="num">Disputes</th><th scope="col" class="num">Captured payments</th><th scope="col" class="num">Rate</th><th scope="col">Against ${DISPUTE_RATE_WARNING}%</th></tr></thead>
<tbody>${f.months.map((m) => {
    const over = m.rate !== null && m.rate >= DISPUTE_RATE_WARNING;
    return html`<tr ${attrs({ 'data-month': m.month, 'data-over': over ? 'yes' : undefined })}><td data-label="Month">${m.month}</td><td data-label="Disputes" class="num">${m.disputes}</td><td data-label="Captured payments" class="num">${m.captured}</td><td data-label="Rate" class="num rate">${m.rate === null ? '—' : percent(m.rate)}</td><td data-label="Against ${DISPUTE_RATE_WARNING}%" ${attrs({ class: over ? 'error' : undefined })}>${m.rate === null ? 'no captured payments' : over ? html`<strong>at or above the warning line</strong>` : 'below'}</td></tr>`;
  })}</tbody></table></div>
<p class="note">Card schemes put merchants whose monthly dispute rate reaches ${DISPUTE_RATE_WARNING}% into monitoring programmes with fines. A dispute counts in the month it opened, a payment in the month it was made if it was captured.</p>`;
}
