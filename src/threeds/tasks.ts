// A recurring sweep of the shared scheduler (src/scheduler): challenges left unfinished
// past 15 minutes fail (docs/contract.md §10). Bounded per run; each end is a compare-and-set.
import type { JobSetup } from '../scheduler/jobs.js';
import { ChallengeService } from './service.js';

export const threedsJobs: JobSetup = (rt, scheduler) => {
  // Ended as of the run's business time (a test clock's, when one moved the account).
  scheduler.recurring('threeds.expiry', 30_000, (ctx) => new ChallengeService({ ...rt.deps, now: () => ctx.now_ms }).expireDue(100, ctx.account_id), {
    per_account: true,
  });
};
