// `tollgate sandbox-processor`'s body: its options read into the server's, the server started,
// one start line, and a graceful stop on SIGTERM or SIGINT. Logs carry ids and outcomes only.
import pino from 'pino';
import { FaultSpecError, parseFaultSpec } from './faults.js';
import { REMOTE_SANDBOX_DEFAULTS, type RemoteSandboxOptions, startRemoteSandbox } from './server.js';

/** An option the operator got wrong, named (the command shows it as a usage error). */
export class SandboxOptionRefused extends Error {}

type Values = Partial<Record<string, string | boolean | string[] | boolean[]>>;

function whole(values: Values, name: string, fallback: number, max: number): number {
  const v = values[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (typeof v !== 'string' || !/^\d+$/.test(v) || !Number.isSafeInteger(n) || n > max)
    throw new SandboxOptionRefused(`--${name} must be a whole number from 0 to ${max}`);
  return n;
}

const text = (values: Values, name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);

/** The command's options as the server's; a SandboxOptionRefused naming the first one that is wrong. */
export function sandboxOptions(values: Values): RemoteSandboxOptions {
  const port = whole(values, 'port', -1, 65_535);
  if (port < 0) throw new SandboxOptionRefused('--port is required (0 picks a free port)');
  const median_ms = whole(values, 'latency-median-ms', 250, 600_000);
  const p99_ms = whole(values, 'latency-p99-ms', median_ms === 0 ? 0 : Math.max(2_000, median_ms), 600_000);
  if (p99_ms < median_ms) throw new SandboxOptionRefused('--latency-p99-ms must be at least --latency-median-ms');
  let faults: RemoteSandboxOptions['faults'] = [];
  try {
    faults = parseFaultSpec(text(values, 'faults') ?? '');
  } catch (e) {
    if (e instanceof FaultSpecError) throw new SandboxOptionRefused(e.message);
    throw e;
  }
  const url = text(values, 'webhook-url');
  const secret = text(values, 'webhook-secret');
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s]+$/.test(url)) throw new SandboxOptionRefused('--webhook-url must be an http or https URL');
    if (!secret) throw new SandboxOptionRefused('--webhook-url needs --webhook-secret (the webhooks are signed with it)');
  }
  const confirm = (text(values, 'confirm-by-webhook') ?? '').split(',').filter(Boolean);
  for (const c of confirm)
    if (!['capture', 'cancel', 'refund'].includes(c))
      throw new SandboxOptionRefused(`--confirm-by-webhook: ${JSON.stringify(c)} is not capture, cancel or refund`);
  return {
    ...REMOTE_SANDBOX_DEFAULTS,
    port,
    host: text(values, 'host') ?? '127.0.0.1',
    ...(text(values, 'api-key') ? { api_key: text(values, 'api-key') } : {}),
    latency: { median_ms, p99_ms },
    faults,
    seed: whole(values, 'seed', 1, 2 ** 32 - 1),
    ...(url && secret ? { webhook: { url, secret } } : {}),
    confirm_by_webhook: confirm as RemoteSandboxOptions['confirm_by_webhook'],
    confirm_delay_ms: whole(values, 'confirm-delay-ms', REMOTE_SANDBOX_DEFAULTS.confirm_delay_ms, 600_000),
    swift_delay_ms: whole(values, 'swift-delay-ms', REMOTE_SANDBOX_DEFAULTS.swift_delay_ms, 600_000),
    remember: Math.max(1, whole(values, 'remember', REMOTE_SANDBOX_DEFAULTS.remember, 10_000_000)),
  };
}

/** Runs until `stop` resolves (the command passes its SIGTERM/SIGINT promise: src/cli/signals.ts, a folder above this one). */
export async function runSandboxProcessor(values: Values, stop: Promise<string>): Promise<void> {
  const options = sandboxOptions(values);
  const level = text(values, 'log-level') ?? 'info';
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(level)) throw new SandboxOptionRefused('--log-level must be debug, info, warn, error or silent');
  const logger = pino({ level, name: 'sandbox-processor' });
  const sandbox = await startRemoteSandbox({ ...options, log: (lvl, fields, message) => logger[lvl](fields, message) });
  logger.info(
    {
      url: sandbox.url,
      latency: options.latency,
      faults: options.faults.map((f) => `${f.fault}:${f.trigger.kind === 'rate' ? f.trigger.rate : `1/${f.trigger.every}`}`).join(','),
      webhooks: options.webhook ? 'on' : 'off',
      api_key: options.api_key ? 'required' : 'any',
    },
    'sandbox processor listening',
  );
  const why = await stop;
  logger.info({ why, stats: sandbox.stats() }, 'sandbox processor stopping');
  await sandbox.close();
}
