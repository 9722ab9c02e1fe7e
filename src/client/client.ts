// The merchant client: one method per acquiring and payout endpoint over one signed, retrying,
// verifying `call`. A new endpoint is one line in ENDPOINTS, one in Endpoints and one method.
import { randomUUID } from 'node:crypto';
import { apiErrorFor, SignatureVerificationError, TollgateError, UnexpectedAnswerError } from './errors.js';
import { type HeadersLike, type NotificationKeys, verifyNotification } from './notifications.js';
import { DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, type FetchLike, type RetryOptions, send } from './transport.js';
import type {
  AcceptDisputeRequest,
  ApmAnswer,
  ApmRequest,
  AuthoriseAnswer,
  AuthoriseRequest,
  CancelAnswer,
  CancelPayoutAnswer,
  CancelPayoutRequest,
  CancelRequest,
  CancelSubscriptionAnswer,
  CancelSubscriptionRequest,
  CaptureAnswer,
  CaptureRequest,
  CheckoutForm,
  CheckoutRequest,
  DisputeAnswer,
  DisputeEvidenceRequest,
  NotificationEvent,
  PaymentMethodsAnswer,
  PaymentMethodsRequest,
  PayoutAnswer,
  PayoutRequest,
  QueryOrdersAnswer,
  QueryOrdersRequest,
  RefundAnswer,
  RefundRequest,
  RetrievalPayoutAnswer,
  RetrievalPayoutRequest,
  RetrieveDisputesAnswer,
  RetrieveDisputesRequest,
  RetrieveSettlementAnswer,
  RetrieveSettlementRequest,
  ReviewAnswer,
  ReviewRequest,
  SearchRefundsAnswer,
  SearchRefundsRequest,
  ThreeDSReturn,
} from './types.js';
import { encodeBody, parseAnswer, signBody, verifySignature } from './wire.js';

export interface TollgateClientOptions {
  /** The gateway's origin, e.g. `http://127.0.0.1:8080`. */
  base_url: string;
  merchant_id: string;
  account_id: string;
  /** The account's secret key: signs requests and verifies answers and notifications. */
  secret: string;
  /** Keys also accepted on answers and notifications while a key rotation is under way. */
  previous_secrets?: readonly string[];
  /** The account's `whsec_…` secret, for `notifications.verify`. */
  webhook_secret?: string;
  /** A fetch implementation (tests route it through `app.inject`); the global fetch otherwise. */
  fetch?: FetchLike;
  /** Per attempt; default 30 s. */
  timeout_ms?: number;
  retry?: Partial<RetryOptions>;
  /** Notification timestamp tolerance; default 300 s. */
  webhook_tolerance_s?: number;
}

export interface CallOptions {
  /** Reused on every retry of this call; generated when absent. */
  idempotency_key?: string;
  /** Sent as X-Request-Id (the gateway echoes it and logs it). */
  request_id?: string;
  signal?: AbortSignal;
  timeout_ms?: number;
  retry?: Partial<RetryOptions>;
}

export interface CallResult<A> {
  answer: A;
  http_status: number;
  /** X-Request-Id of the answer. */
  request_id: string;
  idempotency_key: string;
  /** The gateway answered from its idempotency store (`Idempotent-Replayed: true`). */
  replayed: boolean;
  attempts: number;
}

/** Path of each endpoint. */
export const ENDPOINTS = {
  authorise: '/v1/authorise',
  queryOrders: '/v1/retrievalTrans',
  capture: '/v1/capture',
  cancel: '/v1/cancel',
  refund: '/v1/refund',
  searchRefunds: '/v1/retrievalRefund',
  review: '/v1/review',
  paymentMethods: '/v1/paymentmethods',
  authoriseApm: '/v1/authorise',
  cancelSubscription: '/v1/cancelsubscription',
  createPayout: '/v1/payout',
  cancelPayout: '/v1/cancelpayout',
  retrievePayouts: '/v1/retrievalPayout',
  retrieveDisputes: '/v1/retrievalDispute',
  disputeEvidence: '/v1/disputeEvidence',
  acceptDispute: '/v1/acceptDispute',
  retrieveSettlement: '/v1/retrievalSettlement',
} as const;

/** Request and answer type of each endpoint. */
export interface Endpoints {
  authorise: { request: AuthoriseRequest; answer: AuthoriseAnswer };
  queryOrders: { request: QueryOrdersRequest; answer: QueryOrdersAnswer };
  capture: { request: CaptureRequest; answer: CaptureAnswer };
  cancel: { request: CancelRequest; answer: CancelAnswer };
  refund: { request: RefundRequest; answer: RefundAnswer };
  searchRefunds: { request: SearchRefundsRequest; answer: SearchRefundsAnswer };
  review: { request: ReviewRequest; answer: ReviewAnswer };
  paymentMethods: { request: PaymentMethodsRequest; answer: PaymentMethodsAnswer };
  authoriseApm: { request: ApmRequest; answer: ApmAnswer };
  cancelSubscription: { request: CancelSubscriptionRequest; answer: CancelSubscriptionAnswer };
  createPayout: { request: PayoutRequest; answer: PayoutAnswer };
  cancelPayout: { request: CancelPayoutRequest; answer: CancelPayoutAnswer };
  retrievePayouts: { request: RetrievalPayoutRequest; answer: RetrievalPayoutAnswer };
  retrieveDisputes: { request: RetrieveDisputesRequest; answer: RetrieveDisputesAnswer };
  disputeEvidence: { request: DisputeEvidenceRequest; answer: DisputeAnswer };
  acceptDispute: { request: AcceptDisputeRequest; answer: DisputeAnswer };
  retrieveSettlement: { request: RetrieveSettlementRequest; answer: RetrieveSettlementAnswer };
}

export type EndpointName = keyof typeof ENDPOINTS & keyof Endpoints;

const RETURN_FIELDS = ['merchant_id', 'account_id', 'order_no', 'transaction_id', 'order_status', 'result_info', 'threeds_result'] as const;

export class TollgateClient {
  readonly merchant_id: string;
  readonly account_id: string;
  readonly notifications: { verify(rawBody: string | Uint8Array, headers: HeadersLike, opts?: { now_ms?: number }): NotificationEvent };
  private readonly base_url: string;
  private readonly secret: string;
  private readonly secrets: readonly string[];
  private readonly fetchFn: FetchLike;
  private readonly timeout_ms: number;
  private readonly retry: RetryOptions;

  constructor(o: TollgateClientOptions) {
    for (const f of ['base_url', 'merchant_id', 'account_id', 'secret'] as const) {
      if (typeof o[f] !== 'string' || o[f] === '') throw new TypeError(`TollgateClient: ${f} is required`);
    }
    this.base_url = o.base_url.replace(/\/+$/, '');
    this.merchant_id = o.merchant_id;
    this.account_id = o.account_id;
    this.secret = o.secret;
    this.secrets = [o.secret, ...(o.previous_secrets ?? [])];
    this.fetchFn = o.fetch ?? globalThis.fetch;
    this.timeout_ms = o.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...o.retry };
    const tolerance_s = o.webhook_tolerance_s;
    const secrets = this.secrets;
    this.notifications = {
      verify(rawBody, headers, opts = {}) {
        if (!o.webhook_secret) throw new TollgateError('TollgateClient: webhook_secret is required to verify notifications');
        const keys: NotificationKeys = { webhook_secret: o.webhook_secret, secrets };
        return verifyNotification(rawBody, headers, keys, { tolerance_s, ...opts });
      },
    };
  }

  /** Direct card payment. A decline is an answer (order_status 0, result_info), not an error. */
  authorise(request: AuthoriseRequest, options?: CallOptions): Promise<AuthoriseAnswer> {
    return this.answer('authorise', request, options);
  }

  /** Order query by ids, or by date range with a cursor (the caller's IP must be registered). */
  queryOrders(request: QueryOrdersRequest, options?: CallOptions): Promise<QueryOrdersAnswer> {
    return this.answer('queryOrders', request, options);
  }

  capture(request: CaptureRequest, options?: CallOptions): Promise<CaptureAnswer> {
    return this.answer('capture', request, options);
  }

  cancel(request: CancelRequest, options?: CallOptions): Promise<CancelAnswer> {
    return this.answer('cancel', request, options);
  }

  refund(request: RefundRequest, options?: CallOptions): Promise<RefundAnswer> {
    return this.answer('refund', request, options);
  }

  searchRefunds(request: SearchRefundsRequest, options?: CallOptions): Promise<SearchRefundsAnswer> {
    return this.answer('searchRefunds', request, options);
  }

  review(request: ReviewRequest, options?: CallOptions): Promise<ReviewAnswer> {
    return this.answer('review', request, options);
  }

  /** The card brands and alternative methods that apply to a purchase, highest expected approval first. */
  paymentMethods(request: PaymentMethodsRequest, options?: CallOptions): Promise<PaymentMethodsAnswer> {
    return this.answer('paymentMethods', request, options);
  }

  /**
   * An alternative-method payment (Pix, Boleto, iDEAL): the answer's `issuer_url` is where
   * the shopper pays; the outcome comes as a notification and on `return_url` (`verifyReturn`).
   */
  authoriseApm(request: ApmRequest, options?: CallOptions): Promise<ApmAnswer> {
    return this.answer('authoriseApm', request, options);
  }

  /**
   * Cancels a subscription (`Inactived` at once; no later deduction; `subscription.cancelled`
   * notified). `cancel_status` `1` also when it had ended already, `0` for an unknown pair.
   */
  cancelSubscription(request: CancelSubscriptionRequest, options?: CallOptions): Promise<CancelSubscriptionAnswer> {
    return this.answer('cancelSubscription', request, options);
  }

  /**
   * Pays a beneficiary's bank account from the available balance of `source_currency`. The
   * answer is the payout record: `COMPLETED` at once for sandbox `LOCAL` payouts,
   * `PROCESSING` (outcome by `payout.completed`/`payout.failed` and `retrievePayouts`),
   * `SCHEDULED` for a later `payment_date`, or `FAILED` with `failure_type` (an answer, not
   * an error: `INSUFFICIENT_FUNDS` reserves nothing).
   *
   * `request.request_id` (a UUID you choose and store first) is the payout's idempotency
   * key. This call's retries resend the same signed body, so they keep it; a retry of your
   * own (after a crash or a NetworkError) must send the same `request_id` and body, and gets
   * the same payout in its current status, never a second one. The same `request_id` with
   * another body raises ConflictError (0409, `error_field` `request_id`).
   */
  createPayout(request: PayoutRequest, options?: CallOptions): Promise<PayoutAnswer> {
    return this.answer('createPayout', request, options);
  }

  /**
   * Cancels a `SCHEDULED` payout named by `request_id` or `transaction_id`; its reserved
   * funds are available again. `cancel_status` `1` (also when it was cancelled already), or
   * `0` with `error_message` `1012:…` (already dispatched) or `0404:Record not found`.
   */
  cancelPayout(request: CancelPayoutRequest, options?: CallOptions): Promise<CancelPayoutAnswer> {
    return this.answer('cancelPayout', request, options);
  }

  /**
   * Payouts by `request_ids`, `transaction_ids` or `short_reference_ids` (an unknown id is an
   * item with `query_result` `0`), or by `start_date`/`end_date` with `cursor`.
   */
  retrievePayouts(request: RetrievalPayoutRequest, options?: CallOptions): Promise<RetrievalPayoutAnswer> {
    return this.answer('retrievePayouts', request, options);
  }

  /**
   * Disputes (chargebacks and inquiries) by `dispute_ids`, `transaction_ids` or `order_nos`
   * (an unknown id, or another account's, is an item with `query_result` `0`), or by
   * `start_date`/`end_date` with `cursor`. The caller's IP must be registered.
   */
  retrieveDisputes(request: RetrieveDisputesRequest, options?: CallOptions): Promise<RetrieveDisputesAnswer> {
    return this.answer('retrieveDisputes', request, options);
  }

  /**
   * Adds evidence (text fields, and `files` as base64: PDF, PNG or JPEG by content, 5 MB in
   * all) to a dispute that asks for a response; `submit: '1'` sends it to the processor
   * (`under_review`). Refusals store nothing: InvalidRequestError naming the field
   * (`files[0].content_base64`, `files`), NotFoundError, ConflictError for a dispute under
   * review or closed.
   */
  disputeEvidence(request: DisputeEvidenceRequest, options?: CallOptions): Promise<DisputeAnswer> {
    return this.answer('disputeEvidence', request, options);
  }

  /** Accepts a dispute (closed as `accepted`, lost without defence); again for an accepted one answers it as it is. */
  acceptDispute(request: AcceptDisputeRequest, options?: CallOptions): Promise<DisputeAnswer> {
    return this.answer('acceptDispute', request, options);
  }

  /**
   * The account's daily settlement batches from `start_date` to `end_date` (`YYYYMMDD`, UTC,
   * at most 100 days; at most 100 batches), each with its lines (`format` `json`), or the
   * report as CSV text in `csv` (`format` `csv`). The caller's IP must be registered.
   */
  retrieveSettlement(request: RetrieveSettlementRequest, options?: CallOptions): Promise<RetrieveSettlementAnswer> {
    return this.answer('retrieveSettlement', request, options);
  }

  /**
   * The signed form that starts a hosted checkout: render it on the merchant's page as hidden
   * inputs of `<form method="post" action="{action}">` and let the shopper's browser post it.
   * The fields carry no card data; the secret never leaves the server that calls this.
   */
  checkoutForm(request: CheckoutRequest): CheckoutForm {
    const body = signBody({ merchant_id: this.merchant_id, account_id: this.account_id, ...request } as Record<string, unknown>, this.secret, 'form');
    const fields: Array<[string, string]> = encodeBody(body, 'form')
      .payload.split('&')
      .map((pair) => {
        const [k = '', v = ''] = pair.split('=');
        return [decodeURIComponent(k), decodeURIComponent(v)];
      });
    return { action: `${this.base_url}/v1/checkout`, fields };
  }

  /** An endpoint with the answer's metadata (request id, idempotency key, replayed, attempts). */
  call<K extends EndpointName>(endpoint: K, request: Endpoints[K]['request'], options?: CallOptions): Promise<CallResult<Endpoints[K]['answer']>> {
    return this.post<Endpoints[K]['answer']>(ENDPOINTS[endpoint], request as unknown as Record<string, unknown>, options);
  }

  /**
   * Any signed POST: adds merchant_id and account_id (fields may override them), signs,
   * sends with an Idempotency-Key and retries, reads the answer, verifies its signature,
   * and raises refusals as TollgateApiError.
   */
  async post<A = Record<string, unknown>>(path: string, fields: Record<string, unknown>, options: CallOptions = {}): Promise<CallResult<A>> {
    const body = signBody({ merchant_id: this.merchant_id, account_id: this.account_id, ...fields }, this.secret);
    const idempotency_key = options.idempotency_key ?? randomUUID();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, application/xml',
      'idempotency-key': idempotency_key,
    };
    if (options.request_id) headers['x-request-id'] = options.request_id;
    const raw = await send(
      this.fetchFn,
      `${this.base_url}${path}`,
      { headers, body: JSON.stringify(body) },
      { timeout_ms: options.timeout_ms ?? this.timeout_ms, retry: { ...this.retry, ...options.retry }, signal: options.signal },
    );
    const request_id = raw.headers.get('x-request-id') ?? '';
    const ok = raw.status >= 200 && raw.status < 300;
    let answer: Record<string, unknown>;
    try {
      answer = parseAnswer(raw.text);
    } catch (e) {
      if (!ok) throw apiErrorFor(raw.status, {}, request_id); // e.g. a proxy's HTML error page
      throw new UnexpectedAnswerError(`HTTP ${raw.status}: ${(e as Error).message}`, raw.status, request_id);
    }
    // A refusal is unsigned (see TollgateApiError): raised without a signature check.
    if (!ok) throw apiErrorFor(raw.status, answer, request_id);
    if (typeof answer.encryption_data !== 'string' || answer.encryption_data === '') throw new SignatureVerificationError('missing', raw.status, request_id);
    if (!verifySignature(answer, this.secrets)) throw new SignatureVerificationError('mismatch', raw.status, request_id);
    if (answer.return_status === '0') throw apiErrorFor(raw.status, answer, request_id);
    return {
      answer: answer as A,
      http_status: raw.status,
      request_id,
      idempotency_key,
      replayed: raw.headers.get('idempotent-replayed') === 'true',
      attempts: raw.attempts,
    };
  }

  /**
   * The result the shopper brings back to `return_url` (after 3-D Secure, an APM or the
   * hosted page), verified. Takes what a handler has: the full URL, a Node handler's
   * `req.url` (path and query), the query string with or without `?`, or its parameters.
   * Throws SignatureVerificationError when it carries no signature or one that does not
   * match the account key.
   */
  verifyReturn(params: string | URLSearchParams | Record<string, string>): ThreeDSReturn {
    let search: URLSearchParams;
    if (params instanceof URLSearchParams) search = params;
    else if (typeof params !== 'string') search = new URLSearchParams(params);
    else search = new URLSearchParams(queryOf(params));
    const fields: Record<string, string> = {};
    for (const f of RETURN_FIELDS) fields[f] = search.get(f) ?? '';
    const encryption_data = search.get('encryption_data') ?? '';
    if (!encryption_data) throw new SignatureVerificationError('missing', 0, '', 'return');
    const signed = { ...fields, encryption_data };
    if (!verifySignature(signed, this.secrets)) throw new SignatureVerificationError('mismatch', 0, '', 'return');
    return signed as unknown as ThreeDSReturn;
  }

  private async answer<K extends EndpointName>(endpoint: K, request: Endpoints[K]['request'], options?: CallOptions): Promise<Endpoints[K]['answer']> {
    return (await this.call(endpoint, request, options)).answer;
  }
}

/**
 * The query of a return as a handler has it: a full URL, a path with its query (`req.url`),
 * or the query itself with or without `?`; a fragment is dropped.
 */
function queryOf(text: string): string {
  const hash = text.indexOf('#');
  const withoutFragment = hash >= 0 ? text.slice(0, hash) : text;
  const mark = withoutFragment.indexOf('?');
  if (mark >= 0) return withoutFragment.slice(mark + 1);
  // No `?`: a URL or a path without a query carries nothing; anything else is the query.
  return /^[a-z][a-z0-9+.-]*:|^\//i.test(withoutFragment) ? '' : withoutFragment;
}
