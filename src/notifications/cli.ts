// Operator commands for notifications, and the delivery worker as a `serve` background task.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { commands, UsageError } from '../cli/registry.js';
import { backgroundTasks } from '../cli/serve.js';
import { redactPaths } from '../http/logging.js';
import type { Runtime } from '../runtime.js';
import { EventService } from './service.js';
import { DeliveryWorker } from './worker.js';

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

function opts<T extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : '-');

/** The worker a process runs, configured from its settings. */
export function deliveryWorker(rt: Runtime): DeliveryWorker {
  const log = pino({ level: rt.settings.log_level, redact: redactPaths });
  return new DeliveryWorker({
    store: rt.store,
    merchants: rt.merchants,
    allow_private: rt.settings.allow_private_webhooks,
    schedule_ms: rt.settings.webhook_schedule_ms,
    timeout_ms: rt.settings.webhook_timeout_ms,
    now: rt.deps.now,
    log: (msg, err) => log.error({ err }, msg),
  });
}

backgroundTasks.push((rt) => deliveryWorker(rt));

commands.set('worker', {
  usage: 'worker   (the background work of serve without HTTP: notification delivery and every scheduled job; stops on SIGTERM/SIGINT)',
  async run(_args, rt) {
    // Every task serve runs (delivery, expiries, settlement, purges): with TOLLGATE_WORKER=0 on
    // the HTTP processes, this process does all of it. Each task is safe beside its twins in
    // other processes (leases and compare-and-set), so several workers may run.
    const runtime = await rt();
    const tasks = backgroundTasks.map((make) => make(runtime));
    for (const t of tasks) t.start();
    out(`worker running ${tasks.length} background tasks`);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    for (const t of tasks) await t.stop();
  },
});

commands.set('events list', {
  usage: 'events list --account ID [--order ORDER_NO | --transaction ID] [--json]',
  async run(args, rt) {
    const { values } = opts(args, { account: { type: 'string' }, order: { type: 'string' }, transaction: { type: 'string' }, json: { type: 'boolean' } });
    if (!values.account) throw new UsageError('--account is required');
    if (values.order && values.transaction) throw new UsageError('give --order or --transaction, not both');
    const rows = await new EventService((await rt()).store).listEvents(values.account, { order_no: values.order, transaction_id: values.transaction });
    if (values.json) return out(JSON.stringify(rows));
    for (const r of rows) out(`${r.event_id}\t${r.event_type}\t${r.status}\tattempts=${r.attempts}\t${r.object_id}\t${iso(r.created_at)}\t${r.last_error}`);
    if (rows.length === 0) out('no events');
  },
});

commands.set('events deliveries', {
  usage: 'events deliveries --event ID [--json]',
  async run(args, rt) {
    const { values } = opts(args, { event: { type: 'string' }, json: { type: 'boolean' } });
    if (!values.event) throw new UsageError('--event is required');
    const svc = new EventService((await rt()).store);
    const event = await svc.getEvent(values.event);
    if (!event) throw new Error(`event ${values.event} does not exist`);
    const attempts = await svc.listAttempts(values.event);
    if (values.json) return out(JSON.stringify({ event_id: event.event_id, status: event.status, notify_url: event.notify_url, attempts }));
    out(`${event.event_id} ${event.event_type} ${event.status} → ${event.notify_url || '(no notify_url)'}`);
    for (const a of attempts) out(`#${a.attempt_no}\t${iso(a.started_at)}\t${a.status_code ?? '-'}\t${a.latency_ms} ms\t${a.outcome}\t${a.error}`);
    if (attempts.length === 0) out('no attempts yet');
  },
});

commands.set('events replay', {
  usage: 'events replay (--event ID | --failed-since ISO_TIME [--account ID])',
  async run(args, rt) {
    const { values } = opts(args, { event: { type: 'string' }, 'failed-since': { type: 'string' }, account: { type: 'string' } });
    if (!values.event === !values['failed-since']) throw new UsageError('give --event or --failed-since');
    const r = await rt();
    const svc = new EventService(r.store);
    const now = r.deps.now();
    if (values.event) {
      if (!(await svc.replayEvent(values.event, now))) throw new Error(`event ${values.event} does not exist or has no notify_url`);
      return out(`event ${values.event} queued for delivery`);
    }
    const since = Date.parse(values['failed-since'] as string);
    if (Number.isNaN(since)) throw new UsageError('--failed-since must be an ISO 8601 time, e.g. 2025-01-31T00:00:00Z');
    out(`${await svc.replayFailedSince(since, now, values.account)} failed event(s) queued for delivery`);
  },
});
