// `npm run test:fuzz [-- --runs N] [-- --socket N] [-- --quick]` (issue 6): fast-check throws hostile
// input at every endpoint of TARGETS through the real app (`app.inject`): wrong types,
// missing and extra fields, huge and deeply nested values, invalid UTF-8, malformed
// JSON/XML/form, XML entity bombs, boundary amounts and dates, injection strings, signed
// (so validation is reached) and not. Each case must answer below 500, a refusal must name
// its problem and write nothing (every table's contents hashed around it), an HTML answer
// must carry the pages' Content-Security-Policy, and no answer may echo a card number the
// request carried as card data. The shopper pages (3-D Secure here; the hosted checkout and
// the APM issuer in shopper.ts, issue 10 item 6) get real ids and form tokens mixed with
// hostile ones. A smaller part goes over a real socket to a spawned gateway, which must
// stay up. TOLLGATE_TEST_ENGINE picks the engine (sqlite by default). Bodies are signed
// and encoded with the client library (tollgate/client), and the seed payments go through
// its client, so every fuzz run exercises it too. Subscriptions (docs/contract.md §16; issue 11 item
// 7): POST /v1/cancelsubscription is a target like the others, with real recurring_id and
// contract_name pairs (seeded, harvested from accepted authorise bodies, and another
// merchant's) mixed with near misses; a cancel_status 0 answer must write nothing and another
// merchant's subscription is never cancelled. The `subscription` object of /v1/authorise and
// /v1/checkout gets its own generator (inputs.ts subscriptionArb: wrong types, nested
// objects, out-of-range cycles and counts, impossible dates, amounts of the wrong precision)
// in every body format; an approved payment whose body asked for a subscription must answer
// its recurring_id. Payouts (docs/contract.md §17; issue 12 item 5): POST /v1/payout,
// /v1/cancelpayout and /v1/retrievalPayout get their own generators (payouts.ts) for a funded
// merchant of their own, with another funded merchant's payouts as targets that must never
// be reached; accepted payouts keep available ≥ 0 and the books adding up, and at the end
// every payout job runs and the ledger verifies. The generic interface (docs/contract.md §12, §18;
// issue 13 item 7): every registered generic route (generic.ts: one table of routes, probed)
// gets bodies in form and JSON, queries, path ids (its platform's, another platform's and the
// live mode's, near misses, hostile ones), Authorization and Idempotency-Key variants and raw
// payloads: refusals in the generic error object that write nothing, GETs that never write,
// accepted answers of test mode holding no other platform's ids. `--quick` runs a few hundred
// cases to prove the harness works; only a full run counts toward 20,000.
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { cardFacts } from '../../cards/card.js';
import type { AuthoriseRequest } from '../../client/index.js';
import { openDispute } from '../../disputes/service.js';
import { ENGINE, paymentRequest, type TestGateway, testGateway } from '../harness.js';
import { buildDist, createMerchant, freePort, freshDatabase, gatewayClient, gatewayEnv, startGateway } from '../process.js';
import { fuzzGeneric, type GenericFuzzer, KNOWN_BUGS, seedGeneric } from './generic.js';
import {
  type Case,
  CONTENT_TYPES,
  describeCase,
  encodeLoose,
  hostileValue,
  INJECTIONS,
  type Leaf,
  leavesOf,
  mutate,
  mutation,
  pageIdArb,
  RAW,
  SEPARATED,
  setField,
  signOrGarbage,
  subscriptionArb,
} from './inputs.js';
import { fuzzPayouts, PAYOUT_ROUTES, payoutTargets, seedPayouts, settlePayouts } from './payouts.js';
import { fuzzPortal, seedPortal } from './portal.js';
import { type Answer, type Fuzzer, fuzzShopperPages, observer, SHOPPER_ROUTES, seedShopper, socketPagePaths } from './shopper.js';
import { type FuzzTarget, type KnownPayment, type KnownSubscription, TARGETS, UNREGISTERED } from './targets.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string' }, socket: { type: 'string' }, seed: { type: 'string' }, 'no-build': { type: 'boolean' }, quick: { type: 'boolean' } },
});
const QUICK = args.quick === true;
// Defaults (RUNS_PER_TARGET = 1,000) give each signed endpoint about 1,250 in-process cases
// (1,000 generated bodies, 250 raw payloads) and each 3-D Secure page route 1,250, + 400 over a
// socket (issue 6 asks for at least 20,000 counted cases), and the shopper page routes of the
// hosted checkout and the APM issuer 263 each (issue 10 item 6; fewer each, so that the run
// stays about as long as it was before they came). Subscriptions (issue 11 item 7) add 500
// generated `subscription` objects to /v1/authorise and to /v1/checkout each, and 500 pair
// cases to /v1/cancelsubscription (counted under those endpoints). 1,000 since issue 36 (was
// 1,900): with the generic, portal, dispute and settlement routes the full run had grown to
// 112,755 counted cases and 14–18 minutes per engine in .ci/run; 1,000 keeps every property
// and 59,546 cases (a SQLite run, 392 s alone), three times the 20,000 asked.
const RUNS_PER_TARGET = Number(args.runs ?? (QUICK ? 40 : 1000));
const RAW_RUNS_PER_TARGET = Math.ceil(RUNS_PER_TARGET / 4);
const PAGE_GET_RUNS = RUNS_PER_TARGET + RAW_RUNS_PER_TARGET;
const SHOPPER_RUNS = { forms: Math.ceil(RUNS_PER_TARGET / 5), raw: Math.ceil(RUNS_PER_TARGET / 16) };
const UNREGISTERED_RUNS = Math.ceil(RUNS_PER_TARGET / 16);
/** Generated `subscription` objects sent to /v1/authorise and to /v1/checkout each (besides their bodies and raw payloads). */
const SUBSCRIPTION_RUNS = Math.ceil(RUNS_PER_TARGET / 2);
/** Real subscriptions seeded for the cancel fuzz (this merchant's, another merchant's); harvested ones at most. */
const SUBSCRIPTION_SEEDS = 30;
const FOREIGN_SUBSCRIPTIONS = 4;
const MAX_HARVESTED_SUBSCRIPTIONS = 300;
const SUBSCRIPTION_FIELDS = new Set([
  'contract_name',
  'interval',
  'interval_count',
  'billing_cycle',
  'promotion_cycle',
  'contract_amount',
  'contract_start',
  'contract_end',
  'contract',
  'price_id',
]);
/**
 * Payouts (docs/contract.md §17; issue 12 item 5): generated bodies, replays, cancel and retrieval
 * selectors, and raw payloads at the three paths (payouts.ts), counted under their endpoints.
 */
const PAYOUT_RUNS = {
  bodies: RUNS_PER_TARGET,
  replays: Math.ceil(RUNS_PER_TARGET / 8),
  cancels: Math.ceil(RUNS_PER_TARGET / 2),
  retrievals: Math.ceil(RUNS_PER_TARGET / 2),
  raw: Math.ceil(RUNS_PER_TARGET / 8),
};
/** The generic interface (issue 13 item 7): generated requests per registered route, and raw payloads per POST route (generic.ts). */
const GENERIC_RUNS = { requests: Math.ceil(RUNS_PER_TARGET / 4), raw: Math.ceil(RUNS_PER_TARGET / 16) };
/** Per portal route (issue 14 item 6). */
const PORTAL_RUNS = { requests: Math.ceil(RUNS_PER_TARGET / 8), raw: Math.ceil(RUNS_PER_TARGET / 32) };
const CHALLENGE_SEEDS = 40;
const SOCKET_CASES = Number(args.socket ?? (QUICK ? 40 : 400));
const SEED = args.seed ? Number(args.seed) : Date.now() % 2 ** 31;

const results = { passed: 0, failed: 0, cases: 0 };
const log = (line: string) => process.stdout.write(`${line}\n`);

// ---------- checks ----------
/** Cases per endpoint label ("POST /v1/authorise"): counted ones are registered endpoints. */
const counted = new Map<string, number>();
const uncounted = new Map<string, number>();
/** Answers in Fastify's own error shape (router level, before our error handler). */
const frameworkAnswers = new Map<string, number>();
const bump = <K>(m: Map<K, number>, k: K, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
/** In-process answers per endpoint label and HTTP status: how often the fuzz got past each refusal. */
const statusesOf = new Map<string, Map<number, number>>();

/** "Names a problem": a result code and, for 400, a non-empty description; an HTML page says what happened. */
function namesProblem(status: number, body: string, contentType: string): string | null {
  if (contentType.startsWith('text/html')) {
    const title = /<h1>([^<]+)<\/h1>/.exec(body)?.[1]?.trim();
    const message = /<p id="message">([^<]+)<\/p>/.exec(body)?.[1]?.trim();
    // A form shown again (the payment page's card or method form, the portal's sign-in and
    // its forms) says why in an alert or under the field it refuses.
    const alert = /<p class="error" id="[^"]+"(?: role="alert")?>([^<]+)<\/p>/.exec(body)?.[1]?.trim();
    return title && (message || alert) ? null : `an HTML ${status} page without a title and message: ${body.slice(0, 200)}`;
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

/** Field names that carry card numbers (the gateway's own list for masking, signature-refusal.ts). */
const CARD_FIELD = /card|pan$|^number$/i;

/**
 * Card numbers a request carries as card data: the values of card fields (`card`,
 * `card_number`, any spelling the gateway masks) in a JSON, form or XML body or in the
 * query, that the gateway's own card check (cards/card.ts: brand, length and Luhn) calls
 * valid once spaces and dashes are gone. An order_no or merchant_id that happens to look
 * like a card is the merchant's own identifier, which answers echo by design.
 */
function cardNumbersIn(c: Case): string[] {
  const cards: string[] = [];
  /** Values of other fields: a number also sent as an identifier (order_no, merchant_id) is echoed by design. */
  const others = new Set<string>();
  const add = (key: string, v: string) => {
    if (CARD_FIELD.test(key)) cards.push(v);
    else others.add(v.replace(/[\s-]/g, ''));
  };
  // Iterative: the fuzz nests bodies 20,000 levels deep.
  const walk = (root: unknown): void => {
    const stack: Array<[unknown, string]> = [[root, '']];
    for (let steps = 0; stack.length > 0 && steps < 200_000; steps++) {
      const [v, key] = stack.pop() as [unknown, string];
      if (Array.isArray(v)) for (const x of v) stack.push([x, key]);
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) stack.push([x, k]);
      else if (typeof v === 'string' || typeof v === 'number') add(key, String(v));
    }
  };
  const pairs = (text: string) => {
    for (const [k, v] of new URLSearchParams(text)) add(/([^[\]]+)\]*$/.exec(k)?.[1] ?? k, v);
  };
  const query = c.path.indexOf('?');
  if (query >= 0) pairs(c.path.slice(query + 1));
  const body = typeof c.payload === 'string' ? c.payload : (c.payload?.toString('utf8') ?? '');
  if (body.length > 0 && body.length < 2_000_000) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    if (json !== undefined) walk(json);
    else if (body.trimStart().startsWith('<')) for (const [, k, v] of body.matchAll(/<([A-Za-z_][\w.-]*)>([^<]*)<\/\1>/g)) add(k as string, v as string);
    else pairs(body);
  }
  const pans = cards.map((v) => v.replace(/[\s-]/g, '')).filter((v) => /^\d{12,19}$/.test(v) && !others.has(v) && cardFacts(v).valid);
  return [...new Set(pans)];
}

/**
 * The answer's body or a header (Location above all) holding one of `pans`, whole or in
 * groups of four. The payment page's test-mode note names the sandbox test card on every
 * test account's page, whatever was posted: it is left out.
 */
function echoedCard(pans: string[], a: Answer): string | null {
  if (pans.length === 0) return null;
  const body = a.body.replace(/<p class="note" id="test-mode">[^<]*<\/p>/, '');
  const text = `${Object.values(a.headers).join('\n')}\n${body}`;
  for (const pan of pans) {
    const groups = pan.match(/.{1,4}/g) ?? [];
    for (const form of [pan, groups.join(' '), groups.join('-')]) if (text.includes(form)) return `${pan.slice(0, 6)}…${pan.slice(-4)}`;
  }
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
  /** Time spent hashing (the price of the no-write check; it grows with the tables). */
  hash_ms: number;
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
      hash_ms: 0,
      async take() {
        const out = new Map<string, string>();
        // One read transaction: the version and all tables from the same snapshot.
        raw.exec('BEGIN');
        try {
          const v = version.get();
          if (last && last.version === v) return last.sums;
          sum.recomputed++;
          last = { version: v, sums: out };
          const t0 = Date.now();
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
          sum.hash_ms += Date.now() - t0;
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
    hash_ms: 0,
    async take() {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      try {
        // Next transaction id of the cluster: unchanged means no transaction wrote anything.
        const v = (await c.query<{ v: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS v')).rows[0]?.v ?? '';
        if (last && last.version === v) return last.sums;
        sum.recomputed++;
        const t0 = Date.now();
        const r = await c.query<{ name: string; h: string }>(query);
        sum.hash_ms += Date.now() - t0;
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

/** Whether a form or XML encoding of `v` holds any value: a number, a boolean or a non-empty string somewhere in it. */
function carriesValue(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (typeof v === 'number' || typeof v === 'boolean') return true;
  if (typeof v === 'string') return v.trim().length > 0;
  if (v !== null && typeof v === 'object') return Object.values(v).some((x) => carriesValue(x, depth + 1));
  return false;
}

/** Guard: the card-echo check must see a card in each encoding and place (else "no echo" proves nothing). */
function guardCardEcho(): void {
  const pan = '4242424242424242';
  const probes: Array<[string, Case, string]> = [
    ['form', { method: 'POST', path: '/pay/x', payload: 'form_token=t&card_number=4242+4242+4242+4242', contentType: '' }, `value="${pan}"`],
    ['JSON', { method: 'POST', path: '/v1/authorise', payload: `{"card":"${pan}"}`, contentType: '' }, `<card>${pan}</card>`],
    ['XML', { method: 'POST', path: '/v1/authorise', payload: `<request><card>${pan}</card></request>`, contentType: '' }, '4242-4242-4242-4242'],
    ['query', { method: 'GET', path: `/pay/x?card_number=${pan}`, contentType: '' }, `Location: ${pan}`],
  ];
  for (const [where, c, answer] of probes)
    if (!echoedCard(cardNumbersIn(c), { statusCode: 400, headers: {}, body: answer })) throw new Error(`the card-echo check misses a card sent in ${where}`);
  const hint = `<p class="note" id="test-mode">Pay with a test card such as 4242 4242 4242 4242.</p>`;
  if (echoedCard([pan], { statusCode: 200, headers: {}, body: hint })) throw new Error('the card-echo check flags the test-mode note');
  if (cardNumbersIn({ method: 'POST', path: '/v1/authorise', payload: `{"order_no":"${pan}"}`, contentType: '' }).length)
    throw new Error('the card-echo check takes an order_no for card data');
}

// ---------- in-process run ----------
interface Challenge {
  id: string;
  form_token: string;
}

const CHALLENGE_CARD = '4000000000003220';

async function inProcess(): Promise<void> {
  // The generic interface's per-key rate limit would refuse most fuzz cases (it has its own tests: src/generic/conventions.test.ts).
  const gw = await testGateway({ settings: { public_url: 'http://tollgate.test', api_rate_limit: 1_000_000 } });
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
    // A dispute on each seed payment (docs/contract.md §22; every fourth an inquiry), opened by the core as the sandbox
    // would, so the dispute targets reach evidence handling and acceptance behind the lookup (targets.ts disputeId).
    for (const [i, p] of known.entries()) {
      const payment = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', p.transaction_id).executeTakeFirstOrThrow();
      const kind = i % 4 === 3 ? 'inquiry' : 'chargeback';
      const { dispute } = await openDispute(
        gw.runtime.deps,
        { connector: 'sandbox', processor_ref: `fuzz-seed-${p.transaction_id}`, payment, kind, reason: 'fraudulent' },
        gw.clock.now,
      );
      p.dispute_id = dispute.dispute_id;
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

    // Subscriptions for the cancel fuzz (docs/contract.md §16): this merchant's, and another
    // merchant's (their pairs signed with this merchant's key must never cancel them).
    const subs: KnownSubscription[] = [];
    const subscribe = async (c: typeof client, i: number, foreign: boolean) => {
      const contract_name = `${foreign ? 'other' : 'seed'}-plan-${i}`;
      const x = await c.authorise(
        seedPayment(`SEED-SUB-${foreign ? 'F' : ''}${i}`, {
          subscription: { contract_name, interval: (['day', 'week', 'month', 'year'] as const)[i % 4], billing_cycle: 12 },
        }),
      );
      if (!x.recurring_id) throw new Error(`seeding a subscription failed: ${x.result_info}`);
      subs.push({ recurring_id: x.recurring_id, contract_name, foreign });
    };
    for (let i = 0; i < SUBSCRIPTION_SEEDS; i++) await subscribe(client, i, false);
    const other = await gw.newMerchant({ name: 'fuzz-other' });
    for (let i = 0; i < FOREIGN_SUBSCRIPTIONS; i++) await subscribe(gw.client(other), i, true);
    const foreignIds = new Set(subs.filter((x) => x.foreign).map((x) => x.recurring_id));
    let harvestedSubs = 0;

    // Sessions and APM issuer pages for the shopper page routes (docs/contract.md §14, §15).
    const pool = await seedShopper(gw, m);
    // Payouts: a funded merchant of their own (the card payments and refunds of the run
    // never move its balance) and another funded merchant whose payouts it must never reach.
    const payoutPool = await seedPayouts(gw);
    // The generic interface: a platform with connected accounts (and transfers, payments and
    // refunds, where those routes are registered), another platform and a live one (generic.ts).
    const genericSeed = await seedGeneric(gw);
    // The merchant portal (issue 14 item 6): its merchant, a signed-in user per role, another merchant (portal.ts).
    const portalSeed = await seedPortal(gw);
    log(
      `  generic interface: ${genericSeed.routes.length} registered routes fuzzed${genericSeed.missing.length ? `; not registered (left out): ${genericSeed.missing.join(', ')}` : ''}`,
    );
    log(
      `  seeded ${pool.sessions.length} checkout sessions, ${pool.issuer.length} APM issuer pages, ${subs.length} subscriptions (${FOREIGN_SUBSCRIPTIONS} of another merchant) and ${payoutPool.own.length + payoutPool.foreign.length} payouts (${payoutPool.foreign.length} of another merchant)`,
    );

    check = await openChecksum(gw);
    const sums = check;
    let state = await sums.take();
    guardCardEcho();
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

    const inject = async (c: Case): Promise<Answer> => {
      const res = await gw.app.inject({
        method: c.method,
        url: c.path,
        ...(c.payload === undefined ? {} : { payload: c.payload }),
        headers: { ...(c.contentType ? { 'content-type': c.contentType } : {}), ...c.headers },
        remoteAddress: '127.0.0.1',
      });
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    };
    let observe: ((c: Case, a: Answer) => Promise<void>) | null = null;
    let htmlAnswers = 0;
    /** Tables the last case changed (payouts.ts checks answers that must write nothing). */
    let lastChanged: string[] = [];

    /** `mayWrite`: a refusal that may write (a generic card decline, HTTP 402, stores the declined payment). */
    const runCase = async (label: string, isCounted: boolean, c: Case, mayWrite?: (a: Answer) => boolean): Promise<Answer> => {
      results.cases++;
      bump(isCounted ? counted : uncounted, label);
      const res = await inject(c);
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      if (!statusesOf.has(label)) statusesOf.set(label, new Map());
      bump(statusesOf.get(label) as Map<number, number>, res.statusCode);
      if (res.statusCode >= 500) throw new Error(`HTTP ${res.statusCode} for ${describeCase(c)}: ${res.body.slice(0, 300)}`);
      // Every page carries the shared layer's policy (nonce scripts, frame-ancestors), refusals too.
      if (String(res.headers['content-type'] ?? '').startsWith('text/html')) {
        htmlAnswers++;
        const csp = String(res.headers['content-security-policy'] ?? '');
        if (!csp.includes("default-src 'none'") || !csp.includes('frame-ancestors'))
          throw new Error(`an HTML ${res.statusCode} answer without its Content-Security-Policy for ${describeCase(c)}`);
      }
      const echoed = echoedCard(cardNumbersIn(c), res);
      if (echoed) throw new Error(`a ${res.statusCode} answer echoes the card number ${echoed} the request carried, for ${describeCase(c)}`);
      // Before this case = after the previous one (nothing else writes: no worker, a fixed clock).
      const after = await sums.take();
      lastChanged = changedTables(state, after);
      if (res.statusCode >= 400) {
        refused++;
        const problem = namesProblem(res.statusCode, res.body, String(res.headers['content-type'] ?? ''));
        if (problem) throw new Error(`${problem} for ${describeCase(c)}`);
        const changed = lastChanged;
        if (changed.length && !mayWrite?.(res))
          throw new Error(`a ${res.statusCode} refusal changed table contents (${changed.join('; ')}) for ${describeCase(c)}`);
      } else if (label === 'POST /v1/cancelsubscription') {
        const problem = cancelProblem(c, res, changedTables(state, after));
        if (problem) throw new Error(`${problem} for ${describeCase(c)}`);
      }
      state = after;
      if (observe) await observe(c, res);
      return res;
    };

    /** A read the run makes for itself (a new session's page, for its token): never a write. */
    const quiet = async (c: Case): Promise<Answer> => {
      const res = await inject(c);
      const after = await sums.take();
      const changed = changedTables(state, after);
      if (res.statusCode >= 500 || changed.length)
        throw new Error(`reading ${describeCase(c)} answered ${res.statusCode} and changed ${changed.join('; ') || 'nothing'}`);
      return res;
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

    /** cancel_status 0 (not found) writes nothing (unless an Idempotency-Key stored the answer); another merchant's pair never cancels. */
    const cancelProblem = (c: Case, res: Answer, changed: string[]): string | null => {
      let a: Record<string, unknown>;
      try {
        a = JSON.parse(res.body) as Record<string, unknown>;
      } catch {
        return `a ${res.statusCode} cancel answer that is not JSON: ${res.body.slice(0, 200)}`;
      }
      if (a.cancel_status === '1') {
        cancelStatus.cancelled++;
        if (foreignIds.has(String(a.recurring_id))) return `another merchant's subscription ${String(a.recurring_id)} answered cancel_status 1`;
        return null;
      }
      if (a.cancel_status !== '0' || a.error_message !== '0404:Record not found')
        return `cancel answered ${res.statusCode} with cancel_status ${String(a.cancel_status)}, ${String(a.error_message)}`;
      cancelStatus.notFound++;
      if (c.headers?.['idempotency-key'] !== undefined) return null;
      return changed.length ? `a cancel_status 0 answer changed table contents (${changed.join('; ')})` : null;
    };
    const cancelStatus = { cancelled: 0, notFound: 0 };

    /** Subscriptions that accepted authorise bodies created join the cancel fuzz's pairs. */
    const harvest = (c: Case, a: Answer) => {
      if (c.path !== '/v1/authorise' || a.statusCode !== 200 || harvestedSubs >= MAX_HARVESTED_SUBSCRIPTIONS) return;
      const pick = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(a.body)?.[1] ?? new RegExp(`"${name}":"([^"]*)"`).exec(a.body)?.[1] ?? '';
      const recurring_id = pick('recurring_id');
      const contract_name = pick('contract_name');
      if (!recurring_id || subs.some((x) => x.recurring_id === recurring_id)) return;
      // The XML answer escapes the five predefined entities (&apos; too: a harvested "' OR '1'='1" was taken literally).
      const text = contract_name.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e] as string);
      subs.push({ recurring_id, contract_name: text });
      harvestedSubs++;
    };

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
          const body = mutate(t.base(m, known, n++, subs), bc.muts);
          if (bc.signing === 'valid') body.encryption_data = signOrGarbage(body, m.secret_key, bc.format);
          else if (bc.signing === 'wrong') body.encryption_data = 'f'.repeat(64);
          const enc = encodeLoose(body, bc.format);
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
      if (isCounted) await separators(t, label, Math.max(20, Math.ceil(bodyRuns / 4)));
      if (isCounted && (t.path === '/v1/authorise' || t.path === '/v1/checkout')) await subscriptionObjects(t, label);
      if (isCounted && t.path === '/v1/cancelsubscription') await cancelPairs(label);
    };

    /**
     * The canonical string's separators in every signed field (docs/contract.md §2 as amended, issue
     * 29): each field of a well-formed body in turn holds `%`, `&` or `=` and is signed: never a
     * 5xx, and a refusal names its field. Then the review's forgery: a field folded into its
     * neighbour in the canonical order (`a=1`, `b=2` → `a="1&b=2"`) under the original
     * signature is refused 401 and writes nothing, in every body format.
     */
    const sepTally = { signed: 0, folded: 0 };
    const separators = async (t: FuzzTarget, label: string, runs: number): Promise<void> => {
      const sepCase = fc.record({
        pick: fc.nat(),
        value: fc.constantFrom(...SEPARATED),
        at: fc.constantFrom('end', 'start', 'whole'),
        format: fc.constantFrom('json', 'form', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
      });
      await property(
        label,
        'separators',
        fc.asyncProperty(sepCase, async (sc) => {
          const body = t.base(m, known, n++, subs);
          const leaves = leavesOf(body);
          if (leaves.length === 0) return;
          // Every field in turn: the pick walks the leaves, so each is reached over the runs.
          const leaf = leaves[sc.pick % leaves.length] as Leaf;
          const holder = leaf.holder as Record<string | number, unknown>;
          const was = String(holder[leaf.key]);
          holder[leaf.key] = sc.at === 'whole' ? sc.value : sc.at === 'start' ? `${sc.value}${was}` : `${was}${sc.value}`;
          body.encryption_data = signOrGarbage(body, m.secret_key, sc.format);
          const enc = encodeLoose(body, sc.format);
          await runCase(label, true, { method: 'POST', path: t.path, payload: enc.payload, contentType: enc.contentType });
          sepTally.signed++;
        }),
        runs,
      );
      await property(
        label,
        'folded fields',
        fc.asyncProperty(sepCase, async (sc) => {
          const body = t.base(m, known, n++, subs);
          // A fold removes the second field: it must be an object member, not an array element.
          const leaves = leavesOf(body);
          const folds = leaves.map((_leaf, i) => i).filter((i) => i + 1 < leaves.length && !Array.isArray((leaves[i + 1] as Leaf).holder));
          if (folds.length === 0) return;
          const i = folds[sc.pick % folds.length] as number;
          const [first, second] = [leaves[i] as Leaf, leaves[i + 1] as Leaf];
          body.encryption_data = signOrGarbage(body, m.secret_key, sc.format);
          const h1 = first.holder as Record<string | number, unknown>;
          const h2 = second.holder as Record<string, unknown>;
          h1[first.key] = `${h1[first.key]}&${second.path}=${h2[second.key]}`;
          delete h2[second.key];
          const enc = encodeLoose(body, sc.format);
          const c: Case = { method: 'POST', path: t.path, payload: enc.payload, contentType: enc.contentType };
          const res = await runCase(label, true, c);
          // merchant_id and account_id are read (digits only) before the signature: a fold into or out of one is a 400.
          const expected = [first.path, second.path].some((p) => p === 'merchant_id' || p === 'account_id') ? 400 : 401;
          if (res.statusCode !== expected)
            throw new Error(`a body with ${second.path} folded into ${first.path} answered ${res.statusCode}, not ${expected}, for ${describeCase(c)}`);
          sepTally.folded++;
        }),
        runs,
      );
      log(
        `  ${label} separators: ${sepTally.signed} signed bodies with % & = in a field so far, ${sepTally.folded} folded forgeries refused (401, or 400 for the ids)`,
      );
    };

    /**
     * Cancels with signed, well-formed bodies in every format whose pair is real (this
     * merchant's: cancel_status 1, now or already), another merchant's real pair, a near miss
     * of a real one, or hostile values in either field: never 1 for those (0, or a 400).
     */
    const pairTally = { cases: 0, own: 0, ownCancelled: 0, others: 0, othersRefused: 0 };
    const oddIds = ['', `rec_${'A'.repeat(24)}`, 'x'.repeat(64), 'x'.repeat(65), '%', '_', 'rec_%', '\u0000', "' OR '1'='1", ' rec_x', 'REC_', '１'];
    const oddNames = ['', 'x'.repeat(128), 'x'.repeat(129), '%', '_', '\u0000', "' OR '1'='1", '   ', 'é'.repeat(128), 'gold\ngold'];
    const cancelPairs = async (label: string): Promise<void> => {
      const pairCase = fc.record({
        pick: fc.nat(),
        kind: fc.constantFrom('own', 'own', 'own', 'swapped', 'foreign', 'near-id', 'near-name', 'hostile-id', 'hostile-name'),
        hostile: fc.oneof({ weight: 2, arbitrary: fc.constantFrom<unknown>(...oddIds, ...oddNames) }, { weight: 1, arbitrary: hostileValue }),
        format: fc.constantFrom('json', 'form', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
        headers: fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerArb }),
      });
      await property(
        label,
        'pairs',
        fc.asyncProperty(pairCase, async (pc) => {
          const own = subs.filter((x) => !x.foreign);
          const foreign = subs.filter((x) => x.foreign);
          const a = own[pc.pick % own.length] as KnownSubscription;
          const b = own[(pc.pick + 1 + (pc.pick % 7)) % own.length] as KnownSubscription;
          const f = foreign[pc.pick % foreign.length] as KnownSubscription;
          const pair: { recurring_id: unknown; contract_name: unknown } = { recurring_id: a.recurring_id, contract_name: a.contract_name };
          if (pc.kind === 'swapped') pair.contract_name = b.contract_name;
          else if (pc.kind === 'foreign') Object.assign(pair, { recurring_id: f.recurring_id, contract_name: f.contract_name });
          else if (pc.kind === 'near-id')
            pair.recurring_id = [a.recurring_id.slice(0, -1), `${a.recurring_id}A`, a.recurring_id.toUpperCase(), ` ${a.recurring_id}`][pc.pick % 4];
          else if (pc.kind === 'near-name')
            pair.contract_name = [`${a.contract_name} `, a.contract_name.toUpperCase(), a.contract_name.slice(1), `${a.contract_name}\u0000`][pc.pick % 4];
          else if (pc.kind === 'hostile-id') pair.recurring_id = pc.hostile;
          else if (pc.kind === 'hostile-name') pair.contract_name = pc.hostile;
          const body: Record<string, unknown> = { merchant_id: m.merchant_id, account_id: m.account_id, ...pair };
          body.encryption_data = signOrGarbage(body, m.secret_key, pc.format);
          const enc = encodeLoose(body, pc.format);
          const c: Case = {
            method: 'POST',
            path: '/v1/cancelsubscription',
            payload: enc.payload,
            contentType: enc.contentType,
            headers: pc.headers as Record<string, string> | undefined,
          };
          const res = await runCase(label, true, c);
          pairTally.cases++;
          // A hostile header may refuse the request before the pair is read.
          if (pc.headers !== undefined) return;
          const status = res.statusCode === 200 ? String((JSON.parse(res.body) as Record<string, unknown>).cancel_status) : `HTTP ${res.statusCode}`;
          const real = own.some((x) => x.recurring_id === pair.recurring_id && x.contract_name === pair.contract_name);
          if (real) {
            pairTally.own++;
            if (status !== '1') throw new Error(`a real pair of this merchant answered ${status}, for ${describeCase(c)}`);
            pairTally.ownCancelled++;
          } else {
            pairTally.others++;
            if (status === '1') throw new Error(`a pair that is not this merchant's (${pc.kind}) answered cancel_status 1, for ${describeCase(c)}`);
            pairTally.othersRefused++;
          }
        }),
        Math.ceil(RUNS_PER_TARGET / 2),
      );
      log(
        `  ${label} pairs: ${pairTally.cases} cases; ${pairTally.own} real pairs of this merchant answered cancel_status 1, ${pairTally.others} other pairs (another merchant's, swapped, near misses, hostile) answered 0 or 400`,
      );
    };

    /** Per endpoint: generated subscription objects, their answers by status, and approvals. */
    const subscriptionCases = new Map<
      string,
      { cases: number; statuses: Map<number, number>; approved: number; created: number; refusedBy: Map<string, number> }
    >();
    const subscriptionObjects = async (t: FuzzTarget, label: string): Promise<void> => {
      const tally = { cases: 0, statuses: new Map<number, number>(), approved: 0, created: 0, refusedBy: new Map<string, number>() };
      subscriptionCases.set(label, tally);
      const subCase = fc.record({
        sub: subscriptionArb(gw.clock.now, t.path === '/v1/checkout' ? 'fzc' : 'fzs'),
        format: fc.constantFrom('json', 'json', 'form', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>,
        signing: fc.constantFrom('valid', 'valid', 'valid', 'valid', 'none'),
        contentType: fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined, freq: 8 }),
        // The card whose later merchant-initiated charges decline: the first payment still succeeds.
        card: fc.constantFrom('4242424242424242', '4242424242424242', '4000000000000341'),
        // Rarely: hostile headers (most cases are about the object, so most must get past them).
        headers: fc.oneof({ weight: 7, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerArb }),
      });
      await property(
        label,
        'subscription objects',
        fc.asyncProperty(subCase, async (sc) => {
          const body = t.base(m, known, n++, subs);
          if (body.card !== undefined) body.card = sc.card;
          setField(body, 'subscription', sc.sub);
          if (sc.signing === 'valid') body.encryption_data = signOrGarbage(body, m.secret_key, sc.format);
          const enc = encodeLoose(body, sc.format);
          const res = await runCase(label, true, {
            method: 'POST',
            path: t.path,
            payload: enc.payload,
            contentType: sc.contentType ?? enc.contentType,
            headers: sc.headers as Record<string, string> | undefined,
          });
          tally.cases++;
          bump(tally.statuses, res.statusCode);
          if (res.statusCode === 400) {
            const message = /<error_message>([^<]*)<\/error_message>/.exec(res.body)?.[1] ?? /"error_message":"([^"]*)"/.exec(res.body)?.[1] ?? '';
            const field = /^subscription\.(\w+)/.exec(message)?.[1] ?? '';
            bump(
              tally.refusedBy,
              SUBSCRIPTION_FIELDS.has(field)
                ? `subscription.${field}`
                : message.startsWith('subscription')
                  ? 'subscription (shape, unknown keys)'
                  : 'elsewhere (encoding, headers)',
            );
          }
          if (t.path !== '/v1/authorise' || res.statusCode !== 200) return;
          const info = /<result_info>([^<]*)<\/result_info>/.exec(res.body)?.[1] ?? '';
          const recurring_id = /<recurring_id>([^<]*)<\/recurring_id>/.exec(res.body)?.[1] ?? '';
          if (info === '0000:Success') tally.approved++;
          if (recurring_id) tally.created++;
          // A subscription the body carried, then charged: never silently without its subscription.
          // (An empty string, null, {} and [] are absent in every format, docs/contract.md §2 amended:
          // only an object with a value in it asks for a subscription.)
          const asked = sc.sub !== null && typeof sc.sub === 'object' && !Array.isArray(sc.sub) && carriesValue(sc.sub);
          if (asked && info === '0000:Success' && !recurring_id)
            throw new Error(
              `an approved payment whose body asked for a subscription answered no recurring_id, for ${describeCase({ method: 'POST', path: t.path, payload: enc.payload, contentType: sc.contentType ?? enc.contentType })}: ${res.body.slice(0, 400)}`,
            );
        }),
        SUBSCRIPTION_RUNS,
      );
    };

    // Payouts (docs/contract.md §17): generated bodies in every format, replays, cancels and retrievals
    // naming this merchant's and another's payouts, raw payloads (payouts.ts). First, while the
    // tables are small: an accepted payout makes the no-write check hash every table again.
    {
      const t0 = Date.now();
      const before = results.cases;
      await fuzzPayouts(
        { run: (label, c) => runCase(label, true, c), changed: () => lastChanged, property, headers: headerArb as Fuzzer['headers'] },
        gw,
        payoutPool,
        PAYOUT_RUNS,
        log,
        () => results.cases,
      );
      // Their signed fields hold the canonical string's separators too (issue 29).
      for (const t of payoutTargets()) await separators(t, `POST ${t.path}`, Math.max(20, Math.ceil(RUNS_PER_TARGET / 4)));
      log(`  payouts: ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    // The generic interface (issue 13 item 7), while the tables are still small.
    {
      const t0 = Date.now();
      const before = results.cases;
      // generic.ts's cases add DELETE to Case's methods; the runner passes the method through to inject and describeCase.
      const genericFuzzer: GenericFuzzer = {
        run: (label, c, mayWrite) => runCase(label, true, c as unknown as Case, mayWrite),
        changed: () => lastChanged,
        property,
      };
      const { problems, tally } = await fuzzGeneric(genericFuzzer, gw, genericSeed, GENERIC_RUNS, log, () => results.cases);
      for (const [label, st] of tally.statuses)
        log(
          `  ${label}: ${[...st.entries()]
            .sort((a, b) => a[0] - b[0])
            .map(([k, v]) => `${k}×${v}`)
            .join(' ')}`,
        );
      const created = [...tally.created.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
      log(
        `  generic: ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s; ${tally.unauthorised} invalid keys answered 401, ${tally.foreignRefused} requests naming another platform's or mode's object refused, ${tally.getsWithoutWrites} GETs wrote nothing, ${tally.leftInterface} paths resolved outside the interface; created ${created || 'nothing'}`,
      );
      if (tally.routerShape.size && KNOWN_BUGS.routerShape)
        log(
          `  KNOWN BUG (routerShape, see KNOWN_BUGS in generic.ts; tallied, not failed): ${[...tally.routerShape.entries()].map(([k, v]) => `${k}×${v}`).join(', ')}`,
        );
      if (problems.length === 0) results.passed++;
      else results.failed++;
      log(
        `${problems.length === 0 ? 'ok' : 'not ok'} - generic interface after the fuzz: other platforms' and the live mode's objects unchanged, no connected account's balance below zero, ledger verified${problems.length ? `: ${problems.slice(0, 5).join('; ')}` : ''}`,
      );
    }

    // The merchant portal (issue 14 item 6): every registered portal route, by role and signed out.
    {
      const t0 = Date.now();
      const before = results.cases;
      const portalFuzzer: GenericFuzzer = {
        run: (label, c, mayWrite) => runCase(label, true, c as unknown as Case, mayWrite),
        changed: () => lastChanged,
        property,
      };
      const t = await fuzzPortal(portalFuzzer, portalSeed, PORTAL_RUNS.requests, PORTAL_RUNS.raw);
      log(
        `  portal: ${t.routes} routes, ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s; statuses ${[...t.statuses.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([k, v]) => `${k}×${v}`)
          .join(
            ' ',
          )}; ${t.csrfRefused} POSTs without the CSRF token refused, ${t.roleRefused} refused for the role, ${t.foreignRefused} naming another merchant's id refused`,
      );
    }

    // Sessions the fuzzed POST /v1/checkout opens join the shopper pages' pool; subscriptions
    // the fuzzed POST /v1/authorise creates join the cancel fuzz's pairs.
    const shopperObserve = observer(pool, { quiet });
    observe = async (c, a) => {
      harvest(c, a);
      await shopperObserve(c, a);
    };
    for (const t of TARGETS) {
      const before = results.cases;
      const t0 = Date.now();
      await acquiring(t, true, RUNS_PER_TARGET, RAW_RUNS_PER_TARGET);
      log(`    ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    // Subscriptions (docs/contract.md §16): what the generated objects reached, and the state the cancels left.
    for (const [label, x] of subscriptionCases)
      log(
        `  ${label} subscription objects: ${x.cases} cases, ${[...x.statuses.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([st, k]) => `${st}×${k}`)
          .join(' ')}${label.endsWith('authorise') ? `; ${x.approved} approved, ${x.created} created a subscription` : ''}; 400s name ${[
          ...x.refusedBy.entries(),
        ]
          .sort((a, b) => b[1] - a[1])
          .map(([f, k]) => `${f}×${k}`)
          .join(', ')}`,
      );
    {
      const db = gw.runtime.store.db;
      const rows = await db.selectFrom('subscriptions').select(['recurring_id', 'account_id', 'status', 'first_transaction_id']).execute();
      const cancelledEvents = await db.selectFrom('events').select('object_id').where('event_type', '=', 'subscription.cancelled').execute();
      const perFirst = new Map<string, number>();
      for (const e of cancelledEvents) perFirst.set(e.object_id, (perFirst.get(e.object_id) ?? 0) + 1);
      const foreignTouched = rows.filter((r) => foreignIds.has(r.recurring_id) && r.status !== 'Active').map((r) => `${r.recurring_id} ${r.status}`);
      const eventsOff = rows
        .filter((r) => (perFirst.get(r.first_transaction_id) ?? 0) !== (r.status === 'Inactived' ? 1 : 0))
        .map((r) => `${r.recurring_id} ${r.status} with ${perFirst.get(r.first_transaction_id) ?? 0} subscription.cancelled`);
      const ok = foreignTouched.length === 0 && eventsOff.length === 0;
      if (ok) results.passed++;
      else results.failed++;
      const inactive = rows.filter((r) => r.status === 'Inactived').length;
      log(
        `${ok ? 'ok' : 'not ok'} - subscriptions after the cancel fuzz: ${rows.length} in all (${harvestedSubs} harvested from fuzzed authorise answers), ${inactive} Inactived each with one subscription.cancelled, another merchant's ${FOREIGN_SUBSCRIPTIONS} still Active; cancel answers: ${cancelStatus.cancelled} cancel_status 1, ${cancelStatus.notFound} cancel_status 0 (each wrote nothing)${ok ? '' : `: ${[...foreignTouched, ...eventsOff].slice(0, 5).join('; ')}`}`,
      );
    }

    // The shopper-facing 3-D Secure page (docs/contract.md §10): hostile ids and form posts.
    const idArb = pageIdArb(
      fc.nat().map((i) => (challenges[i % challenges.length] as Challenge).id),
      32,
      'outcome=complete&form_token=x',
    );
    {
      const label = 'GET /threeds/:id';
      const before = results.cases;
      const t0 = Date.now();
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
      log(`    ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    {
      const label = 'POST /threeds/:id';
      const before = results.cases;
      const t0 = Date.now();
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
          for (const x of fcase.extras) setField(body, x.name, x.value);
          const enc = encodeLoose(body, fcase.format);
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
      log(`    ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    // The hosted checkout's and the APM issuer's shopper pages (docs/contract.md §14, §15).
    const fuzzer: Fuzzer = { run: (label, c) => runCase(label, true, c), quiet, property, headers: headerArb as Fuzzer['headers'] };
    await fuzzShopperPages(fuzzer, pool, SHOPPER_RUNS, log, () => results.cases);
    log(`  every HTML answer (${htmlAnswers}) carried the Content-Security-Policy; no answer echoed a card number its request carried`);

    // Spec paths this build does not register: only the 404 handler answers. Reported, not counted.
    for (const t of UNREGISTERED) {
      const before = results.cases;
      const t0 = Date.now();
      await acquiring(t, false, UNREGISTERED_RUNS, Math.ceil(UNREGISTERED_RUNS / 4));
      log(`    ${results.cases - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s (unregistered path: not counted)`);
    }
    // The end of the payout fuzz: nothing of the other merchant touched, then every payout job
    // run (a year ahead): all final, nothing reserved, the balances add up, the ledger verifies.
    {
      const t0 = Date.now();
      const { problems, summary } = await settlePayouts(gw, payoutPool);
      if (problems.length === 0) results.passed++;
      else results.failed++;
      log(
        `${problems.length === 0 ? 'ok' : 'not ok'} - payouts after the fuzz: ${summary} (${((Date.now() - t0) / 1000).toFixed(1)} s)${problems.length ? `: ${problems.slice(0, 5).join('; ')}` : ''}`,
      );
    }
    log(
      `  in-process: ${results.cases} cases (${refused} refused, each with every table's checksum unchanged; all tables hashed ${sums.recomputed} times, ${(sums.hash_ms / 1000).toFixed(1)} s), statuses ${[
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
    // The signed endpoints with JSON bodies, and the shopper page forms (real ids) with form bodies.
    const routes: Array<{ label: string; path: string; contentType: string }> = [
      ...[...TARGETS, ...payoutTargets()].map((t) => ({ label: `POST ${t.path}`, path: t.path, contentType: 'application/json' })),
      ...(await socketPagePaths(gw.url, gatewayClient(gw.url, m))).map(([label, path]) => ({
        label,
        path,
        contentType: 'application/x-www-form-urlencoded',
      })),
    ];
    const payloads = fc.sample(
      fc.oneof(
        fc.constantFrom(...RAW),
        fc.tuple(fc.constantFrom(...TARGETS, ...payoutTargets()), fc.array(mutation, { maxLength: 3 })).map(([t, muts]) => {
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
          const { label, path, contentType } = routes[i++ % routes.length] as (typeof routes)[number];
          bump(counted, label);
          try {
            const r = await fetch(`${gw.url}${path}`, {
              method: 'POST',
              body: payload,
              headers: { 'content-type': contentType },
              redirect: 'manual',
              signal: AbortSignal.timeout(15_000),
            });
            await r.arrayBuffer();
            if (r.status >= 500) bad.push(`HTTP ${r.status} for ${describeCase({ method: 'POST', path, payload, contentType })}`);
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
  `fuzz on ${ENGINE}, seed ${SEED} (rerun with --seed ${SEED}), ${TARGETS.length + 2 + SHOPPER_ROUTES.length + PAYOUT_ROUTES.length} registered endpoints (+${UNREGISTERED.length} unregistered paths, not counted)`,
);
await inProcess();
await overSocket();
const countedTotal = [...counted.values()].reduce((a, b) => a + b, 0);
const uncountedTotal = [...uncounted.values()].reduce((a, b) => a + b, 0);
log('\ncases per registered endpoint (counted; in-process answers by HTTP status):');
const byStatus = (k: string) =>
  [...(statusesOf.get(k) ?? new Map<number, number>()).entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([st, x]) => `${st}×${x}`)
    .join(' ');
for (const [k, v] of [...counted.entries()].sort()) log(`  ${k.padEnd(28)} ${String(v).padStart(6)}  ${byStatus(k)}`);
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
