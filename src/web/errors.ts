// One catalogue of result codes (docs/contract.md §6, docs/style.md §5): code, text, HTTP status when the
// code refuses a whole request. Payment outcomes (1001…1011) answer HTTP 200.
import { invalidInput, type Refused } from '../core/outcomes.js';

export const RESULT_CODES = {
  '0000': { text: 'Success', http: 200 },
  '0002': { text: 'Pending 3-D Secure authentication', http: 200 },
  '0003': { text: 'Pending shopper action', http: 200 },
  '0004': { text: 'Held for risk review', http: 200 },
  '0005': { text: 'Refund pending at the processor', http: 200 },
  '0006': { text: 'Pending at the processor', http: 200 },
  '1001': { text: 'Insufficient funds', http: 200 },
  '1002': { text: 'Card declined', http: 200 },
  '1003': { text: 'Lost card', http: 200 },
  '1004': { text: 'Stolen card', http: 200 },
  '1005': { text: 'Expired card', http: 200 },
  '1006': { text: 'Incorrect security code', http: 200 },
  '1007': { text: 'Processing error', http: 200 },
  '1008': { text: 'Rejected by risk control', http: 200 },
  '1009': { text: '3-D Secure authentication failed', http: 200 },
  '1010': { text: 'Invalid card number', http: 200 },
  '1011': { text: 'Duplicate order', http: 200 },
  '1012': { text: 'Invalid state for this operation', http: 200 },
  '1013': { text: 'Amount exceeds the available amount', http: 200 },
  '1014': { text: 'Order does not match the transaction', http: 200 },
  '1015': { text: 'Authorisation expired', http: 200 },
  '1016': { text: 'No processor configured for live mode', http: 403 },
  '1017': { text: 'Declined by the issuer', http: 200 },
  '1018': { text: 'Not paid in time', http: 200 },
  '1019': { text: 'Cancelled by the shopper', http: 200 },
  '0400': { text: 'Invalid input', http: 400 },
  '0401': { text: 'Invalid signature', http: 401 },
  '0403': { text: 'IP not allowed', http: 403 },
  '0404': { text: 'Record not found', http: 404 },
  '0405': { text: 'Method not allowed', http: 405 },
  '0409': { text: 'Conflict', http: 409 },
  '0413': { text: 'Body too large', http: 413 },
  '0415': { text: 'Unsupported media type', http: 415 },
  '0429': { text: 'Too many requests', http: 429 },
  '0500': { text: 'Internal error', http: 500 },
  '0503': { text: 'Service unavailable', http: 503 },
  '0507': { text: 'Storage unavailable', http: 503 },
} as const satisfies Record<string, { text: string; http: number }>;

export type ResultCode = keyof typeof RESULT_CODES;

/** `<code>:<text>` as it appears in result_info, error_message, return_message. */
export function resultText(code: ResultCode): string {
  return `${code}:${RESULT_CODES[code].text}`;
}

/** A request refused as a whole. `detail` must never contain card data or secrets. */
export class ApiError extends Error {
  readonly code: ResultCode;
  readonly http: number;
  readonly field: string | undefined;
  readonly detail: string | undefined;
  /** Extra fields of the error record (e.g. `canonical_string` for a test account's 0401). */
  readonly extra: Readonly<Record<string, string>> | undefined;

  constructor(code: ResultCode, detail?: string, field?: string, extra?: Record<string, string>) {
    super(detail ? `${resultText(code)}: ${detail}` : resultText(code));
    this.code = code;
    this.http = RESULT_CODES[code].http;
    this.detail = detail;
    this.field = field;
    this.extra = extra;
  }
}

/**
 * The refusal of one input field, wherever it is found (a wire body's check or a command's):
 * the core's `invalid_input` outcome, which each interface answers in its own shape
 * (acquiring: `0400` naming the field, `src/web/outcomes.ts`).
 */
export function invalid(field: string, problem: string): Refused {
  return invalidInput(field, problem);
}
