import autocannon from 'autocannon';
import { sign } from '../src/crypto/signature.js';
import { createMerchant, freePort, freshDatabase, gatewayEnv, startGateway } from '../src/test/process.js';
import { authoriseBody } from './scenarios.js';

const which = process.argv[2] ?? 'auth';
const db = await freshDatabase('sqlite', 'prof');
const port = await freePort();
const env = gatewayEnv(db, port);
const gw = await startGateway(env, { node_args: process.env.PROF ? ['--cpu-prof', `--cpu-prof-dir=/tmp/prof-${which}`] : [] });
const m = createMerchant(env, 'p');
let n = 0;
const run = (path: string, next: () => any, d: number) =>
  autocannon({
    url: gw.url,
    connections: 64,
    duration: d,
    requests: [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req: any) => {
          const b = next();
          b.encryption_data = sign(b, m.secret_key);
          return { ...req, body: JSON.stringify(b) };
        },
      },
    ],
  });
const r = await run('/v1/authorise', () => authoriseBody(m, `P-${n++}`), 6);
console.log('auth', r.requests.average, r.latency.p50, r.latency.p99);
if (which === 'query') {
  const q = await run(
    '/v1/retrievalTrans',
    () => {
      const ids = new Set<string>();
      while (ids.size < 100) ids.add(`P-${Math.floor(Math.random() * n)}`);
      return { merchant_id: m.merchant_id, account_id: m.account_id, order_nos: [...ids] };
    },
    6,
  );
  console.log('query', q.requests.average, q.latency.p50, q.latency.p99);
}
console.log(gw.errors.join(''));
await gw.stop();
await db.drop();
