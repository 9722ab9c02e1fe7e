// `tollgate subscriptions list|show|cancel` (issue 11): an operator's view of an account's
// subscriptions, and the same cancel the API does (one domain path).
import { CommandError, command, need, out, UsageError } from '../command/registry.js';
import { formatAmount } from '../money/currency.js';
import { accountPaymentsQuery } from '../payments/reader.js';
import { PAYMENT_STATUS_CODE } from '../payments/states.js';
import { formatDeductionTime, periodLabel } from '../payments/subscription-result.js';
import { chargesPaid } from './schedule.js';
import { cancelSubscription } from './service.js';
import type { SubscriptionRow, SubscriptionStatus } from './tables.js';

const STATUSES: readonly SubscriptionStatus[] = ['Active', 'PastDue', 'Inactived', 'Completed'];
/** Rows `list` prints at most (docs/style.md §9). */
const MAX_LIST = 1_000;
/** Deduction orders `show` prints at most. */
const MAX_ORDERS = 100;

const iso = (ms: number | null) => (ms === null ? '' : new Date(Number(ms)).toISOString());

function summary(s: SubscriptionRow) {
  return {
    recurring_id: s.recurring_id,
    contract_name: s.contract_name,
    status: s.status,
    period: periodLabel(s.interval, s.interval_count),
    amount: formatAmount(Number(s.amount_minor), s.currency),
    contract_amount: formatAmount(Number(s.contract_amount_minor), s.currency),
    currency: s.currency,
    charged: s.charged_count,
    /** Charges paid, the first payment included, against `billing_cycle` (which counts it too). */
    charges_paid: s.charged_count + 1,
    billing_cycle: s.billing_cycle,
    next_deduction: s.next_at === null ? '' : formatDeductionTime(Number(s.next_at)),
    retries: s.retry_count,
    first_order_no: s.first_order_no,
    created: iso(s.created_at),
    end_reason: s.end_reason,
  };
}

export const subscriptionsListCommand = command({
  name: 'subscriptions list',
  args: '--account ID [--status Active|PastDue|Inactived|Completed] [--limit N] [--json]',
  options: { account: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    if (values.status !== undefined && !STATUSES.includes(values.status as SubscriptionStatus))
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_LIST}`);
    let q = (await runtime()).store.db.selectFrom('subscriptions').selectAll().where('account_id', '=', account_id);
    if (values.status) q = q.where('status', '=', values.status as SubscriptionStatus);
    const rows = (await q.orderBy('created_at', 'desc').orderBy('recurring_id').limit(limit).execute()) as SubscriptionRow[];
    if (values.json) return out(JSON.stringify(rows.map(summary)));
    if (rows.length === 0) return out('no subscriptions');
    for (const r of rows.map(summary)) {
      out(
        `${r.recurring_id}  ${r.status.padEnd(9)}  ${r.contract_name}  ${r.contract_amount} ${r.currency} / ${r.period}  paid ${chargesPaid(r.charged, r.billing_cycle)}  next ${r.next_deduction || '-'}`,
      );
    }
  },
});

export const subscriptionsShowCommand = command({
  name: 'subscriptions show',
  args: '--account ID RECURRING_ID [--json]',
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account_id = need(values.account, '--account');
    const recurring_id = need(positionals[0], 'RECURRING_ID');
    const db = (await runtime()).store.db;
    const s = (await db
      .selectFrom('subscriptions')
      .selectAll()
      .where('recurring_id', '=', recurring_id)
      .where('account_id', '=', account_id)
      .executeTakeFirst()) as SubscriptionRow | undefined;
    if (!s) throw new CommandError(`no subscription ${JSON.stringify(recurring_id)} in account ${account_id}`);
    // Deduction orders are `<first order_no>-R<n>`: a range on the (account_id, order_no) index.
    const prefix = `${s.first_order_no}-R`;
    const orders = await accountPaymentsQuery(db, account_id)
      .select(['order_no', 'transaction_id', 'status', 'amount_minor', 'currency', 'result_code', 'created_at', 'details'])
      .where('order_no', '>=', prefix)
      .where('order_no', '<', `${s.first_order_no}-S`)
      .where('kind', '=', 'recurring')
      .orderBy('created_at')
      .limit(MAX_ORDERS)
      .execute();
    const deductions = orders
      .filter((o) => (JSON.parse(o.details) as { recurring_id?: string }).recurring_id === recurring_id)
      .map((o) => ({
        order_no: o.order_no,
        transaction_id: o.transaction_id,
        payment_status: PAYMENT_STATUS_CODE[o.status],
        amount: formatAmount(Number(o.amount_minor), o.currency),
        result: o.result_code,
        at: iso(o.created_at),
      }));
    const jobs = await db
      .selectFrom('scheduled_jobs')
      .select(['job_key', 'status', 'due_at', 'attempts', 'last_error'])
      .where('account_id', '=', account_id)
      .where('job_key', 'like', `sub:${recurring_id}:%`)
      .where('status', 'in', ['due', 'running', 'failed'])
      .execute();
    const pending = jobs.map((j) => ({ job_key: j.job_key, status: j.status, due: iso(j.due_at), attempts: j.attempts, last_error: j.last_error }));
    if (values.json) return out(JSON.stringify({ ...summary(s), contract: s.contract, price_id: s.price_id, deductions, jobs: pending }));
    for (const [k, v] of Object.entries({ ...summary(s), contract: s.contract, price_id: s.price_id })) out(`${k.padEnd(16)} ${v}`);
    out(deductions.length ? 'deductions:' : 'deductions: none yet');
    for (const d of deductions) out(`  ${d.order_no}  ${d.payment_status}  ${d.amount}  ${d.result}  ${d.at}`);
    for (const j of pending) out(`job ${j.job_key}: ${j.status}, due ${j.due}, attempts ${j.attempts}${j.last_error ? `, last error: ${j.last_error}` : ''}`);
  },
});

export const subscriptionsCancelCommand = command({
  name: 'subscriptions cancel',
  args: '--account ID RECURRING_ID',
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account_id = need(values.account, '--account');
    const recurring_id = need(positionals[0], 'RECURRING_ID');
    const rt = await runtime();
    const r = await cancelSubscription(rt.store, account_id, recurring_id, undefined, rt.deps.now(), 'cancelled by the operator');
    if (r.kind === 'not_found') throw new CommandError(`no subscription ${JSON.stringify(recurring_id)} in account ${account_id}`);
    out(r.kind === 'cancelled' ? `${recurring_id} cancelled (Inactived)` : `${recurring_id} had ended already (${r.row.status})`);
  },
});
