// The commands of the process itself: serve the gateway, or only bring the database up to date.
import { isClusterPrimary, runPrimary } from './cluster.js';
import { command, out } from './registry.js';
import { serveUntilStopped } from './serve.js';

export const serveCommand = command({
  name: 'serve',
  args: '',
  about: 'start the gateway; stops gracefully on SIGTERM or SIGINT (in-flight requests finish)',
  details: [
    'Settings come from the environment (DATABASE_URL, HOST, PORT, TOLLGATE_*; see the README).',
    'On PostgreSQL it runs TOLLGATE_WORKERS processes (default: one per core).',
  ],
  options: {},
  async run({ settings }) {
    const s = settings();
    if (isClusterPrimary(s)) await runPrimary(s);
    else await serveUntilStopped(s);
  },
});

export const migrateCommand = command({
  name: 'migrate',
  args: '',
  about: 'apply database migrations (serve also does this at start)',
  options: {},
  async run({ runtime }) {
    await runtime();
    out('database is up to date');
  },
});
