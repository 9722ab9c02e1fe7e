// The Adyen and Stripe connectors at 250 ms (issue 32, "Performance"), a part of the remote
// step (bench/remote.ts): each connector's stateful mock in a process of its own
// (bench/connector-mock.ts) answering after the remote sandbox's seeded log-normal latency
// (median 250 ms, p99 1,000 ms), and one **live** merchant per connector whose account is
// set to it by `tollgate processor set --connector adyen|stripe --base-url …`, on the same
// fresh gateway as the remote sandbox's runs. Per connector: authorise at 1,024 connections
// (closed loop, after a warm-up), then an open loop at half the in-process best, every
// answer checked (200 with 0000). The mock's served latency is read over each run alone
// (its stats are reset before it), so each row's p99 is set beside the mock's p99 of the
// same requests. Targets as the remote sandbox's: ≥ 80% of the better in-process figure,
// p99 ≤ the mock's p99 + 50 ms, the gateway's peak RSS ≤ 512 MiB, no failed answer.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { CreatedMerchant } from '../src/merchants/service.js';
import { DECLINES, REDIRECT_LAST4 } from '../src/processors/adyen/mock.js';
import { cli, createMerchant, ROOT } from '../src/test/process.js';
import { type ConnectorMockStats, MOCK_CREDENTIALS } from './connector-mock.js';
import { authoriseBody } from './scenarios.js';

export const CONNECTORS = ['adyen', 'stripe'] as const;
export type ConnectorName = (typeof CONNECTORS)[number];

export interface ConnectorMock {
  connector: ConnectorName;
  url: string;
  pid: number;
  /** The latency served since the last reset (and the process's CPU since it started). */
  stats(): Promise<ConnectorMockStats>;
  /** The same, then a new latency window. */
  reset(): Promise<ConnectorMockStats>;
  stop(): Promise<void>;
}

/** Starts `bench/connector-mock.ts` for `connector` at the model's latency; resolves once it prints its address. */
export async function startConnectorMock(connector: ConnectorName, latency: { median_ms: number; p99_ms: number }, seed: number): Promise<ConnectorMock> {
  const args = ['--import', 'tsx', path.join(ROOT, 'bench/connector-mock.ts'), '--connector', connector];
  args.push('--median-ms', String(latency.median_ms), '--p99-ms', String(latency.p99_ms), '--seed', String(seed));
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = await new Promise<{ url: string; stats_url: string; pid: number }>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the ${connector} mock did not start in 30 s`)), 30_000);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      out += d;
      const line = out.split('\n')[0] as string;
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
    child.once('exit', (code) => reject(new Error(`the ${connector} mock exited (${code})`)));
  });
  const get = async (method: 'GET' | 'POST', url: string) => (await (await fetch(url, { method })).json()) as ConnectorMockStats;
  return {
    connector,
    url: ready.url,
    pid: ready.pid,
    stats: () => get('GET', ready.stats_url),
    reset: () => get('POST', `${ready.stats_url}/reset`),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `processor set` arguments of a connector's credentials (the mock's own). */
function credentials(connector: ConnectorName): string[] {
  return Object.entries(MOCK_CREDENTIALS[connector]).flatMap(([k, v]) => ['--credential', `${k}=${v}`]);
}

/** A live merchant of the gateway's database whose account goes to `mock` (run before the gateway starts: it reads processors at start). */
export function liveMerchantOn(env: NodeJS.ProcessEnv, mock: ConnectorMock): CreatedMerchant {
  const m = createMerchant(env, `bench live on ${mock.connector}`, ['--mode', 'live']);
  const set = cli(env, ['processor', 'set', '--account', m.account_id, '--connector', mock.connector, '--base-url', mock.url, ...credentials(mock.connector)]);
  if (set.status !== 0) throw new Error(`processor set --connector ${mock.connector} failed: ${set.stderr.slice(0, 500)}`);
  return m;
}

const REFUSED_LAST4 = new Set([...Object.keys(DECLINES), REDIRECT_LAST4]);

/**
 * An authorise body whose card the connector's mock approves: the bench's shoppers (BIN
 * 424242, a new card each) minus the few whose last four digits the Adyen mock refuses or
 * sends to 3-D Secure (about 7 in 10,000); the Stripe mock refuses only its test numbers.
 */
export function approvedBody(m: CreatedMerchant, order_no: string): Record<string, unknown> {
  for (;;) {
    const b = authoriseBody(m, order_no);
    if (!REFUSED_LAST4.has(String(b.card).slice(-4))) return b;
  }
}
