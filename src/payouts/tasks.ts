// The payout job kinds on the shared scheduler (src/scheduler): dispatch on payment_date and
// the connector checks of a PROCESSING payout, each exactly once (registerTx): the status
// move, its postings and its event commit with the job's done mark or not at all.
import type { JobSetup } from '../scheduler/jobs.js';
import { CHECK_KIND, DISPATCH_KIND, runCheck, runDispatch } from './service.js';

export const payoutJobs: JobSetup = (rt, scheduler) => {
  scheduler.registerTx(
    DISPATCH_KIND,
    async (tx, job, ctx) => {
      const { transaction_id } = job.payload as { transaction_id: string };
      await runDispatch(tx, rt.deps, transaction_id, ctx.now_ms);
      return undefined;
    },
    { max_attempts: 10 },
  );
  scheduler.registerTx(
    CHECK_KIND,
    async (tx, job, ctx) => {
      const { transaction_id, checks } = job.payload as { transaction_id: string; checks: number };
      await runCheck(tx, rt.deps, transaction_id, checks, ctx.now_ms);
      return undefined;
    },
    { max_attempts: 10 },
  );
};
