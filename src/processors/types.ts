// The connector interface (style: Hyperswitch). A processor answers one authorisation; the
// gateway owns storage, state and idempotency around it.
import type { MinorUnits } from '../money/currency.js';

export interface ProcessorCard {
  pan: string;
  brand: string;
  exp_month: number;
  exp_year: number;
  /** Present only for the authorisation it was given with; never stored. */
  security_code?: string;
}

export interface AuthoriseInput {
  transaction_id: string;
  amount_minor: MinorUnits;
  currency: string;
  card: ProcessorCard;
  /** 3-D Secure data when the payment was authenticated (mpi_info or our challenge). */
  threeds?: { eci: string; cavv: string; xid: string; ds_trans_id: string };
  /** A charge the merchant starts without the shopper (a subscription deduction of the stored card). */
  merchant_initiated?: boolean;
}

/** A decline's result code (docs/contract.md §6). */
export type DeclineCode = '1001' | '1002' | '1003' | '1004' | '1005' | '1006' | '1007';

/**
 * What a processor answered about an authorisation (docs/contract.md §20): final (approved,
 * declined, or the issuer wants 3-D Secure first), `pending` (the processor reports later, by
 * webhook or status query), or `unknown` (no answer by the deadline, the connection lost
 * after sending, a 5xx): then the attempt is asked about again with the same attempt id.
 */
export type AuthoriseOutcome =
  | { kind: 'approved'; reference: string }
  | { kind: 'declined'; code: DeclineCode; reference: string }
  | { kind: 'challenge_required'; reference: string }
  | { kind: 'pending'; reference: string }
  | { kind: 'unknown'; reason: string };

/**
 * One call's identity and time limit (docs/contract.md §20): the attempt id is the
 * processor's idempotency key and our reference there; the call gives up at `deadline_at`
 * (epoch ms), and `signal` aborts its request then.
 */
export interface ProcessorCall {
  attempt_id: string;
  deadline_at: number;
  signal: AbortSignal;
}

/** What the processor knows of an earlier attempt, asked for by its attempt id. */
export type AttemptStatusAnswer = AuthoriseOutcome | { kind: 'not_found' };

/** The answer to a cancel (void) of an authorisation, by its reference. */
export type CancelOutcome = { kind: 'approved'; reference: string } | { kind: 'declined'; reason: string } | { kind: 'unknown'; reason: string };

/** An alternative-method payment handed to the connector (docs/contract.md §15). */
export interface ApmStartInput {
  transaction_id: string;
  payment_method: string;
  amount_minor: MinorUnits;
  currency: string;
  /** The method's required fields as the request carried them (`bank_code`, `person.*`). */
  fields: Readonly<Record<string, string>>;
}

/**
 * Where the shopper pays. The sandbox plays the issuer on the gateway's own page
 * (`gateway_page`); a real provider answers its own address (`url`) and reports the
 * outcome later, which then takes the same path as the sandbox page's decision
 * (`completeApm` in src/apm/service.ts).
 */
export type ApmStart = { reference: string; issuer: { kind: 'gateway_page' } | { kind: 'url'; url: string } };

/** A payout handed to the payout connector (docs/contract.md §17): the amount the beneficiary receives and where. */
export interface PayoutInput {
  transaction_id: string;
  payment_method: 'LOCAL' | 'SWIFT';
  local_clearing_system: string;
  amount_minor: MinorUnits;
  currency: string;
  /** The beneficiary's bank account as validated (IBAN in electronic format, BIC upper case). */
  account: { country: string; iban?: string; account_number?: string; swift_code?: string; bank_code?: string };
  swift_charge_option: string;
}

/**
 * The connector's answer about a payout: paid, refused or returned (`failed`, with why), or
 * on its way (`processing`: ask again with `payoutStatus` after `check_after_ms`).
 */
export type PayoutOutcome =
  | { kind: 'completed'; reference: string }
  | { kind: 'failed'; failure_type: 'INVALID_ACCOUNT' | 'RETURNED' | 'PROCESSOR_ERROR'; reason: string; reference: string }
  | { kind: 'processing'; reference: string; check_after_ms: number };

export interface Processor {
  /** Shown as `connector` in the direct answer. */
  readonly name: string;
  /**
   * True when the processor runs in-process with no outside effect (the sandbox): its
   * decision can be taken inside the same database transaction that records it.
   */
  readonly inline: boolean;
  authorise(input: AuthoriseInput, call?: ProcessorCall): Promise<AuthoriseOutcome>;
  /** Where an earlier authorise attempt stands, asked for with its attempt id (the sweeper's question). */
  authoriseStatus(input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer>;
  /** Voids an authorisation by the payment it was for: an attempt still unknown past the void bound. */
  cancelAuthorisation(input: { transaction_id: string; reference: string }, call: ProcessorCall): Promise<CancelOutcome>;
  /** Starts an alternative-method payment; absent when the connector serves none. */
  startApm?(input: ApmStartInput): Promise<ApmStart>;
  /** Sends a payout; absent when the connector pays out nothing. */
  payout?(input: PayoutInput): Promise<PayoutOutcome>;
  /** Where a `processing` payout stands now. */
  payoutStatus?(input: PayoutInput & { reference: string }): Promise<PayoutOutcome>;
}
