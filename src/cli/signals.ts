// When a long-running command (serve, worker, the cluster primary) should stop: SIGTERM or
// SIGINT, or, under npm, the shell npm put between it and us being gone.
//
// Handlers stay installed after the first signal: Ctrl-C under `npm start` delivers SIGINT
// twice (once from the terminal, once forwarded by npm) and a cluster worker gets one from
// the terminal and one from its primary; with `process.once` the second would kill the
// process mid-shutdown. A repeat more than REPEAT_FORCES_MS later is a person insisting.
//
// `npx tollgate serve` runs us under `sh -c`, and npm forwards SIGTERM to that shell only:
// the shell dies and we are left running, re-parented (issue 9). So under npm, a change of
// parent is taken as the stop request the shell did not pass on.

/** A repeated signal this long after the first forces the exit. */
const REPEAT_FORCES_MS = 2_000;
/** How often the parent is checked under npm. */
const PARENT_CHECK_MS = 250;

/** True when npm (`npm start`, `npx`) started this process. */
function underNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event !== undefined || env.npm_command !== undefined;
}

/**
 * Resolves with the reason ("SIGTERM", "SIGINT", "parent exited") at the first stop request.
 * `watch_parent: false` for cluster workers, whose parent is the primary (node:cluster ends a
 * worker whose primary is gone).
 */
export function stopRequested(opts: { watch_parent?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    let first_at = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      if (first_at === 0) {
        first_at = Date.now();
        resolve(signal);
      } else if (Date.now() - first_at > REPEAT_FORCES_MS) {
        process.stderr.write(`${signal} again: stopping without waiting\n`);
        process.exit(1);
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    if ((opts.watch_parent ?? true) && underNpm()) {
      const parent = process.ppid;
      const timer = setInterval(() => {
        if (process.ppid === parent || first_at !== 0) return;
        first_at = Date.now();
        clearInterval(timer);
        resolve('parent exited');
      }, PARENT_CHECK_MS);
      timer.unref();
    }
  });
}

/** Ends the process if a stop takes longer than this (a request or task that hangs). */
export const STOP_DEADLINE_MS = 30_000;

export function exitIfStopHangs(what: string): void {
  setTimeout(() => {
    process.stderr.write(`${what} did not stop within ${STOP_DEADLINE_MS / 1000} s; exiting\n`);
    process.exit(1);
  }, STOP_DEADLINE_MS).unref();
}
