// The background work of `serve` and `tollgate worker` besides notification delivery: one
// Scheduler holding every capability's job kinds and recurring sweeps, polled by one
// interval task. Capabilities declare their kinds in `jobSetups` when their module loads
// (src/cli/commands.ts imports them), as they declare CLI commands.
import { createLogger } from '../http/logging.js';
import { type BackgroundTask, intervalTask } from '../ops/interval-task.js';
import type { Runtime } from '../runtime.js';
import { purgeFinishedJobs, Scheduler, type SchedulerOptions } from './scheduler.js';

export type JobSetup = (rt: Runtime, scheduler: Scheduler) => void;
export const jobSetups: JobSetup[] = [];

/** How often an idle process looks for due jobs. */
export const POLL_MS = 1_000;
/** Jobs claimed per batch. */
export const BATCH = 100;
/** Batches per tick at most, so a stop request or the next tick's bookkeeping is not starved. */
const MAX_BATCHES_PER_TICK = 50;

/** A Scheduler with every declared kind (and the scheduler's own purge of old done rows). */
export function createScheduler(rt: Runtime, opts: SchedulerOptions = {}): Scheduler {
  const log = createLogger(rt.settings);
  const scheduler = new Scheduler(rt.store, { log: (msg, fields) => log.warn(fields, msg), lease_ms: rt.settings.scheduler_lease_ms, ...opts });
  // 1,000 rows every 5 minutes: up to 288,000 finished jobs a day leave the table.
  scheduler.recurring('scheduler.purge', 300_000, (ctx) => purgeFinishedJobs(rt.store, ctx.now_ms));
  for (const setup of jobSetups) setup(rt, scheduler);
  return scheduler;
}

/** The loop: at start the recurring rows are made sure of, then every POLL_MS due work runs batch after batch. */
export function schedulerTask(rt: Runtime, scheduler: Scheduler = createScheduler(rt)): BackgroundTask {
  let installed = false;
  return intervalTask('scheduler', POLL_MS, async (stopping) => {
    if (!installed) {
      await scheduler.installRecurring(rt.deps.now());
      installed = true;
    }
    for (let i = 0; i < MAX_BATCHES_PER_TICK && !stopping.aborted; i++) {
      const r = await scheduler.runDue(rt.deps.now(), BATCH);
      if (r.claimed < BATCH) break;
    }
  });
}
