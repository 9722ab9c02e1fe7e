// Anti-fraud assessment of a payment before it reaches the processor (decisions §10).
// The rules are data in rules.ts; engine.ts gathers their facts; this file is the
// interface the payment flow sees.
import type { Tx } from '../db/store.js';
import { SANDBOX_RISK_REJECT_CARD } from '../processors/sandbox/index.js';

export interface RiskContext {
  account_id: string;
  mode: 'test' | 'live';
  pan: string;
  /** Keyed fingerprint of the card (keyring.fingerprint), for velocity and blocklists. */
  card_fingerprint: string;
  amount_minor: number;
  currency: string;
  body: Record<string, unknown>;
  /** 3-D Secure result already known (validated mpi_info): lowers the score. */
  threeds_result: '' | 'Y' | 'A';
  now_ms: number;
}

export type RiskAction = 'ACCEPT' | 'REVIEW' | 'REJECT';

export interface RiskAssessment {
  score: number;
  action: RiskAction;
  reasons: Array<{ name: string; status: RiskAction }>;
}

export interface RiskEngine {
  assess(ctx: RiskContext): Promise<RiskAssessment>;
  /** Writes what later velocity checks need, in the payment's own transaction. */
  record(tx: Tx, ctx: RiskContext, transaction_id: string): Promise<void>;
}

/** Sandbox provider rule only, no storage: the engine "off" (used to measure the engine's cost). */
export const basicRiskEngine: RiskEngine = {
  async assess(ctx) {
    const rejected = ctx.mode === 'test' && ctx.pan === SANDBOX_RISK_REJECT_CARD;
    return {
      score: rejected ? 100 : 0,
      action: rejected ? 'REJECT' : 'ACCEPT',
      reasons: [{ name: 'sandbox_test_card', status: rejected ? 'REJECT' : 'ACCEPT' }],
    };
  },
  async record() {},
};
