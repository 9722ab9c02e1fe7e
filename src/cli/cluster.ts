// `serve` on all cores (issue 6; decisions §13): on PostgreSQL the gateway runs
// TOLLGATE_WORKERS processes (default: one per core) through node:cluster, each a full
// gateway on the shared database; the primary migrates once, forks, restarts a worker that
// dies, and passes SIGTERM/SIGINT on. SQLite stays in one process: it has one writer, and
// group commit already gives many answers per fsync (docs/decisions/processes-per-engine.md).
import cluster from 'node:cluster';
import os from 'node:os';
import type { Settings } from '../config/index.js';
import { createRuntime } from '../runtime.js';

/** Restarts allowed within a minute before the primary gives up (a crash loop). */
const MAX_RESTARTS_PER_MINUTE = 10;

export function workerCount(settings: Settings, env: NodeJS.ProcessEnv = process.env): number {
  const sqlite = settings.database_url.startsWith('sqlite:');
  const raw = env.TOLLGATE_WORKERS;
  if (raw === undefined || raw === '') return sqlite ? 1 : os.availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`TOLLGATE_WORKERS must be an integer from 1 to 256, got "${raw}"`);
  if (sqlite && n > 1) throw new Error('TOLLGATE_WORKERS above 1 needs PostgreSQL: SQLite has one writer, so the gateway runs one process there');
  return n;
}

/** True when this process should be the cluster primary rather than serve itself. */
export function isClusterPrimary(settings: Settings): boolean {
  return cluster.isPrimary && workerCount(settings) > 1;
}

/** Runs the primary: migrate (and create the demo merchant) once, then fork the workers. */
export async function runPrimary(settings: Settings, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<void> {
  const n = workerCount(settings);
  const rt = await createRuntime(settings, { metricsDefaults: false });
  await rt.store.close();
  let stopping = false;
  const restarts: number[] = [];
  const fork = (first: boolean) => cluster.fork({ TOLLGATE_DEMO_MERCHANT: first ? process.env.TOLLGATE_DEMO_MERCHANT : '0' });
  for (let i = 0; i < n; i++) fork(i === 0);
  out(`Tollgate primary ${process.pid}: ${n} worker processes on PostgreSQL`);
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    const now = Date.now();
    while (restarts.length && (restarts[0] as number) < now - 60_000) restarts.shift();
    if (restarts.length >= MAX_RESTARTS_PER_MINUTE) {
      process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); ${MAX_RESTARTS_PER_MINUTE} restarts in a minute, giving up\n`);
      process.exit(1);
    }
    restarts.push(now);
    process.stderr.write(`worker ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    fork(false);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(0);
    for (const w of workers) w?.process.kill(signal);
    // In-flight requests finish; a worker that hangs does not keep the primary forever.
    setTimeout(() => process.exit(1), 30_000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
