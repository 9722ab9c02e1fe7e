// The acquiring interface's table of the core's outcomes (issue 30 item 1): each outcome is
// answered with one result code of the catalogue (`errors.ts`, docs/contract.md §6).
import { type Outcome, type Refusal, Refused } from '../core/outcomes.js';
import { ApiError, type ResultCode, resultText } from './errors.js';

export const ACQUIRING_CODE: Readonly<Record<Outcome, ResultCode>> = {
  invalid_input: '0400',
  not_found: '0404',
  invalid_state: '1012',
  amount_exceeds: '1013',
  insufficient_funds: '1001',
  order_mismatch: '1014',
  authorisation_expired: '1015',
  no_processor: '1016',
  conflict: '0409',
  not_processed: '1007',
  processor_declined: '1002',
};

/** `<code>:<text>: <detail>`, as an item's `error_message` / `refund_message` says it. */
export function acquiringMessage(r: Refusal): string {
  const code = ACQUIRING_CODE[r.outcome];
  return r.detail ? `${resultText(code)}: ${r.detail}` : resultText(code);
}

/** A refusal the core threw, as the acquiring answer gives it: its code, detail and the field it names. */
export function apiErrorOf(r: Refusal): ApiError {
  const field = r.facts?.field;
  return new ApiError(ACQUIRING_CODE[r.outcome], r.detail || undefined, typeof field === 'string' ? field : undefined);
}

/** The acquiring refusal an error stands for: an `ApiError` of the web layer, or a core refusal mapped; else undefined. */
export function asApiError(e: unknown): ApiError | undefined {
  if (e instanceof ApiError) return e;
  if (e instanceof Refused) return apiErrorOf(e.refusal);
  return undefined;
}
