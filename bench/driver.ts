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
