// The built-in sandbox processor for test accounts (decisions §9). Outcomes come from the
// test-card table (cards.ts), as the widely used card platforms publish theirs.
import { createHash } from 'node:crypto';
import type { ApmStart, ApmStartInput, AuthoriseInput, AuthoriseOutcome, Processor } from '../types.js';
import { type IssuerOutcome, testCard } from './cards.js';

function reference(transaction_id: string): string {
  return `SBX${createHash('sha256').update(transaction_id).digest('hex').slice(0, 12).toUpperCase()}`;
}

export const sandboxProcessor: Processor = {
  name: 'sandbox',
  inline: true,
  async authorise(input: AuthoriseInput): Promise<AuthoriseOutcome> {
    const card = testCard(input.card.pan);
    // Unlisted Luhn-valid cards are approved.
    const rule: IssuerOutcome = (input.merchant_initiated ? card?.merchant_initiated : undefined) ?? card?.issuer ?? { kind: 'approved' };
    const ref = reference(input.transaction_id);
    if (rule.kind === 'challenge_required') {
      // Authenticated already (mpi_info or a completed challenge): approve.
      return input.threeds ? { kind: 'approved', reference: ref } : { kind: 'challenge_required', reference: ref };
    }
    if (rule.kind === 'declined') return { kind: 'declined', code: rule.code, reference: ref };
    return { kind: 'approved', reference: ref };
  },
  /** The sandbox plays every issuer on the gateway's own issuer page (src/apm/issuer-routes.ts). */
  async startApm(input: ApmStartInput): Promise<ApmStart> {
    return { reference: reference(input.transaction_id), issuer: { kind: 'gateway_page' } };
  },
};
