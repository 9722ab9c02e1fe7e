// Notification delivery throughput and lag to a local receiver (issue 4 figures).
//   node --import tsx bench/webhooks.ts [events=2000] [rate_per_s=200]
// DATABASE_URL picks the engine (default: a temp SQLite file). The receiver runs in the
// same process as the worker, answering 200 at once; numbers include its cost.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '../src/config/index.js';
import { Keyring } from '../src/crypto/keyring.js';
import { recordEvent } from '../src/notifications/outbox.js';
import { startReceiver } from '../src/notifications/test-receiver.js';
import { DeliveryWorker } from '../src/notifications/worker.js';
import { createRuntime } from '../src/runtime.js';

const N = Number(process.argv[2] ?? 2000);
const RATE = Number(process.argv[3] ?? 200);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
const settings = {
  ...loadSettings({}),
  database_url: process.env.DATABASE_URL ?? `sqlite:${path.join(dir, 'bench.db')}`,
  data_dir: dir,
  allow_private_webhooks: true,
  demo_merchant: false,
};
const rt = await createRuntime(settings, { keyring: Keyring.parse(`b:${Buffer.alloc(32, 1).toString('base64')}`), metricsDefaults: false });
const m = await rt.merchants.createMerchant({ name: 'Bench' });
const committed = new Map<string, number>();
const received = new Map<string, number>();
const rcv = await startReceiver((req) => {
  const id = String(req.headers['webhook-id']);
  if (!received.has(id)) received.set(id, performance.now());
  return { status: 200 };
});

const data = {
  amount: '10.00',
  currency: 'USD',
  order_no: 'BENCH',
  payment_status: '3000',
  transaction_id: 'T',
  card: '424242******4242',
  delivery_information: { delivery_address: '1 Main St', delivery_city: 'Springfield', delivery_country: 'US' },
};

async function produce(count: number, batch: number): Promise<void> {
  const ids = await rt.store.transaction(async (tx) => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      out.push(
        await recordEvent(
          tx,
          { merchant_id: m.merchant_id, account_id: m.account_id, event_type: 'payment.succeeded', object_id: `T${batch}-${i}`, notify_url: rcv.url, data },
          Date.now(),
        ),
      );
    }
    return out;
  });
  const t = performance.now();
  for (const id of ids) committed.set(id, t);
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

async function waitAll(total: number, timeout_ms: number): Promise<void> {
  const end = Date.now() + timeout_ms;
  while (received.size < total && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
}

/**
 * A delivery worker run as `serve` runs it (notifications/tasks.ts): a tick every 100 ms, at once
 * while events keep coming and whenever a delivery ends; `stop` lets the attempts in flight end.
 */
function worker(): { start(): void; stop(): Promise<void> } {
  let stopped = false;
  let wake = () => {};
  const w = new DeliveryWorker({ store: rt.store, merchants: rt.merchants, allow_private: true, timeout_ms: 10_000, concurrency: 32, wake: () => wake() });
  let loop: Promise<void> = Promise.resolve();
  return {
    start() {
      loop = (async () => {
        while (!stopped) {
          if (await w.tick()) continue;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, 100);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
        }
      })();
    },
    async stop() {
      stopped = true;
      wake();
      await loop;
      await w.settle();
    },
  };
}

// 1. Backlog: N events committed, then one worker drains them.
for (let b = 0; b < N / 100; b++) await produce(100, b);
const w1 = worker();
const t0 = performance.now();
w1.start();
await waitAll(N, 120_000);
const backlog_s = (performance.now() - t0) / 1000;
await w1.stop();
console.log(`engine ${rt.store.engine}: backlog of ${N} events delivered in ${backlog_s.toFixed(2)} s → ${(N / backlog_s).toFixed(0)} events/s`);

// 2. Steady load: events committed at RATE/s in batches of 10 while the worker runs; lag = commit → receipt.
committed.clear();
received.clear();
const w2 = worker();
w2.start();
const every_ms = (10 / RATE) * 1000;
for (let b = 0; b < N / 10; b++) {
  const next = performance.now() + every_ms;
  await produce(10, 100_000 + b);
  const wait = next - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
await waitAll(N, 120_000);
await w2.stop();
const lags = [...committed].map(([id, t]) => (received.get(id) ?? Number.NaN) - t).filter((x) => Number.isFinite(x));
console.log(
  `steady ${RATE} events/s: ${lags.length}/${N} received; lag p50 ${pct(lags, 50).toFixed(1)} ms, p99 ${pct(lags, 99).toFixed(1)} ms, max ${pct(lags, 100).toFixed(1)} ms`,
);
await rcv.close();
await rt.store.close();
fs.rmSync(dir, { recursive: true, force: true });
