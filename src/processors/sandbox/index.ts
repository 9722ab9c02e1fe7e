// The built-in sandbox processor for test accounts (docs/contract.md §9, §17). Card outcomes come
// from the test-card table (cards.ts), as the widely used card platforms publish theirs;
// payout outcomes from the test account numbers of payouts.ts.
import { createHash } from 'node:crypto';
import type {
  ApmStart,
  ApmStartInput,
  AttemptStatusAnswer,
  AuthoriseInput,
  AuthoriseOutcome,
  CancelOutcome,
  PayoutInput,
  PayoutOutcome,
  Processor,
  ProcessorCall,
} from '../types.js';
import { type IssuerOutcome, testCard } from './cards.js';
import { sandboxPayout, sandboxPayoutStatus } from './payouts.js';

function reference(transaction_id: string): string {
  return `SBX${createHash('sha256').update(transaction_id).digest('hex').slice(0, 12).toUpperCase()}`;
}

export interface SandboxOptions {
  /** How long a SWIFT payout (or a payout's return) takes (TOLLGATE_SANDBOX_SWIFT_DELAY_MS). */
  swift_delay_ms: number;
}

/** Attempts the in-process sandbox remembers for a status query (its memory ends with the process, as its money does). */
const REMEMBERED_ATTEMPTS = 50_000;

export function createSandboxProcessor(opts: SandboxOptions): Processor {
  const answered = new Map<string, AuthoriseOutcome>();
  const remember = (call: ProcessorCall | undefined, outcome: AuthoriseOutcome) => {
    if (!call) return outcome;
    answered.set(call.attempt_id, outcome);
    if (answered.size > REMEMBERED_ATTEMPTS) answered.delete(answered.keys().next().value as string);
    return outcome;
  };
  return {
    name: 'sandbox',
    inline: true,
    async authorise(input: AuthoriseInput, call?: ProcessorCall): Promise<AuthoriseOutcome> {
      return remember(call, sandboxAuthorise(input));
    },
    async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
      return answered.get(call.attempt_id) ?? { kind: 'not_found' };
    },
    async cancelAuthorisation(input: { transaction_id: string; reference: string }): Promise<CancelOutcome> {
      return { kind: 'approved', reference: input.reference || reference(input.transaction_id) };
    },
    /** The sandbox plays every issuer on the gateway's own issuer page (src/apm/issuer-routes.ts). */
    async startApm(input: ApmStartInput): Promise<ApmStart> {
      return { reference: reference(input.transaction_id), issuer: { kind: 'gateway_page' } };
    },
    async payout(input: PayoutInput): Promise<PayoutOutcome> {
      return sandboxPayout(input, reference(input.transaction_id), opts.swift_delay_ms);
    },
    async payoutStatus(input: PayoutInput & { reference: string }): Promise<PayoutOutcome> {
      return sandboxPayoutStatus(input);
    },
  };
}

/** The test-card table's answer (cards.ts); unlisted Luhn-valid cards are approved. */
function sandboxAuthorise(input: AuthoriseInput): AuthoriseOutcome {
  const card = testCard(input.card.pan);
  const rule: IssuerOutcome = (input.merchant_initiated ? card?.merchant_initiated : undefined) ?? card?.issuer ?? { kind: 'approved' };
  const ref = reference(input.transaction_id);
  if (rule.kind === 'challenge_required') {
    // Authenticated already (mpi_info or a completed challenge): approve.
    return input.threeds ? { kind: 'approved', reference: ref } : { kind: 'challenge_required', reference: ref };
  }
  if (rule.kind === 'declined') return { kind: 'declined', code: rule.code, reference: ref };
  return { kind: 'approved', reference: ref };
}

/** The sandbox with its default settings. */
export const sandboxProcessor: Processor = createSandboxProcessor({ swift_delay_ms: 5_000 });
