// The attempt sweeper on the shared scheduler (docs/attempts.md): every 5 s, open processor
// attempts that are due are asked about again (sweeper.ts), 100 a run.
import type { JobSetup } from '../scheduler/jobs.js';
import { sweepAttempts } from './sweeper.js';

export const SWEEP_EVERY_MS = 5_000;

export const attemptJobs: JobSetup = (rt, scheduler) => {
  scheduler.recurring('processor.attempts', SWEEP_EVERY_MS, (ctx) => sweepAttempts(rt.deps, ctx.now_ms, 100));
};
