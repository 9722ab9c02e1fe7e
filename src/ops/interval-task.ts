// The one timer of `serve`: runs one bounded step every `every_ms` (the scheduler's loop,
// src/scheduler/jobs.ts); a step never overlaps the previous one, and stop() signals the
// running step to end early and waits for it.
import { storageFault } from '../db/faults.js';

/** Background work a process runs beside HTTP (serve, worker): started once, stopped gracefully. */
export type BackgroundTask = { start(): void; stop(): Promise<void> };

/** A failed step is reported and the next tick tries again. */
export const reportToStderr = (name: string, e: unknown): void => {
  process.stderr.write(`${name} task failed: ${(e as Error).message}\n`);
};

export function intervalTask(
  name: string,
  every_ms: number,
  step: (stopping: AbortSignal) => Promise<unknown>,
  onError: (name: string, e: unknown) => void = reportToStderr,
): BackgroundTask {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const stopping = new AbortController();
  // A database that is down fails every tick: say so once, and once when it is back (issue 17).
  let faulted: string | null = null;
  const tick = () => {
    if (running || stopping.signal.aborted) return;
    running = step(stopping.signal)
      .then(() => {
        if (faulted) process.stderr.write(`${name} task: storage is back, running again\n`);
        faulted = null;
      })
      .catch((e) => {
        const fault = storageFault(e);
        if (fault && faulted === fault) return;
        faulted = fault;
        onError(name, e);
      })
      .finally(() => {
        running = null;
      });
  };
  return {
    start() {
      timer = setInterval(tick, every_ms);
      timer.unref();
      tick();
    },
    async stop() {
      stopping.abort();
      if (timer) clearInterval(timer);
      timer = null;
      if (running) await running;
    },
  };
}
