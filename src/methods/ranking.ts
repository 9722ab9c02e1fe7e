// Ranking payment methods by expected approval (docs/contract.md §8). Pure: the history comes in
// as counts, the ranked list goes out.
//
// Each method's approval probability gets a Beta prior, updated with the account's own
// recent attempts: posterior Beta(α + approved, β + attempts − approved). The rate shown
// and ranked on is the posterior mean (α + approved) / (α + β + attempts): the expected
// approval, which is what the ranking promises. The prior's strength (α + β = 20 pseudo
// attempts) is what keeps luck out: 3 approvals out of 3 move a card brand only from 0.85 to
// 0.87, while 2,900 out of 3,000 put a brand at 0.966. A lower credible bound would rank
// the same way there, but would keep a method nobody has tried yet below every measured
// one for good, and the hosted payment page orders methods by this list: an untried method
// would never be shown first, so never measured.
//
// Priors, by type (mean, strength):
// - card: 0.85, 20 → Beta(17, 3). Card-not-present authorisation rates sit around 85%.
// - apm: 0.70, 20 → Beta(14, 6). The shopper must still finish at the bank or pay the slip,
//   and some never do: lower than cards until the account's history says otherwise.

export type MethodType = 'card' | 'apm';

export interface BetaPrior {
  alpha: number;
  beta: number;
}

/** The prior of each type: mean α/(α+β), worth α+β attempts of evidence. */
export const PRIORS: Readonly<Record<MethodType, BetaPrior>> = {
  card: { alpha: 17, beta: 3 },
  apm: { alpha: 14, beta: 6 },
};

/**
 * Methods whose rate is within this of the best one are recommended too: differences that
 * small are within what a few hundred attempts can tell apart.
 */
export const RECOMMEND_MARGIN = 0.01;

export interface MethodHistory {
  payment_method: string;
  type: MethodType;
  /** Attempts with an outcome in the window (see history.ts for what counts). */
  attempts: number;
  approved: number;
}

export interface RankedMethod {
  payment_method: string;
  type: MethodType;
  /** Posterior mean approval probability, 0…1. */
  approval_rate: number;
  sample_size: number;
  recommended: boolean;
}

export function posteriorMean(prior: BetaPrior, approved: number, attempts: number): number {
  if (!Number.isInteger(attempts) || !Number.isInteger(approved) || attempts < 0 || approved < 0 || approved > attempts) {
    throw new RangeError(`approved ${approved} of ${attempts} attempts is not a count`);
  }
  return (prior.alpha + approved) / (prior.alpha + prior.beta + attempts);
}

/**
 * Orders methods by posterior mean, highest first. Ties (equal rates to 1e-12): more
 * evidence first, then the order given (cards before APMs, catalogue order), so the list
 * is stable. The first method is recommended, and any within RECOMMEND_MARGIN of it.
 */
export function rankMethods(history: readonly MethodHistory[], priors: Readonly<Record<MethodType, BetaPrior>> = PRIORS): RankedMethod[] {
  const scored = history.map((h, i) => ({ h, i, rate: posteriorMean(priors[h.type], h.approved, h.attempts) }));
  scored.sort((a, b) => (Math.abs(b.rate - a.rate) > 1e-12 ? b.rate - a.rate : b.h.attempts - a.h.attempts || a.i - b.i));
  const best = scored[0]?.rate ?? 0;
  return scored.map(({ h, rate }) => ({
    payment_method: h.payment_method,
    type: h.type,
    approval_rate: rate,
    sample_size: h.attempts,
    recommended: best - rate <= RECOMMEND_MARGIN + 1e-12,
  }));
}

/** The rate on the wire: four decimals ("0.8500"). */
export function formatRate(rate: number): string {
  return rate.toFixed(4);
}
