// `tollgate serve` / `npm start`: migrate, create the demo merchant on first start, listen,
// and shut down gracefully on SIGTERM/SIGINT (in-flight requests finish, background tasks
// stop, the database closes). On PostgreSQL with several workers, cluster.ts runs instead.
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import type { Settings } from '../config/index.js';
import { sign } from '../crypto/signature.js';
import { buildApp } from '../http/app.js';
import { boundHeapGrowth } from '../ops/heap.js';
import { startMetricsListener } from '../ops/metrics-access.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { backgroundWork } from './background.js';
import { databaseLocation } from './database.js';
import { exitIfStopHangs, stopRequested } from './signals.js';
import { startupOutput } from './startup-output.js';

export interface Server {
  app: FastifyInstance;
  runtime: Runtime;
  close(): Promise<void>;
}

/**
 * The demo merchant, created on first start. Its secret and a signed curl are printed only
 * to a terminal (issue 29 item 3): standard output that is a file or a pipe ends up in a log
 * (a process manager, a container runtime), where a secret must never be. Elsewhere the lines
 * say how to get a key instead.
 */
async function demoMerchant(rt: Runtime, out: (line: string) => void, tty: boolean): Promise<void> {
  const existing = await rt.merchants.listMerchants();
  if (existing.length > 0) {
    const demo = existing.find((m) => m.name === 'Demo merchant');
    if (demo)
      out(
        `Demo test merchant: merchant_id ${demo.merchant_id}, account_id ${demo.account_id} (a new secret key: npx tollgate key rotate --account ${demo.account_id})`,
      );
    return;
  }
  const m = await rt.merchants.createMerchant({ name: 'Demo merchant', mode: 'test', allow_ips: ['127.0.0.1/32', '::1/128'] });
  out('');
  if (!tty) {
    out('Created a demo test merchant:');
    out(`  merchant_id     ${m.merchant_id}`);
    out(`  account_id      ${m.account_id}`);
    out('Its secrets are shown on a terminal only (this output may be kept in a log). Get them with:');
    out(`  npx tollgate key rotate --account ${m.account_id}             # secret_key`);
    out(`  npx tollgate webhook-secret rotate --account ${m.account_id}  # webhook_secret`);
    out('');
    return;
  }
  const body: Record<string, unknown> = {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    order_no: 'DEMO-1',
    currency: 'USD',
    amount: '10.00',
    card: '4242424242424242',
    expiration_month: '12',
    expiration_year: String(new Date().getUTCFullYear() + 3),
    security_code: '123',
  };
  body.encryption_data = sign(body, m.secret_key);
  const url = `${rt.settings.public_url}/v1/authorise`;
  out('Created a demo test merchant (shown once, on this terminal only):');
  out(`  merchant_id     ${m.merchant_id}`);
  out(`  account_id      ${m.account_id}`);
  out(`  secret_key      ${m.secret_key}`);
  out(`  webhook_secret  ${m.webhook_secret}`);
  out('Try a payment with a sandbox test card:');
  out(`  curl -s -X POST ${url} -H 'Content-Type: application/json' -d '${JSON.stringify(body)}'`);
  out('');
}

/** The start-up lines: where the gateway listens and where a newcomer reads on. */
export function bannerLines(settings: Settings): string[] {
  const url = settings.public_url;
  // Which database, as the CLI names it (issue 36 item 6): the file's absolute path, or the URL without its password.
  const { where, engine } = databaseLocation(settings.database_url);
  return [
    `Tollgate listening on ${url} (database ${where}, ${engine})`,
    `  docs        ${url}/docs`,
    `  quickstart  ${url}/docs/quickstart`,
    `  test cards  ${url}/docs#sandbox-test-cards`,
  ];
}

export async function startServer(
  settings: Settings,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  /** `tty`: whether `out` reaches a terminal (default: standard output is one). */
  opts: { banner?: boolean; tty?: boolean } = {},
): Promise<Server> {
  const runtime = await createRuntime(settings, { serving: true });
  if (settings.demo_merchant) await demoMerchant(runtime, out, opts.tty ?? process.stdout.isTTY === true);
  const app = await buildApp(runtime.deps, { schemas: settings.route_schemas === 'on_first_use' ? 'on_first_use' : 'at_ready' });
  // Once stopping, each answer closes its connection: a kept-alive client would otherwise
  // hold the stop until its keep-alive timeout (idle connections are closed by app.close()).
  let stopping = false;
  app.addHook('onSend', async (_request, reply, payload) => {
    if (stopping) reply.header('connection', 'close');
    return payload;
  });
  const background = backgroundWork(runtime, { jobs: settings.worker_enabled, serving: true });
  await app.listen({ host: settings.host, port: settings.port });
  const metricsListener = await startMetricsListener(settings, runtime.deps.metrics).catch(async (e: unknown) => {
    await app.close();
    await runtime.store.close();
    throw e;
  });
  background.start();
  if (opts.banner ?? true) for (const line of bannerLines(settings)) out(line);
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      stopping = true;
      await metricsListener?.close();
      await app.close();
      await background.stop();
      await runtime.store.close();
    })();
    return closing;
  };
  return { app, runtime, close };
}

/**
 * `serve` in one process (or one cluster worker): listens until a stop request, then closes
 * gracefully. The stop listener is installed first, so a signal during start-up still
 * gets a clean stop once the server is up.
 */
export async function serveUntilStopped(settings: Settings): Promise<void> {
  const worker = cluster.isWorker;
  boundHeapGrowth();
  const stop = stopRequested({ watch_parent: !worker });
  // A cluster worker leaves the banner to its primary (one banner, not one per worker).
  const output = startupOutput(settings);
  const server = await startServer(settings, output.out, { banner: !worker, tty: output.tty });
  const reason = await stop;
  server.app.log.info({ reason }, 'shutting down');
  exitIfStopHangs('the gateway');
  await server.close();
}
