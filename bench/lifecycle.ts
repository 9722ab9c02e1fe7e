// Throughput of capture and refund batches of 50 against a real listening server on
// SQLite (issue 3). Run: node --import tsx bench/lifecycle.ts [batches] [concurrency]
// Prints requests/s and items/s of each phase; every item must succeed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../src/cli/serve.js';
import { loadSettings } from '../src/config/index.js';
import { sign } from '../src/crypto/signature.js';

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

async function postJson(p: string, body: Record<string, unknown>): Promise<any> {
  const signed = { ...body, encryption_data: sign(body, m.secret_key) };
  const res = await fetch(base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signed) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${p} ${res.status} ${text}`);
  return p === '/v1/authorise' ? text : JSON.parse(text);
}

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
    const xml: string = await postJson('/v1/authorise', {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      order_no,
      currency: 'USD',
      amount: '10.00',
      card: '4242424242424242',
      expiration_month: '12',
      expiration_year: '2035',
      security_code: '123',
      ...(manual ? { capture_method: 'manual' } : {}),
    });
    const id = /<transaction_id>([^<]+)<\/transaction_id>/.exec(xml)?.[1];
    if (!id) throw new Error(xml);
    made.push({ transaction_id: id, order_no });
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
    const r = await postJson('/v1/capture', {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      capture_orders: batch.map((p) => ({ ...p, currency: 'USD', amount: '10.00' })),
    });
    failed += r.capture_orders.filter((x: any) => x.capture_status !== '1').length;
  }),
  CONCURRENCY,
);
report(`capture batches of ${PER_BATCH} (concurrency ${CONCURRENCY})`, BATCHES, total, captureMs);

const refundMs = await pool(
  chunks(auto.made).map((batch) => async () => {
    const r = await postJson('/v1/refund', {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      refund_orders: batch.map((p) => ({ ...p, currency: 'USD', amount: '10.00', refund_amount: '1.00', refund_reason: 'bench' })),
    });
    failed += r.refund_orders.filter((x: any) => x.refund_status !== '1').length;
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
