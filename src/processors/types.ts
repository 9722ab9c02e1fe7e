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

export type AuthoriseOutcome =
  | { kind: 'approved'; reference: string }
  | { kind: 'declined'; code: '1001' | '1002' | '1003' | '1004' | '1005' | '1006' | '1007'; reference: string }
  | { kind: 'challenge_required'; reference: string };

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
  authorise(input: AuthoriseInput): Promise<AuthoriseOutcome>;
  /** Starts an alternative-method payment; absent when the connector serves none. */
  startApm?(input: ApmStartInput): Promise<ApmStart>;
  /** Sends a payout; absent when the connector pays out nothing. */
  payout?(input: PayoutInput): Promise<PayoutOutcome>;
  /** Where a `processing` payout stands now. */
  payoutStatus?(input: PayoutInput & { reference: string }): Promise<PayoutOutcome>;
}
