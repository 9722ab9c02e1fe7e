// Anti-fraud assessment of a payment before it reaches the processor (decisions §10).
// Rules are data: one entry per rule in RULES, each scoring 0–100 with a weight.
import { SANDBOX_RISK_REJECT_CARD } from '../processors/sandbox/index.js';

export interface RiskContext {
  account_id: string;
  mode: 'test' | 'live';
  pan: string;
  amount_minor: number;
  currency: string;
  body: Record<string, unknown>;
  now_ms: number;
}

export type RiskAction = 'ACCEPT' | 'REVIEW' | 'REJECT';

export interface RiskAssessment {
  score: number;
  action: RiskAction;
  reasons: Array<{ name: string; status: 'ACCEPT' | 'REVIEW' | 'REJECT' }>;
}

export interface RiskEngine {
  assess(ctx: RiskContext): Promise<RiskAssessment>;
}

/** Sandbox provider rule: the published test card is always rejected (decisions §9). */
export const basicRiskEngine: RiskEngine = {
  async assess(ctx) {
    const rejected = ctx.mode === 'test' && ctx.pan === SANDBOX_RISK_REJECT_CARD;
    return {
      score: rejected ? 100 : 0,
      action: rejected ? 'REJECT' : 'ACCEPT',
      reasons: [{ name: 'sandbox_test_card', status: rejected ? 'REJECT' : 'ACCEPT' }],
    };
  },
};
