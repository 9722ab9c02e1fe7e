// The payout job kinds on the shared scheduler (src/scheduler): dispatch on payment_date and
// the connector checks of a PROCESSING payout, each at least once: the connector is called
// outside any transaction with the payout's send attempt (docs/attempts.md), and the
// payout's compare-and-set makes a second run change nothing.
import type { JobSetup } from '../scheduler/jobs.js';
import { CHECK_KIND, checkHandler, DISPATCH_KIND, dispatchHandler } from './service.js';

export const payoutJobs: JobSetup = (rt, scheduler) => {
  scheduler.register(DISPATCH_KIND, dispatchHandler(rt.deps), { max_attempts: 10 });
  scheduler.register(CHECK_KIND, checkHandler(rt.deps), { max_attempts: 10 });
};
