// `node --import tsx bench/checkout-trace.ts [--iterations 200] [--history N] [--full step]…`: what each step of a hosted
// checkout costs inside the gateway, beside one direct authorise (issue 10), on the engine
// TOLLGATE_TEST_ENGINE picks. In process (app.inject: no socket, no other load):
//   1. the SQL statements each step runs (after a warm-up session), grouped and counted;
//   2. each step's time over `iterations` sessions (p50 and mean), the same for authorise.
// Steps: create (POST /v1/checkout), forward (the loading page's POST /v1/checkout/<id>),
// page (GET /pay/<id>), pay (POST /pay/<id>), result (GET /pay/<id> after paying). The bench's
// checkout scenario runs create, page and pay; forward and result are what a browser adds.
// --history N: N more direct payments (same brand) on the account first. The payment page
// ranks the methods by the account's recent outcomes (up to 1,000 per brand), so its cost
// grows with the account's history; the bench's checkout runs on an account with thousands.
// --full <step>: that step's statements in full.
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { rankedPaymentMethods } from '../src/methods/service.js';
import { ENGINE, type TestGateway, testGateway } from '../src/test/harness.js';
import { authoriseBody, paymentFields } from './scenarios.js';

const { values: args } = parseArgs({
  options: { iterations: { type: 'string' }, history: { type: 'string' }, full: { type: 'string', multiple: true } },
});
const ITERATIONS = Number(args.iterations ?? 200);
const HISTORY = Number(args.history ?? 0);
const FULL = new Set(args.full ?? []);
const PAGE_YEAR = String(new Date().getUTCFullYear() + 2);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let trace: string[] | null = null;
if (ENGINE === 'sqlite') {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1'));
  for (const m of ['run', 'get', 'all', 'iterate'] as const) {
    const orig = proto[m];
    proto[m] = function (this: { source: string }, ...a: unknown[]) {
      trace?.push(this.source);
      return orig.apply(this, a);
    };
  }
  probe.close();
} else {
  const orig = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: unknown, q: string | { text: string }, ...a: unknown[]) {
    trace?.push(typeof q === 'string' ? q : q.text);
    return orig.call(this, q, ...a);
  };
}

type Step = 'authorise' | 'create' | 'forward' | 'page' | 'pay' | 'result';
const STEPS: Step[] = ['authorise', 'create', 'forward', 'page', 'pay', 'result'];

let n = 0;
/** One direct authorise and one checkout session paid by card, each step timed and (optionally) traced. */
async function once(gw: TestGateway, traced: Partial<Record<Step, string[]>> | null, ms: Partial<Record<Step, number[]>>): Promise<void> {
  const timed = async <T>(step: Step, fn: () => Promise<T>): Promise<T> => {
    if (traced) trace = traced[step] = [];
    const t = performance.now();
    const r = await fn();
    const list = ms[step] ?? [];
    ms[step] = list;
    list.push(performance.now() - t);
    trace = null;
    return r;
  };
  const i = n++;
  const auth = await timed('authorise', () => gw.post('/v1/authorise', authoriseBody(gw.merchant, `T-A${i}`)));
  if (auth.statusCode !== 200 || !auth.body.includes('0000:Success')) throw new Error(`authorise: HTTP ${auth.statusCode}`);

  const { card, expiration_month: _m, expiration_year: _y, security_code: _c, ...fields } = paymentFields(`T-C${i}`);
  const body = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...fields, return_url: 'https://shop.example.com/done' };
  const created = await timed('create', () => gw.post('/v1/checkout', body, { format: 'form' }));
  const id = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/.exec(created.body)?.[1];
  const signInfo = /name="signInfo" value="([^"]*)"/.exec(created.body)?.[1];
  if (created.statusCode !== 200 || !id || !signInfo) throw new Error(`create: HTTP ${created.statusCode}`);
  const inject = (method: 'GET' | 'POST', url: string, form?: Record<string, string>) =>
    gw.app.inject({ method, url, remoteAddress: '127.0.0.1', ...(form ? { payload: new URLSearchParams(form).toString(), headers: FORM } : {}) });
  const fwd = await timed('forward', () => inject('POST', `/v1/checkout/${id}`, { signInfo }));
  if (fwd.statusCode !== 303) throw new Error(`forward: HTTP ${fwd.statusCode}`);
  const page = await timed('page', () => inject('GET', `/pay/${id}`));
  const form_token = /name="form_token" value="([^"]+)"/.exec(page.body)?.[1];
  if (page.statusCode !== 200 || !form_token) throw new Error(`page: HTTP ${page.statusCode}`);
  const pay = await timed('pay', () =>
    inject('POST', `/pay/${id}`, { form_token, card_number: card as string, expiry_month: '12', expiry_year: PAGE_YEAR, security_code: '123' }),
  );
  if (pay.statusCode !== 303 || pay.headers.location !== `/pay/${id}`) throw new Error(`pay: HTTP ${pay.statusCode} → ${pay.headers.location}`);
  const result = await timed('result', () => inject('GET', `/pay/${id}`));
  if (!/data-outcome="approved"/.test(result.body)) throw new Error('result: not approved');
}

/** A statement's kind: transaction control, or the verb and its table. */
function kindOf(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  if (/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(s)) return s;
  const verb = (/^\w+/.exec(s)?.[0] ?? '?').toUpperCase();
  const table = /\b(?:from|into|update)\s+"?(\w+)"?/i.exec(s)?.[1] ?? '';
  return `${verb} ${table}`.trim();
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};

const gw = await testGateway();
try {
  for (let i = 0; i < 20; i++) await once(gw, null, {}); // warm-up: JIT, statement caches, risk history
  for (let i = 0; i < HISTORY; i++) {
    const r = await gw.post('/v1/authorise', authoriseBody(gw.merchant, `T-H${i}`));
    if (r.statusCode !== 200) throw new Error(`history payment: HTTP ${r.statusCode}`);
  }
  const traced: Partial<Record<Step, string[]>> = {};
  await once(gw, traced, {});
  const ms: Partial<Record<Step, number[]>> = {};
  for (let i = 0; i < ITERATIONS; i++) await once(gw, null, ms);

  const out: string[] = [`engine ${ENGINE}, ${ITERATIONS} sessions and authorises, in process (app.inject), ${HISTORY + 20} payments on the account first`, ''];
  out.push('| step | statements | writes | p50 ms | mean ms |', '|---|---:|---:|---:|---:|');
  for (const step of STEPS) {
    const t = traced[step] ?? [];
    const writes = t.filter((s) => /^\s*(insert|update|delete)/i.test(s)).length;
    const xs = ms[step] ?? [];
    const mean = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    out.push(`| ${step} | ${t.length} | ${writes} | ${pct(xs, 50).toFixed(2)} | ${mean.toFixed(2)} |`);
  }
  for (const step of STEPS) {
    const counts = new Map<string, number>();
    for (const s of traced[step] ?? []) counts.set(kindOf(s), (counts.get(kindOf(s)) ?? 0) + 1);
    out.push('', `${step}: ${[...counts].map(([k, c]) => (c > 1 ? `${k} ×${c}` : k)).join('; ')}`);
    if (FULL.has(step)) for (const s of traced[step] ?? []) out.push(`  ${s.replace(/\s+/g, ' ')}`);
  }
  // The page's method ranking alone (its history reads), as the page calls it.
  const creds = await gw.runtime.merchants.credentials(gw.merchant.merchant_id, gw.merchant.account_id);
  if (!creds) throw new Error('no credentials for the merchant');
  const rank: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t = performance.now();
    await rankedPaymentMethods(gw.runtime.store.db, creds.account, { currency: 'USD', billing_country: 'US' }, gw.runtime.deps.now());
    rank.push(performance.now() - t);
  }
  out.push('', `page's method ranking alone (rankedPaymentMethods, USD/US): p50 ${pct(rank, 50).toFixed(2)} ms`);
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await gw.close();
}
