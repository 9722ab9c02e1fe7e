// Settings come from the environment only (docs/contract.md §13). Every setting has the
// `TOLLGATE_` prefix except the three the decisions name plainly.
import os from 'node:os';
import path from 'node:path';

export interface Settings {
  database_url: string;
  host: string;
  port: number;
  data_dir: string;
  master_key: string | undefined;
  allow_private_webhooks: boolean;
  log_level: string;
  /** `pretty` (one readable line per entry) or `json` (one JSON object per line, for collectors). */
  log_format: LogFormat;
  /** Proxies whose X-Forwarded-For is trusted (docs/contract.md §3), CIDR list. */
  trusted_proxies: string[];
  /** Public base URL used in links handed to shoppers (3-D Secure page, issuer page). */
  public_url: string;
  /** Run the background worker (notifications, expiries) inside the server process. */
  worker_enabled: boolean;
  /** Body limit in bytes (docs/contract.md §1: 1 MiB). */
  body_limit_bytes: number;
  /** Max transactions grouped in one SQLite commit. */
  group_commit_max: number;
  /** SQLite: reads and the hot path's writes (write units) run on their own threads. */
  sqlite_threads: boolean;
  /** Webhook retry schedule in ms (docs/contract.md §11: backoff for 3 days). */
  webhook_schedule_ms: number[] | undefined;
  webhook_timeout_ms: number;
  demo_merchant: boolean;
  /** Run the risk rules (docs/contract.md §10); off leaves only the sandbox test-card rule. */
  risk_rules: boolean;
  /** How long a hosted-checkout session waits for the shopper (docs/contract.md §14: 60 minutes). */
  checkout_ttl_ms: number;
  /** How long a scheduler claim holds (TOLLGATE_SCHEDULER_LEASE_MS, 60 s): the longest a batch of jobs may run, and how soon a dead process's jobs are taken over. */
  scheduler_lease_ms: number;
  /** How long the sandbox takes to settle a SWIFT payout, or to return one (TOLLGATE_SANDBOX_SWIFT_DELAY_MS, 5 s; docs/contract.md §17). */
  sandbox_swift_delay_ms: number;
  /** Requests per second each generic-interface key may make, as a token bucket of that size (TOLLGATE_API_RATE_LIMIT, 100; issue 13). */
  api_rate_limit: number;
  /** PostgreSQL: the longest one statement may run before it is cancelled (TOLLGATE_DB_STATEMENT_TIMEOUT_MS, 5 s; issue 17). */
  db_statement_timeout_ms: number;
  /** PostgreSQL: the longest a request waits for a pooled connection (TOLLGATE_DB_ACQUIRE_TIMEOUT_MS, 2 s; issue 17). */
  db_acquire_timeout_ms: number;
  /**
   * Requests one process works on at once; past it, 503 at once (TOLLGATE_MAX_IN_FLIGHT;
   * issue 17). Default: MAX_IN_FLIGHT_TOTAL shared by the processes (64 for SQLite's one
   * process, 32 each for two PostgreSQL workers): the bound that kept accepted authorise p99
   * within 2× of the sustainable figure at twice the sustainable load (docs/performance.md).
   */
  max_in_flight: number;
  /** The longest a processor call may take before its outcome counts as unknown (TOLLGATE_PROCESSOR_TIMEOUT_MS, 30 s; docs/contract.md §20). */
  processor_timeout_ms: number;
  /** An authorisation still unknown this long after it was sent is cancelled at the processor and fails with 1007 (TOLLGATE_PROCESSOR_UNKNOWN_VOID_AFTER_MS, 10 minutes). */
  processor_unknown_void_after_ms: number;
  /**
   * Calls one process may have waiting on processors at once (TOLLGATE_MAX_PROCESSOR_WAITS,
   * default 4096): waiting costs memory, not CPU, so this bound is apart from (and larger
   * than) max_in_flight; past it a new payment is answered 503 before anything is written.
   */
  max_processor_waits: number;
  /**
   * Event-loop delay (mean over 250 ms) past which new requests are shed with 503
   * (TOLLGATE_MAX_EVENT_LOOP_DELAY_MS; 0, the default, turns it off: the in-flight bound is
   * the deterministic one, and a start-up stall would otherwise shed the first requests).
   */
  max_event_loop_delay_ms: number;
  /**
   * Anything but the embedded development default (issue 29): a DATABASE_URL or a
   * TOLLGATE_MASTER_KEY given (the same test as runtime.ts loadKeyring's), a HOST that is not
   * loopback, trusted proxies, or NODE_ENV=production. Production keeps /metrics closed
   * unless TOLLGATE_METRICS_TOKEN or TOLLGATE_METRICS_LISTEN says how to reach it.
   */
  production: boolean;
  /** Bearer token /metrics requires (TOLLGATE_METRICS_TOKEN; at least 16 characters). */
  metrics_token: string | undefined;
  /** host:port of a listener of its own that serves only /metrics (TOLLGATE_METRICS_LISTEN). */
  metrics_listen: { host: string; port: number } | undefined;
  /**
   * When `serve` compiles the routes' request and answer schemas (TOLLGATE_ROUTE_SCHEMAS):
   * `at_start` (the default: all ~200 before it listens, so no request waits and a bad schema
   * stops the start) or `on_first_use` (each on its route's first request: the start is about
   * a second quicker, for the test suite's short-lived gateways and restarts that must be fast).
   */
  route_schemas: RouteSchemas;
}

export type RouteSchemas = 'at_start' | 'on_first_use';

function routeSchemas(env: NodeJS.ProcessEnv): RouteSchemas {
  const raw = env.TOLLGATE_ROUTE_SCHEMAS;
  if (raw === undefined || raw === '') return 'at_start';
  if (raw === 'at_start' || raw === 'on_first_use') return raw;
  throw new Error(`TOLLGATE_ROUTE_SCHEMAS must be at_start or on_first_use, got "${raw}"`);
}

export type LogFormat = 'json' | 'pretty';

/** TOLLGATE_LOG_FORMAT, or readable lines on a terminal and JSON otherwise (issue 9). */
function logFormat(env: NodeJS.ProcessEnv, stdout_is_tty: boolean): LogFormat {
  const raw = env.TOLLGATE_LOG_FORMAT;
  if (raw === undefined || raw === '') return stdout_is_tty ? 'pretty' : 'json';
  if (raw === 'json' || raw === 'pretty') return raw;
  throw new Error(`TOLLGATE_LOG_FORMAT must be json or pretty, got "${raw}"`);
}

function flag(value: string | undefined): boolean {
  return value === '1' || value === 'true' || value === 'yes';
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function positive(n: number, name: string): number {
  if (n === 0) throw new Error(`${name} must be greater than zero`);
  return n;
}

/** Requests in progress the gateway's processes take together by default (issue 17). */
export const MAX_IN_FLIGHT_TOTAL = 64;

/** How many processes serve (the rule of src/cli/cluster.ts workerCount; a bad TOLLGATE_WORKERS is refused there). */
function defaultProcesses(env: NodeJS.ProcessEnv, database_url: string): number {
  if (database_url.startsWith('sqlite:')) return 1;
  const n = Number(env.TOLLGATE_WORKERS);
  return Number.isInteger(n) && n >= 1 && n <= 256 ? n : os.availableParallelism();
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

function isProduction(env: NodeJS.ProcessEnv, host: string, trusted_proxies: string[]): boolean {
  return (
    env.NODE_ENV === 'production' ||
    Boolean(env.DATABASE_URL) ||
    Boolean(env.TOLLGATE_MASTER_KEY) ||
    !(LOOPBACK_HOSTS.has(host) || host.startsWith('127.')) ||
    trusted_proxies.length > 0
  );
}

function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TOLLGATE_METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) throw new Error('TOLLGATE_METRICS_TOKEN must be at least 16 characters, without spaces');
  return raw;
}

/** TOLLGATE_METRICS_LISTEN: `host:port`, `[v6]:port` or a bare port (on 127.0.0.1). */
function metricsListen(env: NodeJS.ProcessEnv): { host: string; port: number } | undefined {
  const raw = env.TOLLGATE_METRICS_LISTEN;
  if (raw === undefined || raw === '') return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw) ?? /^()()(\d{1,5})$/.exec(raw);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65535) throw new Error(`TOLLGATE_METRICS_LISTEN must be host:port (e.g. 127.0.0.1:9464), got "${raw}"`);
  return { host: m[1] || m[2] || '127.0.0.1', port };
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env, stdout_is_tty = process.stdout.isTTY === true): Settings {
  const data_dir = path.resolve(env.TOLLGATE_DATA_DIR ?? 'data');
  const database_url = env.DATABASE_URL ?? `sqlite:${path.join(data_dir, 'tollgate.db')}`;
  const host = env.HOST ?? '127.0.0.1';
  const port = intSetting(env, 'PORT', 8080);
  const schedule = env.TOLLGATE_WEBHOOK_SCHEDULE_MS;
  const trusted_proxies = (env.TOLLGATE_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    database_url,
    host,
    port,
    data_dir,
    master_key: env.TOLLGATE_MASTER_KEY || undefined,
    allow_private_webhooks: flag(env.TOLLGATE_ALLOW_PRIVATE_WEBHOOKS),
    log_level: env.TOLLGATE_LOG_LEVEL ?? 'info',
    log_format: logFormat(env, stdout_is_tty),
    trusted_proxies,
    public_url: (env.TOLLGATE_PUBLIC_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/$/, ''),
    worker_enabled: env.TOLLGATE_WORKER !== '0',
    body_limit_bytes: intSetting(env, 'TOLLGATE_BODY_LIMIT_BYTES', 1024 * 1024),
    group_commit_max: intSetting(env, 'TOLLGATE_GROUP_COMMIT_MAX', 256),
    sqlite_threads: env.TOLLGATE_SQLITE_THREADS !== '0',
    webhook_schedule_ms: schedule
      ? schedule.split(',').map((s) => {
          const n = Number(s.trim());
          if (!Number.isFinite(n) || n < 0) throw new Error(`TOLLGATE_WEBHOOK_SCHEDULE_MS has a bad entry "${s}"`);
          return n;
        })
      : undefined,
    webhook_timeout_ms: intSetting(env, 'TOLLGATE_WEBHOOK_TIMEOUT_MS', 10_000),
    demo_merchant: env.TOLLGATE_DEMO_MERCHANT !== '0',
    risk_rules: env.TOLLGATE_RISK_RULES !== '0',
    checkout_ttl_ms: positive(intSetting(env, 'TOLLGATE_CHECKOUT_TTL_MS', 60 * 60 * 1000), 'TOLLGATE_CHECKOUT_TTL_MS'),
    scheduler_lease_ms: positive(intSetting(env, 'TOLLGATE_SCHEDULER_LEASE_MS', 60_000), 'TOLLGATE_SCHEDULER_LEASE_MS'),
    sandbox_swift_delay_ms: intSetting(env, 'TOLLGATE_SANDBOX_SWIFT_DELAY_MS', 5_000),
    api_rate_limit: positive(intSetting(env, 'TOLLGATE_API_RATE_LIMIT', 100), 'TOLLGATE_API_RATE_LIMIT'),
    db_statement_timeout_ms: positive(intSetting(env, 'TOLLGATE_DB_STATEMENT_TIMEOUT_MS', 5_000), 'TOLLGATE_DB_STATEMENT_TIMEOUT_MS'),
    db_acquire_timeout_ms: positive(intSetting(env, 'TOLLGATE_DB_ACQUIRE_TIMEOUT_MS', 2_000), 'TOLLGATE_DB_ACQUIRE_TIMEOUT_MS'),
    max_in_flight: positive(
      intSetting(env, 'TOLLGATE_MAX_IN_FLIGHT', Math.ceil(MAX_IN_FLIGHT_TOTAL / defaultProcesses(env, database_url))),
      'TOLLGATE_MAX_IN_FLIGHT',
    ),
    max_event_loop_delay_ms: intSetting(env, 'TOLLGATE_MAX_EVENT_LOOP_DELAY_MS', 0),
    processor_timeout_ms: positive(intSetting(env, 'TOLLGATE_PROCESSOR_TIMEOUT_MS', 30_000), 'TOLLGATE_PROCESSOR_TIMEOUT_MS'),
    processor_unknown_void_after_ms: positive(intSetting(env, 'TOLLGATE_PROCESSOR_UNKNOWN_VOID_AFTER_MS', 600_000), 'TOLLGATE_PROCESSOR_UNKNOWN_VOID_AFTER_MS'),
    max_processor_waits: positive(intSetting(env, 'TOLLGATE_MAX_PROCESSOR_WAITS', 4096), 'TOLLGATE_MAX_PROCESSOR_WAITS'),
    production: isProduction(env, host, trusted_proxies),
    metrics_token: metricsToken(env),
    metrics_listen: metricsListen(env),
    route_schemas: routeSchemas(env),
  };
}
