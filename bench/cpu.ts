// `node --import tsx bench/cpu.ts` (env N, C): CPU time a direct authorise costs in one
// process, the gateway in process (app.inject, no sockets) on SQLite, C requests at once,
// after a warm-up. Less noisy than a closed-loop rate on a shared machine; with
// `node --cpu-prof --import tsx bench/cpu.ts` each thread's profile (event loop, SQLite
// writer and reader) shows where a payment's CPU goes (docs/performance.md).
import { testGateway } from '../src/test/harness.js';
import { authoriseBody } from './scenarios.js';

const N = Number(process.env.N ?? 10_000);
const C = Number(process.env.C ?? 16);
const WARM = 3_000;
const gw = await testGateway();
let k = 0;

async function drive(n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < n) {
        next++;
        const r = await gw.post('/v1/authorise', authoriseBody(gw.merchant, `cpu-${k++}`));
        if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}: ${r.body.slice(0, 200)}`);
      }
    }),
  );
}

await drive(WARM);
const c0 = process.cpuUsage();
const t0 = performance.now();
await drive(N);
const cpu = process.cpuUsage(c0);
const wall_ms = performance.now() - t0;
process.stdout.write(
  `${N} payments, ${C} at once: ${((cpu.user + cpu.system) / N).toFixed(1)} µs CPU each (user ${(cpu.user / N).toFixed(1)}), ${((N / wall_ms) * 1000).toFixed(0)} a second\n`,
);
await gw.close();
