// `npm run test:fuzz [-- --runs N] [-- --socket N]` (issue 6): fast-check throws hostile
// input at every endpoint of TARGETS through the real app (`app.inject`): wrong types,
// missing and extra fields, huge and deeply nested values, invalid UTF-8, malformed
// JSON/XML/form, XML entity bombs, boundary amounts and dates, injection strings, signed
// (so validation is reached) and not. Each case must answer below 500, a refusal must name
// its problem and write nothing. A smaller part goes over a real socket to a spawned
// gateway, which must stay up. TOLLGATE_TEST_ENGINE picks the engine (sqlite by default).
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { sql } from 'kysely';
import { sign } from '../../crypto/signature.js';
import { ENGINE, encodeBody, type TestGateway, testGateway } from '../harness.js';
import { buildDist, createMerchant, freePort, freshDatabase, gatewayEnv, startGateway } from '../process.js';
import { type KnownPayment, TARGETS } from './targets.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string' }, socket: { type: 'string' }, seed: { type: 'string' }, 'no-build': { type: 'boolean' } },
});
const RUNS_PER_TARGET = Number(args.runs ?? 1700);
const RAW_RUNS_PER_TARGET = Math.ceil(RUNS_PER_TARGET / 4);
const SOCKET_CASES = Number(args.socket ?? 400);
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
function signOrGarbage(body: Record<string, unknown>, secret: string): string {
  try {
    return sign(body, secret);
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
interface Case {
  path: string;
  payload: string | Buffer;
  contentType: string;
  headers?: Record<string, string>;
}

function describeCase(c: Case): string {
  const p = typeof c.payload === 'string' ? c.payload : `<bytes ${c.payload.toString('hex').slice(0, 60)}>`;
  return `${c.path} [${c.contentType}] ${p.length > 300 ? `${p.slice(0, 300)}… (${p.length} chars)` : p}`;
}

/** "Names a problem": a result code and, for 400, a non-empty description. */
function namesProblem(status: number, body: string): string | null {
  let rec: Record<string, unknown> = {};
  try {
    rec = JSON.parse(body) as Record<string, unknown>;
  } catch {
    const pick = (n: string) => new RegExp(`<${n}>([^<]*)</${n}>`).exec(body)?.[1] ?? '';
    rec = { return_message: pick('return_message'), error_message: pick('error_message') };
  }
  const code = String(rec.return_message ?? (rec.error as Record<string, unknown> | undefined)?.code ?? '');
  if (!/^\d{4}:\S/.test(code) && !(rec.error && typeof rec.error === 'object')) return `no result code in a ${status} answer: ${body.slice(0, 200)}`;
  if (status === 400 && !String(rec.error_message ?? (rec.error as Record<string, unknown> | undefined)?.message ?? '').trim())
    return `a 400 without error_message: ${body.slice(0, 200)}`;
  return null;
}

async function tableCounts(gw: TestGateway): Promise<string> {
  const db = gw.runtime.store.db;
  const tables =
    ENGINE === 'sqlite'
      ? (
          await sql<{
            name: string;
          }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%' ORDER BY name`.execute(db)
        ).rows
      : (
          await sql<{
            name: string;
          }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%' ORDER BY table_name`.execute(
            db,
          )
        ).rows;
  const parts: string[] = [];
  for (const t of tables) {
    const r = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(t.name)}`.execute(db);
    parts.push(`${t.name}=${r.rows[0]?.n}`);
  }
  return parts.join(' ');
}

// ---------- in-process run ----------
async function inProcess(): Promise<void> {
  const gw = await testGateway();
  try {
    const m = gw.merchant;
    const known: KnownPayment[] = [];
    for (let i = 0; i < 20; i++) {
      const body = {
        merchant_id: m.merchant_id,
        account_id: m.account_id,
        order_no: `SEED-${i}`,
        currency: 'USD',
        amount: '10.00',
        card: '4242424242424242',
        expiration_month: '12',
        expiration_year: String(new Date().getUTCFullYear() + 2),
        security_code: '123',
      };
      const res = await gw.post('/v1/authorise', body);
      const tx = /<transaction_id>([^<]+)</.exec(res.body)?.[1];
      if (tx) known.push({ transaction_id: tx, order_no: body.order_no, amount: body.amount });
    }
    let counts = await tableCounts(gw);
    const statuses = new Map<number, number>();
    let n = 0;

    const runCase = async (c: Case): Promise<void> => {
      results.cases++;
      const res = await gw.app.inject({
        method: 'POST',
        url: c.path,
        payload: c.payload,
        headers: { ...(c.contentType ? { 'content-type': c.contentType } : {}), ...c.headers },
        remoteAddress: '127.0.0.1',
      });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode >= 500) throw new Error(`HTTP ${res.statusCode} for ${describeCase(c)}: ${res.body.slice(0, 300)}`);
      const after = await tableCounts(gw);
      if (res.statusCode >= 400) {
        const problem = namesProblem(res.statusCode, res.body);
        if (problem) throw new Error(`${problem} for ${describeCase(c)}`);
        if (after !== counts) throw new Error(`a ${res.statusCode} refusal wrote rows (${counts} → ${after}) for ${describeCase(c)}`);
      }
      counts = after;
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

    for (const t of TARGETS) {
      const before = results.cases;
      const bodyCase = fc.record({
        muts: fc.array(mutation, { maxLength: 3 }),
        format: fc.constantFrom('json', 'json', 'form', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
        signing: fc.constantFrom('valid', 'valid', 'valid', 'none', 'wrong'),
        contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }),
        headers: headerArb,
      });
      for (const [label, prop] of [
        [
          'bodies',
          fc.asyncProperty(bodyCase, async (bc) => {
            const body = mutate(t.base(m, known, n++), bc.muts);
            if (bc.signing === 'valid') body.encryption_data = signOrGarbage(body, m.secret_key);
            else if (bc.signing === 'wrong') body.encryption_data = 'f'.repeat(64);
            let enc: { payload: string; contentType: string };
            try {
              enc = encodeBody(body, bc.format);
            } catch {
              enc = encodeBody(body, 'json'); // a lone surrogate cannot be URL-encoded
            }
            await runCase({
              path: t.path,
              payload: enc.payload,
              contentType: bc.contentType ?? enc.contentType,
              headers: bc.headers as Record<string, string> | undefined,
            });
          }),
          RUNS_PER_TARGET,
        ],
        [
          'raw payloads',
          fc.asyncProperty(fc.constantFrom(...RAW), fc.constantFrom(...CONTENT_TYPES), async (payload, contentType) => {
            await runCase({ path: t.path, payload, contentType });
          }),
          RAW_RUNS_PER_TARGET,
        ],
      ] as const) {
        try {
          await fc.assert(prop as fc.IAsyncProperty<unknown>, {
            numRuns: label === 'bodies' ? RUNS_PER_TARGET : RAW_RUNS_PER_TARGET,
            seed: SEED,
            endOnFailure: true,
          });
          results.passed++;
          log(`ok - ${t.path} ${label}`);
        } catch (e) {
          results.failed++;
          log(`not ok - ${t.path} ${label}: ${(e as Error).message.split('\n').slice(0, 8).join('\n    ')}`);
        }
      }
      log(`    ${results.cases - before} cases`);
    }
    log(`  in-process: ${results.cases} cases, statuses ${[...statuses.entries()].map(([s, k]) => `${s}×${k}`).join(' ')}`);
  } finally {
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
          body.encryption_data = signOrGarbage(body, m.secret_key);
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
          try {
            const r = await fetch(`${gw.url}${path}`, {
              method: 'POST',
              body: payload,
              headers: { 'content-type': 'application/json' },
              signal: AbortSignal.timeout(15_000),
            });
            await r.arrayBuffer();
            if (r.status >= 500) bad.push(`HTTP ${r.status} for ${describeCase({ path, payload, contentType: 'application/json' })}`);
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
log(`fuzz on ${ENGINE}, seed ${SEED} (rerun with --seed ${SEED}), ${TARGETS.length} endpoints`);
await inProcess();
await overSocket();
log(`\n${results.cases} cases in ${Math.round((Date.now() - t0) / 1000)} s`);
log(`${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed > 0 || results.cases < 20_000 ? 1 : 0);
