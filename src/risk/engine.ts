// The rules engine on the authorise hot path. Cost per payment: the account's thresholds
// (one primary-key read, cached for a few seconds), then ONE statement that reads the
// blocklist matches (primary key), velocity for card, e-mail, IP and device (one bounded
// index-only range per signal) and "card seen before" (one indexed probe), and the
// account's amount history (one bounded read, cached per process for a minute). Then one
// multi-row insert of the signals in the payment's write unit.
import { type Kysely, sql } from 'kysely';
import { param, runPrepared } from '../db/prepared.js';
import type { DB } from '../db/schema.js';
import type { WriteUnit } from '../db/unit.js';
import { currencyExponent } from '../money/currency.js';
import { recentAmounts } from '../payments/reader.js';
import { isSharedSuccessCard } from '../processors/sandbox/cards.js';
import { issuingCountry } from './bins.js';
import { isDisposableEmail } from './disposable.js';
import type { RiskContext, RiskEngine } from './index.js';
import { bundledIpCountry, type IpCountryLookup } from './ipcountry.js';
import { normaliseEmail, normaliseIp } from './normalise.js';
import { type RiskFacts, score, type Velocity } from './rules.js';
import { ThresholdCache } from './settings.js';
import type { SignalKind } from './tables.js';

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
/** How long a process trusts its copy of an account's amount history. */
export const HISTORY_CACHE_MS = 60_000;
const HISTORY_SAMPLE = 200;
/**
 * Attempts per signal the velocity rules read. Their count limits are far below it; the 24 h
 * amount is summed over these latest attempts, which keeps a hot card's cost bounded.
 */
export const VELOCITY_SCAN_MAX = 20;
const HISTORY_CACHE_MAX = 10_000;
const SUCCESSFUL = ['authorised', 'captured', 'partially_refunded', 'refunded'] as const;
const SIGNAL_KINDS: readonly SignalKind[] = ['card', 'email', 'ip', 'device'];

export interface Signals {
  card: string;
  email: string | null;
  ip: string | null;
  device: string | null;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

export function signalsOf(ctx: RiskContext): Signals {
  const email = str(ctx.shopper.shopper_email);
  const ip = str(ctx.shopper.shopper_ip);
  return {
    card: ctx.card_fingerprint,
    email: email ? normaliseEmail(email) : null,
    ip: ip ? normaliseIp(ip) : null,
    device: str(ctx.shopper.device_fingerprint),
  };
}

export function createRiskEngine(db: Kysely<DB>, opts: { ipCountry?: IpCountryLookup } = {}): RiskEngine {
  const ipCountry = opts.ipCountry ?? bundledIpCountry;
  const historyCache: HistoryCache = new Map();
  const thresholds = new ThresholdCache(db);
  return {
    async assess(ctx) {
      const s = signalsOf(ctx);
      const [t, found, hist] = await Promise.all([thresholds.get(ctx.account_id), lookups(db, ctx, s), amountHistory(db, historyCache, ctx)]);
      return score(riskFacts(ctx, s, found, hist, ipCountry), t);
    },

    record(unit: WriteUnit, ctx, transaction_id) {
      // docs/contract.md §9: the shared success cards leave no velocity trace on a test account, so a
      // suite's hundreds of 4242… payments never count against the next card its shopper uses.
      if (isSharedSuccessCard(ctx.mode, ctx.pan)) return;
      const rows = signalRows(ctx, transaction_id);
      if (rows.length > 0) unit.insertRows('risk_signals', rows);
    },
  };
}

interface Found {
  velocity: Record<SignalKind, Velocity | null>;
  blocked: string[];
  seen: boolean;
}

/** The facts the rules decide on (src/risk/rules.ts), from the payment, its signals and what the reads found. */
function riskFacts(ctx: RiskContext, s: Signals, found: Found, hist: { count: number; median_minor: number }, ipCountry: IpCountryLookup): RiskFacts {
  const billing = str(ctx.shopper.billing_country);
  return {
    mode: ctx.mode,
    pan: ctx.pan,
    shared_success_card: isSharedSuccessCard(ctx.mode, ctx.pan),
    amount_minor: ctx.amount_minor,
    major_minor: 10 ** (currencyExponent(ctx.currency) ?? 2),
    email: s.email ?? '',
    billing_country: billing ? billing.toUpperCase() : null,
    card_country: issuingCountry(ctx.pan),
    ip_country: s.ip ? ipCountry(s.ip) : null,
    velocity: found.velocity,
    blocked: found.blocked,
    disposable_email: s.email ? isDisposableEmail(s.email) : false,
    card_seen: found.seen,
    history: hist,
    threeds_result: ctx.threeds_result,
  };
}

/** One `risk_signals` row per signal the payment carries. */
function signalRows(ctx: RiskContext, transaction_id: string) {
  return (Object.entries(signalsOf(ctx)) as Array<[SignalKind, string | null]>)
    .filter((p): p is [SignalKind, string] => p[1] !== null)
    .map(([kind, value]) => ({
      transaction_id,
      account_id: ctx.account_id,
      kind,
      value,
      amount_minor: ctx.amount_minor,
      currency: ctx.currency,
      created_at: ctx.now_ms,
    }));
}

/** The blocklist entries a payment may match, as (type, value): its card, its BIN at six and eight digits, its e-mail and IP. */
function blocklistCandidates(ctx: RiskContext, s: Signals): Array<[string, string]> {
  const candidates: Array<[string, string]> = [
    ['card', s.card],
    ['bin', ctx.pan.slice(0, 6)],
    ['bin', ctx.pan.slice(0, 8)],
  ];
  if (s.email) candidates.push(['email', s.email]);
  if (s.ip) candidates.push(['ip', s.ip]);
  return candidates;
}

interface LookupRow {
  src: string;
  created_at: number | string;
  currency: string;
  amount_minor: number | string;
}

/**
 * Velocity, blocklist and "card seen" in ONE statement (issue 6): five separate reads
 * cost five statements per payment (five round trips on PostgreSQL). Each branch of the
 * UNION ALL is the bounded, indexed read it was on its own, tagged by `src`.
 */
async function lookups(db: Kysely<DB>, ctx: RiskContext, s: Signals): Promise<Found> {
  const kinds = SIGNAL_KINDS.filter((k) => s[k] !== null);
  const candidates = blocklistCandidates(ctx, s);
  // Built once per shape (which signals, which blocklist types) and engine; only the
  // values change per payment (src/db/prepared.ts).
  const values: Record<string, unknown> = { account_id: ctx.account_id, since: ctx.now_ms - DAY_MS, fingerprint: ctx.card_fingerprint };
  for (const kind of kinds) values[`v_${kind}`] = s[kind];
  candidates.forEach(([, v], i) => {
    values[`c${i}`] = v;
  });
  const shape = `risk:lookups|${kinds.join(',')}|${candidates.map(([t]) => t).join(',')}`;
  const rows = (await runPrepared<LookupRow>(db, shape, () => lookupsQuery(db, kinds, candidates), values)).rows;
  return foundOf(rows, ctx, kinds);
}

/** The UNION ALL of the blocklist matches, the "card seen" probe and one velocity read per signal kind. */
function lookupsQuery(db: Kysely<DB>, kinds: SignalKind[], candidates: Array<[string, string]>) {
  // One bounded read per signal: the latest VELOCITY_SCAN_MAX attempts in 24 h, index only.
  const velocityOf = (kind: SignalKind) =>
    db
      .selectFrom((q) =>
        q
          .selectFrom('risk_signals')
          .select(['created_at', 'currency', 'amount_minor'])
          .where('account_id', '=', param('account_id'))
          .where('kind', '=', kind)
          .where('value', '=', param(`v_${kind}`))
          .where('created_at', '>=', param('since'))
          .orderBy('created_at', 'desc')
          .limit(VELOCITY_SCAN_MAX)
          .as('v'),
      )
      .select([sql.lit(kind).as('src'), 'created_at', 'currency', 'amount_minor']);
  // Blocklist matches on the primary key: `currency` carries the entry's type.
  const blockedQ = db
    .selectFrom('risk_blocklist')
    .select([sql.lit('block').as('src'), sql.lit(0).as('created_at'), 'type as currency', sql.lit(0).as('amount_minor')])
    .where('account_id', '=', param('account_id'))
    .where((eb) => eb.or(candidates.map(([t], i) => eb.and([eb('type', '=', t as 'card'), eb('value', '=', param(`c${i}`))]))));
  const seenQ = db
    .selectFrom((q) =>
      q.selectFrom('cards').select('card_id').where('account_id', '=', param('account_id')).where('fingerprint', '=', param('fingerprint')).limit(1).as('c'),
    )
    .select([sql.lit('seen').as('src'), sql.lit(0).as('created_at'), sql.lit('').as('currency'), sql.lit(0).as('amount_minor')]);
  let query = blockedQ.unionAll(seenQ as unknown as typeof blockedQ);
  for (const kind of kinds) query = query.unionAll(velocityOf(kind) as unknown as typeof blockedQ);
  return query;
}

/** The lookups' rows, by their `src` tag, as velocity per signal (attempts in the last hour, amount in 24 h in the payment's currency), blocklist types matched and "card seen". */
function foundOf(rows: LookupRow[], ctx: RiskContext, kinds: SignalKind[]): Found {
  const velocity: Record<SignalKind, Velocity | null> = { card: null, email: null, ip: null, device: null };
  for (const kind of kinds) velocity[kind] = { count_1h: 0, amount_24h_minor: 0 };
  const blocked = new Set<string>();
  let seen = false;
  for (const r of rows) {
    if (r.src === 'block') blocked.add(r.currency);
    else if (r.src === 'seen') seen = true;
    else {
      const v = velocity[r.src as SignalKind];
      if (!v) continue;
      if (Number(r.created_at) >= ctx.now_ms - HOUR_MS) v.count_1h++;
      if (r.currency === ctx.currency) v.amount_24h_minor += Number(r.amount_minor);
    }
  }
  return { velocity, blocked: [...blocked], seen };
}

type HistoryCache = Map<string, { at: number; count: number; median_minor: number }>;

/** The account's successful amounts in the payment's currency (the latest HISTORY_SAMPLE): how many, and their median; cached per process. */
async function amountHistory(db: Kysely<DB>, historyCache: HistoryCache, ctx: RiskContext): Promise<{ count: number; median_minor: number }> {
  const key = `${ctx.account_id}|${ctx.currency}`;
  const hit = historyCache.get(key);
  if (hit && ctx.now_ms - hit.at < HISTORY_CACHE_MS && ctx.now_ms >= hit.at) return hit;
  const rows = await recentAmounts(db, ctx.account_id, ctx.currency, SUCCESSFUL, HISTORY_SAMPLE);
  const amounts = rows.map((r) => Number(r.amount_minor)).sort((a, b) => a - b);
  const median_minor = amounts.length ? (amounts[Math.floor(amounts.length / 2)] as number) : 0;
  const entry = { at: ctx.now_ms, count: amounts.length, median_minor };
  if (historyCache.size >= HISTORY_CACHE_MAX) historyCache.clear();
  historyCache.set(key, entry);
  return entry;
}
