// Throughput of capture and refund batches of 50 against a real listening server on
// SQLite (issue 3). Run: node --import tsx bench/lifecycle.ts [batches] [concurrency]
// Prints requests/s and items/s of each phase; every item must succeed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../src/cli/serve.js';
import { TollgateClient } from '../src/client/index.js';
import { loadSettings } from '../src/config/index.js';

const BATCHES = Number(process.argv[2] ?? 40);
const CONCURRENCY = Number(process.argv[3] ?? 4);
const PER_BATCH = 50;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
const settings = {
  ...loadSettings({}),
  database_url: `sqlite:${path.join(dir, 'bench.db')}`,
  data_dir: dir,
  port: 0,
  master_key: `bench:${Buffer.alloc(32, 3).toString('base64')}`,
  log_level: 'warn',
  worker_enabled: false,
  demo_merchant: false,
};
const server = await startServer(settings, () => {});
const address = server.app.server.address();
if (!address || typeof address === 'string') throw new Error('no address');
const base = `http://127.0.0.1:${address.port}`;
const m = await server.runtime.merchants.createMerchant({ name: 'Bench', allow_ips: ['127.0.0.1/32'] });

// Through the client library: signed, answers verified, no retries (a failure must show).
const client = new TollgateClient({ base_url: base, merchant_id: m.merchant_id, account_id: m.account_id, secret: m.secret_key, retry: { max_retries: 0 } });

/** Runs `jobs` with at most `limit` in flight; returns the wall time in ms. */
async function pool<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        await job();
      }
    }),
  );
  return performance.now() - t0;
}

async function makePayments(count: number, manual: boolean) {
  const made: Array<{ transaction_id: string; order_no: string }> = [];
  const jobs = Array.from({ length: count }, (_, i) => async () => {
    const order_no = `B-${manual ? 'M' : 'A'}-${i}`;
    const x = await client.authorise({
      order_no,
      currency: 'USD',
      amount: '10.00',
      card: '4242424242424242',
      expiration_month: '12',
      expiration_year: '2035',
      security_code: '123',
      ...(manual ? { capture_method: 'manual' as const } : {}),
    });
    if (x.result_info !== '0000:Success') throw new Error(`authorise ${order_no}: ${x.result_info}`);
    made.push({ transaction_id: x.transaction_id, order_no });
  });
  const ms = await pool(jobs, 8);
  return { made, ms };
}

function report(label: string, requests: number, items: number, ms: number) {
  const s = ms / 1000;
  console.log(`${label}: ${requests} requests, ${items} items in ${ms.toFixed(0)} ms → ${(requests / s).toFixed(1)} req/s, ${(items / s).toFixed(0)} items/s`);
}

const total = BATCHES * PER_BATCH;
const manual = await makePayments(total, true);
report('authorise (setup, concurrency 8)', total, total, manual.ms);
const auto = await makePayments(total, false);

const chunks = <T>(xs: T[]) => Array.from({ length: Math.ceil(xs.length / PER_BATCH) }, (_, i) => xs.slice(i * PER_BATCH, (i + 1) * PER_BATCH));

let failed = 0;
const captureMs = await pool(
  chunks(manual.made).map((batch) => async () => {
    const r = await client.capture({
      capture_orders: batch.map((p) => ({ ...p, currency: 'USD', amount: '10.00' })),
    });
    failed += r.capture_orders.filter((x) => x.capture_status !== '1').length;
  }),
  CONCURRENCY,
);
report(`capture batches of ${PER_BATCH} (concurrency ${CONCURRENCY})`, BATCHES, total, captureMs);

const refundMs = await pool(
  chunks(auto.made).map((batch) => async () => {
    const r = await client.refund({
      refund_orders: batch.map((p) => ({ ...p, currency: 'USD', amount: '10.00', refund_amount: '1.00', refund_reason: 'bench' })),
    });
    failed += r.refund_orders.filter((x) => x.refund_status !== '1').length;
  }),
  CONCURRENCY,
);
report(`refund batches of ${PER_BATCH} (concurrency ${CONCURRENCY})`, BATCHES, total, refundMs);

const { verifyLedger } = await import('../src/ledger/verify.js');
const v = await verifyLedger(server.runtime.store.db);
console.log(`failed items: ${failed}; ledger verify: ${v.ok ? 'OK' : v.problems.join('; ')} (${v.postings} postings)`);
console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
await server.close();
fs.rmSync(dir, { recursive: true, force: true });
