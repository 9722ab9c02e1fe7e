// Anti-fraud assessment of a payment before it reaches the processor (docs/contract.md §10).
// The rules are data in rules.ts; engine.ts gathers their facts; this file is the
// interface the payment flow sees.
import type { WriteUnit } from '../db/unit.js';
import { sandboxRiskVerdict } from '../processors/sandbox/cards.js';

/** What the payment request says of its shopper that the rules read (as sent: the engine trims and normalises). */
export interface ShopperFacts {
  shopper_email?: string;
  shopper_ip?: string;
  device_fingerprint?: string;
  billing_country?: string;
}

export interface RiskContext {
  account_id: string;
  mode: 'test' | 'live';
  pan: string;
  /** Keyed fingerprint of the card (keyring.fingerprint), for velocity and blocklists. */
  card_fingerprint: string;
  amount_minor: number;
  currency: string;
  shopper: ShopperFacts;
  /** 3-D Secure result already known (validated mpi_info): lowers the score. */
  threeds_result: '' | 'Y' | 'A';
  now_ms: number;
}

export type RiskAction = 'ACCEPT' | 'REVIEW' | 'REJECT';

export interface RiskAssessment {
  score: number;
  action: RiskAction;
  /** A decisive rule (blocklist, sandbox test card) set the action; a 3-D Secure challenge cannot change it. */
  fixed: boolean;
  reasons: Array<{ name: string; status: RiskAction }>;
}

export interface RiskEngine {
  assess(ctx: RiskContext): Promise<RiskAssessment>;
  /** Adds what later velocity checks need to the payment's own write unit (reads nothing). */
  record(unit: WriteUnit, ctx: RiskContext, transaction_id: string): void;
}

/** Sandbox provider rules only, no storage: the engine "off" (used to measure the engine's cost). */
export const basicRiskEngine: RiskEngine = {
  async assess(ctx) {
    const verdict = sandboxRiskVerdict(ctx.mode, ctx.pan);
    return {
      score: verdict === 'REJECT' ? 100 : verdict === 'REVIEW' ? 50 : 0,
      action: verdict ?? 'ACCEPT',
      fixed: verdict !== undefined,
      reasons: [
        { name: 'sandbox_test_card', status: verdict === 'REJECT' ? 'REJECT' : 'ACCEPT' },
        { name: 'sandbox_review_card', status: verdict === 'REVIEW' ? 'REVIEW' : 'ACCEPT' },
      ],
    };
  },
  record() {},
};
