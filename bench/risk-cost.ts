// Cost of the risk engine on the authorise hot path: the same stream of signed direct
// payments against a listening gateway on SQLite, with the rules on and off
// (TOLLGATE_RISK_RULES=1|0). Server in its own process so client and server do not share
// one event loop. Usage: node --import tsx bench/risk-cost.ts [seconds] [connections]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { signBody } from '../src/client/index.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const MASTER = `bench:${Buffer.alloc(32, 3).toString('base64')}`;
const CARDS = ['4242424242424242', '5555555555554444', '6011111111111117', '3566002020360505'];

async function runOnce(rules: '1' | '0', port: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`,
    TOLLGATE_MASTER_KEY: MASTER,
    TOLLGATE_LOG_LEVEL: 'silent',
    TOLLGATE_DEMO_MERCHANT: '0',
    TOLLGATE_WORKER: '0',
    TOLLGATE_RISK_RULES: rules,
    PORT: String(port),
  };
  const created = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/run.ts', 'merchant', 'create', '--name', 'Bench', '--json'], {
    env,
    encoding: 'utf8',
  });
  const m = JSON.parse(created.stdout.trim().split('\n').at(-1) as string) as { merchant_id: string; account_id: string; secret_key: string };
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/run.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => {
    server.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) resolve();
    });
  });
  let n = 0;
  const body = () => {
    n++;
    const b: Record<string, unknown> = {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      order_no: `B${rules}-${n}`,
      currency: 'USD',
      amount: `${10 + (n % 90)}.00`,
      card: CARDS[n % CARDS.length],
      expiration_month: '12',
      expiration_year: '2031',
      security_code: '123',
      open3d: '0',
      shopper_email: `shopper${n % 500}@shop.test`,
      shopper_ip: `8.8.${n % 250}.${n % 200}`,
      device_fingerprint: `dev-${n % 300}`,
      billing_country: 'US',
    };
    return JSON.stringify(signBody(b, m.secret_key));
  };
  const opts = {
    url: `http://127.0.0.1:${port}/v1/authorise`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    requests: [{ setupRequest: (req: any) => ({ ...req, body: body() }) }],
  };
  await autocannon({ ...opts, duration: 3 }); // warm-up: JIT, statement cache, some history
  const r = await autocannon({ ...opts, duration: SECONDS });
  server.kill('SIGTERM');
  await new Promise((res) => server.once('exit', res));
  fs.rmSync(dir, { recursive: true, force: true });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

const load = os.loadavg().map((l) => l.toFixed(2));
const off = await runOnce('0', 18391);
const on = await runOnce('1', 18392);
const off2 = await runOnce('0', 18393);
const on2 = await runOnce('1', 18394);
console.log(
  JSON.stringify(
    { conditions: { cpus: os.cpus().length, loadavg_before: load, seconds: SECONDS, connections: CONNECTIONS, engine: 'sqlite' }, off, on, off2, on2 },
    null,
    2,
  ),
);
