// `node --import tsx bench/sql-trace.ts`: every SQL statement one direct authorise runs
// (after a warm-up payment), on the engine TOLLGATE_TEST_ENGINE picks. Issue 6: count the
// statements before optimising them.
import Database from 'better-sqlite3';
import pg from 'pg';
import { ENGINE, testGateway } from '../src/test/harness.js';
import { authoriseBody } from './scenarios.js';

const log: string[] = [];
let on = false;
if (ENGINE === 'sqlite') {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1'));
  for (const m of ['run', 'get', 'all', 'iterate'] as const) {
    const orig = proto[m];
    proto[m] = function (this: { source: string }, ...a: unknown[]) {
      if (on) log.push(`${m}: ${this.source.slice(0, 160)}`);
      return orig.apply(this, a);
    };
  }
} else {
  const orig = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, q: string | { text: string }, ...a: unknown[]) {
    if (on) log.push(`pg: ${(typeof q === 'string' ? q : q.text).slice(0, 160)}`);
    return orig.call(this, q, ...a);
  };
}
const gw = await testGateway();
await gw.post('/v1/authorise', authoriseBody(gw.merchant, 'warm-up'));
on = true;
const r = await gw.post('/v1/authorise', authoriseBody(gw.merchant, 'traced'));
on = false;
process.stdout.write(`HTTP ${r.statusCode}\n${log.join('\n')}\nstatements: ${log.length}\n`);
await gw.close();
