// What the client raises. A payment decline is an answer, not an error (order_status 0 and
// result_info say why); errors are requests the gateway refused as a whole, answers that
// fail their signature, and failures to get an answer at all.
import type { RefusalAnswer } from './types.js';

export class TollgateError extends Error {
  override name = 'TollgateError';
}

/**
 * The gateway refused the whole request (HTTP 4xx/5xx, `return_status` `0`). Refusals carry
 * no `encryption_data`: the gateway may not know the caller's key (0401) and nothing was
 * done, so there is nothing to trust or distrust; they are raised as they are.
 */
export class TollgateApiError extends TollgateError {
  override name = 'TollgateApiError';
  /** Result code, e.g. `0400`; empty when the answer was not the gateway's error record. */
  readonly code: string;
  readonly http_status: number;
  /** `<code>:<text>` */
  readonly return_message: string;
  readonly error_message: string;
  /** The field at fault (`amount`, `capture_orders[0].amount`), or empty. */
  readonly error_field: string;
  /** The gateway's request id (X-Request-Id): quote it to support. */
  readonly request_id: string;
  /** Test accounts, 0401 with a differing signature: the canonical string the gateway signed (card data masked). */
  readonly canonical_string: string | undefined;

  constructor(http_status: number, answer: Partial<RefusalAnswer>, request_id: string) {
    const return_message = answer.return_message ?? '';
    const error_message = answer.error_message ?? '';
    const rid = answer.request_id || request_id;
    super(`HTTP ${http_status} ${return_message || '(no result code)'}${error_message ? `: ${error_message}` : ''}${rid ? ` [request ${rid}]` : ''}`);
    this.http_status = http_status;
    this.code = /^(\d{4}):/.exec(return_message)?.[1] ?? '';
    this.return_message = return_message;
    this.error_message = error_message;
    this.error_field = answer.error_field ?? '';
    this.request_id = rid;
    this.canonical_string = answer.canonical_string;
  }
}

/** 0400: a field is missing or wrong; `error_field` names it. */
export class InvalidRequestError extends TollgateApiError {
  override name = 'InvalidRequestError';
}
/** 0401: the signature did not verify (wrong secret, or wrong merchant_id/account_id). */
export class AuthenticationError extends TollgateApiError {
  override name = 'AuthenticationError';
}
/** 0403 (caller IP not registered) or 1016 (live account without a processor). */
export class PermissionError extends TollgateApiError {
  override name = 'PermissionError';
}
/** 0404: no such record, or an endpoint this gateway does not have. */
export class NotFoundError extends TollgateApiError {
  override name = 'NotFoundError';
}
/** 0409: the Idempotency-Key was used with another body, or its first request is still running; or a payout's `request_id` with another body (`error_field` `request_id`). */
export class ConflictError extends TollgateApiError {
  override name = 'ConflictError';
}
/** 0429, after the retries allowed. */
export class RateLimitError extends TollgateApiError {
  override name = 'RateLimitError';
}
/** 5xx, after the retries allowed. */
export class ServerError extends TollgateApiError {
  override name = 'ServerError';
}

const BY_CODE: Readonly<Record<string, typeof TollgateApiError>> = {
  '0400': InvalidRequestError,
  '0401': AuthenticationError,
  '0403': PermissionError,
  '1016': PermissionError,
  '0404': NotFoundError,
  '0409': ConflictError,
  '0429': RateLimitError,
};
const BY_STATUS: Readonly<Record<number, typeof TollgateApiError>> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

/** The error class for a refusal's result code, else for its HTTP status. */
export function apiErrorFor(http_status: number, answer: Partial<RefusalAnswer>, request_id: string): TollgateApiError {
  const code = /^(\d{4}):/.exec(answer.return_message ?? '')?.[1] ?? '';
  const Kind = BY_CODE[code] ?? BY_STATUS[http_status] ?? (http_status >= 500 ? ServerError : TollgateApiError);
  return new Kind(http_status, answer, request_id);
}

/**
 * An answer's `encryption_data` is missing or does not match the account's key: the answer
 * may have been altered on the way (or the client has an outdated key). Never act on it.
 */
export class SignatureVerificationError extends TollgateError {
  override name = 'SignatureVerificationError';
  constructor(
    readonly reason: 'missing' | 'mismatch',
    readonly http_status: number,
    readonly request_id: string,
    /** What was verified: an answer of the gateway, or a return the shopper's browser brought. */
    readonly subject: 'answer' | 'return' = 'answer',
  ) {
    super(
      subject === 'return'
        ? reason === 'missing'
          ? 'the return carries no encryption_data: pass the whole URL, req.url, or its query string'
          : "the return's encryption_data does not match its fields: pass the return's query unchanged (the whole URL or req.url), and check that the client has the account's key"
        : reason === 'missing'
          ? `the answer (HTTP ${http_status}) carries no encryption_data${request_id ? ` [request ${request_id}]` : ''}`
          : `the answer's encryption_data does not match the account's key${request_id ? ` [request ${request_id}]` : ''}`,
    );
  }
}

/** No answer: connection failures or timeouts on every attempt allowed. `cause` is the last one. */
export class NetworkError extends TollgateError {
  override name = 'NetworkError';
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An answer the client cannot read (not the gateway's JSON or XML). */
export class UnexpectedAnswerError extends TollgateError {
  override name = 'UnexpectedAnswerError';
  constructor(
    message: string,
    readonly http_status: number,
    readonly request_id: string,
  ) {
    super(message);
  }
}

/** Why a notification was refused: never process it. */
export type WebhookProblem = 'missing_header' | 'timestamp' | 'signature' | 'body' | 'encryption_data';

export class WebhookVerificationError extends TollgateError {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookProblem,
    message: string,
  ) {
    super(message);
  }
}
