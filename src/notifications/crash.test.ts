// Durability of the outbox (docs/contract.md §11): the real gateway process is killed with
// SIGKILL while deliveries hang; after a restart every event committed before the kill
// reaches the merchant, the ones that were mid-delivery included (their lease runs out).
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { sign } from '../crypto/signature.js';
import { createPgDatabase, ENGINE, TEST_MASTER_KEY } from '../test/harness.js';
import { nodeArgs } from '../test/process.js';
import { parseXmlBody } from '../web/xml.js';
import { type Received, startReceiver } from './test-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PAYMENTS = 40;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeout_ms: number): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Starts `serve` and waits for /readyz (the banner is an info log line, and this test logs at warn). */
function startGateway(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli/run.ts'), 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`gateway did not start: ${out}`)), 60_000);
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(child);
    };
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.once('exit', (code) => finish(new Error(`gateway exited (${code}): ${out}`)));
    const poll = async () => {
      while (!done) {
        try {
          const r = await fetch(`http://127.0.0.1:${env.PORT}/readyz`);
          if (r.status === 200) return finish(null);
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    void poll();
  });
}

test('events committed before a kill -9 are all delivered after restart', { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-crash-'));
  let database_url = `sqlite:${path.join(dir, 'tollgate.db')}`;
  let drop = async () => {};
  if (ENGINE === 'postgres') ({ url: database_url, drop } = await createPgDatabase());
  let answering = false;
  const acknowledged: Received[] = [];
  const receiver = await startReceiver((req) => {
    if (!answering) return 'hang';
    acknowledged.push(req);
    return { status: 200 };
  });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database_url,
    HOST: '127.0.0.1',
    PORT: String(port),
    TOLLGATE_DATA_DIR: dir,
    TOLLGATE_MASTER_KEY: TEST_MASTER_KEY,
    TOLLGATE_ALLOW_PRIVATE_WEBHOOKS: '1',
    TOLLGATE_DEMO_MERCHANT: '0',
    TOLLGATE_LOG_LEVEL: 'warn',
    TOLLGATE_WEBHOOK_TIMEOUT_MS: '500',
    TOLLGATE_WEBHOOK_SCHEDULE_MS: Array(30).fill('100').join(','),
  };
  let gateway: ChildProcess | null = null;
  try {
    // Only serve and migrate create a database: migrate first, as an operator would.
    const migrated = spawnSync(process.execPath, ['bin/tollgate.js', 'migrate'], { cwd: ROOT, env, encoding: 'utf8' });
    assert.equal(migrated.status, 0, migrated.stderr);
    const created = spawnSync(process.execPath, ['bin/tollgate.js', 'merchant', 'create', '--name', 'Crash test', '--json'], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
    });
    assert.equal(created.status, 0, created.stderr);
    const merchant = JSON.parse(created.stdout.trim().split('\n').pop() as string) as { merchant_id: string; account_id: string; secret_key: string };

    // Phase 1: the worker runs but the merchant never answers, so deliveries hang mid-flight.
    gateway = await startGateway(env);
    const posted: string[] = [];
    for (let i = 0; i < PAYMENTS; i++) {
      const body: Record<string, unknown> = {
        merchant_id: merchant.merchant_id,
        account_id: merchant.account_id,
        order_no: `CRASH-${i}`,
        currency: 'USD',
        amount: '10.00',
        card: '4242424242424242',
        expiration_month: '12',
        expiration_year: String(new Date().getUTCFullYear() + 2),
        security_code: '123',
        notify_url: receiver.url,
      };
      body.encryption_data = sign(body, merchant.secret_key);
      const res = await fetch(`http://127.0.0.1:${port}/v1/authorise`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200);
      posted.push(parseXmlBody(await res.text()).transaction_id as string);
    }
    await until('deliveries in flight', () => receiver.received.length > 0, 10_000);
    const exited = new Promise((r) => gateway?.once('exit', r));
    gateway.kill('SIGKILL');
    await exited;
    gateway = null;

    // Phase 2: restart; the merchant now answers.
    answering = true;
    gateway = await startGateway(env);
    const delivered = () => {
      const ok = new Map<string, string>();
      for (const r of acknowledged) {
        const tid = (JSON.parse(r.body) as { data: { transaction_id: string } }).data.transaction_id;
        ok.set(tid, String(r.headers['webhook-id']));
      }
      return ok;
    };
    await until('every committed event delivered', () => posted.every((t) => delivered().has(t)), 20_000);
    const byTransaction = delivered();
    assert.equal(new Set(posted.map((t) => byTransaction.get(t))).size, PAYMENTS, 'one event id per payment, kept across the crash');

    // The attempt log survives too and the CLI shows it.
    // The CLI runs beside the receiver, not blocking it: with spawnSync this process's receiver
    // answered only after each command ended, past the gateway's 500 ms delivery deadline, so on a
    // loaded machine every retry failed while the test polled, until the schedule ran out.
    const cli = (args: string[]) => promisify(execFile)(process.execPath, ['bin/tollgate.js', ...args], { cwd: ROOT, env, encoding: 'utf8' });
    const list = await cli(['events', 'list', '--account', merchant.account_id, '--order', 'CRASH-0', '--json']);
    const events = JSON.parse(list.stdout) as Array<{ event_id: string }>;
    assert.equal(events.length, 1);
    await until(
      'the delivered attempt recorded',
      async () => {
        const d = await cli(['events', 'deliveries', '--event', events[0]!.event_id, '--json']);
        return (JSON.parse(d.stdout) as { status: string }).status === 'delivered';
      },
      10_000,
    );
  } finally {
    gateway?.kill('SIGKILL');
    await receiver.close();
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
