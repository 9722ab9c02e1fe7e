// The remote sandbox's wire protocol (docs/remote-sandbox.md): its paths, its answer body and
// the converters between that body and the connector interface's outcomes (types.ts). Wire
// types and domain types are kept apart (docs/style.md, Hyperswitch): the server turns a
// domain outcome into a wire answer here, the connector turns it back, by the same tables.
import type { ApmStart, AuthoriseOutcome, DeclineCode, OperationOutcome, PayoutOutcome, ProcessorNotification } from '../types.js';

/** What a client asks for; each POST carries `Idempotency-Key` = the attempt id. */
export const OPERATIONS = ['authorise', 'authorise_status', 'capture', 'cancel', 'refund', 'operation_status', 'apm', 'payout', 'payout_status'] as const;
export type WireOperation = (typeof OPERATIONS)[number];

/** The routes, one per operation (`:id` is an attempt id). */
export const ROUTES: Readonly<Record<WireOperation, { method: 'GET' | 'POST'; path: string }>> = {
  authorise: { method: 'POST', path: '/v1/authorise' },
  authorise_status: { method: 'GET', path: '/v1/authorise/:id' },
  capture: { method: 'POST', path: '/v1/capture' },
  cancel: { method: 'POST', path: '/v1/cancel' },
  refund: { method: 'POST', path: '/v1/refund' },
  operation_status: { method: 'GET', path: '/v1/operations/:id' },
  apm: { method: 'POST', path: '/v1/apm' },
  payout: { method: 'POST', path: '/v1/payout' },
  payout_status: { method: 'GET', path: '/v1/payout/:id' },
};

/** The header naming the attempt: the idempotency key, and our reference at the sandbox. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** The per-request fault override (tests): a comma-separated list of fault names, or `none`. */
export const FAULT_HEADER = 'x-sandbox-fault';
/** The webhook signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export const SIGNATURE_HEADER = 'sandbox-signature';

export type WireStatus = 'approved' | 'declined' | 'challenge_required' | 'pending' | 'started' | 'completed' | 'failed' | 'processing';

/** Every 200 answer of an operation, and every webhook's `outcome`. */
export interface WireAnswer {
  attempt_id: string;
  operation: Exclude<WireOperation, 'authorise_status' | 'operation_status' | 'payout_status'>;
  status: WireStatus;
  reference?: string;
  /** A decline's result code, `1001`…`1007`. */
  code?: string;
  reason?: string;
  failure_type?: 'INVALID_ACCOUNT' | 'RETURNED' | 'PROCESSOR_ERROR';
  check_after_ms?: number;
}

/** A refusal: `{ error, message }` with its HTTP status. */
export interface WireError {
  error: string;
  message: string;
}

/** One webhook notification (a POST carries `{ notifications: [WireNotification] }`). */
export interface WireNotification {
  /** Unique per notification; a duplicate delivery repeats it. */
  id: string;
  attempt_id: string;
  operation: 'authorise' | 'capture' | 'cancel' | 'refund' | 'payout';
  /** Our payment id (authorise, capture, cancel, payout) or refund id. */
  object_id: string;
  reference: string;
  outcome: WireAnswer;
  occurred_at: number;
}

const DECLINE_CODES: ReadonlySet<string> = new Set(['1001', '1002', '1003', '1004', '1005', '1006', '1007']);

/** A code the protocol does not define is a processing error (1007), never trusted as given. */
function declineCode(code: string | undefined): DeclineCode {
  return code && DECLINE_CODES.has(code) ? (code as DeclineCode) : '1007';
}

// ---- domain → wire (the server) -------------------------------------------------------

/** The sandbox's tables never answer `unknown`: that is the connector's word for no answer. */
function known<T extends { kind: string }>(o: T): Exclude<T, { kind: 'unknown' }> {
  if (o.kind === 'unknown') throw new Error('a sandbox decision table answered unknown');
  return o as Exclude<T, { kind: 'unknown' }>;
}

export function wireOfAuthorise(attempt_id: string, outcome: AuthoriseOutcome): WireAnswer {
  const o = known(outcome);
  const base = { attempt_id, operation: 'authorise' as const, reference: o.reference };
  return o.kind === 'declined' ? { ...base, status: 'declined', code: o.code } : { ...base, status: o.kind };
}

export function wireOfOperation(attempt_id: string, operation: 'capture' | 'cancel' | 'refund', outcome: OperationOutcome): WireAnswer {
  const o = known(outcome);
  if (o.kind === 'declined') return { attempt_id, operation, status: 'declined', code: o.code, reason: o.reason, reference: o.reference };
  return { attempt_id, operation, status: o.kind, reference: o.reference };
}

export function wireOfPayout(attempt_id: string, outcome: PayoutOutcome): WireAnswer {
  const o = known(outcome);
  const base = { attempt_id, operation: 'payout' as const, reference: o.reference };
  if (o.kind === 'failed') return { ...base, status: 'failed', failure_type: o.failure_type, reason: o.reason };
  if (o.kind === 'processing') return { ...base, status: 'processing', check_after_ms: o.check_after_ms };
  return { ...base, status: 'completed' };
}

// ---- wire → domain (the connector) ----------------------------------------------------

const unreadable = (what: string, status: unknown) => ({
  kind: 'unknown' as const,
  reason: `the sandbox answered ${what} with status ${JSON.stringify(status)}`,
});

export function authoriseOfWire(w: WireAnswer): AuthoriseOutcome {
  const reference = String(w.reference ?? '');
  switch (w.status) {
    case 'approved':
    case 'challenge_required':
    case 'pending':
      return { kind: w.status, reference };
    case 'declined':
      return { kind: 'declined', code: declineCode(w.code), reference };
    default:
      return unreadable('an authorisation', w.status);
  }
}

export function operationOfWire(w: WireAnswer): OperationOutcome {
  const reference = String(w.reference ?? '');
  switch (w.status) {
    case 'approved':
    case 'pending':
      return { kind: w.status, reference };
    case 'declined':
      return { kind: 'declined', code: declineCode(w.code), reason: String(w.reason ?? 'declined by the sandbox').slice(0, 200), reference };
    default:
      return unreadable(`a ${w.operation}`, w.status);
  }
}

export function payoutOfWire(w: WireAnswer): PayoutOutcome {
  const reference = String(w.reference ?? '');
  switch (w.status) {
    case 'completed':
      return { kind: 'completed', reference };
    case 'processing':
      return { kind: 'processing', reference, check_after_ms: Math.max(0, Math.min(Number(w.check_after_ms) || 0, 86_400_000)) };
    case 'failed': {
      const failure_type = w.failure_type === 'INVALID_ACCOUNT' || w.failure_type === 'RETURNED' ? w.failure_type : 'PROCESSOR_ERROR';
      return { kind: 'failed', failure_type, reason: String(w.reason ?? 'failed at the sandbox').slice(0, 200), reference };
    }
    default:
      return unreadable('a payout', w.status);
  }
}

export function apmOfWire(w: WireAnswer): ApmStart | { kind: 'unknown'; reason: string } {
  // The sandbox plays every issuer on the gateway's own page, as in process.
  return w.status === 'started' ? { reference: String(w.reference ?? ''), issuer: { kind: 'gateway_page' } } : unreadable('an APM start', w.status);
}

/** A webhook's outcome as the interface reads it, by the operation it reports on. */
export function outcomeOfWire(w: WireAnswer): ProcessorNotification['outcome'] {
  if (w.operation === 'authorise') return authoriseOfWire(w);
  if (w.operation === 'payout') return payoutOfWire(w);
  return operationOfWire(w);
}
