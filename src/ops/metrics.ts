// Prometheus metrics, one registry per app so tests can build many apps side by side.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly payments: Counter<'outcome'>;
  /** Requests refused at once because the process was at its limit (issue 17). */
  readonly shed: Counter<'reason'>;
  /** Notification attempts by result: delivered, retry (failed, another attempt due), failed (no more). */
  readonly notificationDeliveries: Counter<'result'>;

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_' });
    this.requests = new Counter({
      name: 'tollgate_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['route', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'tollgate_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.payments = new Counter({
      name: 'tollgate_payments_total',
      help: 'Payments by outcome (result code)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.shed = new Counter({
      name: 'tollgate_requests_shed_total',
      help: 'Requests answered 503 at once because the process was at its limit (in_flight, event_loop_delay)',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.notificationDeliveries = new Counter({
      name: 'tollgate_notification_deliveries_total',
      help: 'Notification delivery attempts made by this process, by result (delivered, retry, failed)',
      labelNames: ['result'],
      registers: [this.registry],
    });
  }

  /**
   * The outbox's backlog as gauges read at each scrape (the same figures from every process):
   * events waiting to be delivered, and the age of the oldest.
   */
  watchNotificationBacklog(read: () => Promise<{ pending: number; oldest_created_ms: number | null }>, now: () => number): void {
    new Gauge({
      name: 'tollgate_notification_backlog',
      help: 'Notifications not yet delivered and still to be attempted (status pending)',
      registers: [this.registry],
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: 'tollgate_notification_oldest_pending_age_seconds',
      help: 'Age of the oldest notification still to be delivered, in seconds (0 when none)',
      registers: [this.registry],
      async collect() {
        const { oldest_created_ms } = await read();
        this.set(oldest_created_ms === null ? 0 : Math.max(0, (now() - oldest_created_ms) / 1000));
      },
    });
  }
}
