// GET /portal/dashboard (docs/contract.md §19): approved volume and approval rate per day over the
// last 7, 30 or 90 days as server-drawn SVG charts (charts.ts), and the account's balances
// per currency from the ledger (the same read as GET /v1/balance); and the disputes: open, due
// within 3 days, the rate per month against the schemes' 0.9% line (dashboard-disputes.ts).
//
// The day series is one GROUP BY over the account's payments of the period: the index
// payments_portal_created (account_id, created_at, …) bounds the scan to the period's rows,
// and the database returns at most days × currencies rows (≤ 90 × a few), so the page
// never loads payments into memory. Days are UTC days.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../db/schema.js';
import { accountBalances } from '../ledger/balances.js';
import { currencyExponent, formatAmount } from '../money/currency.js';
import { attrs, hidden, html, type SafeHtml } from '../pages/index.js';
import { accountPaymentsQuery } from '../payments/reader.js';
import type { PaymentStatus } from '../payments/states.js';
import { barChart, lineChart } from './charts.js';
import { ctx, type PortalDeps, type PortalRoute, sendPortalPage } from './context.js';
import { disputeFacts, disputesSection } from './dashboard-disputes.js';

export const DAY_MS = 86_400_000;
export const PERIODS = [7, 30, 90] as const;
export type Period = (typeof PERIODS)[number];
const DEFAULT_PERIOD: Period = 30;

/** The processor approved and it stands (captured, or held for a later capture, refunds after). */
export const APPROVED: readonly PaymentStatus[] = ['authorised', 'captured', 'partially_refunded', 'refunded'];
/** No outcome yet (shopper action, risk review): not counted as attempted until decided. */
export const UNDECIDED: readonly PaymentStatus[] = ['pending', 'review'];

export interface DayCurrencyRow {
  /** UTC day number: floor(created_at / DAY_MS). */
  day: number;
  currency: string;
  /** Payments with an outcome (every status but pending and review). */
  attempted: number;
  approved: number;
  /** Sum of amount_minor of the approved ones. */
  approved_minor: number;
}

/**
 * Per UTC day and currency of [from_ms, to_ms): attempted, approved, approved amount. One
 * indexed range read of the account's payments, aggregated in SQL.
 */
export async function dailyPaymentStats(db: Kysely<DB>, account_id: string, from_ms: number, to_ms: number): Promise<DayCurrencyRow[]> {
  const approved = sql.join(APPROVED.map((s) => sql.lit(s)));
  const undecided = sql.join(UNDECIDED.map((s) => sql.lit(s)));
  const day = sql<number>`${sql.ref('created_at')} / ${sql.lit(DAY_MS)}`;
  const rows = await accountPaymentsQuery(db, account_id)
    .select([
      day.as('day'),
      'currency',
      sql<number>`sum(case when ${sql.ref('status')} in (${undecided}) then 0 else 1 end)`.as('attempted'),
      sql<number>`sum(case when ${sql.ref('status')} in (${approved}) then 1 else 0 end)`.as('approved'),
      sql<number>`sum(case when ${sql.ref('status')} in (${approved}) then ${sql.ref('amount_minor')} else 0 end)`.as('approved_minor'),
    ])
    .where('created_at', '>=', from_ms)
    .where('created_at', '<', to_ms)
    .groupBy([day, 'currency'])
    .execute();
  // PostgreSQL answers bigint and numeric as strings.
  return rows.map((r) => ({
    day: Number(r.day),
    currency: r.currency,
    attempted: Number(r.attempted),
    approved: Number(r.approved),
    approved_minor: Number(r.approved_minor),
  }));
}

export const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

export interface DashboardSeries {
  days: number[];
  currencies: string[];
  /** Approved amount per currency, one value per day. */
  volume: Map<string, number[]>;
  attempted: number[];
  approved: number[];
}

/** Zero-filled series over `days` (approval counts all currencies together). Pure. */
export function seriesOf(rows: readonly DayCurrencyRow[], days: readonly number[]): DashboardSeries {
  const index = new Map(days.map((d, i) => [d, i]));
  const volume = new Map<string, number[]>();
  const attempted = days.map(() => 0);
  const approved = days.map(() => 0);
  for (const r of rows) {
    const i = index.get(r.day);
    if (i === undefined) continue;
    attempted[i] = (attempted[i] ?? 0) + r.attempted;
    approved[i] = (approved[i] ?? 0) + r.approved;
    let v = volume.get(r.currency);
    if (!v) {
      v = days.map(() => 0);
      volume.set(r.currency, v);
    }
    v[i] = (v[i] ?? 0) + r.approved_minor;
  }
  // The currency with the most approved volume first (what the chart shows by default).
  const total = (c: string) => (volume.get(c) ?? []).reduce((a, b) => a + b, 0);
  const currencies = [...volume.keys()].sort((a, b) => total(b) - total(a) || a.localeCompare(b));
  return { days: [...days], currencies, volume, attempted, approved };
}

/** A y-axis label for minor units: whole major units when the value is whole, else the currency's decimals. */
export function axisAmount(minor: number, currency: string): string {
  const exp = currencyExponent(currency) ?? 0;
  const unit = 10 ** exp;
  const whole = Math.round(minor);
  if (whole % unit === 0) return String(whole / unit);
  return formatAmount(whole, currency);
}

const DashboardQuery = Type.Object({
  period: Type.Optional(Type.Union([Type.Literal('7'), Type.Literal('30'), Type.Literal('90')])),
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })),
});

export const DASHBOARD_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/dashboard', access: 'read', querystring: DashboardQuery, handler: dashboardPage },
];

/** What the page shows: the period's days, their series, the currency charted, the balances. */
interface DashboardFacts {
  period: Period;
  days: number[];
  labels: string[];
  s: DashboardSeries;
  /** The currency asked for in the URL (kept in the period links), and the one charted. */
  wanted: string | undefined;
  currency: string | undefined;
  balances: Awaited<ReturnType<typeof accountBalances>>;
}

async function dashboardPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: { period?: string; currency?: string } }>, reply: FastifyReply) {
  const c = ctx(request);
  const account_id = c.account.account_id;
  const period = (request.query.period ? Number(request.query.period) : DEFAULT_PERIOD) as Period;
  const today = Math.floor(deps.now() / DAY_MS);
  const days = Array.from({ length: period }, (_, i) => today - period + 1 + i);
  const from_ms = (today - period + 1) * DAY_MS;
  const to_ms = (today + 1) * DAY_MS;
  const [rows, balances, disputes] = await Promise.all([
    dailyPaymentStats(deps.store.db, account_id, from_ms, to_ms),
    accountBalances(deps.store.db, account_id),
    disputeFacts(deps, c.account, deps.now()),
  ]);
  const s = seriesOf(rows, days);
  const wanted = request.query.currency;
  const currency = wanted && s.currencies.includes(wanted) ? wanted : s.currencies[0];
  const labels = days.map(isoDay);
  const body = html`${dashboardBody({ period, days, labels, s, wanted, currency, balances })}${disputesSection(disputes)}`;
  return sendPortalPage(request, reply, { title: 'Dashboard', nav: 'dashboard', body });
}

function volumeChartOf({ s, currency, labels }: DashboardFacts): SafeHtml {
  return currency
    ? barChart({
        id: 'chart-volume',
        title: `Approved volume per day (${currency})`,
        description: `Approved payment amount in ${currency} for each UTC day from ${labels[0]} to ${labels[labels.length - 1]}.`,
        points: (s.volume.get(currency) ?? []).map((v, i) => ({ label: labels[i] ?? '', value: v })),
        format: (v) => axisAmount(v, currency),
        columns: ['Day', `Approved (${currency})`],
      })
    : barChart({
        id: 'chart-volume',
        title: 'Approved volume per day',
        description: `No approved payments from ${labels[0]} to ${labels[labels.length - 1]}.`,
        points: labels.map((label) => ({ label, value: 0 })),
        format: (v) => String(v),
        columns: ['Day', 'Approved'],
      });
}

function approvalChartOf({ s, days, labels }: DashboardFacts): SafeHtml {
  return lineChart({
    id: 'chart-approval',
    title: 'Approval rate per day (%)',
    description: `Approved payments as a share of payments with an outcome, all currencies, for each UTC day from ${labels[0]} to ${labels[labels.length - 1]}; days without payments have no point.`,
    points: days.map((_, i) => {
      const tried = s.attempted[i] ?? 0;
      const ok = s.approved[i] ?? 0;
      return { label: labels[i] ?? '', value: tried > 0 ? Math.round((ok / tried) * 1000) / 10 : null, note: `${ok} of ${tried} approved` };
    }),
    format: (v) => `${Math.round(v * 10) / 10}%`,
    yMax: 100,
    columns: ['Day', 'Approval rate', 'Approved of attempted'],
  });
}

/** The period links, the currency form (several currencies), the totals, the two charts and the balances table. */
function dashboardBody(f: DashboardFacts): SafeHtml {
  const { period, s, wanted, currency, balances } = f;
  const volumeChart = volumeChartOf(f);
  const approvalChart = approvalChartOf(f);
  const href = (p: number, cur?: string) => `/portal/dashboard?period=${p}${cur ? `&currency=${cur}` : ''}`;
  const totalAttempted = s.attempted.reduce((a, b) => a + b, 0);
  const totalApproved = s.approved.reduce((a, b) => a + b, 0);
  const body = html`<nav aria-label="Period" id="period"><p>Period: ${PERIODS.map(
    (p, i) =>
      html`${i > 0 ? ' · ' : ''}<a ${attrs({ href: href(p, wanted), id: `period-${p}`, 'aria-current': p === period ? 'true' : undefined })}>${p} days</a>`,
  )}</p></nav>
${
  // The period is chosen once, by the links above; the form only chooses the currency charted.
  s.currencies.length > 1 &&
  html`<form method="get" action="/portal/dashboard" class="inline" id="currency-form">${hidden('period', String(period))}<label for="f-currency">Currency charted</label><select id="f-currency" name="currency">${s.currencies.map((cur) => html`<option ${attrs({ value: cur, selected: cur === currency })}>${cur}</option>`)}</select><button type="submit">Show</button></form>`
}
<section class="cards"><div class="card"><strong>Payments with an outcome</strong><p id="total-attempted">${totalAttempted}</p></div>
<div class="card"><strong>Approved</strong><p id="total-approved">${totalApproved}${totalAttempted > 0 && ` (${Math.round((totalApproved / totalAttempted) * 1000) / 10}%)`}</p></div>
${s.currencies.map(
  (cur) =>
    html`<div class="card"><strong>Approved volume ${cur}</strong><p data-currency="${cur}" class="volume-total">${formatAmount(
      (s.volume.get(cur) ?? []).reduce((a, b) => a + b, 0),
      cur,
    )}</p></div>`,
)}</section>
<h2>Volume</h2>${volumeChart}
<h2>Approval rate</h2>${approvalChart}
<h2>Balances</h2>${
    balances.length === 0
      ? html`<p id="balances-empty">No balance yet in this account.</p>`
      : html`<div class="scroll"><table id="balances"><thead><tr><th scope="col">Currency</th><th scope="col" class="num">Available</th><th scope="col" class="num">Pending</th><th scope="col" class="num">Held (authorised)</th><th scope="col" class="num">Reserved for payouts</th><th scope="col" class="num">Refunds in flight</th><th scope="col" class="num">Fees</th></tr></thead>
<tbody>${balances.map(
          (b) =>
            html`<tr data-currency="${b.currency}"><th scope="row">${b.currency}</th><td class="num available">${formatAmount(b.available_minor, b.currency)}</td><td class="num pending">${formatAmount(b.pending_minor, b.currency)}</td><td class="num held">${formatAmount(b.held_minor, b.currency)}</td><td class="num reserved">${formatAmount(b.payouts_reserved_minor, b.currency)}</td><td class="num refunds">${formatAmount(b.refunds_in_flight_minor, b.currency)}</td><td class="num fees">${formatAmount(b.fees_minor, b.currency)}</td></tr>`,
        )}</tbody></table></div>`
  }
<p class="note">Days are UTC. Available: settled, what refunds and payouts take from. Pending: captured, not settled yet.</p>`;
  return body;
}
