// The connector interface (style: Hyperswitch). A processor answers one authorisation; the
// gateway owns storage, state and idempotency around it.
import type { AttemptOperation } from '../db/tables/attempts.js';
import type { MinorUnits } from '../money/currency.js';
import type { DisputeNotification } from './dispute-notices.js';

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
  /**
   * For a processor that runs 3-D Secure itself (`completeAuthentication`): where it sends the
   * shopper back after its challenge, and whether the gateway asks for authentication
   * (`open3d` 1, or the risk score asks for it); the issuer may ask for it anyway.
   */
  authentication?: { return_url: string; required: boolean };
  /** A charge the merchant starts without the shopper (a subscription deduction of the stored card). */
  merchant_initiated?: boolean;
  /** `manual`: the processor holds the authorisation until our capture call; absent or `automatic`: it captures at once. */
  capture_method?: 'automatic' | 'manual';
}

/**
 * A decline's result code (docs/contract.md §6). A decline with `credentials_refused` is the
 * processor refusing our credentials (`1007`): an operator must act; it is counted apart.
 */
export type DeclineCode = '1001' | '1002' | '1003' | '1004' | '1005' | '1006' | '1007';

/**
 * What a processor answered about an authorisation (docs/contract.md §20): final (approved,
 * declined, or the issuer wants 3-D Secure first), `pending` (the processor reports later, by
 * webhook or status query), or `unknown` (no answer by the deadline, the connection lost
 * after sending, a 5xx): then the attempt is asked about again with the same attempt id.
 */
export type AuthoriseOutcome =
  | { kind: 'approved'; reference: string }
  | { kind: 'declined'; code: DeclineCode; reference: string; credentials_refused?: boolean; authentication_failed?: boolean }
  | { kind: 'challenge_required'; reference: string; action?: ShopperAction }
  | { kind: 'pending'; reference: string }
  | NoAnswer;

/**
 * Where a processor that runs 3-D Secure itself sends the shopper (`challenge_required` with
 * an action): the gateway's challenge page forwards the browser there, by GET or by a POST of
 * `data`; the processor sends the shopper back to `authentication.return_url`. A declined
 * outcome with `authentication_failed` is the shopper failing that challenge (`1009`).
 */
export interface ShopperAction {
  url: string;
  method: 'GET' | 'POST';
  data: Record<string, string>;
}

/**
 * No answer. `not_sent`: the call certainly did not reach the processor (the connection was
 * refused, the name did not resolve, its circuit is open), so it cannot have authorised and
 * the payment may go to the next processor (docs/contract.md §21).
 */
export type NoAnswer = { kind: 'unknown'; reason: string; not_sent?: boolean };

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

/** What the processor knows of an earlier authorise attempt, asked for by its attempt id. */
export type AttemptStatusAnswer = AuthoriseOutcome | { kind: 'not_found' };

/**
 * The answer to a capture, cancel (void) or refund (docs/contract.md §20): done
 * (`approved`), refused (`declined`, with a result code and the processor's reason),
 * accepted but confirmed later (`pending`: by webhook or a status query), or `unknown`.
 */
export type OperationOutcome =
  | { kind: 'approved'; reference: string }
  | { kind: 'declined'; code: DeclineCode; reason: string; reference?: string; credentials_refused?: boolean }
  | { kind: 'pending'; reference: string }
  | NoAnswer;

/** A capture (full or partial) of an authorisation. `reference`: the processor's reference of the authorisation ('' when it gave none). */
export interface CaptureInput {
  transaction_id: string;
  reference: string;
  amount_minor: MinorUnits;
  currency: string;
}

/** A cancel (void) of an authorisation; with `reference` '' the processor finds it by our transaction id. */
export interface CancelInput {
  transaction_id: string;
  reference: string;
}

/** A refund (full or partial) of captured money. */
export interface RefundInput {
  transaction_id: string;
  refund_id: string;
  /** The processor's reference of the payment. */
  reference: string;
  amount_minor: MinorUnits;
  currency: string;
}

/** Operations whose outcome is an OperationOutcome. */
export type MoneyOperation = 'capture' | 'cancel' | 'refund';

/** What the processor knows of an earlier capture, cancel or refund attempt, asked for by its attempt id. */
export type OperationStatusAnswer = OperationOutcome | { kind: 'not_found' };

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
  | { kind: 'processing'; reference: string; check_after_ms: number }
  | { kind: 'unknown'; reason: string };

/**
 * One notification a connector read from a processor's webhook (docs/contract.md §20):
 * the outcome of an attempt it reports. `id` is the processor's id of the notification (a
 * repeat changes nothing); the attempt is named by our attempt id when the processor echoes
 * it, else by the processor's reference and our object id.
 */
export interface ProcessorNotification {
  id: string;
  operation: AttemptOperation;
  attempt_id?: string;
  /** Our payment, refund or payout id, when the processor echoes it. */
  object_id?: string;
  reference?: string;
  outcome: AuthoriseOutcome | OperationOutcome | PayoutOutcome;
  /** When the processor says it happened (epoch ms). */
  occurred_at: number;
}

/** A webhook as it arrived: its headers (lower-case names) and its body, unparsed (signatures are over the raw bytes). */
export interface WebhookRequest {
  headers: Readonly<Record<string, string | undefined>>;
  raw: Buffer;
}

/**
 * What a connector made of a webhook: its notifications and the reply the processor
 * expects (Adyen: `[accepted]`), or a refusal (bad signature: 401, unreadable: 400) that
 * changes nothing.
 */
export type WebhookParse =
  | {
      kind: 'accepted';
      notifications: ProcessorNotification[];
      /** Disputes it reports (docs/processors.md "Disputes"); absent when none. */
      disputes?: DisputeNotification[];
      reply: { status: number; content_type: string; body: string };
    }
  | { kind: 'refused'; status: 400 | 401; message: string };

/** One piece of a dispute's evidence as a connector sends it: decrypted for the call only, never logged. */
export type DisputeEvidence =
  | { field: string; text: string }
  | { field: string; file_name: string; content_type: 'application/pdf' | 'image/png' | 'image/jpeg'; bytes: Buffer };

/**
 * A merchant's answer to a dispute, sent to the processor that holds the payment
 * (docs/contract.md §22): `defend` with all the evidence the dispute holds, or `accept`.
 */
export interface DisputeResponseInput {
  action: 'defend' | 'accept';
  /** The processor's id of the dispute (Adyen: the dispute's pspReference; Stripe: `du_…`/`dp_…`). */
  processor_ref: string;
  transaction_id: string;
  /** The processor's reference of the disputed payment ('' when it gave none). */
  reference: string;
  /** `defend`: all the evidence, oldest request first; empty for `accept`. */
  evidence: DisputeEvidence[];
}

/**
 * The processor's answer to a dispute response: taken (`approved`), refused (`declined`, with
 * its reason, which the merchant is shown), or none (`unknown`: sent again under the same
 * attempt id, the processor's idempotency key).
 */
export type DisputeResponseOutcome = { kind: 'approved'; reference: string } | { kind: 'declined'; reason: string; credentials_refused?: boolean } | NoAnswer;

/**
 * A processor as the gateway uses it (docs/contract.md §20). Every call is an attempt: its
 * row is committed before the call, `call.attempt_id` is the processor's idempotency key and
 * our reference there, and the call gives up at `call.deadline_at`. An answer that is not
 * final (`pending`, `unknown`) is asked about again by attempt id, or comes by webhook.
 * The in-process sandbox answers at once through the same path.
 */
export interface Processor {
  /** Shown as `connector` in the direct answer. */
  readonly name: string;
  /** The stored processor setting it serves (`prc_…`); absent for the in-process sandbox of a test account with none set. */
  readonly processor_id?: string;
  /**
   * `false` when the processor has no status query (Adyen's Checkout API): its status methods
   * answer `unknown` without a call, so its guard neither counts them towards opening the
   * circuit nor refuses them when it is open (src/processors/guard.ts).
   */
  readonly status_queries?: false;
  authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome>;
  /** Where an earlier authorise attempt stands, asked for with its attempt id (the sweeper's question). */
  authoriseStatus(input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer>;
  capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome>;
  /** Voids an authorisation: a merchant's cancel, or an attempt still unknown past the void bound. */
  cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome>;
  refund(input: RefundInput, call: ProcessorCall): Promise<OperationOutcome>;
  /** Where an earlier capture, cancel or refund attempt stands, asked for with its attempt id. */
  operationStatus(input: { operation: MoneyOperation; transaction_id: string }, call: ProcessorCall): Promise<OperationStatusAnswer>;
  /**
   * The result of the processor's own 3-D Secure challenge, asked for when the shopper comes
   * back with `params` (what the processor put on the return URL or posted to it), for the
   * authorisation `reference`. Present when the processor runs 3-D Secure itself: the
   * gateway then never runs its sandbox challenge for it nor sends made-up authentication.
   */
  completeAuthentication?(input: { transaction_id: string; reference: string; params: Record<string, string> }, call: ProcessorCall): Promise<AuthoriseOutcome>;
  /** Starts an alternative-method payment; absent when the connector serves none. */
  startApm?(input: ApmStartInput, call: ProcessorCall): Promise<ApmStart | { kind: 'unknown'; reason: string }>;
  /** Sends a payout; absent when the connector pays out nothing. */
  payout?(input: PayoutInput, call: ProcessorCall): Promise<PayoutOutcome>;
  /** Where a payout stands now, asked for with the attempt id that sent it (`call.attempt_id`). */
  payoutStatus?(input: PayoutInput & { reference: string }, call: ProcessorCall): Promise<PayoutOutcome | { kind: 'not_found' }>;
  /** Sends a merchant's evidence (`defend`) or acceptance of a dispute; absent when the connector takes no dispute responses. */
  respondToDispute?(input: DisputeResponseInput, call: ProcessorCall): Promise<DisputeResponseOutcome>;
  /** Reads and verifies one of the processor's webhooks (`POST /hooks/<connector>/<processor_id>`); absent when it sends none. */
  parseWebhook?(req: WebhookRequest): WebhookParse;
}
