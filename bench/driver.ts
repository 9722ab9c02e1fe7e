// A closed-loop driver for scenarios of several requests in a row (issue 10): autocannon
// repeats one request per connection, but a hosted checkout is create → page → pay, each
// request built from the previous answer. Each of `connections` virtual shoppers runs one
// sequence after another over a keep-alive connection; the latency of every step and of the
// whole sequence is kept, so the report can say which step costs what.
import fs from 'node:fs';
import http from 'node:http';
import { processTree } from '../src/test/process.js';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Sends one request as step `step` of the current sequence and times it (send → last byte). */
export type Go = (step: string, method: 'GET' | 'POST', path: string, body?: string, contentType?: string) => Promise<Reply>;

/** Thrown by a sequence when an answer is not the one it expects (counted against the step, sequence abandoned). */
export class Unexpected extends Error {
  override name = 'Unexpected';
  constructor(
    readonly step: string,
    message: string,
  ) {
    super(`${step}: ${message}`);
  }
}

export interface Stats {
  /** Completions per second of the measured window. */
  per_s: number;
  count: number;
  p50_ms: number;
  p99_ms: number;
  p99_9_ms: number;
  /** Answers that were not what the sequence expected (status, redirect, page content). */
  unexpected: number;
  errors: number;
  timeouts: number;
}

/** Stats of latencies measured elsewhere (no failures counted), over `window_s`. */
export function summarise(ms: number[], window_s: number): Stats {
  return stats(ms, window_s, ms.length, 0, 0, 0);
}

export interface DriveResult {
  whole: Stats;
  steps: Record<string, Stats>;
  /** Of the first few unexpected answers: what was wrong (no bodies, so no card data). */
  samples: string[];
  elapsed_s: number;
}

const REQUEST_TIMEOUT_MS = 30_000;
const MAX_SAMPLES = 5;

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round((sorted[i] as number) * 10) / 10;
}

function stats(ms: number[], window_s: number, counted: number, unexpected: number, errors: number, timeouts: number): Stats {
  const sorted = Float64Array.from(ms).sort();
  const arr = Array.from(sorted);
  return {
    per_s: Math.round(counted / window_s),
    count: ms.length,
    p50_ms: percentile(arr, 50),
    p99_ms: percentile(arr, 99),
    p99_9_ms: percentile(arr, 99.9),
    unexpected,
    errors,
    timeouts,
  };
}

/**
 * Runs `sequence` from `connections` virtual shoppers for `duration_s` seconds (or until
 * `max_sequences` have started). Sequences under way at the deadline finish (so no session
 * is left half-paid) but only those finished by it count towards the rates.
 */
export async function driveSequences(o: {
  url: string;
  connections: number;
  duration_s: number;
  max_sequences?: number;
  sequence: (go: Go, index: number) => Promise<void>;
}): Promise<DriveResult> {
  const base = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const stepMs = new Map<string, number[]>();
  const stepCounted = new Map<string, number>();
  const stepBad = new Map<string, { unexpected: number; errors: number; timeouts: number }>();
  const wholeMs: number[] = [];
  let wholeCounted = 0;
  let unexpected = 0;
  let errors = 0;
  let timeouts = 0;
  const samples: string[] = [];
  const bad = (step: string) => {
    const b = stepBad.get(step) ?? { unexpected: 0, errors: 0, timeouts: 0 };
    stepBad.set(step, b);
    return b;
  };
  const t0 = performance.now();
  const deadline = t0 + o.duration_s * 1000;
  let started = 0;

  const go: Go = (step, method, path, body, contentType) =>
    new Promise<Reply>((resolve, reject) => {
      const headers: Record<string, string | number> = { accept: 'text/html,application/xhtml+xml' };
      if (body !== undefined) {
        headers['content-type'] = contentType ?? 'application/x-www-form-urlencoded';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const at = performance.now();
      const req = http.request({ host: base.hostname, port: base.port, method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const end = performance.now();
          const list = stepMs.get(step) ?? [];
          stepMs.set(step, list);
          list.push(end - at);
          if (end <= deadline) stepCounted.set(step, (stepCounted.get(step) ?? 0) + 1);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () =>
        req.destroy(Object.assign(new Error(`${step}: no answer in ${REQUEST_TIMEOUT_MS} ms`), { timeout: true, step })),
      );
      req.on('error', (e) => reject(Object.assign(e, { step: (e as { step?: string }).step ?? step })));
      req.end(body);
    });

  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      while (performance.now() < deadline && (o.max_sequences === undefined || started < o.max_sequences)) {
        const index = started++;
        const at = performance.now();
        try {
          await o.sequence(go, index);
          const end = performance.now();
          wholeMs.push(end - at);
          if (end <= deadline || o.max_sequences !== undefined) wholeCounted++;
        } catch (e) {
          const step = (e as { step?: string }).step ?? '?';
          if (e instanceof Unexpected) {
            unexpected++;
            bad(step).unexpected++;
          } else if ((e as { timeout?: boolean }).timeout) {
            timeouts++;
            bad(step).timeouts++;
          } else {
            errors++;
            bad(step).errors++;
          }
          if (samples.length < MAX_SAMPLES) samples.push((e as Error).message.slice(0, 300));
        }
      }
    }),
  );
  agent.destroy();
  const elapsed_s = (performance.now() - t0) / 1000;
  // A capped run is measured over its own length; a timed one over its window.
  const window_s = o.max_sequences !== undefined ? elapsed_s : o.duration_s;
  const steps: Record<string, Stats> = {};
  for (const [step, ms] of stepMs) {
    const b = stepBad.get(step) ?? { unexpected: 0, errors: 0, timeouts: 0 };
    const counted = o.max_sequences !== undefined ? ms.length : (stepCounted.get(step) ?? 0);
    steps[step] = stats(ms, window_s, counted, b.unexpected, b.errors, b.timeouts);
  }
  return { whole: stats(wholeMs, window_s, wholeCounted, unexpected, errors, timeouts), steps, samples, elapsed_s };
}

function ticks(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14 and 15 of stat)
  } catch {
    return 0; // gone meanwhile
  }
}

/**
 * CPU used while a measurement runs, in % of one core: the gateway's process tree (from
 * /proc, 100 ticks a second) and this runner process. A runner near 100% means the
 * driver, not the gateway, set the pace.
 */
export function cpuMeter(gateway_pid: number): () => { gateway_cpu_pct: number; runner_cpu_pct: number } {
  const tree = () => processTree(gateway_pid).reduce((sum, p) => sum + ticks(p), 0);
  const g0 = tree();
  const r0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const s = (performance.now() - t0) / 1000;
    const r = process.cpuUsage(r0);
    return {
      gateway_cpu_pct: Math.round(((tree() - g0) / 100 / s) * 100),
      runner_cpu_pct: Math.round(((r.user + r.system) / 1e6 / s) * 100),
    };
  };
}

/** How `driveLoad` files an answer: the one wanted, a shed (503 with Retry-After), or any other (named). */
export type Verdict = 'accepted' | 'shed' | string;

export interface LoadRun {
  /** Open loop: the rate asked for; closed loop: null. */
  offered_per_s: number | null;
  /** Requests started (open loop: arrivals) in the measured window. */
  sent: number;
  window_s: number;
  /** Latency of the accepted answers (open loop: from each request's scheduled arrival, so waiting for a socket counts). */
  accepted: Stats;
  /** Accepted answers a second, of those that arrived within the window. */
  accepted_per_s: number;
  /** Latency of the 503s with Retry-After (how fast a refusal is). */
  shed: Stats;
  /** Answers neither accepted nor shed, by what `classify` named them (e.g. a 503 without Retry-After). */
  other: Record<string, number>;
  /** No answer within the timeout (open loop: counted from the scheduled arrival). */
  timeouts: number;
  /** Connection errors (reset, refused). */
  errors: number;
  /** Open loop: how late this runner started requests (its own event-loop lag), p99 and max, ms. */
  start_lag_p99_ms: number;
  start_lag_max_ms: number;
  /** A few of the answers that were neither accepted nor shed. */
  samples: string[];
  /** TCP connections opened, the pre-connected ones included (keep-alive: `connections` unless some were closed, e.g. by a timeout). */
  sockets_opened: number;
  /** Seconds from the first request to the last answer (or timeout), the drain included. */
  elapsed_s: number;
}

/**
 * One request repeated (bodies from `next`) over a keep-alive pool of `connections` sockets,
 * every answer timed and filed by `classify` (issue 17: autocannon's histogram mixes the
 * fast 503s of load shedding with the accepted answers, and its `overallRate` sends each
 * connection's share in a burst at the start of every second, one request per connection
 * at most: a closed loop in disguise).
 *
 * - Closed loop (no `rate`): each connection sends its next request when the previous
 *   answer is in, for `duration_s`.
 * - Open loop (`rate`): arrivals at random (Poisson, mean `rate` a second) for
 *   `duration_s`, whatever the answers do; an arrival that finds every socket busy waits
 *   for one, and that wait is part of its latency, which runs from the scheduled arrival
 *   (no coordinated omission).
 *
 * A request without an answer `timeout_ms` after its arrival is abandoned and counted as a
 * timeout. The run ends when every request has been answered or abandoned.
 */
export async function driveLoad(o: {
  url: string;
  path: string;
  contentType: string;
  next: () => string;
  connections: number;
  duration_s: number;
  rate?: number;
  timeout_ms: number;
  classify: (status: number, headers: http.IncomingHttpHeaders, body: string) => Verdict;
  /**
   * A GET path (a probe the gateway never sheds) sent on every socket at once before the
   * run, so the pool is open when it starts: a client's warm connection pool. Without it,
   * hundreds of connects reach a busy gateway at once and some wait for SYN retransmits
   * (1, 3, 7 s), which is the listen backlog, not the queue under test.
   */
  preconnect?: string;
}): Promise<LoadRun> {
  const base = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections, maxFreeSockets: o.connections, scheduling: 'fifo' });
  const acceptedMs: number[] = [];
  const shedMs: number[] = [];
  const lagMs: number[] = [];
  const other: Record<string, number> = {};
  const samples: string[] = [];
  let acceptedInWindow = 0;
  let timeouts = 0;
  let errors = 0;
  let sent = 0;
  const sockets = new WeakSet<object>();
  let socketsOpened = 0;
  const outstanding = new Set<{ at: number; req: http.ClientRequest; settle: () => void }>();
  const countSocket = (socket: object) => {
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socketsOpened++;
  };
  if (o.preconnect) {
    const path = o.preconnect;
    await Promise.all(
      Array.from(
        { length: o.connections },
        () =>
          new Promise<void>((resolve, reject) => {
            const req = http.get({ host: base.hostname, port: base.port, path, agent }, (res) => {
              res.resume();
              res.on('end', () => resolve());
            });
            req.on('socket', countSocket);
            req.on('error', reject);
          }),
      ),
    );
  }
  const t0 = performance.now();
  const deadline = t0 + o.duration_s * 1000;

  const send = (at: number): Promise<void> =>
    new Promise<void>((resolve) => {
      sent++;
      const body = o.next();
      let settled = false;
      const entry = {
        at,
        req: null as unknown as http.ClientRequest,
        settle: () => {
          settled = true;
          outstanding.delete(entry);
          resolve();
        },
      };
      const req = http.request(
        {
          host: base.hostname,
          port: base.port,
          method: 'POST',
          path: o.path,
          headers: { 'content-type': o.contentType, 'content-length': Buffer.byteLength(body) },
          agent,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if (settled) return;
            const end = performance.now();
            const text = Buffer.concat(chunks).toString('utf8');
            const verdict = o.classify(res.statusCode ?? 0, res.headers, text);
            if (verdict === 'accepted') {
              acceptedMs.push(end - at);
              if (end <= deadline) acceptedInWindow++;
            } else if (verdict === 'shed') shedMs.push(end - at);
            else {
              other[verdict] = (other[verdict] ?? 0) + 1;
              if (samples.length < MAX_SAMPLES) samples.push(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
            }
            entry.settle();
          });
          res.on('error', () => undefined);
        },
      );
      entry.req = req;
      outstanding.add(entry);
      req.on('socket', countSocket);
      req.on('error', (e) => {
        if (settled) return;
        errors++;
        if (samples.length < MAX_SAMPLES) samples.push(`error: ${e.message.slice(0, 200)}`);
        entry.settle();
      });
      req.end(body);
    });

  // Abandons what has waited `timeout_ms` since its arrival (a sweep, not a timer each).
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const e of outstanding)
      if (now - e.at >= o.timeout_ms) {
        timeouts++;
        e.settle();
        e.req.destroy();
      }
  }, 50);

  const inFlight: Promise<void>[] = [];
  if (o.rate === undefined) {
    await Promise.all(
      Array.from({ length: o.connections }, async () => {
        while (performance.now() < deadline) await send(performance.now());
      }),
    );
  } else {
    const rate = o.rate;
    // Poisson arrivals: exponential gaps. Due arrivals are started on each timer tick;
    // each is timed from when it was due, so this runner's own lag cannot hide a queue.
    let nextAt = t0;
    await new Promise<void>((done) => {
      const tick = () => {
        const now = performance.now();
        while (nextAt <= now && nextAt < deadline) {
          lagMs.push(now - nextAt);
          inFlight.push(send(nextAt));
          nextAt += (-Math.log(1 - Math.random()) * 1000) / rate;
        }
        if (nextAt >= deadline) return done();
        setTimeout(tick, Math.max(0, nextAt - performance.now()));
      };
      tick();
    });
    await Promise.all(inFlight);
  }
  clearInterval(sweep);
  const elapsed_s = (performance.now() - t0) / 1000;
  agent.destroy();
  const lag = Float64Array.from(lagMs).sort();
  const shed = stats(shedMs, o.duration_s, shedMs.length, 0, 0, 0);
  return {
    offered_per_s: o.rate ?? null,
    sent,
    window_s: o.duration_s,
    accepted: stats(acceptedMs, o.duration_s, acceptedInWindow, 0, errors, timeouts),
    accepted_per_s: Math.round(acceptedInWindow / o.duration_s),
    shed,
    other,
    timeouts,
    errors,
    start_lag_p99_ms: percentile(Array.from(lag), 99),
    start_lag_max_ms: lag.length ? Math.round((lag[lag.length - 1] as number) * 10) / 10 : 0,
    samples,
    sockets_opened: socketsOpened,
    elapsed_s: Math.round(elapsed_s * 10) / 10,
  };
}
