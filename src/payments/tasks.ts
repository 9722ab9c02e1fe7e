// Recurring sweeps of the payment lifecycle, run by the shared scheduler (src/scheduler):
// expire lapsed manual authorisations, checkout sessions and APM payments (docs/contract.md §7,
// §14, §15) and purge Idempotency-Keys past 24 h (docs/contract.md §4). Each run is bounded and
// each change a compare-and-set, as the scheduler's at-least-once contract asks.
import { purgeExpiredKeys } from '../idempotency/plugin.js';
import type { JobSetup } from '../scheduler/jobs.js';
import { expireDue } from './expiry.js';

export const paymentJobs: JobSetup = (rt, scheduler) => {
  scheduler.recurring('payment.expiry', 30_000, (ctx) => expireDue(rt.deps, ctx.now_ms, undefined, ctx.account_id), { per_account: true });
  scheduler.recurring('idempotency.purge', 10 * 60_000, (ctx) => purgeExpiredKeys(rt.deps, ctx.now_ms));
};
