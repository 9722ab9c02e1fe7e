// `npm run test:fuzz [-- --runs N] [-- --socket N] [-- --quick]` (issue 6): fast-check throws hostile
// input at every endpoint of TARGETS through the real app (`app.inject`): wrong types,
// missing and extra fields, huge and deeply nested values, invalid UTF-8, malformed
// JSON/XML/form, XML entity bombs, boundary amounts and dates, injection strings, signed
// (so validation is reached) and not. Each case must answer below 500, a refusal must name
// its problem and write nothing. A smaller part goes over a real socket to a spawned
// gateway, which must stay up. TOLLGATE_TEST_ENGINE picks the engine (sqlite by default).
// Bodies are signed and encoded with the client library (tollgate/client), and the seed
// payments go through its client, so every fuzz run exercises it too. `--quick` runs a
// few hundred cases to prove the harness works; only a full run counts toward 20,000.
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { type AuthoriseRequest, encodeBody, signBody } from '../../client/index.js';
import { ENGINE, paymentRequest, type TestGateway, testGateway } from '../harness.js';
import { buildDist, createMerchant, freePort, freshDatabase, gatewayEnv, startGateway } from '../process.js';
import { type FuzzTarget, type KnownPayment, TARGETS, UNREGISTERED } from './targets.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string' }, socket: { type: 'string' }, seed: { type: 'string' }, 'no-build': { type: 'boolean' }, quick: { type: 'boolean' } },
});
const QUICK = args.quick === true;
// Defaults give 9 registered endpoints × 2,375 in-process cases + 400 over a socket
// = 21,775 counted cases (issue 6 asks for at least 20,000).
const RUNS_PER_TARGET = Number(args.runs ?? (QUICK ? 40 : 1900));
const RAW_RUNS_PER_TARGET = Math.ceil(RUNS_PER_TARGET / 4);
const PAGE_GET_RUNS = RUNS_PER_TARGET + RAW_RUNS_PER_TARGET;
const UNREGISTERED_RUNS = Math.ceil(RUNS_PER_TARGET / 16);
const CHALLENGE_SEEDS = 40;
const SOCKET_CASES = Number(args.socket ?? (QUICK ? 40 : 400));
const SEED = args.seed ? Number(args.seed) : Date.now() % 2 ** 31;

const results = { passed: 0, failed: 0, cases: 0 };
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---------- hostile values ----------
const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE payments; --",
  '" OR ""="',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, meant literally
  '${7*7}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\uD800',
  '\uDFFF\uD800',
  '\r\nX-Injected: 1',
  '%00%0d%0a',
  '__proto__',
  'constructor',
  'prototype',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x10',
  '4242424242424242',
  '١٢٣',
  'Ǆ̀͂',
  '🙂'.repeat(50),
];
const AMOUNTS = [
  '0.00',
  '0',
  '-1.00',
  '0.001',
  '0.01',
  '9999999999999999.99',
  '99999999999999999999.99',
  '1e3',
  '1,00',
  '10.0',
  '10.000',
  ' 10.00',
  '１０.００',
  '+10.00',
  '.5',
  '5.',
  '00000000000000000001.00',
];
const DATES = [
  '00000000000000',
  '99991231235959',
  '20250229120000',
  '20240229235959',
  '20251301000000',
  '2025-01-01',
  '19700101000000',
  '20251231236060',
  '-1',
  '2025010100000',
  '202501010000000',
];

function nestObject(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
function nestArray(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...AMOUNTS) },
  { weight: 2, arbitrary: fc.constantFrom(...DATES) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(-0),
      fc.constant(1e308),
      fc.constant(Number.MAX_SAFE_INTEGER + 2),
    ),
  },
  { weight: 2, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxKeys: 4 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 70_000 }).map((n) => 'A'.repeat(n)) },
  // Rare: past the 1 MiB body limit (413 path).
  { weight: 1, arbitrary: fc.constantFrom(600_000, 1_100_000, 1_500_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 600 }).map(nestObject) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 600 }).map(nestArray) },
);

type Mutation = { op: 'delete' | 'set' | 'extra' | 'set_nested'; which: number; value: unknown; name: string };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('delete', 'set', 'set', 'extra', 'set_nested'),
  which: fc.nat(),
  value: hostileValue,
  name: fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'encryption_data', 'merchant_id', 'unknown_field', 'a.b', 'x[0]', ''),
    fc.string({ maxLength: 12 }),
  ),
}) as fc.Arbitrary<Mutation>;

function mutate(body: Record<string, unknown>, muts: Mutation[]): Record<string, unknown> {
  const b = structuredClone(body);
  for (const mu of muts) {
    const keys = Object.keys(b);
    const key = keys[mu.which % Math.max(1, keys.length)] as string;
    if (mu.op === 'delete') delete b[key];
    else if (mu.op === 'set') b[key] = mu.value;
    else if (mu.op === 'extra') Object.defineProperty(b, mu.name, { value: mu.value, enumerable: true, writable: true, configurable: true });
    else {
      // Inside the first array item or nested object of the body, when there is one.
      const holder = Object.values(b).find((v) => v !== null && typeof v === 'object') as Record<string, unknown> | unknown[] | undefined;
      const inner = Array.isArray(holder) ? holder[0] : holder;
      if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
        const ik = Object.keys(inner);
        (inner as Record<string, unknown>)[ik[mu.which % Math.max(1, ik.length)] ?? mu.name] = mu.value;
      } else b[key] = mu.value;
    }
  }
  return b;
}

/** Deeper nesting than the signer's recursion allows is sent with a made-up signature. */
function signOrGarbage(body: Record<string, unknown>, secret: string, format: 'json' | 'form' | 'xml'): string {
  try {
    return signBody(body, secret, format).encryption_data;
  } catch {
    return '0'.repeat(64);
  }
}

// ---------- raw payloads ----------
const billionLaughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><request><merchant_id>&lol3;</merchant_id></request>`;
const RAW: Array<string | Buffer> = [
  '',
  '   ',
  '{',
  '{"merchant_id":',
  '{"merchant_id":"1",}',
  '[1,2',
  '[]',
  'null',
  '"string"',
  '123',
  '{"a":"\\u12"}',
  '{"__proto__":{"polluted":1},"merchant_id":"1","account_id":"1","encryption_data":"00"}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`,
  billionLaughs,
  '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r><merchant_id>&xxe;</merchant_id></r>',
  '<?xml version="1.0"?><!DOCTYPE r SYSTEM "http://169.254.169.254/latest/meta-data/"><r/>',
  '<r><merchant_id>1</merchant_id>',
  '<r><merchant_id>1</merchant_id><merchant_id>2</merchant_id><account_id><x>1</x></account_id></r>',
  '<r><![CDATA[<merchant_id>1</merchant_id>]]></r>',
  '<?xml version="1.0"?>',
  '<r attr="1" attr="2"/>',
  `${'<a>'.repeat(10_000)}x${'</a>'.repeat(10_000)}`,
  '<r>&#0;&#x110000;&#xD800;&amp;&unknown;</r>',
  'a[b][c][d][e][f][g][h][i][j][k]=1',
  'a[999999999]=1',
  '&&&',
  '=',
  '==&==',
  'merchant_id=%E0%A4%A&account_id=%',
  'merchant_id[__proto__][x]=1',
  Array.from({ length: 6000 }, (_, i) => `p${i}=1`).join('&'),
  `a=${'b'.repeat(1_200_000)}`,
  Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]),
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
  Buffer.from([0x3c, 0x72, 0x3e, 0xed, 0xa0, 0x80, 0x3c, 0x2f, 0x72, 0x3e]),
  Buffer.from([0x80, 0x81, 0x82, 0xc0, 0xaf]),
  Buffer.alloc(2048, 0),
];
const CONTENT_TYPES = [
  'application/json',
  'application/xml',
  'text/xml',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  '',
];

// ---------- checks ----------
/** Cases per endpoint label ("POST /v1/authorise"): counted ones are registered endpoints. */
const counted = new Map<string, number>();
const uncounted = new Map<string, number>();
/** Answers in Fastify's own error shape (router level, before our error handler). */
const frameworkAnswers = new Map<string, number>();
const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);

interface Case {
  method: 'GET' | 'POST';
  path: string;
  payload?: string | Buffer;
  contentType: string;
  headers?: Record<string, string>;
}

function describeCase(c: Case): string {
  if (c.payload === undefined) return `${c.method} ${c.path.length > 300 ? `${c.path.slice(0, 300)}… (${c.path.length} chars)` : c.path}`;
  const p = typeof c.payload === 'string' ? c.payload : `<bytes ${c.payload.toString('hex').slice(0, 60)}>`;
  return `${c.method} ${c.path} [${c.contentType}] ${p.length > 300 ? `${p.slice(0, 300)}… (${p.length} chars)` : p}`;
}

/** "Names a problem": a result code and, for 400, a non-empty description; an HTML page says what happened. */
function namesProblem(status: number, body: string, contentType: string): string | null {
  if (contentType.startsWith('text/html')) {
    const title = /<h1>([^<]+)<\/h1>/.exec(body)?.[1]?.trim();
    const message = /<p id="message">([^<]+)<\/p>/.exec(body)?.[1]?.trim();
    return title && message ? null : `an HTML ${status} page without a title and message: ${body.slice(0, 200)}`;
  }
  let rec: Record<string, unknown> = {};
  try {
    rec = JSON.parse(body) as Record<string, unknown>;
  } catch {
    const pick = (n: string) => new RegExp(`<${n}>([^<]*)</${n}>`).exec(body)?.[1] ?? '';
    rec = { return_message: pick('return_message'), error_message: pick('error_message') };
  }
  // Fastify's router answers a URL it cannot decode (FST_ERR_BAD_URL) before any route or
  // error handler runs; that answer names the problem in its own shape. Tallied and reported.
  if (typeof rec.code === 'string' && rec.code.startsWith('FST_ERR_') && typeof rec.message === 'string' && rec.message.trim()) {
    bump(frameworkAnswers, `${status} ${rec.code}`);
    return null;
  }
  const code = String(rec.return_message ?? (rec.error as Record<string, unknown> | undefined)?.code ?? '');
  if (!/^\d{4}:\S/.test(code) && !(rec.error && typeof rec.error === 'object')) return `no result code in a ${status} answer: ${body.slice(0, 200)}`;
  if (status === 400 && !String(rec.error_message ?? (rec.error as Record<string, unknown> | undefined)?.message ?? '').trim())
    return `a 400 without error_message: ${body.slice(0, 200)}`;
  return null;
}

/**
 * A content checksum of every table ("a refused request writes nothing" compares whole
 * contents, not row counts, so an in-place UPDATE shows too). SQLite: every row of every
 * table in rowid order, hashed, read over a separate read-only connection (WAL: it sees
 * each committed answer). PostgreSQL: md5 of the rows' text forms, one query for all tables.
 * The hashes are recomputed only when the engine says something was committed since the
 * last reading (SQLite `PRAGMA data_version` of this connection changes on every commit by
 * another connection; PostgreSQL's next transaction id moves on every writing
 * transaction); otherwise the contents cannot have changed and the last hashes stand.
 */
interface Checksum {
  /** table → hash of its contents. */
  take(): Promise<Map<string, string>>;
  /** How many readings hashed every table (the others were provably unchanged). */
  recomputed: number;
  close(): Promise<void>;
}

async function openChecksum(gw: TestGateway): Promise<Checksum> {
  if (ENGINE === 'sqlite') {
    const raw = new Database(gw.database_url.replace(/^sqlite:/, ''), { readonly: true, fileMustExist: true });
    const tables = (
      raw
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY name`)
        .all() as Array<{
        name: string;
      }>
    ).map((t) => t.name);
    const reads = tables.map((t) => [t, raw.prepare(`SELECT * FROM "${t.replace(/"/g, '""')}" ORDER BY rowid`).raw(true)] as const);
    const text = (v: unknown) => (Buffer.isBuffer(v) ? `x'${v.toString('hex')}'` : typeof v === 'string' ? JSON.stringify(v) : String(v));
    const version = raw.prepare('PRAGMA data_version').pluck();
    let last: { version: unknown; sums: Map<string, string> } | null = null;
    const sum: Checksum = {
      recomputed: 0,
      async take() {
        const out = new Map<string, string>();
        // One read transaction: the version and all tables from the same snapshot.
        raw.exec('BEGIN');
        try {
          const v = version.get();
          if (last && last.version === v) return last.sums;
          sum.recomputed++;
          last = { version: v, sums: out };
          for (const [t, stmt] of reads) {
            const h = createHash('sha256');
            let n = 0;
            for (const row of stmt.iterate() as Iterable<unknown[]>) {
              h.update(row.map(text).join('\u001f'));
              h.update('\u001e');
              n++;
            }
            out.set(t, `${n}:${h.digest('hex').slice(0, 16)}`);
          }
        } finally {
          raw.exec('COMMIT');
        }
        return out;
      },
      async close() {
        raw.close();
      },
    };
    return sum;
  }
  const c = new pg.Client({ connectionString: gw.database_url });
  await c.connect();
  const tables = (
    await c.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT LIKE 'kysely_%' ORDER BY table_name`,
    )
  ).rows.map((r) => r.name);
  const ident = (t: string) => `"${t.replace(/"/g, '""')}"`;
  const query = tables
    .map(
      (t) => `SELECT ${pgLiteral(t)} AS name, count(*)::text || ':' || coalesce(md5(string_agg(x::text, E'\\n' ORDER BY x::text)), '') AS h FROM ${ident(t)} x`,
    )
    .join(' UNION ALL ');
  let last: { version: string; sums: Map<string, string> } | null = null;
  const sum: Checksum = {
    recomputed: 0,
    async take() {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      try {
        // Next transaction id of the cluster: unchanged means no transaction wrote anything.
        const v = (await c.query<{ v: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS v')).rows[0]?.v ?? '';
        if (last && last.version === v) return last.sums;
        sum.recomputed++;
        const r = await c.query<{ name: string; h: string }>(query);
        last = { version: v, sums: new Map(r.rows.map((row) => [row.name, row.h])) };
        return last.sums;
      } finally {
        await c.query('COMMIT');
      }
    },
    async close() {
      await c.end();
    },
  };
  return sum;
}

function pgLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function changedTables(a: Map<string, string>, b: Map<string, string>): string[] {
  const names = new Set([...a.keys(), ...b.keys()]);
  return [...names].filter((t) => a.get(t) !== b.get(t)).map((t) => `${t} ${a.get(t)} → ${b.get(t)}`);
}

// ---------- in-process run ----------
/** Cases per endpoint label ("POST /v1/authorise"): counted ones are registered endpoints. */

interface Challenge {
  id: string;
  form_token: string;
}

const CHALLENGE_CARD = '4000000000003220';

/** Ids for GET/POST /threeds/:id: real ones (open, then used), near misses and hostile strings. */
function challengeIdArb(challenges: Challenge[]): fc.Arbitrary<string> {
  const real = fc.nat().map((i) => (challenges[i % challenges.length] as Challenge).id);
  return fc.oneof(
    { weight: 4, arbitrary: real.map(encodeURIComponent) },
    { weight: 1, arbitrary: real.map((id) => id.slice(0, 31)) },
    { weight: 1, arbitrary: real.map((id) => `${id}A`) },
    { weight: 1, arbitrary: real.map((id) => id.toLowerCase()) },
    { weight: 1, arbitrary: real.map((id) => `${id}%00`) },
    { weight: 1, arbitrary: real.map((id) => `${id}?outcome=complete&form_token=x`) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(...INJECTIONS).map((s) => {
        try {
          return encodeURIComponent(s);
        } catch {
          return '%ED%A0%80'; // a lone surrogate as (invalid) UTF-8 bytes
        }
      }),
    },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '?'))) },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 9_000 }).map((n) => 'A'.repeat(n)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%',
        '%zz',
        '%E0%A4%A',
        '%ff%fe',
        '%c0%af',
        '..%2f..%2fetc%2fpasswd',
        '%2e%2e',
        'a%2Fb',
        '%0d%0aX-Injected:%201',
        ';jsessionid=1',
        '__proto__',
        'constructor',
        `${'A'.repeat(32)}#frag`,
      ),
    },
  );
}

async function inProcess(): Promise<void> {
  const gw = await testGateway({ settings: { public_url: 'http://tollgate.test' } });
  let check: Checksum | null = null;
  try {
    const m = gw.merchant;
    const client = gw.client(m);
    const known: KnownPayment[] = [];
    const seedPayment = (order_no: string, extra: Partial<AuthoriseRequest> = {}) => paymentRequest({ order_no, ...extra });
    for (let i = 0; i < 20; i++) {
      const x = await client.authorise(seedPayment(`SEED-${i}`));
      if (x.transaction_id) known.push({ transaction_id: x.transaction_id, order_no: x.order_no, amount: x.amount });
    }
    // Open 3-D Secure challenges for the page routes; valid posts use them up as the run goes.
    const challenges: Challenge[] = [];
    for (let i = 0; i < CHALLENGE_SEEDS; i++) {
      const x = await client.authorise(seedPayment(`SEED-3DS-${i}`, { card: CHALLENGE_CARD, return_url: 'https://shop.example/return' }));
      if (!x.threeds_url) throw new Error(`seeding a challenge failed: ${x.result_info}`);
      const id = x.threeds_url.slice(x.threeds_url.lastIndexOf('/') + 1);
      const page = await gw.app.inject({ method: 'GET', url: `/threeds/${id}` });
      const form_token = /name="form_token" value="([^"]+)"/.exec(page.body)?.[1];
      if (!form_token) throw new Error(`no form on the challenge page: ${page.statusCode}`);
      challenges.push({ id, form_token });
    }

    check = await openChecksum(gw);
    const sums = check;
    let state = await sums.take();
    // Guard: the checksum must see a committed write (else "writes nothing" proves nothing).
    await client.authorise(seedPayment('SEED-GUARD'));
    const seen = changedTables(state, await sums.take());
    if (!seen.some((t) => t.startsWith('payments ')))
      throw new Error(`the table checksum did not see a new payment (changed: ${seen.join('; ') || 'nothing'})`);
    log(`  checksum sees a committed payment (changed: ${seen.map((t) => t.split(' ')[0]).join(', ')})`);
    state = await sums.take();
    const statuses = new Map<number, number>();
    let refused = 0;
    let n = 0;

    const runCase = async (label: string, isCounted: boolean, c: Case): Promise<void> => {
      results.cases++;
      bump(isCounted ? counted : uncounted, label);
      const res = await gw.app.inject({
        method: c.method,
        url: c.path,
        ...(c.payload === undefined ? {} : { payload: c.payload }),
        headers: { ...(c.contentType ? { 'content-type': c.contentType } : {}), ...c.headers },
        remoteAddress: '127.0.0.1',
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode >= 500) throw new Error(`HTTP ${res.statusCode} for ${describeCase(c)}: ${res.body.slice(0, 300)}`);
      // Before this case = after the previous one (nothing else writes: no worker, a fixed clock).
      const after = await sums.take();
      if (res.statusCode >= 400) {
        refused++;
        const problem = namesProblem(res.statusCode, res.body, String(res.headers['content-type'] ?? ''));
        if (problem) throw new Error(`${problem} for ${describeCase(c)}`);
        const changed = changedTables(state, after);
        if (changed.length) throw new Error(`a ${res.statusCode} refusal changed table contents (${changed.join('; ')}) for ${describeCase(c)}`);
      }
      state = after;
    };

    const headerArb = fc.option(
      fc.record({
        'idempotency-key': fc.oneof(
          fc.constant('k'.repeat(300)),
          fc.constant(''),
          fc.string({ unit: 'binary', maxLength: 20 }).map((s) => s.replace(/[^\x20-\x7e]/g, '?')),
        ),
        'x-request-id': fc.oneof(fc.constant('r'.repeat(500)), fc.constant('a b c'), fc.constant('../x')),
      }),
      { nil: undefined },
    );

    const property = async (label: string, what: string, prop: fc.IAsyncProperty<any>, numRuns: number): Promise<void> => {
      try {
        await fc.assert(prop, { numRuns, seed: SEED, endOnFailure: true });
        results.passed++;
        log(`ok - ${label} ${what}`);
      } catch (e) {
        results.failed++;
        const lines = (e as Error).message.split('\n').map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l));
        const cause = (e as Error).cause instanceof Error ? ((e as Error).cause as Error).message.slice(0, 1500) : '';
        log(`not ok - ${label} ${what}: ${[...lines.slice(0, 3), cause].join('\n    ')}`);
      }
    };

    const acquiring = async (t: FuzzTarget, isCounted: boolean, bodyRuns: number, rawRuns: number): Promise<void> => {
      const label = `POST ${t.path}`;
      const bodyCase = fc.record({
        muts: fc.array(mutation, { maxLength: 3 }),
        format: fc.constantFrom('json', 'json', 'form', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
        signing: fc.constantFrom('valid', 'valid', 'valid', 'none', 'wrong'),
        contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
        headers: headerArb,
      });
      await property(
        label,
        'bodies',
        fc.asyncProperty(bodyCase, async (bc) => {
          const body = mutate(t.base(m, known, n++), bc.muts);
          if (bc.signing === 'valid') body.encryption_data = signOrGarbage(body, m.secret_key, bc.format);
          else if (bc.signing === 'wrong') body.encryption_data = 'f'.repeat(64);
          let enc: { payload: string; contentType: string };
          try {
            enc = encodeBody(body, bc.format);
          } catch {
            enc = encodeBody(body, 'json'); // a lone surrogate cannot be URL-encoded
          }
          await runCase(label, isCounted, {
            method: 'POST',
            path: t.path,
            payload: enc.payload,
            contentType: bc.contentType ?? enc.contentType,
            headers: bc.headers as Record<string, string> | undefined,
          });
        }),
        bodyRuns,
      );
      await property(
        label,
        'raw payloads',
        fc.asyncProperty(fc.constantFrom(...RAW), fc.constantFrom(...CONTENT_TYPES), async (payload, contentType) => {
          await runCase(label, isCounted, { method: 'POST', path: t.path, payload, contentType });
        }),
        rawRuns,
      );
    };

    for (const t of TARGETS) {
      const before = results.cases;
      await acquiring(t, true, RUNS_PER_TARGET, RAW_RUNS_PER_TARGET);
      log(`    ${results.cases - before} cases`);
    }

    // The shopper-facing 3-D Secure page (decisions §10): hostile ids and form posts.
    const idArb = challengeIdArb(challenges);
    {
      const label = 'GET /threeds/:id';
      const before = results.cases;
      await property(
        label,
        'ids',
        fc.asyncProperty(idArb, fc.option(fc.constantFrom(...INJECTIONS), { nil: undefined }), headerArb, async (id, query, headers) => {
          let qs = '';
          if (query !== undefined) {
            try {
              qs = `?q=${encodeURIComponent(query)}`;
            } catch {
              qs = '?q=%ED%A0%80';
            }
          }
          await runCase(label, true, { method: 'GET', path: `/threeds/${id}${qs}`, contentType: '', headers: headers as Record<string, string> | undefined });
        }),
        PAGE_GET_RUNS,
      );
      log(`    ${results.cases - before} cases`);
    }
    {
      const label = 'POST /threeds/:id';
      const before = results.cases;
      const formCase = fc.record({
        pick: fc.nat(),
        idKind: fc.constantFrom('real', 'real', 'real', 'hostile'),
        hostileId: idArb,
        tokenKind: fc.constantFrom('own', 'own', 'other', 'hostile', 'missing'),
        hostileToken: hostileValue,
        outcome: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom<unknown>('complete', 'fail') },
          { weight: 2, arbitrary: hostileValue },
          { weight: 1, arbitrary: fc.constant(undefined) },
        ),
        extras: fc.array(fc.record({ name: mutation.map((mu) => mu.name), value: hostileValue }), { maxLength: 2 }),
        format: fc.constantFrom('form', 'form', 'form', 'json', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
        contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined, freq: 4 }),
      });
      await property(
        label,
        'form posts',
        fc.asyncProperty(formCase, async (fcase) => {
          const own = challenges[fcase.pick % challenges.length] as Challenge;
          const other = challenges[(fcase.pick + 1) % challenges.length] as Challenge;
          const id = fcase.idKind === 'real' ? own.id : fcase.hostileId;
          const body: Record<string, unknown> = {};
          if (fcase.tokenKind === 'own') body.form_token = own.form_token;
          else if (fcase.tokenKind === 'other') body.form_token = other.form_token;
          else if (fcase.tokenKind === 'hostile') body.form_token = fcase.hostileToken;
          if (fcase.outcome !== undefined) body.outcome = fcase.outcome;
          for (const x of fcase.extras) Object.defineProperty(body, x.name, { value: x.value, enumerable: true, writable: true, configurable: true });
          let enc: { payload: string; contentType: string };
          try {
            enc = encodeBody(body, fcase.format);
          } catch {
            enc = encodeBody(body, 'json');
          }
          await runCase(label, true, { method: 'POST', path: `/threeds/${id}`, payload: enc.payload, contentType: fcase.contentType ?? enc.contentType });
        }),
        RUNS_PER_TARGET,
      );
      await property(
        label,
        'raw payloads',
        fc.asyncProperty(fc.nat(), fc.constantFrom(...RAW), fc.constantFrom(...CONTENT_TYPES), async (pick, payload, contentType) => {
          const c = challenges[pick % challenges.length] as Challenge;
          await runCase(label, true, { method: 'POST', path: `/threeds/${c.id}`, payload, contentType });
        }),
        RAW_RUNS_PER_TARGET,
      );
      log(`    ${results.cases - before} cases`);
    }

    // Spec paths this build does not register: only the 404 handler answers. Reported, not counted.
    for (const t of UNREGISTERED) {
      const before = results.cases;
      await acquiring(t, false, UNREGISTERED_RUNS, Math.ceil(UNREGISTERED_RUNS / 4));
      log(`    ${results.cases - before} cases (unregistered path: not counted)`);
    }
    log(
      `  in-process: ${results.cases} cases (${refused} refused, each with every table's checksum unchanged; all tables hashed ${sums.recomputed} times), statuses ${[
        ...statuses.entries(),
      ]
        .sort((a, b) => a[0] - b[0])
        .map(([s, k]) => `${s}×${k}`)
        .join(' ')}`,
    );
  } finally {
    await check?.close();
    await gw.close();
  }
}

// ---------- over a real socket ----------
async function overSocket(): Promise<void> {
  if (SOCKET_CASES <= 0) return;
  if (!args['no-build']) buildDist();
  const db = await freshDatabase(ENGINE, 'fuzz');
  const env = gatewayEnv(db, await freePort());
  const m = createMerchant(env, 'fuzz');
  const gw = await startGateway(env);
  let exited = false;
  void gw.exited.then(() => {
    exited = true;
  });
  const bad: string[] = [];
  try {
    const payloads = fc.sample(
      fc.oneof(
        fc.constantFrom(...RAW),
        fc.tuple(fc.constantFrom(...TARGETS), fc.array(mutation, { maxLength: 3 })).map(([t, muts]) => {
          const body = mutate(t.base(m, [], 0), muts);
          body.encryption_data = signOrGarbage(body, m.secret_key, 'json');
          return JSON.stringify(body);
        }),
      ),
      { numRuns: SOCKET_CASES, seed: SEED },
    );
    let i = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (i < payloads.length) {
          const payload = payloads[i] as string | Buffer;
          const path = (TARGETS[i++ % TARGETS.length] as (typeof TARGETS)[number]).path;
          bump(counted, `POST ${path}`);
          try {
            const r = await fetch(`${gw.url}${path}`, {
              method: 'POST',
              body: payload,
              headers: { 'content-type': 'application/json' },
              signal: AbortSignal.timeout(15_000),
            });
            await r.arrayBuffer();
            if (r.status >= 500) bad.push(`HTTP ${r.status} for ${describeCase({ method: 'POST', path, payload, contentType: 'application/json' })}`);
          } catch (e) {
            // A connection the server closes on an oversized body is fine; a dead server is not.
            if (exited) bad.push(`the gateway died: ${(e as Error).message}`);
          }
        }
      }),
    );
    const health = await fetch(`${gw.url}/healthz`).then(
      (r) => r.status,
      () => 0,
    );
    const ok = !exited && health === 200 && bad.length === 0;
    if (ok) results.passed++;
    else results.failed++;
    results.cases += payloads.length;
    log(
      `${ok ? 'ok' : 'not ok'} - over a socket: ${payloads.length} cases, process up: ${!exited}, /healthz ${health}${bad.length ? `; ${bad.slice(0, 3).join('; ')}` : ''}`,
    );
  } finally {
    await gw.crash();
    await db.drop();
  }
}

const t0 = Date.now();
log(
  `fuzz on ${ENGINE}, seed ${SEED} (rerun with --seed ${SEED}), ${TARGETS.length + 2} registered endpoints (+${UNREGISTERED.length} unregistered paths, not counted)`,
);
await inProcess();
await overSocket();
const countedTotal = [...counted.values()].reduce((a, b) => a + b, 0);
const uncountedTotal = [...uncounted.values()].reduce((a, b) => a + b, 0);
log('\ncases per registered endpoint (counted):');
for (const [k, v] of [...counted.entries()].sort()) log(`  ${k.padEnd(28)} ${String(v).padStart(6)}`);
log(`  ${'total'.padEnd(28)} ${String(countedTotal).padStart(6)}`);
log(`unregistered paths (404 handler only, not counted): ${[...uncounted.entries()].map(([k, v]) => `${k} ${v}`).join(', ')}; total ${uncountedTotal}`);
if (frameworkAnswers.size)
  log(`answered by Fastify's router in its own error shape (not the gateway's): ${[...frameworkAnswers.entries()].map(([k, v]) => `${k}×${v}`).join(', ')}`);
log(`\n${results.cases} cases in ${Math.round((Date.now() - t0) / 1000)} s; counted toward the 20,000 of issue 6: ${countedTotal}`);
// A quick run proves the harness, not the 20,000 cases of issue 6.
const enough = QUICK || countedTotal >= 20_000;
if (QUICK) log(`quick run: ${countedTotal} counted cases; the 20,000-case requirement applies to full runs only`);
else if (!enough) log(`not ok - fewer than 20,000 counted cases (${countedTotal}); raise --runs`);
log(`${results.passed} passed, ${results.failed + (enough ? 0 : 1)} failed`);
process.exit(results.failed > 0 || !enough ? 1 : 0);
