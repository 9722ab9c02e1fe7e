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

export interface Processor {
  /** Shown as `connector` in the direct answer. */
  readonly name: string;
  /**
   * True when the processor runs in-process with no outside effect (the sandbox): its
   * decision can be taken inside the same database transaction that records it.
   */
  readonly inline: boolean;
  authorise(input: AuthoriseInput): Promise<AuthoriseOutcome>;
}
