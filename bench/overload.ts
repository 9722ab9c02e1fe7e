// Load shedding under overload (issue 17 item 4): under twice the load the gateway sustains,
// the authorise requests it accepts keep their latency and none time out, because past
// TOLLGATE_MAX_IN_FLIGHT requests in progress per process new ones get a fast 503 with
// Retry-After.
//
// 1. sustainable: a gateway without shedding (TOLLGATE_MAX_IN_FLIGHT=100000), authorise in a
//    closed loop at the run's connections (64) after a warm-up: R req/s and its latency.
//    This is the "unloaded" figure: the gateway at the load it sustains (every connection
//    waits for its answer, so the queue is at most the connections).
// 2. 2× load: the gateway as shipped (TOLLGATE_MAX_IN_FLIGHT unset), each bound asked for,
//    and once without one (TOLLGATE_MAX_IN_FLIGHT=100000), each on a fresh gateway on the
//    same database: a closed-loop warm-up, then an open loop of 2R arrivals a second
//    (Poisson) over 512 sockets (opened first) for the scenario's duration, each request
//    abandoned 10 s after its arrival. Every answer is timed and filed: accepted (HTTP 200,
//    0000:Success), shed (503 with Retry-After), timeout, anything else.
//
// Part of `npm run bench`; alone, on a fresh database (DATABASE_URL picks the engine):
// `node --import tsx bench/overload.ts [--quick] [--duration S] [--limits 32,64,128,256] [--delays 50] [--workers N] [--no-build]`.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { signBody } from '../src/client/index.js';
import { loadSettings } from '../src/config/index.js';
import type { CreatedMerchant } from '../src/merchants/service.js';
import {
  buildDist,
  createMerchant,
  type Engine,
  freePort,
  freshDatabase,
  type GatewayProcess,
  gatewayEnv,
  peakRssMiB,
  resetPeakRss,
  startGateway,
} from '../src/test/process.js';
import { cpuMeter, driveLoad, type LoadRun, type Verdict } from './driver.js';
import { authoriseBody } from './scenarios.js';

/** The bound a gateway with this environment takes when TOLLGATE_MAX_IN_FLIGHT is not set (per process). */
export function defaultMaxInFlight(env: NodeJS.ProcessEnv): number {
  const { TOLLGATE_MAX_IN_FLIGHT: _unset, ...rest } = env;
  return loadSettings(rest, false).max_in_flight;
}
/** "No shedding": a bound no run reaches (the sockets of the open loop are far fewer). */
export const UNBOUNDED = 100_000;
/** Sockets of the open loop: more than any bound tried, so the bound and not the client limits what the gateway holds. */
export const OVERLOAD_CONNECTIONS = 512;
/** An answer later than this after its arrival is a timeout. */
export const OVERLOAD_TIMEOUT_S = 10;
/** The target: accepted p99 at 2× load at most this many times the sustainable p99. */
export const MAX_P99_RATIO = 2;

/** What a 2× sub-run's gateway sheds on: its bound of requests in progress, and optionally event-loop delay. */
export interface ShedSetting {
  /** TOLLGATE_MAX_IN_FLIGHT (per process); null leaves it unset (the gateway's default); UNBOUNDED for the comparison without shedding. */
  max_in_flight: number | null;
  /** TOLLGATE_MAX_EVENT_LOOP_DELAY_MS; 0 (the default) is off. */
  max_event_loop_delay_ms: number;
}

/** A setting as its environment variables read; `bound` is what an unset TOLLGATE_MAX_IN_FLIGHT comes to. */
function settingLabel(s: ShedSetting, bound: number, workers: number): string {
  if (s.max_in_flight === UNBOUNDED && s.max_event_loop_delay_ms === 0) return `no shedding (TOLLGATE_MAX_IN_FLIGHT=${UNBOUNDED})`;
  const perProcess = workers > 1 ? ` per process × ${workers}` : '';
  const parts = [
    s.max_in_flight === null ? `default (TOLLGATE_MAX_IN_FLIGHT unset: ${bound}${perProcess})` : `TOLLGATE_MAX_IN_FLIGHT=${s.max_in_flight}${perProcess}`,
  ];
  if (s.max_event_loop_delay_ms > 0) parts.push(`TOLLGATE_MAX_EVENT_LOOP_DELAY_MS=${s.max_event_loop_delay_ms}`);
  return parts.join(', ');
}

export interface OverloadRow {
  label: string;
  /** The bound in effect, per process. */
  max_in_flight: number;
  max_event_loop_delay_ms: number;
  /** The gateway as it ships: TOLLGATE_MAX_IN_FLIGHT and TOLLGATE_MAX_EVENT_LOOP_DELAY_MS unset. */
  is_default: boolean;
  offered_per_s: number;
  sent: number;
  accepted: number;
  accepted_per_s: number;
  accepted_p50_ms: number;
  accepted_p99_ms: number;
  accepted_p99_9_ms: number;
  /** accepted p99 / sustainable p99 (target ≤ 2). */
  p99_ratio: number;
  shed: number;
  shed_share: number;
  shed_p99_ms: number;
  timeouts: number;
  errors: number;
  other: Record<string, number>;
  samples: string[];
  /** The gateway's own count (tollgate_requests_shed_total), one process only (null with several). */
  gateway_shed_total: number | null;
  gateway_cpu_pct: number;
  runner_cpu_pct: number;
  start_lag_p99_ms: number;
  peak_rss_mib: number;
  /** TCP connections the runner opened (the server closing kept-alive connections shows here). */
  sockets_opened: number;
  /** Seconds from the first arrival to the last answer or timeout. */
  elapsed_s: number;
}

export interface OverloadReport {
  connections: number;
  overload_connections: number;
  timeout_s: number;
  duration_s: number;
  gateway_processes: number;
  /** What an unset TOLLGATE_MAX_IN_FLIGHT comes to for this gateway (per process). */
  default_max_in_flight: number;
  sustainable: {
    req_per_s: number;
    p50_ms: number;
    p99_ms: number;
    p99_9_ms: number;
    requests: number;
    not_accepted: number;
    timeouts: number;
    gateway_cpu_pct: number;
    runner_cpu_pct: number;
  };
  runs: OverloadRow[];
  runtime_s: number;
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/**
 * Authorise's answers: accepted is HTTP 200 with 0000:Success; shed is 503 0503 with
 * Retry-After from the bound or the event-loop check. A 503 for the database (a pool or
 * statement timeout under the load) is not a shed: it is counted apart, with its reason.
 */
function classify(status: number, headers: Record<string, unknown>, body: string): Verdict {
  if (status === 200 && body.includes('0000:Success')) return 'accepted';
  const detail = /<error_message>([^<]*)/.exec(body)?.[1] ?? '';
  if (status === 503 && headers['retry-after'] !== undefined && /requests in progress|overloaded/.test(detail)) return 'shed';
  const code = /\b\d{4}:[^<"]{0,40}/.exec(body)?.[0];
  return `HTTP ${status}${code ? ` ${code}` : ''}${detail ? ` (${detail.slice(0, 60)})` : ''}${status === 503 && headers['retry-after'] === undefined ? ' (no Retry-After)' : ''}`;
}

/**
 * The bench gateway's /metrics token: a production-like start (DATABASE_URL, master key)
 * keeps /metrics closed without one (issue 29).
 */
const METRICS_TOKEN = `bench-${randomBytes(16).toString('hex')}`;

/** The gateway's tollgate_requests_shed_total (all reasons), or null when it cannot be read. */
async function shedTotal(url: string): Promise<number | null> {
  try {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (res.status !== 200) return null;
    const text = await res.text();
    let sum = 0;
    for (const line of text.split('\n')) if (line.startsWith('tollgate_requests_shed_total')) sum += Number(line.split(' ').pop());
    return sum;
  } catch {
    return null;
  }
}

export async function benchOverload(o: {
  /** The bench gateway's environment (database, workers, rate limit); the port and bound are set here. */
  env: NodeJS.ProcessEnv;
  merchant: CreatedMerchant;
  tag: string;
  duration_s: number;
  warmup_s: number;
  connections: number;
  workers: number;
  /** The settings tried under 2× load (the comparison without shedding is added). */
  settings: ShedSetting[];
  log: (line: string) => void;
}): Promise<OverloadReport> {
  const t0 = Date.now();
  const m = o.merchant;
  let n = 0;
  const next = () => JSON.stringify(signBody(authoriseBody(m, `${o.tag}-O${n++}`), m.secret_key));
  const base = { url: '', path: '/v1/authorise', contentType: 'application/json', next, timeout_ms: OVERLOAD_TIMEOUT_S * 1000, classify };

  const { TOLLGATE_MAX_IN_FLIGHT: _b, TOLLGATE_MAX_EVENT_LOOP_DELAY_MS: _d, ...shipped } = o.env;
  const defaultBound = defaultMaxInFlight(shipped);
  const withGateway = async <T>(setting: ShedSetting, fn: (gw: GatewayProcess) => Promise<T>): Promise<T> => {
    const env: NodeJS.ProcessEnv = { ...shipped, PORT: String(await freePort()), TOLLGATE_METRICS_TOKEN: METRICS_TOKEN };
    if (setting.max_in_flight !== null) env.TOLLGATE_MAX_IN_FLIGHT = String(setting.max_in_flight);
    if (setting.max_event_loop_delay_ms > 0) env.TOLLGATE_MAX_EVENT_LOOP_DELAY_MS = String(setting.max_event_loop_delay_ms);
    const gw = await startGateway(env);
    try {
      // Warm-up: closed loop at the run's connections, below every bound (nothing is shed).
      await driveLoad({ ...base, url: gw.url, connections: o.connections, duration_s: o.warmup_s });
      return await fn(gw);
    } finally {
      await gw.stop();
    }
  };

  // 1. Sustainable: closed loop, no bound in the way (what the gateway sustains, whatever the bound).
  const sus = await withGateway({ max_in_flight: UNBOUNDED, max_event_loop_delay_ms: 0 }, async (gw) => {
    const cpu = cpuMeter(gw.pid);
    const r = await driveLoad({ ...base, url: gw.url, connections: o.connections, duration_s: o.duration_s, preconnect: '/healthz' });
    return { r, ...cpu() };
  });
  const notAccepted = sus.r.shed.count + Object.values(sus.r.other).reduce((a, b) => a + b, 0) + sus.r.errors;
  const sustainable = {
    req_per_s: sus.r.accepted_per_s,
    p50_ms: sus.r.accepted.p50_ms,
    p99_ms: sus.r.accepted.p99_ms,
    p99_9_ms: sus.r.accepted.p99_9_ms,
    requests: sus.r.accepted.count,
    not_accepted: notAccepted,
    timeouts: sus.r.timeouts,
    gateway_cpu_pct: sus.gateway_cpu_pct,
    runner_cpu_pct: sus.runner_cpu_pct,
  };
  o.log(
    `  sustainable (closed loop, ${o.connections} connections, no shedding): ${sustainable.req_per_s} req/s, p50 ${sustainable.p50_ms} ms, p99 ${sustainable.p99_ms} ms, p99.9 ${sustainable.p99_9_ms} ms; not accepted ${notAccepted}, timeouts ${sus.r.timeouts}; gateway CPU ${sus.gateway_cpu_pct}%, runner CPU ${sus.runner_cpu_pct}%`,
  );
  for (const s of sus.r.samples) o.log(`  unexpected: ${s}`);
  if (sustainable.req_per_s <= 0) throw new Error('overload: the sustainable run accepted nothing');

  // 2. Twice that, open loop, for each bound and without one.
  const offered = 2 * sustainable.req_per_s;
  const runs: OverloadRow[] = [];
  // The gateway as shipped, the bounds asked for in order (one equal to the default is the default's run), the event-loop delays, none.
  const bounds = o.settings.filter((x) => x.max_event_loop_delay_ms === 0 && x.max_in_flight !== null && x.max_in_flight !== defaultBound);
  const plan: ShedSetting[] = [
    ...[{ max_in_flight: null, max_event_loop_delay_ms: 0 }, ...bounds].sort((a, b) => (a.max_in_flight ?? defaultBound) - (b.max_in_flight ?? defaultBound)),
    ...o.settings.filter((x) => x.max_event_loop_delay_ms > 0),
    { max_in_flight: UNBOUNDED, max_event_loop_delay_ms: 0 },
  ];
  for (const setting of plan) {
    const row = await withGateway(setting, async (gw) => {
      const before = o.workers === 1 ? await shedTotal(gw.url) : null;
      resetPeakRss(gw.pid);
      const cpu = cpuMeter(gw.pid);
      const r: LoadRun = await driveLoad({
        ...base,
        url: gw.url,
        connections: OVERLOAD_CONNECTIONS,
        duration_s: o.duration_s,
        rate: offered,
        preconnect: '/healthz',
      });
      const used = cpu();
      const after = before === null ? null : await shedTotal(gw.url);
      const other = { ...r.other };
      return {
        label: settingLabel(setting, defaultBound, o.workers),
        max_in_flight: setting.max_in_flight ?? defaultBound,
        max_event_loop_delay_ms: setting.max_event_loop_delay_ms,
        is_default: setting.max_in_flight === null && setting.max_event_loop_delay_ms === 0,
        offered_per_s: offered,
        sent: r.sent,
        accepted: r.accepted.count,
        accepted_per_s: r.accepted_per_s,
        accepted_p50_ms: r.accepted.p50_ms,
        accepted_p99_ms: r.accepted.p99_ms,
        accepted_p99_9_ms: r.accepted.p99_9_ms,
        p99_ratio: sustainable.p99_ms > 0 ? round(r.accepted.p99_ms / sustainable.p99_ms, 2) : 0,
        shed: r.shed.count,
        shed_share: r.sent > 0 ? round(r.shed.count / r.sent, 3) : 0,
        shed_p99_ms: r.shed.p99_ms,
        timeouts: r.timeouts,
        errors: r.errors,
        other,
        samples: r.samples,
        gateway_shed_total: before === null || after === null ? null : after - before,
        ...used,
        start_lag_p99_ms: r.start_lag_p99_ms,
        peak_rss_mib: round(peakRssMiB(gw.pid), 0),
        sockets_opened: r.sockets_opened,
        elapsed_s: r.elapsed_s,
      } satisfies OverloadRow;
    });
    runs.push(row);
    const others = Object.entries(row.other)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
    o.log(
      `  2× load (${offered}/s offered, ${row.sent} sent), ${row.label}: accepted ${row.accepted_per_s}/s, p50 ${row.accepted_p50_ms} ms, p99 ${row.accepted_p99_ms} ms (${row.p99_ratio}× sustainable), p99.9 ${row.accepted_p99_9_ms} ms; 503 ${row.shed} (${round(row.shed_share * 100)}%, p99 ${row.shed_p99_ms} ms${row.gateway_shed_total === null ? '' : `, gateway counted ${row.gateway_shed_total}`}); timeouts ${row.timeouts}, errors ${row.errors}${others ? `, other ${others}` : ''}; gateway CPU ${row.gateway_cpu_pct}%, runner CPU ${row.runner_cpu_pct}% (start lag p99 ${row.start_lag_p99_ms} ms); ${row.sockets_opened} connections opened; ${row.elapsed_s} s to the last answer`,
    );
    for (const s of row.samples) o.log(`  unexpected: ${s}`);
  }
  return {
    connections: o.connections,
    overload_connections: OVERLOAD_CONNECTIONS,
    timeout_s: OVERLOAD_TIMEOUT_S,
    duration_s: o.duration_s,
    gateway_processes: o.workers,
    default_max_in_flight: defaultBound,
    sustainable,
    runs,
    runtime_s: round((Date.now() - t0) / 1000),
  };
}

/** `--shed-limits 32,64,128,256` and `--shed-delays 50`: one setting per bound, then one per delay (with the default bound); the default and no shedding are always run. */
export function shedSettings(limits: string, delays: string): ShedSetting[] {
  const list = (x: string) =>
    x
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '')
      .map(Number);
  return [
    ...list(limits).map((max_in_flight) => ({ max_in_flight, max_event_loop_delay_ms: 0 })),
    ...list(delays).map((max_event_loop_delay_ms) => ({ max_in_flight: null, max_event_loop_delay_ms })),
  ];
}

/** The report's section: the sustainable figure and a row per bound. */
export function overloadMarkdown(r: OverloadReport): string[] {
  const s = r.sustainable;
  const lines = [
    '',
    `Load shedding (\`bench/overload.ts\`, issue 17): sustainable = authorise in a closed loop at ${r.connections} connections on a gateway without shedding: ${s.req_per_s} req/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, p99.9 ${s.p99_9_ms} ms. Then, on a fresh gateway per row (${r.gateway_processes} process(es), the bound is per process), an open loop of twice that (Poisson arrivals, ${r.overload_connections} sockets, ${r.duration_s} s, latency from each arrival, abandoned after ${r.timeout_s} s). Accepted = HTTP 200 0000:Success; 503 = 0503 with Retry-After from the bound (a database 503 counts under other).`,
    '',
    '| authorise at 2× sustainable load | offered/s | accepted/s | accepted p50 ms | p99 ms | p99.9 ms | p99 vs sustainable (≤ 2×) | 503 | 503 share | 503 p99 ms | timeouts | other | CPU gateway / runner |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const x of r.runs) {
    const other = [...Object.entries(x.other).map(([k, v]) => `${v} ${k}`), ...(x.errors ? [`${x.errors} connection errors`] : [])].join(', ');
    lines.push(
      `| ${x.label} | ${x.offered_per_s} | ${x.accepted_per_s} | ${x.accepted_p50_ms} | ${x.accepted_p99_ms} | ${x.accepted_p99_9_ms} | ${x.p99_ratio}× | ${x.shed} | ${round(x.shed_share * 100)}% | ${x.shed_p99_ms} | ${x.timeouts} | ${other || 0} | ${x.gateway_cpu_pct}% / ${x.runner_cpu_pct}% |`,
    );
  }
  return lines;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      limits: { type: 'string' },
      delays: { type: 'string' },
      quick: { type: 'boolean' },
      'no-build': { type: 'boolean' },
      workers: { type: 'string' },
    },
  });
  const quick = values.quick === true;
  const url = process.env.DATABASE_URL ?? '';
  const engine: Engine = /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
  const workers = Number(values.workers ?? process.env.TOLLGATE_WORKERS ?? (engine === 'postgres' ? os.cpus().length : 1));
  if (!values['no-build']) buildDist();
  const db = await freshDatabase(engine, 'bench_overload', engine === 'postgres' ? url : undefined);
  try {
    const env = gatewayEnv(db, await freePort(), { TOLLGATE_WORKERS: String(workers), TOLLGATE_API_RATE_LIMIT: '1000000' });
    const log = (l: string) => process.stdout.write(`${l}\n`);
    log(`engine ${engine}, ${workers} gateway process(es), ${os.cpus().length} cores${quick ? ', QUICK' : ''}`);
    const r = await benchOverload({
      env,
      merchant: createMerchant(env, 'bench overload'),
      tag: `O${Date.now().toString(36)}`,
      duration_s: Number(values.duration ?? (quick ? 3 : 20)),
      warmup_s: quick ? 1 : 3,
      connections: Number(values.connections ?? 64),
      workers,
      settings: shedSettings(values.limits ?? '32,64,128,256', values.delays ?? ''),
      log,
    });
    log(overloadMarkdown(r).join('\n'));
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } finally {
    await db.drop();
  }
}
