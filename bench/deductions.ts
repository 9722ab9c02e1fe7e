// Subscription deductions (issue 11): N subscriptions due at one instant, run by the shared
// scheduler in one process, timed; peak memory compared between a small and a large N.
// Each size gets its own fresh database and two processes (bench/deductions-child.ts): one
// seeds (one real first payment through the API, the rest written with the domain code), a
// fresh one runs the deductions as a worker would (createScheduler, runDue(now, BATCH) until
// a batch claims nothing) and proves the outcome (N `-R1` payments, every subscription
// charged once, ledger verified).
//
// In `npm run bench` (bench/run.ts); alone:
//   node --import tsx bench/deductions.ts [--count 10000] [--small 2500]
// (DATABASE_URL=postgres://… for PostgreSQL: a fresh database on that server per size, dropped after).
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type Engine, type FreshDatabase, freshDatabase, ROOT } from '../src/test/process.js';
import { childArgs } from './children.js';

export interface LiveProbe {
  done: number;
  live_heap_mib: number;
  rss_mib: number;
}

export interface DeductionRun {
  count: number;
  seed_s: number;
  /** Wall time of the run, the live-heap probes' full collections left out. */
  run_s: number;
  gc_probe_s: number;
  deductions_per_s: number;
  /** The scheduler process's CPU over the run, % of one core. */
  cpu_pct: number;
  totals: Record<string, number>;
  memory: {
    before: { rss_mib: number; heap_used_mib: number; heap_total_mib: number; external_mib: number };
    after: { rss_mib: number; heap_used_mib: number; heap_total_mib: number; external_mib: number };
    peak_rss_mib: number;
    peak_heap_used_mib: number;
    /** Heap in use after a full collection, every PROBE_EVERY deductions (bench/deductions-child.ts). */
    probes: LiveProbe[];
  };
  /** RSS and heap in use (garbage included) every 100 ms, thinned to at most MAX_SAMPLES. */
  samples: Array<{ t_s: number; done: number; rss_mib: number; heap_mib: number }>;
  verified: Record<string, unknown> & { ok: boolean };
}

export interface DeductionsReport {
  engine: Engine;
  runs: DeductionRun[];
  /** Memory of the largest run against the smallest. */
  flat: {
    small: number;
    large: number;
    peak_rss_small_mib: number;
    peak_rss_large_mib: number;
    /** (large − small) / small. */
    peak_rss_growth: number;
    /** Largest live heap of the large run's probes minus its heap before the run. */
    live_heap_growth_mib: number;
    /** The large run's highest RSS sample (every 100 ms) while its first quarter ran, and after. */
    large_rss_first_quarter_mib: number;
    large_rss_rest_mib: number;
  };
}

/** Peak RSS of the large run may exceed the small run's by this share at most. */
export const MAX_PEAK_RSS_GROWTH = 0.1;
/** The live heap (after a full collection) may grow this much over a run at most. */
export const MAX_LIVE_HEAP_GROWTH_MIB = 5;
const MAX_SAMPLES = 60;

function child(mode: 'seed' | 'run', db: FreshDatabase, count: number): Record<string, any> {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', ...childArgs('deductions-child.ts'), mode, '--url', db.url, '--dir', db.dir, '--count', String(count)],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 900_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, TOLLGATE_LOG_LEVEL: 'warn' },
    },
  );
  if (r.status !== 0) throw new Error(`deductions ${mode} (${count}) failed: ${r.error?.message ?? ''}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string);
}

function thin<T>(xs: T[], max: number): T[] {
  if (xs.length <= max) return xs;
  const step = (xs.length - 1) / (max - 1);
  return Array.from({ length: max }, (_, i) => xs[Math.round(i * step)] as T);
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

/** Seeds and runs each size on its own fresh database, smallest first. */
export async function benchDeductions(o: {
  engine: Engine;
  /** PostgreSQL server the fresh databases are created on. */
  admin_url?: string;
  sizes: number[];
  log: (line: string) => void;
}): Promise<DeductionsReport> {
  const sizes = [...o.sizes].sort((a, b) => a - b);
  const runs: DeductionRun[] = [];
  let quarters = { first: 0, rest: 0 };
  for (const count of sizes) {
    const db = await freshDatabase(o.engine, 'bench_sub', o.admin_url);
    try {
      const seeded = child('seed', db, count);
      const ran = child('run', db, count);
      const all = ran.samples as DeductionRun['samples'];
      const peak = (xs: DeductionRun['samples']) => Math.max(0, ...xs.map((x) => x.rss_mib));
      quarters = { first: peak(all.filter((x) => x.done <= count / 4)), rest: peak(all.filter((x) => x.done > count / 4)) };
      const run: DeductionRun = { ...(ran as DeductionRun), seed_s: seeded.seed_s, samples: thin(all, MAX_SAMPLES) };
      runs.push(run);
      const m = run.memory;
      const live = m.probes.map((p) => p.live_heap_mib);
      o.log(
        `  ${count.toLocaleString('en')} due: seeded in ${run.seed_s} s; run ${run.run_s} s, ${run.deductions_per_s} deductions/s, CPU ${run.cpu_pct}%; peak RSS ${m.peak_rss_mib} MiB (before ${m.before.rss_mib}), live heap ${Math.min(...live)}–${Math.max(...live)} MiB over ${m.probes.length} probes, after ${m.after.heap_used_mib} MiB; verified ${run.verified.ok ? 'ok' : `NOT ok ${JSON.stringify(run.verified)}`}`,
      );
    } finally {
      await db.drop();
    }
  }
  const small = runs[0] as DeductionRun;
  const large = runs[runs.length - 1] as DeductionRun;
  return {
    engine: o.engine,
    runs,
    flat: {
      small: small.count,
      large: large.count,
      peak_rss_small_mib: small.memory.peak_rss_mib,
      peak_rss_large_mib: large.memory.peak_rss_mib,
      peak_rss_growth: round((large.memory.peak_rss_mib - small.memory.peak_rss_mib) / small.memory.peak_rss_mib, 3),
      live_heap_growth_mib: round(Math.max(...large.memory.probes.map((p) => p.live_heap_mib)) - large.memory.before.heap_used_mib),
      large_rss_first_quarter_mib: quarters.first,
      large_rss_rest_mib: quarters.rest,
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { count: { type: 'string' }, small: { type: 'string' } } });
  const count = Number(values.count ?? 10_000);
  const url = process.env.DATABASE_URL ?? '';
  const engine: Engine = /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
  const r = await benchDeductions({
    engine,
    admin_url: engine === 'postgres' ? url : undefined,
    sizes: [Number(values.small ?? Math.round(count / 4)), count],
    log: (l) => process.stdout.write(`${l}\n`),
  });
  process.stdout.write(`${JSON.stringify({ ...r, runs: r.runs.map(({ samples: _s, ...x }) => x) })}\n`);
}
