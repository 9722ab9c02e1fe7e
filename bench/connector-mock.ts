// `node --import tsx bench/connector-mock.ts --connector adyen|stripe [--median-ms 250] [--p99-ms 1000] [--seed 32]`:
// the Adyen or Stripe connector's stateful mock (src/processors/<connector>/mock.ts) in a
// process of its own, answering after a seeded log-normal delay (the remote sandbox's
// model, `latencySampler`: median 250 ms, p99 1,000 ms by default), for bench/connectors.ts.
// It prints one JSON line when ready: `{"url", "stats_url", "pid"}` (the mock's base URL for
// `processor set --base-url`, and a small stats server). `GET <stats_url>` gives the latency
// served (arrival → answer sent) since start or the last `POST <stats_url>/reset` (which
// answers the same, then starts a new window), with p50/p99/max, and the process's CPU and RSS. The mock keeps every request, payment and
// event it sees for its tests; here those lists are emptied every second (the bench only
// reads the answers), so memory stays flat over a long run. Credentials are the bench's own.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { latencySampler, seededRandom } from '../src/processors/remote/faults.js';

export const MOCK_CREDENTIALS = {
  adyen: { api_key: 'AQE_bench_key_32', merchant_account: 'TollgateBenchECOM', hmac_key: 'B1E2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90' },
  stripe: { secret_key: 'sk_live_bench_32', webhook_secret: 'whsec_bench_32' },
} as const;

export interface ConnectorMockStats {
  latency_ms: { count: number; p50: number; p99: number; max: number };
  cpu_us: { user: number; system: number };
  rss_bytes: number;
}

/** Served latencies kept for the percentiles (the most recent). */
const WINDOW = 200_000;

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: { connector: { type: 'string' }, 'median-ms': { type: 'string' }, 'p99-ms': { type: 'string' }, seed: { type: 'string' } },
  });
  const connector = a.connector;
  if (connector !== 'adyen' && connector !== 'stripe') throw new Error('--connector adyen|stripe');
  const model = { median_ms: Number(a['median-ms'] ?? 250), p99_ms: Number(a['p99-ms'] ?? 1_000) };
  const delay = latencySampler(model, seededRandom(Number(a.seed ?? 32)));
  const served = new Float64Array(WINDOW);
  let count = 0;
  const latency = {
    delay,
    served: (ms: number) => {
      served[count % WINDOW] = ms;
      count++;
    },
  };
  let clear: () => void;
  let url: string;
  if (connector === 'adyen') {
    const { startAdyenMock } = await import('../src/processors/adyen/mock.js');
    const mock = await startAdyenMock({ ...MOCK_CREDENTIALS.adyen, latency });
    url = mock.url;
    clear = () => {
      mock.requests = [];
      mock.queued = [];
      mock.payments.clear();
    };
  } else {
    const { startMockStripe } = await import('../src/processors/stripe/mock.js');
    const mock = await startMockStripe({ secret_key: MOCK_CREDENTIALS.stripe.secret_key, latency });
    url = mock.url;
    clear = () => {
      mock.requests.length = 0;
      mock.events.length = 0;
      mock.intents.clear();
    };
  }
  setInterval(clear, 1_000).unref();
  const cpu0 = process.cpuUsage();
  const stats = (): ConnectorMockStats => {
    const n = Math.min(count, WINDOW);
    const sorted = Float64Array.from(served.subarray(0, n)).sort();
    const at = (q: number) => (n === 0 ? 0 : Math.round((sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))] ?? 0) * 10) / 10);
    const cpu = process.cpuUsage(cpu0);
    return { latency_ms: { count, p50: at(0.5), p99: at(0.99), max: at(1) }, cpu_us: cpu, rss_bytes: process.memoryUsage.rss() };
  };
  const statsServer = http.createServer((req, res) => {
    const s = stats();
    if (req.method === 'POST' && req.url === '/stats/reset') count = 0;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(s));
  });
  await new Promise<void>((resolve) => statsServer.listen(0, '127.0.0.1', resolve));
  const statsUrl = `http://127.0.0.1:${(statsServer.address() as AddressInfo).port}/stats`;
  process.stdout.write(`${JSON.stringify({ url, stats_url: statsUrl, pid: process.pid })}\n`);
  process.once('SIGTERM', () => process.exit(0));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
