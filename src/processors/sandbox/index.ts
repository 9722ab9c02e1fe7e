// The built-in sandbox processor for test accounts (decisions §9). Outcomes are a data
// table keyed by card number, as the widely used card platform publishes them.
import { createHash } from 'node:crypto';
import type { AuthoriseInput, AuthoriseOutcome, Processor } from '../types.js';

type SandboxRule =
  | { kind: 'approved' }
  | { kind: 'declined'; code: '1001' | '1002' | '1003' | '1004' | '1005' | '1006' | '1007' }
  | { kind: 'challenge_required' };

/** Card number → outcome. Unlisted valid cards are approved. */
export const SANDBOX_CARDS: Readonly<Record<string, SandboxRule>> = {
  '4242424242424242': { kind: 'approved' },
  '5555555555554444': { kind: 'approved' },
  '378282246310005': { kind: 'approved' },
  '6011111111111117': { kind: 'approved' },
  '3566002020360505': { kind: 'approved' },
  '4000000000000002': { kind: 'declined', code: '1002' },
  '4000000000009995': { kind: 'declined', code: '1001' },
  '4000000000009987': { kind: 'declined', code: '1003' },
  '4000000000009979': { kind: 'declined', code: '1004' },
  '4000000000000069': { kind: 'declined', code: '1005' },
  '4000000000000127': { kind: 'declined', code: '1006' },
  '4000000000000119': { kind: 'declined', code: '1007' },
  '4000000000003220': { kind: 'challenge_required' },
};

/** Card that the sandbox anti-fraud provider always rejects (decisions §9). */
export const SANDBOX_RISK_REJECT_CARD = '4100000000000019';

function reference(transaction_id: string): string {
  return `SBX${createHash('sha256').update(transaction_id).digest('hex').slice(0, 12).toUpperCase()}`;
}

export const sandboxProcessor: Processor = {
  name: 'sandbox',
  inline: true,
  async authorise(input: AuthoriseInput): Promise<AuthoriseOutcome> {
    const rule = SANDBOX_CARDS[input.card.pan] ?? { kind: 'approved' };
    const ref = reference(input.transaction_id);
    if (rule.kind === 'challenge_required') {
      // Authenticated already (mpi_info or a completed challenge): approve.
      return input.threeds ? { kind: 'approved', reference: ref } : { kind: 'challenge_required', reference: ref };
    }
    if (rule.kind === 'declined') return { kind: 'declined', code: rule.code, reference: ref };
    return { kind: 'approved', reference: ref };
  },
};
