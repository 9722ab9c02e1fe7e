// Every background job of the gateway, listed here and nowhere else (issue 30 item 3): a
// capability exports its job kinds and this list hands them to the scheduler, so no kind
// depends on which module happened to be imported first. It sits with the CLI, above the
// capabilities, because `serve`, `tollgate worker` and `clock advance` are what run them.
import { ledgerJobs } from '../ledger/cli.js';
import { deliveryWorker } from '../notifications/tasks.js';
import type { BackgroundTask } from '../ops/interval-task.js';
import { paymentJobs } from '../payments/tasks.js';
import { payoutJobs } from '../payouts/tasks.js';
import { portalJobs } from '../portal/tasks.js';
import { reviewJobs } from '../review/tasks.js';
import type { Runtime } from '../runtime.js';
import { buildScheduler, type JobSetup, pollTask } from '../scheduler/jobs.js';
import type { Scheduler, SchedulerOptions } from '../scheduler/scheduler.js';
import { subscriptionJobs } from '../subscriptions/tasks.js';
import { threedsJobs } from '../threeds/tasks.js';

/** Every capability's job kinds and recurring sweeps. */
export const jobList: readonly JobSetup[] = [ledgerJobs, threedsJobs, reviewJobs, paymentJobs, subscriptionJobs, payoutJobs, portalJobs];

/** A Scheduler with every job kind of the gateway. */
export function createScheduler(rt: Runtime, opts: SchedulerOptions = {}): Scheduler {
  return buildScheduler(rt, jobList, opts);
}

/** The scheduler's polling loop, as a background task. */
export function schedulerTask(rt: Runtime, scheduler: Scheduler = createScheduler(rt)): BackgroundTask {
  return pollTask(rt, scheduler);
}

/**
 * Background work a process runs beside HTTP (or without it, `tollgate worker`): notification
 * delivery (its own leased outbox worker) and the shared scheduler's one loop, which runs
 * every timed job (expiries, purges, settlement, …).
 */
export const backgroundTasks: ReadonlyArray<(rt: Runtime) => BackgroundTask> = [(rt) => schedulerTask(rt), (rt) => deliveryWorker(rt)];
