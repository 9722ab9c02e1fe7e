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
  CancelInput,
  CaptureInput,
  MoneyOperation,
  OperationOutcome,
  OperationStatusAnswer,
  PayoutInput,
  PayoutOutcome,
  Processor,
  ProcessorCall,
  RefundInput,
} from '../types.js';
import { type IssuerOutcome, testCard } from './cards.js';
import { sandboxPayout, sandboxPayoutStatus } from './payouts.js';

export function sandboxReference(transaction_id: string): string {
  return `SBX${createHash('sha256').update(transaction_id).digest('hex').slice(0, 12).toUpperCase()}`;
}

export interface SandboxOptions {
  /** How long a SWIFT payout (or a payout's return) takes (TOLLGATE_SANDBOX_SWIFT_DELAY_MS). */
  swift_delay_ms: number;
}

/** Attempts the in-process sandbox remembers for a status query (its memory ends with the process, as its money does). */
const REMEMBERED_ATTEMPTS = 50_000;

/**
 * The in-process sandbox: answers every call at once, through the same attempt path as a
 * remote processor (docs/contract.md §20). It remembers what it answered to each attempt id,
 * so a status query (the sweeper's question) gets the same answer, and a repeated attempt id
 * is answered as the first time (an idempotency key).
 */
export function createSandboxProcessor(opts: SandboxOptions): Processor {
  const answered = new Map<string, unknown>();
  function once<T>(call: ProcessorCall, decide: () => T): T {
    const earlier = answered.get(call.attempt_id);
    if (earlier !== undefined) return earlier as T;
    const outcome = decide();
    answered.set(call.attempt_id, outcome);
    if (answered.size > REMEMBERED_ATTEMPTS) answered.delete(answered.keys().next().value as string);
    return outcome;
  }
  const approved = (transaction_id: string, reference: string): OperationOutcome => ({
    kind: 'approved',
    reference: reference || sandboxReference(transaction_id),
  });
  return {
    name: 'sandbox',
    async authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome> {
      return once(call, () => sandboxAuthorise(input));
    },
    async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
      return (answered.get(call.attempt_id) as AuthoriseOutcome | undefined) ?? { kind: 'not_found' };
    },
    async capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome> {
      return once(call, () => approved(input.transaction_id, input.reference));
    },
    async cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome> {
      return once(call, () => approved(input.transaction_id, input.reference));
    },
    async refund(_input: RefundInput, call: ProcessorCall): Promise<OperationOutcome> {
      // The sandbox gives no reference of its own to a refund (its answers are as before it was an attempt).
      return once(call, (): OperationOutcome => ({ kind: 'approved', reference: '' }));
    },
    async operationStatus(_input: { operation: MoneyOperation; transaction_id: string }, call: ProcessorCall): Promise<OperationStatusAnswer> {
      return (answered.get(call.attempt_id) as OperationOutcome | undefined) ?? { kind: 'not_found' };
    },
    /** The sandbox plays every issuer on the gateway's own issuer page (src/apm/issuer-routes.ts). */
    async startApm(input: ApmStartInput, call: ProcessorCall): Promise<ApmStart> {
      return once(call, () => ({ reference: sandboxReference(input.transaction_id), issuer: { kind: 'gateway_page' } }) satisfies ApmStart);
    },
    async payout(input: PayoutInput, call: ProcessorCall): Promise<PayoutOutcome> {
      return once(call, () => sandboxPayout(input, sandboxReference(input.transaction_id), opts.swift_delay_ms));
    },
    async payoutStatus(input: PayoutInput & { reference: string }, call: ProcessorCall): Promise<PayoutOutcome | { kind: 'not_found' }> {
      const sent = answered.get(call.attempt_id) as PayoutOutcome | undefined;
      // Its memory ends with its process: a payout it does not remember is decided again by
      // the same table (the sandbox moves no real money), so a restart does not fail it.
      if (sent === undefined && !input.reference) return sandboxPayout(input, sandboxReference(input.transaction_id), opts.swift_delay_ms);
      if (sent !== undefined && sent.kind !== 'processing') return sent;
      return sandboxPayoutStatus({ ...input, reference: input.reference || sandboxReference(input.transaction_id) });
    },
  };
}

/** The test-card table's answer (cards.ts); unlisted Luhn-valid cards are approved. */
export function sandboxAuthorise(input: AuthoriseInput): AuthoriseOutcome {
  const card = testCard(input.card.pan);
  const rule: IssuerOutcome = (input.merchant_initiated ? card?.merchant_initiated : undefined) ?? card?.issuer ?? { kind: 'approved' };
  const ref = sandboxReference(input.transaction_id);
  if (rule.kind === 'challenge_required') {
    // Authenticated already (mpi_info or a completed challenge): approve.
    return input.threeds ? { kind: 'approved', reference: ref } : { kind: 'challenge_required', reference: ref };
  }
  if (rule.kind === 'declined') return { kind: 'declined', code: rule.code, reference: ref };
  return { kind: 'approved', reference: ref };
}

/** The sandbox with its default settings. */
export const sandboxProcessor: Processor = createSandboxProcessor({ swift_delay_ms: 5_000 });
