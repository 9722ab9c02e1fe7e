// Prometheus metrics, one registry per app so tests can build many apps side by side.
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly payments: Counter<'outcome'>;
  /** Requests refused at once because the process was at its limit (issue 17). */
  readonly shed: Counter<'reason'>;

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
  }
}
