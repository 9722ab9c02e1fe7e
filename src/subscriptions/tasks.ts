// The deduction job kind on the shared scheduler (src/scheduler): at least once per attempt,
// its processor call a recorded attempt (deductions.ts says why that charges once). A handler error (the database, not a decline: a decline is an outcome) backs
// off and retries; after 10 claims the job ends `failed` and `tollgate subscriptions show`
// says so.
import type { JobSetup } from '../scheduler/jobs.js';
import { CHARGE_KIND, chargeHandler } from './deductions.js';

export const subscriptionJobs: JobSetup = (rt, scheduler) => {
  scheduler.register(CHARGE_KIND, chargeHandler(rt.deps), { max_attempts: 10 });
};
