// Notification delivery as background work of `serve` and `tollgate worker`, configured from
// the process settings: the delivery worker, its metrics and its per-attempt warn line, run
// as a process-local task of the scheduler (the event rows keep their own leases, so a tick
// is a cheap read when nothing is due and never waits on another process).
import type { Logger } from 'pino';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { Runtime } from '../web/context.js';
import { createLogger } from '../web/logging.js';
import { DeliveryWorker, type PlatformBodies } from './worker.js';

/** The local task's name. */
export const DELIVERY_TASK = 'notifications';
/**
 * How often an idle process looks for due events: the latency of a new event (an event is
 * recorded in the transaction of its change, in any process, so there is nobody to wake).
 */
export const DELIVERY_POLL_MS = 100;

/**
 * Delivery on `scheduler`: a tick every DELIVERY_POLL_MS, at once while events keep coming and
 * whenever a delivery ends. `platform` (the generic interface's event bodies) turns on the
 * webhook endpoint deliveries.
 */
export function deliveryTask(rt: Runtime, scheduler: Scheduler, platform?: PlatformBodies): DeliveryWorker {
  const worker = deliveryWorker(rt, undefined, () => scheduler.wake(DELIVERY_TASK), platform);
  scheduler.local(
    DELIVERY_TASK,
    DELIVERY_POLL_MS,
    async () => {
      if (await worker.tick()) scheduler.wake(DELIVERY_TASK);
    },
    { settle: () => worker.settle() },
  );
  return worker;
}

/** The worker a process runs, configured from its settings. */
export function deliveryWorker(rt: Runtime, log: Logger = createLogger(rt.settings), wake?: () => void, platform?: PlatformBodies): DeliveryWorker {
  return new DeliveryWorker({
    wake,
    ...(platform ? { platform: { keyring: rt.deps.keyring, bodies: platform } } : {}),
    store: rt.store,
    merchants: rt.merchants,
    allow_private: rt.settings.allow_private_webhooks,
    schedule_ms: rt.settings.webhook_schedule_ms,
    timeout_ms: rt.settings.webhook_timeout_ms,
    now: rt.deps.now,
    log: (msg, err) => log.error({ err }, msg),
    observe: (a) => {
      rt.deps.metrics.notificationDeliveries.inc({ result: a.outcome });
      if (a.outcome === 'delivered') return;
      // One line per failed attempt (issue 36 item 5: a 400 logged nothing): what an operator
      // needs to tell a merchant, never the body, the address or a secret.
      log.warn(
        {
          event_id: a.event_id,
          event_type: a.event_type,
          account_id: a.account_id,
          attempt: a.attempt_no,
          status_code: a.status_code,
          error: a.error || undefined,
          latency_ms: a.latency_ms,
          next_attempt_at: a.outcome === 'retry' ? new Date(a.next_attempt_at).toISOString() : undefined,
        },
        a.outcome === 'retry' ? 'notification attempt failed; will retry' : 'notification failed; no more attempts',
      );
    },
  });
}
