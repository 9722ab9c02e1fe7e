// Inside `serve`: review holds nobody decided within 7 days expire (decisions §8).
import { type BackgroundTask, backgroundTasks } from '../cli/serve.js';
import { ReviewService } from './service.js';

/** Runs `work` every `every_ms`, never two runs at once; stop() waits for a run in flight. */
export function periodic(name: string, every_ms: number, work: () => Promise<unknown>): BackgroundTask {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= work()
      .then(() => undefined)
      .catch((e: Error) => {
        process.stderr.write(`${name} failed: ${e.message}\n`);
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
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

backgroundTasks.push((rt) => {
  const reviews = new ReviewService(rt.deps);
  return periodic('review hold expiry', 60_000, () => reviews.expireDue());
});
