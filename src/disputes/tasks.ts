// The disputes capability's timed work on the shared scheduler (docs/contract.md §22): the sandbox's
// disputes of its dispute cards (a few seconds after capture) and its decisions on submitted
// evidence, the responses sent to Adyen and Stripe, and the sweep that closes disputes whose deadline passed unanswered. Test clocks
// move all three (account jobs, and a per-account sweep).

import { SANDBOX_DISPUTE_KIND } from '../processors/sandbox/disputes.js';
import type { JobSetup } from '../scheduler/jobs.js';
import type { Deps } from '../web/context.js';
import { runResponse } from './respond.js';
import { DISPUTE_DECIDE_KIND, expireOverdue, sandboxDecide, sandboxOpen } from './sandbox.js';
import { DISPUTE_RESPOND_KIND, type DisputeAction } from './service.js';

export const disputeJobs: JobSetup = (rt, scheduler) => {
  const deps: Deps = rt.deps;
  scheduler.register(SANDBOX_DISPUTE_KIND, async (job, ctx) => {
    await sandboxOpen(deps, (job.payload as { transaction_id: string }).transaction_id, ctx.now_ms);
    return undefined;
  });
  scheduler.register(DISPUTE_DECIDE_KIND, async (job, ctx) => {
    await sandboxDecide(deps, (job.payload as { dispute_id: string }).dispute_id, ctx.now_ms);
    return undefined;
  });
  // A merchant's evidence or acceptance sent to Adyen or Stripe (respond.ts): a call without an answer throws, and the
  // scheduler runs it again with backoff, under the same attempt id.
  scheduler.register(
    DISPUTE_RESPOND_KIND,
    async (job, ctx) => {
      const { dispute_id, action } = job.payload as { dispute_id: string; action: DisputeAction };
      await runResponse(deps, dispute_id, action, ctx.now_ms);
      return undefined;
    },
    { max_attempts: 10 },
  );
  scheduler.recurring('dispute.overdue', 60_000, (ctx) => expireOverdue(deps, ctx.now_ms, ctx.account_id), { per_account: true });
};
