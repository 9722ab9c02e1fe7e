// Operator commands for notifications: events, their deliveries, a replay.

import { CommandError, command, need, out, UsageError } from '../command/registry.js';
import { EventService } from './service.js';

const iso = (ms: number | null) => (ms ? new Date(ms).toISOString() : '-');

export const eventsListCommand = command({
  name: 'events list',
  args: '--account ID [--order ORDER_NO | --transaction ID] [--json]',
  options: { account: { type: 'string' }, order: { type: 'string' }, transaction: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account = need(values.account, '--account');
    if (values.order && values.transaction) throw new UsageError('give --order or --transaction, not both');
    const rows = await new EventService((await runtime()).store).listEvents(account, { order_no: values.order, transaction_id: values.transaction });
    if (values.json) return out(JSON.stringify(rows));
    for (const r of rows) out(`${r.event_id}\t${r.event_type}\t${r.status}\tattempts=${r.attempts}\t${r.object_id}\t${iso(r.created_at)}\t${r.last_error}`);
    if (rows.length === 0) out('no events');
  },
});

export const eventsDeliveriesCommand = command({
  name: 'events deliveries',
  args: '--event ID [--json]',
  options: { event: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const event_id = need(values.event, '--event');
    const svc = new EventService((await runtime()).store);
    const event = await svc.getEvent(event_id);
    if (!event) throw new CommandError(`no event ${JSON.stringify(event_id)}`);
    const attempts = await svc.listAttempts(event_id);
    if (values.json) return out(JSON.stringify({ event_id: event.event_id, status: event.status, notify_url: event.notify_url, attempts }));
    out(`${event.event_id} ${event.event_type} ${event.status} → ${event.notify_url || '(no notify_url)'}`);
    for (const a of attempts) out(`#${a.attempt_no}\t${iso(a.started_at)}\t${a.status_code ?? '-'}\t${a.latency_ms} ms\t${a.outcome}\t${a.error}`);
    if (attempts.length === 0) out('no attempts yet');
  },
});

export const eventsReplayCommand = command({
  name: 'events replay',
  args: '(--event ID | --failed-since ISO_TIME [--account ID])',
  options: { event: { type: 'string' }, 'failed-since': { type: 'string' }, account: { type: 'string' } },
  async run({ values, runtime }) {
    if (!values.event === !values['failed-since']) throw new UsageError('give --event or --failed-since');
    const r = await runtime();
    const svc = new EventService(r.store);
    const now = r.deps.now();
    if (values.event) {
      if (!(await svc.replayEvent(values.event, now))) throw new CommandError(`no event ${JSON.stringify(values.event)} with a notify_url`);
      return out(`event ${values.event} queued for delivery`);
    }
    const since = Date.parse(values['failed-since'] as string);
    if (Number.isNaN(since)) throw new UsageError('--failed-since must be an ISO 8601 time, e.g. 2025-01-31T00:00:00Z');
    out(`${await svc.replayFailedSince(since, now, values.account)} failed event(s) queued for delivery`);
  },
});
