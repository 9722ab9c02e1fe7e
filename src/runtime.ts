// Builds everything a process needs from the settings: keyring, store (migrated), services.
import { ApiKeyService } from './apikeys/service.js';
import type { Settings } from './config/index.js';
import { Keyring } from './crypto/keyring.js';
import { migrateToLatest } from './db/migrations.js';
import { migrationDb, openStore } from './db/store.js';
import { MerchantService } from './merchants/service.js';
import { notificationBacklog } from './notifications/outbox.js';
import { Metrics } from './ops/metrics.js';
import { processorWaits } from './processors/attempts.js';
import { connectorFor } from './processors/connectors.js';
import { ProcessorDirectory } from './processors/directory.js';
import { createSandboxProcessor } from './processors/sandbox/index.js';
import { lastRunMismatches } from './settlement/reconcile/runs.js';
import type { Deps, Runtime } from './web/context.js';
import { clockedNow } from './web/request-time.js';

// The type lives beside Deps (src/web/context.ts) so jobs and tasks below this file can name it.
export type { Runtime };

/** How to make the key that a DATABASE_URL needs (issue 36 item 6: the refusal says how to make one). */
export const MAKE_MASTER_KEY = `node -e "console.log('k1:' + require('node:crypto').randomBytes(32).toString('base64'))"`;

const MASTER_KEY_MISSING =
  'TOLLGATE_MASTER_KEY is required with a DATABASE_URL (a key is generated into the data folder only for the embedded default database). ' +
  `Make one with\n  export TOLLGATE_MASTER_KEY="$(${MAKE_MASTER_KEY})"\n` +
  'and give the same value to every gateway process and to npx tollgate; keep it apart from the database (a backup cannot be read without it).';

export function loadKeyring(settings: Settings): Keyring {
  if (settings.master_key) return Keyring.parse(settings.master_key);
  // docs/contract.md §13: generated into the data folder only for the embedded development default.
  if (settings.database_url.startsWith('sqlite:') && !process.env.DATABASE_URL) return Keyring.loadOrCreateDevKey(settings.data_dir);
  throw new Error(MASTER_KEY_MISSING);
}

/**
 * `serving`: the store gets the statement and pool-acquire timeouts of a serving process
 * (issue 17: a slow database answers 503 promptly); migrations then run on a connection
 * of their own without them (an index build may take minutes). CLI commands and the
 * cluster primary run without timeouts.
 */
export async function createRuntime(
  settings: Settings,
  opts: { now?: () => number; keyring?: Keyring; metricsDefaults?: boolean; serving?: boolean } = {},
): Promise<Runtime> {
  const keyring = opts.keyring ?? loadKeyring(settings);
  const timeouts = opts.serving
    ? { statementTimeoutMs: settings.db_statement_timeout_ms, acquireTimeoutMs: settings.db_acquire_timeout_ms }
    : { statementTimeoutMs: 0 };
  const store = openStore(settings.database_url, { groupCommitMax: settings.group_commit_max, threads: settings.sqlite_threads, ...timeouts });
  if (opts.serving && store.engine === 'postgres') {
    const migrating = openStore(settings.database_url, { poolSize: 1, statementTimeoutMs: 0 });
    try {
      await migrateToLatest(migrationDb(migrating), { keyring, engine: store.engine });
    } finally {
      await migrating.close();
    }
  } else {
    await migrateToLatest(migrationDb(store), { keyring, engine: store.engine });
  }
  const merchants = new MerchantService(store, keyring);
  const apiKeys = new ApiKeyService(store, keyring, merchants);
  const sandbox = createSandboxProcessor({ swift_delay_ms: settings.sandbox_swift_delay_ms });
  const metrics = new Metrics(opts.metricsDefaults ?? true);
  const processors = new ProcessorDirectory(store, keyring, sandbox, connectorFor(sandbox), metrics);
  await processors.reload();
  const deps: Deps = {
    settings,
    store,
    keyring,
    merchants,
    apiKeys,
    metrics,
    processors,
    // docs/contract.md §21: the account's processors; a test account without one is served by the sandbox.
    processorFor: (account, want) => deps.processors.for(account, want),
    processorsFor: (account, want) => deps.processors.candidates(account, want),
    // Inside a request on a test account whose clock was moved: the clock's time (src/web/request-time.ts).
    now: clockedNow(opts.now ?? Date.now),
  };
  deps.metrics.watchNotificationBacklog(() => notificationBacklog(store), deps.now);
  deps.metrics.watchReconciliation(() => lastRunMismatches(store.db));
  processorWaits.max = settings.max_processor_waits;
  deps.metrics.watchProcessorWaits(() => processorWaits.now);
  return { settings, store, keyring, merchants, apiKeys, deps };
}
