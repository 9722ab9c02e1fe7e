// The generic interface's table of the core's outcomes (issue 30 item 1): each outcome is
// answered with a status and an error of the platform family's shape (docs/contract.md §18).
import { describeRefusal, type Outcome, type Refusal } from '../core/outcomes.js';
import { GenericError, invalidParam, noSuch } from './wire.js';

/** What the refusal is about: the object (`payment`), the id the caller gave, and the parameter the amount came in. */
export interface RefusedAt {
  what: string;
  id: string;
  amountParam: string;
}

const unexpectedState = (message: string) => new GenericError(400, { type: 'invalid_request_error', code: 'payment_unexpected_state', message });

const GENERIC: Readonly<Record<Outcome, (message: string, at: RefusedAt) => GenericError>> = {
  invalid_input: (message, at) => invalidParam(at.amountParam, message),
  not_found: (_message, at) => noSuch(at.what, at.id),
  invalid_state: unexpectedState,
  amount_exceeds: (message, at) => invalidParam(at.amountParam, message, 'amount_too_large'),
  insufficient_funds: (message, at) => invalidParam(at.amountParam, message, 'balance_insufficient'),
  order_mismatch: unexpectedState,
  authorisation_expired: unexpectedState,
  no_processor: (message) => new GenericError(403, { type: 'invalid_request_error', code: 'processor_not_configured', message }),
  not_processed: (message) => new GenericError(500, { type: 'api_error', message }),
};

/** A command's refusal in the generic shape. */
export function genericRefusal(r: Refusal, at: RefusedAt): GenericError {
  return GENERIC[r.outcome](describeRefusal(r), at);
}
