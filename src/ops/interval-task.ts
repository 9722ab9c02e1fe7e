// A background task that runs one bounded step every `every_ms` inside `serve`; a step
// never overlaps the previous one, and stop() waits for the running step.
import type { BackgroundTask } from '../cli/serve.js';

/** A failed step is reported and the next tick tries again. */
export const reportToStderr = (name: string, e: unknown): void => {
  process.stderr.write(`${name} task failed: ${(e as Error).message}\n`);
};

export function intervalTask(
  name: string,
  every_ms: number,
  step: () => Promise<unknown>,
  onError: (name: string, e: unknown) => void = reportToStderr,
): BackgroundTask {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = step()
      .then(() => undefined)
      .catch((e) => onError(name, e))
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
      if (timer) clearInterval(timer);
      timer = null;
      if (running) await running;
    },
  };
}
