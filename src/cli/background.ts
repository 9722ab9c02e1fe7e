// Every background job of the gateway, listed here and nowhere else (issue 30 item 3): a
// capability exports its job kinds and this list hands them to the scheduler, so no kind
// depends on which module happened to be imported first. It sits with the CLI, above the
// capabilities, because `serve`, `tollgate worker` and `clock advance` are what run them.

import { attemptJobs } from '../attempts/tasks.js';
import { connectObjectOf } from '../connect/events.js';
import { disputeJobs } from '../disputes/tasks.js';
import { platformEventBodies } from '../generic/events.js';
import { REPAIR_EVERY_MS, repairKeyOutcomes } from '../idempotency/plugin.js';
import { deliveryTask } from '../notifications/tasks.js';
import { paymentJobs } from '../payments/tasks.js';
import { payoutJobs } from '../payouts/tasks.js';
import { portalJobs } from '../portal/tasks.js';
import { reviewJobs } from '../review/tasks.js';
import type { Runtime } from '../runtime.js';
import { buildScheduler, type JobSetup, pollJobs } from '../scheduler/jobs.js';
import { Scheduler, type SchedulerOptions } from '../scheduler/scheduler.js';
import { settlementJobs } from '../settlement/tasks.js';
import { subscriptionJobs } from '../subscriptions/tasks.js';
import { threedsJobs } from '../threeds/tasks.js';

/** Every capability's job kinds and recurring sweeps. */
export const jobList: readonly JobSetup[] = [
  settlementJobs,
  threedsJobs,
  reviewJobs,
  paymentJobs,
  subscriptionJobs,
  payoutJobs,
  portalJobs,
  attemptJobs,
  disputeJobs,
];

/** A Scheduler with every job kind of the gateway. */
export function createScheduler(rt: Runtime, opts: SchedulerOptions = {}): Scheduler {
  return buildScheduler(rt, jobList, opts);
}

/** What a process runs in the background: `jobs` where the worker is on, `serving` where it answers HTTP. */
export interface BackgroundRole {
  /** The database-leased jobs and notification delivery (TOLLGATE_WORKER, `tollgate worker`). */
  jobs: boolean;
  /** The process answers HTTP: key outcomes the storage refused are repaired here, where they are held. */
  serving: boolean;
}

/** The idempotency repair's local task name. */
export const REPAIR_TASK = 'idempotency.repair';
/** The re-reading of the processors set per account (src/processors/directory.ts). */
export const PROCESSORS_TASK = 'processors.reload';
const PROCESSORS_RELOAD_MS = 2_000;

/**
 * The one background mechanism of a process (issue 30 item 3): a Scheduler whose
 * process-local tasks are, by role, the polling of the timed jobs and notification delivery
 * (`jobs`), and the idempotency repair (`serving`). `start()` runs them, `stop()` ends them.
 */
export function backgroundWork(rt: Runtime, role: BackgroundRole): Scheduler {
  const scheduler = role.jobs ? createScheduler(rt) : new Scheduler(rt.store);
  if (role.jobs) {
    pollJobs(rt, scheduler);
    // Notifications to notify_url, and the platform family's events to webhook endpoints.
    deliveryTask(rt, scheduler, platformEventBodies(rt.store, connectObjectOf));
  }
  if (role.serving) {
    scheduler.local(REPAIR_TASK, REPAIR_EVERY_MS, () => repairKeyOutcomes(rt.deps));
    // docs/contract.md §21: a processor set by another process (the CLI) is served within this.
    scheduler.local(PROCESSORS_TASK, PROCESSORS_RELOAD_MS, () => rt.deps.processors.reload());
  }
  return scheduler;
}
