// The background work of `serve` and `tollgate worker`: one Scheduler holding every job kind
// and recurring sweep of the gateway, polled by one of its local tasks. Which kinds exist is an
// explicit list (src/cli/background.ts) handed in here, never a side effect of importing a
// module (issue 30 item 3).

import type { Runtime } from '../web/context.js';
import { createLogger } from '../web/logging.js';
import { purgeFinishedJobs, Scheduler, type SchedulerOptions } from './scheduler.js';

/** A capability's job kinds and recurring sweeps, declared on a scheduler. */
export type JobSetup = (rt: Runtime, scheduler: Scheduler) => void;

/** How often an idle process looks for due jobs. */
export const POLL_MS = 1_000;
/** Jobs claimed per batch. */
export const BATCH = 100;
/** Batches per tick at most, so a stop request or the next tick's bookkeeping is not starved. */
const MAX_BATCHES_PER_TICK = 50;

/** A Scheduler with the given kinds (and the scheduler's own purge of old done rows). */
export function buildScheduler(rt: Runtime, setups: readonly JobSetup[], opts: SchedulerOptions = {}): Scheduler {
  const log = createLogger(rt.settings);
  const scheduler = new Scheduler(rt.store, { log: (msg, fields) => log.warn(fields, msg), lease_ms: rt.settings.scheduler_lease_ms, ...opts });
  // 1,000 rows every 5 minutes: up to 288,000 finished jobs a day leave the table.
  scheduler.recurring('scheduler.purge', 300_000, (ctx) => purgeFinishedJobs(rt.store, ctx.now_ms));
  for (const setup of setups) setup(rt, scheduler);
  return scheduler;
}

/** The local task that polls the rows. */
export const POLL_TASK = 'scheduler';

/** The loop, a local task: at start the recurring rows are made sure of, then every POLL_MS due work runs batch after batch. */
export function pollJobs(rt: Runtime, scheduler: Scheduler): void {
  let installed = false;
  scheduler.local(POLL_TASK, POLL_MS, async (stopping) => {
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
