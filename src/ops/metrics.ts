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

  /** Calls to each configured processor by operation and outcome, and their latency (src/processors/guard.ts). */
  readonly processorCalls: Histogram<'connector' | 'processor_id' | 'operation' | 'outcome'>;
  /** 1 while a processor's circuit is open in this process. */
  readonly processorCircuit: Gauge<'connector' | 'processor_id'>;

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
      help: 'Requests answered 503 at once because the process was at its limit (in_flight, event_loop_delay, processor_waits)',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    this.processorCalls = new Histogram({
      name: 'tollgate_processor_call_duration_seconds',
      help: 'Calls to configured processors by connector, processor, operation and outcome (approved, declined, pending, unknown, circuit_open, credentials_refused: the processor refused our credentials, an operator must act); the approval rate is approved over all authorise calls',
      labelNames: ['connector', 'processor_id', 'operation', 'outcome'],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: [this.registry],
    });
    this.processorCircuit = new Gauge({
      name: 'tollgate_processor_circuit_open',
      help: '1 while the circuit breaker of a processor is open in this process (its calls are not made; payments go to the next processor)',
      labelNames: ['connector', 'processor_id'],
      registers: [this.registry],
    });
    this.notificationDeliveries = new Counter({
      name: 'tollgate_notification_deliveries_total',
      help: 'Notification delivery attempts made by this process, by result (delivered, retry, failed)',
      labelNames: ['result'],
      registers: [this.registry],
    });
  }

  /** A processor guard's report of one call (ProcessorObserver). */
  call(labels: { connector: string; processor_id: string; operation: string; outcome: string }, seconds: number): void {
    this.processorCalls.observe(labels, seconds);
  }

  /** A processor guard's circuit opened or closed (ProcessorObserver). */
  circuit(labels: { connector: string; processor_id: string }, open: boolean): void {
    this.processorCircuit.set(labels, open ? 1 : 0);
  }

  /** Calls this process has waiting on processors now (their bound is TOLLGATE_MAX_PROCESSOR_WAITS). */
  watchProcessorWaits(read: () => number): void {
    new Gauge({
      name: 'tollgate_processor_waits',
      help: 'Calls to processors this process is waiting on now; requests waiting on them do not count against the in-flight bound',
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * The mismatches of the last reconciliation run of each account and connector (issue 35 item
   * 3; `npx tollgate reconcile`), read from the kept runs at each scrape, so every process
   * answers the same figure whichever ran the reconciliation.
   */
  watchReconciliation(read: () => Promise<ReadonlyArray<{ account_id: string; connector: string; mismatches: number }>>): void {
    new Gauge({
      name: 'tollgate_reconciliation_mismatches',
      help: "Mismatches found by the last reconciliation run of each account and connector with its processor's settlement report (missing here, missing at the processor, amount or fee differs); 0 when it matched",
      labelNames: ['account_id', 'connector'],
      registers: [this.registry],
      async collect() {
        const last = await read();
        this.reset();
        for (const r of last) this.set({ account_id: r.account_id, connector: r.connector }, r.mismatches);
      },
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
