// The commands of the process itself: serve the gateway, or only bring the database up to date.
// The server is imported when `serve` runs, not when the command list is read: it loads the
// whole application (HTTP framework, every route), half a second that `help`, `sign` or
// `merchant list` do not need (issue 36 item 6).
import { command, out } from '../command/registry.js';
import { exitIfStopHangs, stopRequested } from './signals.js';

export const serveCommand = command({
  name: 'serve',
  args: '',
  details: [
    'Settings come from the environment (DATABASE_URL, HOST, PORT, TOLLGATE_*; see the README).',
    'On PostgreSQL it runs TOLLGATE_WORKERS processes (default: one per core).',
  ],
  options: {},
  creates: true,
  async run({ settings }) {
    const s = settings();
    const { isClusterPrimary, runPrimary } = await import('./cluster.js');
    if (isClusterPrimary(s)) await runPrimary(s);
    else await (await import('./serve.js')).serveUntilStopped(s);
  },
});

export const migrateCommand = command({
  name: 'migrate',
  args: '',
  options: {},
  creates: true,
  async run({ runtime }) {
    await runtime();
    out('database is up to date');
  },
});

export const workerCommand = command({
  name: 'worker',
  args: '',
  details: ['Run it beside gateways started with TOLLGATE_WORKER=0; stops on SIGTERM or SIGINT.'],
  options: {},
  async run({ runtime, settings }) {
    // Every task serve runs (delivery, expiries, settlement, purges): with TOLLGATE_WORKER=0 on
    // the HTTP processes, this process does all of it. Each task is safe beside its twins in
    // other processes (leases and compare-and-set), so several workers may run.
    const stop = stopRequested();
    const rt = await runtime();
    // No HTTP here, so no idempotency repair: the scheduler's poll and delivery (2 tasks).
    const { backgroundWork } = await import('./background.js');
    const { startupOutput } = await import('./startup-output.js');
    const background = backgroundWork(rt, { jobs: true, serving: false });
    background.start({ keep_alive: true });
    // As serve's banner: a JSON log record with JSON logs (issue 36 item 7), a plain line otherwise.
    startupOutput(settings()).out(`worker running ${background.localTaskNames().length} background tasks`);
    await stop;
    exitIfStopHangs('the worker');
    await background.stop();
  },
});
