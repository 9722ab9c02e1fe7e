// The settlement sweep on the shared scheduler (docs/contract.md §23): each run closes the days
// that ended (business time) into batches and makes due batches available. Per account, so a
// test clock's advance runs it as of each moment it passes.
import type { JobSetup } from '../scheduler/jobs.js';
import { runSettlement } from './batches.js';

export const settlementJobs: JobSetup = (rt, scheduler) => {
  scheduler.recurring('settlement.batches', 60_000, (ctx) => runSettlement(rt.store, ctx.now_ms, ctx.account_id), { per_account: true });
};
