// THE rule table of the risk engine (docs/contract.md §10). Each rule is one row: a name (shown
// in `risk_reasons` and `fraud_check_result`), a weight added to `risk_score` when it
// fires, a sentence for humans, and a pure `evaluate` over facts the engine gathered
// beforehand (no I/O here, so every rule is a table test). To add a rule: add a fact in
// engine.ts if it needs a new one, add a row here, add a row to rules.test.ts.
import { sandboxRiskVerdict } from '../processors/sandbox/cards.js';
import type { SignalKind } from './tables.js';

export type RiskStatus = 'ACCEPT' | 'REVIEW' | 'REJECT';

export interface Velocity {
  /** Earlier attempts with this signal in the last hour (this one not counted). */
  count_1h: number;
  /** Earlier amounts with this signal in the last 24 h, same currency, minor units. */
  amount_24h_minor: number;
}

/** Everything the rules look at, gathered by the engine in a few indexed queries. */
export interface RiskFacts {
  mode: 'test' | 'live';
  pan: string;
  /**
   * A shared sandbox success card on a test account (docs/contract.md §9): the rules marked
   * `sandbox_exempt` do not look at it, so a suite may pay it without limit.
   */
  shared_success_card: boolean;
  amount_minor: number;
  /** 10^exponent of the currency: one major unit in minor units. */
  major_minor: number;
  email: string;
  billing_country: string | null;
  card_country: string | null;
  ip_country: string | null;
  velocity: Record<SignalKind, Velocity | null>;
  /** Blocklist entries of the account that match this payment, e.g. ["email"]. */
  blocked: string[];
  disposable_email: boolean;
  /** The card was used on this account before. */
  card_seen: boolean;
  /** Recent successful payments of the account in this currency. */
  history: { count: number; median_minor: number };
  /** 3-D Secure result known when scoring: mpi_info or a completed challenge. */
  threeds_result: '' | 'Y' | 'A';
}

export interface RiskRule {
  name: string;
  /** Added to the score when the rule fires; negative lowers risk. */
  weight: number;
  description: string;
  /** `status` is what the rule says when it fires (REJECT rules reject whatever the score). */
  evaluate(f: RiskFacts): { fired: boolean; status: RiskStatus };
  /**
   * When it fires, its status is the action at least, whatever the score (REJECT rules
   * always are; the sandbox REVIEW card is too, so 3-D Secure cannot lower it).
   */
  decisive?: boolean;
  /** Never fires for a shared sandbox success card on a test account (docs/contract.md §9). */
  sandbox_exempt?: boolean;
}

/** History needed before "above the account's history" means anything. */
export const MIN_HISTORY = 10;

const when = (fired: boolean, status: RiskStatus = 'REVIEW') => ({ fired, status: fired ? status : 'ACCEPT' }) as const;

function velocityRule(kind: SignalKind, weight: number, max_per_hour: number, max_major_per_day: number): RiskRule {
  return {
    name: `velocity_${kind}`,
    weight,
    description: `more than ${max_per_hour} attempts with the same ${kind} in an hour, or over ${max_major_per_day} (major units) with it in 24 hours`,
    sandbox_exempt: true,
    evaluate: (f) => {
      const v = f.velocity[kind];
      return when(v !== null && (v.count_1h >= max_per_hour || v.amount_24h_minor + f.amount_minor > max_major_per_day * f.major_minor));
    },
  };
}

export const RULES: readonly RiskRule[] = [
  {
    name: 'sandbox_test_card',
    weight: 100,
    description: 'test mode: the sandbox card 4100000000000019 is always rejected',
    decisive: true,
    evaluate: (f) => when(sandboxRiskVerdict(f.mode, f.pan) === 'REJECT', 'REJECT'),
  },
  {
    name: 'sandbox_review_card',
    weight: 0,
    description: 'test mode: the sandbox card 4000000000009235 is always held for review',
    decisive: true,
    evaluate: (f) => when(sandboxRiskVerdict(f.mode, f.pan) === 'REVIEW', 'REVIEW'),
  },
  {
    name: 'blocklist',
    weight: 100,
    description: "the card, e-mail, IP address or BIN is on the account's blocklist (tollgate blocklist add)",
    decisive: true,
    evaluate: (f) => when(f.blocked.length > 0, 'REJECT'),
  },
  velocityRule('card', 40, 5, 3000),
  velocityRule('email', 30, 5, 5000),
  velocityRule('ip', 30, 10, 10000),
  velocityRule('device', 30, 10, 10000),
  {
    name: 'country_mismatch',
    weight: 30,
    description: "billing country, card issuing country and the IP address's country do not all agree (where known)",
    evaluate: (f) => {
      const known = [f.billing_country, f.card_country, f.ip_country].filter((c): c is string => c !== null);
      return when(new Set(known).size > 1);
    },
  },
  {
    name: 'disposable_email',
    weight: 30,
    description: 'the e-mail address is at a disposable-mail domain',
    evaluate: (f) => when(f.disposable_email),
  },
  {
    name: 'amount_above_history',
    weight: 35,
    description: `amount is 10 times the median of the account's recent successful payments (needs ${MIN_HISTORY} of them)`,
    sandbox_exempt: true,
    evaluate: (f) => when(f.history.count >= MIN_HISTORY && f.amount_minor >= 10 * f.history.median_minor),
  },
  {
    name: 'new_card_high_amount',
    weight: 25,
    description: "a card new to the account at 3 times the account's median (or 1000 major units without history)",
    sandbox_exempt: true,
    evaluate: (f) => {
      const high = f.history.count >= MIN_HISTORY ? 3 * f.history.median_minor : 1000 * f.major_minor;
      return when(!f.card_seen && f.amount_minor >= high);
    },
  },
  {
    name: 'threeds_authenticated',
    weight: -30,
    description: 'the shopper was authenticated with 3-D Secure (or an attempt was recorded): lowers the score',
    evaluate: (f) => when(f.threeds_result !== '', 'ACCEPT'),
  },
];

export interface Thresholds {
  review: number;
  reject: number;
}

/** docs/contract.md §10: per-account thresholds; these apply until `tollgate risk thresholds` sets others. */
export const DEFAULT_THRESHOLDS: Thresholds = { review: 50, reject: 80 };

export interface Scored {
  score: number;
  action: RiskStatus;
  /** A decisive rule set the action: 3-D Secure cannot lower it, so it asks for no challenge. */
  fixed: boolean;
  reasons: Array<{ name: string; status: RiskStatus }>;
}

export function actionFor(score: number, t: Thresholds): RiskStatus {
  if (score >= t.reject) return 'REJECT';
  if (score >= t.review) return 'REVIEW';
  return 'ACCEPT';
}

const NOT_FIRED = { fired: false, status: 'ACCEPT' } as const;
const RANK: Record<RiskStatus, number> = { ACCEPT: 0, REVIEW: 1, REJECT: 2 };

/**
 * Runs every rule: one reason per rule, the score clamped to 0–100. A decisive rule that
 * fires sets the least action (REJECT scores 100; REVIEW lifts the score to the review band).
 */
export function score(facts: RiskFacts, t: Thresholds, rules: readonly RiskRule[] = RULES): Scored {
  let total = 0;
  let floor: RiskStatus = 'ACCEPT';
  const reasons = rules.map((rule) => {
    const r = facts.shared_success_card && rule.sandbox_exempt ? NOT_FIRED : rule.evaluate(facts);
    if (r.fired) {
      total += rule.weight;
      if (rule.decisive && RANK[r.status] > RANK[floor]) floor = r.status;
    }
    return { name: rule.name, status: r.status };
  });
  return settle(total, floor, t, reasons);
}

function settle(total: number, floor: RiskStatus, t: Thresholds, reasons: Scored['reasons']): Scored {
  if (floor === 'REJECT') return { score: 100, action: 'REJECT', fixed: true, reasons };
  let s = Math.max(0, Math.min(100, total));
  if (floor === 'REVIEW') s = Math.max(s, Math.min(100, t.review));
  const banded = actionFor(s, t);
  return { score: s, action: RANK[banded] > RANK[floor] ? banded : floor, fixed: floor !== 'ACCEPT', reasons };
}

/**
 * After a completed 3-D Secure challenge the authentication rule counts too (docs/contract.md
 * §10: a 3-D Secure result lowers risk). A challenge only happens when no mpi_info came
 * with the payment, so the rule had not fired when the payment was first scored.
 */
export function withAuthentication(score_before: number, reasons: Array<{ name: string; status: string }>, t: Thresholds): Scored {
  const rule = RULES.find((r) => r.name === 'threeds_authenticated') as RiskRule;
  const typed = reasons.map((r) => ({ name: r.name, status: r.status as RiskStatus }));
  // A decisive rule that fired when the payment was scored still holds after authentication.
  let floor: RiskStatus = 'ACCEPT';
  for (const r of typed) {
    if (r.status !== 'ACCEPT' && RULES.find((x) => x.name === r.name)?.decisive && RANK[r.status] > RANK[floor]) floor = r.status;
  }
  return settle(score_before + rule.weight, floor, t, typed);
}
