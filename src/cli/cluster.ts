// `serve` on all cores (issue 6; docs/contract.md §13): on PostgreSQL the gateway runs
// TOLLGATE_WORKERS processes (default: one per core) through node:cluster, each a full
// gateway on the shared database; the primary migrates once, forks, restarts a worker that
// dies, and at SIGTERM/SIGINT stops the workers and exits once they have. SQLite stays in
// one process: it has one writer, and group commit already gives many answers per fsync
// (docs/decisions/processes-per-engine.md).
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import { CommandError } from '../command/registry.js';
import type { Settings } from '../config/index.js';
import { createRuntime } from '../runtime.js';
import { bannerLines } from './serve.js';
import { exitIfStopHangs, stopRequested } from './signals.js';
import { type StartupOutput, startupOutput } from './startup-output.js';

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

/**
 * Runs the primary: migrate (and create the demo merchant) once, fork the workers, restart a
 * worker that dies, and at a stop request stop every worker and return once all have exited
 * (each finishes its in-flight requests and closes its database pool).
 */
export async function runPrimary(settings: Settings, output: StartupOutput = startupOutput(settings)): Promise<void> {
  const out = output.out;
  const stop = stopRequested();
  const n = workerCount(settings);
  const rt = await createRuntime(settings, { metricsDefaults: false });
  await rt.store.close();
  // Our own count: cluster.workers drops a worker only once both its exit and its
  // disconnect have been seen, in either order.
  const live = new Set<Worker>();
  let stopping = false;
  let bannerShown = false;
  let failure: string | null = null;
  let gaveUp: () => void = () => {};
  const crashLoop = new Promise<void>((resolve) => {
    gaveUp = resolve;
  });
  let allExited: () => void = () => {};
  const exited = new Promise<void>((resolve) => {
    allExited = resolve;
  });
  const restarts: number[] = [];
  const fork = (first: boolean) => {
    live.add(cluster.fork({ TOLLGATE_DEMO_MERCHANT: first ? process.env.TOLLGATE_DEMO_MERCHANT : '0' }));
  };
  cluster.on('listening', () => {
    if (bannerShown) return;
    bannerShown = true;
    for (const line of bannerLines(settings)) out(line);
  });
  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    if (stopping) {
      if (live.size === 0) allExited();
      return;
    }
    const now = Date.now();
    while (restarts.length && (restarts[0] as number) < now - 60_000) restarts.shift();
    if (restarts.length >= MAX_RESTARTS_PER_MINUTE) {
      failure = `worker ${worker.process.pid} exited (${signal ?? code}); ${MAX_RESTARTS_PER_MINUTE} restarts in a minute, giving up`;
      gaveUp();
      return;
    }
    restarts.push(now);
    output.warn(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    fork(false);
  });
  for (let i = 0; i < n; i++) fork(i === 0);
  out(`Tollgate primary ${process.pid}: ${n} worker processes on PostgreSQL`);
  await Promise.race([stop, crashLoop]);
  stopping = true;
  exitIfStopHangs('the workers');
  for (const w of live) w.process.kill('SIGTERM');
  if (live.size > 0) await exited;
  if (failure) throw new CommandError(failure);
}
