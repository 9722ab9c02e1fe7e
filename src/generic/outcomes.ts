// The generic interface's table of the core's outcomes (issue 30 item 1): each outcome is
// answered with a status and an error of the platform family's shape (docs/contract.md §18).
import { describeRefusal, OUTCOMES, type Outcome, type Refusal } from '../core/outcomes.js';
import { fieldParam, GenericError, type GenericErrorType, invalidParam, noSuch } from './wire.js';

/** What the refusal is about: the object (`payment`), the id the caller gave, and the parameter the amount came in. */
export interface RefusedAt {
  what: string;
  id: string;
  amountParam: string;
}

const unexpectedState = (message: string) => new GenericError(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message });

const GENERIC: Readonly<Record<Outcome, (message: string, at: RefusedAt) => GenericError>> = {
  invalid_input: (message, at) => invalidParam(at.amountParam, message),
  not_found: (_message, at) => noSuch(at.what, at.id),
  invalid_state: unexpectedState,
  amount_exceeds: (message, at) => invalidParam(at.amountParam, message, 'amount_too_large'),
  insufficient_funds: (message, at) => invalidParam(at.amountParam, message, 'balance_insufficient'),
  order_mismatch: unexpectedState,
  authorisation_expired: unexpectedState,
  no_processor: (message) => new GenericError(403, { type: 'invalid_request_error', message }),
  conflict: (message) => new GenericError(409, { type: 'invalid_request_error', code: 'resource_already_exists', message }),
  not_processed: (message) => new GenericError(500, { type: 'api_error', message }),
  processor_declined: (message) => new GenericError(402, { type: 'card_error', code: 'card_declined', message }),
};

/** A command's refusal in the generic shape. */
export function genericRefusal(r: Refusal, at: RefusedAt): GenericError {
  return GENERIC[r.outcome](describeRefusal(r), at);
}

/**
 * The refusals a command throws (an input field, a missing object the request named, no
 * processor) as this interface answers them: status, type and code by outcome, the detail as
 * the message, the field as `param`.
 */
const THROWN: Readonly<Record<Outcome, { http: number; type: GenericErrorType; code?: string }>> = {
  invalid_input: { http: 400, type: 'invalid_request_error' },
  not_found: { http: 404, type: 'invalid_request_error', code: 'resource_missing' },
  no_processor: { http: 403, type: 'invalid_request_error' },
  conflict: { http: 409, type: 'invalid_request_error', code: 'resource_already_exists' },
  invalid_state: { http: 400, type: 'invalid_request_error', code: 'payment_intent_unexpected_state' },
  order_mismatch: { http: 400, type: 'invalid_request_error', code: 'payment_intent_unexpected_state' },
  authorisation_expired: { http: 400, type: 'invalid_request_error', code: 'payment_intent_unexpected_state' },
  amount_exceeds: { http: 400, type: 'invalid_request_error', code: 'amount_too_large' },
  insufficient_funds: { http: 400, type: 'invalid_request_error', code: 'balance_insufficient' },
  not_processed: { http: 500, type: 'api_error' },
  processor_declined: { http: 402, type: 'card_error', code: 'card_declined' },
};

export function genericThrown(r: Refusal): GenericError {
  const { http, type, code } = THROWN[r.outcome];
  const message = r.detail ? r.detail.charAt(0).toUpperCase() + r.detail.slice(1) : OUTCOMES[r.outcome].text;
  const field = r.facts?.field;
  const param = typeof field === 'string' ? fieldParam(field) : undefined;
  return new GenericError(http, { type, ...(code ? { code } : {}), message, ...(param ? { param } : {}) });
}
