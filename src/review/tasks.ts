// A recurring sweep of the shared scheduler (src/scheduler): review holds nobody decided
// within 7 days expire (docs/contract.md §8). Bounded per run; each decision is a compare-and-set.
import type { JobSetup } from '../scheduler/jobs.js';
import { ReviewService } from './service.js';

export const reviewJobs: JobSetup = (rt, scheduler) => {
  // Decided as of the run's business time (a test clock's, when one moved the account).
  scheduler.recurring('review.expiry', 60_000, (ctx) => new ReviewService({ ...rt.deps, now: () => ctx.now_ms }).expireDue(100, ctx.account_id), {
    per_account: true,
  });
};
