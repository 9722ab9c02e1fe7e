// `node --import tsx bench/remote-sandbox.ts` (env RATE, SECONDS, MEDIAN, P99): the remote
// sandbox in its own process (`tollgate sandbox-processor`) driven by its connector at an
// open-loop RATE of authorisations a second. Reports the sandbox's CPU per request (its
// /stats, `process.cpuUsage` of its process), the connector's CPU per call in this process,
// the latency the sandbox served and the latency the connector saw, and the most calls in
// flight at once. No gateway: this measures the processor side and the connector alone.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MinorUnits } from '../src/money/currency.js';
import { createRemoteSandboxProcessor } from '../src/processors/remote/connector.js';
import type { RemoteSandboxStats } from '../src/processors/remote/server.js';

const RATE = Number(process.env.RATE ?? 1_000);
const SECONDS = Number(process.env.SECONDS ?? 10);
const MEDIAN = process.env.MEDIAN ?? '0';
const P99 = process.env.P99 ?? MEDIAN;
const ROOT = path.resolve(import.meta.dirname, '..');

const port = await new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as net.AddressInfo).port;
    s.close(() => resolve(p));
  });
});
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    'src/cli/run.ts',
    'sandbox-processor',
    '--port',
    String(port),
    '--latency-median-ms',
    MEDIAN,
    '--latency-p99-ms',
    P99,
    '--log-level',
    'warn',
  ],
  { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
);
const base_url = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  const up = await fetch(`${base_url}/health`).then(
    (r) => r.ok,
    () => false,
  );
  if (up) break;
  if (i > 100) throw new Error('the sandbox did not start');
  await new Promise((r) => setTimeout(r, 100));
}
const stats = async () => (await (await fetch(`${base_url}/stats`)).json()) as RemoteSandboxStats;

const processor = createRemoteSandboxProcessor({ base_url });
const card = { pan: '4242424242424242', brand: 'visa', exp_month: 12, exp_year: 2031, security_code: '123' };
let n = 0;
let inFlight = 0;
let maxInFlight = 0;
const seen: number[] = [];
const failures = new Map<string, number>();

async function one(): Promise<void> {
  const id = `bench_${process.pid}_${++n}`;
  const t0 = performance.now();
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  const r = await processor.authorise(
    { transaction_id: id, amount_minor: 1000 as MinorUnits, currency: 'USD', card },
    { attempt_id: id, deadline_at: Date.now() + 30_000, signal: controller.signal },
  );
  clearTimeout(timer);
  inFlight--;
  if (r.kind === 'approved') seen.push(performance.now() - t0);
  else failures.set(r.kind === 'unknown' ? r.reason : r.kind, (failures.get(r.kind) ?? 0) + 1);
}

/** Open loop: RATE calls a second whatever the answers do, in 10 ms ticks. */
async function drive(seconds: number): Promise<void> {
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * RATE);
    for (; sent < due; sent++) pending.push(one());
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(pending);
}

await drive(2); // warm-up: connections opened, code compiled
seen.length = 0;
// How late this process's own event loop ran: latency the connector adds that is not the network's.
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const s0 = await stats();
const c0 = process.cpuUsage();
const t0 = performance.now();
await drive(SECONDS);
const wall_s = (performance.now() - t0) / 1000;
const c1 = process.cpuUsage(c0);
const s1 = await stats();
const calls = s1.acted - s0.acted;
const sorted = seen.sort((a, b) => a - b);
const pct = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
const sandboxCpu = s1.cpu_us.user + s1.cpu_us.system - (s0.cpu_us.user + s0.cpu_us.system);
console.log(
  JSON.stringify(
    {
      rate: RATE,
      latency: { median_ms: Number(MEDIAN), p99_ms: Number(P99) },
      calls,
      wall_s_with_tail: Math.round(wall_s * 10) / 10,
      sandbox_cpu_us_per_request: Math.round(sandboxCpu / calls),
      sandbox_cpu_share: `${((sandboxCpu / 1e6 / wall_s) * 100).toFixed(1)}% of a core`,
      connector_cpu_us_per_call: Math.round((c1.user + c1.system) / calls),
      connector_cpu_share: `${(((c1.user + c1.system) / 1e6 / wall_s) * 100).toFixed(1)}% of a core`,
      served_ms: { p50: s1.latency_ms.p50, p99: s1.latency_ms.p99 },
      seen_by_connector_ms: { p50: pct(0.5), p99: pct(0.99) },
      max_in_flight: maxInFlight,
      event_loop_delay_p99_ms: Math.round(loop.percentile(99) / 1e5) / 10,
      sandbox_rss_mib: Math.round(s1.rss_bytes / 1_048_576),
      failures: Object.fromEntries(failures),
    },
    null,
    2,
  ),
);
child.kill('SIGTERM');
