// The Adyen connector (docs/processors.md#adyen, docs/contract.md §21): the `Processor` of
// types.ts over Adyen's Checkout API v71, in plain HTTP with the document's shapes (why not
// the official library: docs/decisions/0071-adyen-connector.md). Every call carries
// `X-API-Key`, `Idempotency-Key` = the attempt id, and ends when the call's signal aborts.
// Captures, cancels and refunds are answered `received` (pending) and confirmed by their
// notifications (webhooks.ts). What is not a readable answer is `unknown`, with a reason that
// names the failure and never the request, the card or the key (docs/security.md). Our
// credentials refused (401, 403) declines an authorisation `1007` at once and is logged for
// the operator: asking again will not mend it.
import http from 'node:http';
import https from 'node:https';
import type {
  AttemptStatusAnswer,
  AuthoriseInput,
  AuthoriseOutcome,
  CancelInput,
  CaptureInput,
  DisputeResponseInput,
  DisputeResponseOutcome,
  OperationOutcome,
  OperationStatusAnswer,
  Processor,
  ProcessorCall,
  RefundInput,
  WebhookParse,
  WebhookRequest,
} from '../types.js';
import { respondAtAdyen } from './dispute-response.js';
import { parseAdyenWebhook } from './webhooks.js';
import {
  adyenAmount,
  authoriseOfAnswer,
  cancelRequest,
  captureRequest,
  detailsRequest,
  FRACTION_REFUSED,
  operationOfAnswer,
  paymentRequest,
  refundRequest,
  standaloneCancelRequest,
} from './wire.js';

/** Adyen's test environment; a live account's address has its own prefix (docs/processors.md#adyen). */
export const ADYEN_TEST_BASE_URL = 'https://checkout-test.adyen.com/v71';

export interface AdyenSettings {
  /** Default: the test environment. */
  base_url?: string;
  api_key: string;
  merchant_account: string;
  /** The Disputes API v30's address (default: from `base_url`, disputesUrlOf). */
  disputes_url?: string;
  /** The HMAC key of the webhook, hex, as the Customer Area shows it. */
  hmac_key: string;
  /** Connections kept to Adyen at most (default 1,024, as the remote sandbox's). */
  max_connections?: number;
  /** Where failures that asking again will not mend are told (default: one JSON line on standard error). */
  log?: (fields: Record<string, unknown>, message: string) => void;
  now_ms?: () => number;
}

/** An Adyen answer larger than this is not read (a card payment's answer is a few KiB). */
const ANSWER_LIMIT = 262_144;
const DEFAULT_CONNECTIONS = 1_024;

type Reply = { kind: 'answer'; status: number; body: unknown } | { kind: 'failed'; reason: string };
type Unknown = { kind: 'unknown'; reason: string };
/** Our credentials refused: not `unknown`, since asking again gives the same. */
type Refused = { kind: 'refused'; status: number };

const stderrLog = (fields: Record<string, unknown>, message: string) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', time: Date.now(), ...fields, msg: message })}\n`);
};

/** Status questions: Checkout v71 has no status by reference or idempotency key; the notification settles the attempt. */
const NO_STATUS = 'Adyen has no status query for this in Checkout v71: its notification settles the attempt';
const CREDENTIALS_REFUSED = 'processor refused our credentials';

// Longer than docs/style.md §16's 70 lines: one closure over the settings and the Agent, its
// parts (send, post, operate, the seven calls) each short, as in remote/connector.ts.
export function createAdyenProcessor(s: AdyenSettings): Processor {
  const base = new URL(s.base_url || ADYEN_TEST_BASE_URL);
  const client = base.protocol === 'https:' ? https : http;
  const connections = s.max_connections ?? DEFAULT_CONNECTIONS;
  const agent = new client.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections, timeout: 60_000 });
  const log = s.log ?? stderrLog;
  const disputes = new URL(s.disputes_url || disputesUrlOf(base));
  // The Disputes API's own agent when its scheme differs from Checkout's (a few calls a dispute).
  const disputesClient = disputes.protocol === 'https:' ? https : http;
  const disputesAgent = disputesClient === client ? agent : new disputesClient.Agent({ keepAlive: true, maxSockets: 16, timeout: 60_000 });

  function send(path: string, body: unknown, call: ProcessorCall, at: URL = base, key = call.attempt_id): Promise<Reply> {
    const raw = JSON.stringify(body);
    const headers = {
      accept: 'application/json',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(raw)),
      'x-api-key': s.api_key,
      'idempotency-key': key,
    };
    const [via, viaAgent] = at === base ? [client, agent] : [disputesClient, disputesAgent];
    const target = `${at.pathname.replace(/\/+$/, '')}${path}`;
    return new Promise<Reply>((resolve) => {
      if (call.signal.aborted) return resolve({ kind: 'failed', reason: 'no answer by the deadline (nothing sent)' });
      const req = via.request(
        { protocol: at.protocol, hostname: at.hostname, port: at.port, path: target, method: 'POST', headers, agent: viaAgent, signal: call.signal },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= ANSWER_LIMIT) chunks.push(c);
          });
          res.on('end', () => {
            if (size > ANSWER_LIMIT) return resolve({ kind: 'failed', reason: `Adyen's answer is over ${ANSWER_LIMIT} bytes` });
            let parsed: unknown;
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              parsed = undefined;
            }
            resolve({ kind: 'answer', status: res.statusCode ?? 0, body: parsed });
          });
          res.on('error', (e) => resolve({ kind: 'failed', reason: networkReason(e, call, true) }));
        },
      );
      req.on('error', (e) => resolve({ kind: 'failed', reason: networkReason(e, call, req.writableFinished) }));
      req.end(raw);
    });
  }

  /** The body of a 2xx answer, our credentials refused, or `unknown` naming why there is no answer. */
  async function post(
    path: string,
    operation: string,
    body: unknown,
    ok: number,
    call: ProcessorCall,
  ): Promise<{ kind: 'answer'; body: unknown } | Unknown | Refused> {
    const reply = await send(path, body, call);
    if (reply.kind === 'failed') return { kind: 'unknown', reason: reply.reason };
    const { status } = reply;
    const err = reply.body as { errorCode?: unknown; errorType?: unknown } | undefined;
    const code = typeof err?.errorCode === 'string' ? err.errorCode.slice(0, 20) : '';
    if (status === 401 || status === 403) {
      // Named by the account's merchant account and the key's last four only.
      log(
        {
          connector: 'adyen',
          attempt_id: call.attempt_id,
          operation,
          status,
          error_code: code,
          merchant_account: s.merchant_account,
          api_key: `••••${s.api_key.slice(-4)}`,
        },
        `Adyen refused our credentials (${status}): check the processor's api_key and merchant_account (tollgate processor set --connector adyen)`,
      );
      return { kind: 'refused', status };
    }
    if (status >= 500) return { kind: 'unknown', reason: `Adyen answered ${status}${code ? ` (errorCode ${code})` : ''}` };
    if (status !== ok) {
      // A request Adyen finds malformed (400, 422): asking again will not mend it; an operator must look.
      log({ connector: 'adyen', attempt_id: call.attempt_id, operation, status, error_code: code }, 'Adyen refused our request');
      return { kind: 'unknown', reason: `Adyen refused the request: ${status}${code ? ` errorCode ${code}` : ''}` };
    }
    if (reply.body === undefined || reply.body === null || typeof reply.body !== 'object')
      return { kind: 'unknown', reason: `Adyen answered ${status} without a JSON object` };
    return { kind: 'answer', body: reply.body };
  }

  /** A capture, cancel or refund: `received` is pending; credentials refused decline `1007`. */
  async function operate(path: string, operation: string, body: unknown, call: ProcessorCall): Promise<OperationOutcome> {
    const r = await post(path, operation, body, 201, call);
    if (r.kind === 'unknown') return r;
    if (r.kind === 'refused') return { kind: 'declined', code: '1007', reason: CREDENTIALS_REFUSED, credentials_refused: true };
    return operationOfAnswer(r.body);
  }

  const psp = (reference: string) => `/payments/${encodeURIComponent(reference)}`;

  return {
    name: 'adyen',
    status_queries: false,
    async authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome> {
      const amount = adyenAmount(input.currency, Number(input.amount_minor));
      if (!amount) return { kind: 'declined', code: '1007', reference: '' };
      const r = await post('/payments', 'authorise', paymentRequest(input, s.merchant_account, amount), 200, call);
      if (r.kind === 'unknown') return r;
      if (r.kind === 'refused') return { kind: 'declined', code: '1007', reference: '', credentials_refused: true };
      return authoriseOfAnswer(r.body, !!input.authentication && !input.threeds);
    },
    async completeAuthentication(input, call: ProcessorCall): Promise<AuthoriseOutcome> {
      const body = detailsRequest(input.params);
      // Back without what Adyen puts on the return URL: nothing to ask Adyen with; not authenticated.
      if (!body) return { kind: 'declined', code: '1007', reference: input.reference, authentication_failed: true };
      const r = await post('/payments/details', 'authorise', body, 200, call);
      if (r.kind === 'unknown') return r;
      if (r.kind === 'refused') return { kind: 'declined', code: '1007', reference: input.reference, credentials_refused: true };
      return authoriseOfAnswer(r.body);
    },
    async authoriseStatus(): Promise<AttemptStatusAnswer> {
      return { kind: 'unknown', reason: NO_STATUS };
    },
    async capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome> {
      if (!input.reference) return { kind: 'declined', code: '1007', reason: 'no Adyen pspReference for this payment' };
      const amount = adyenAmount(input.currency, Number(input.amount_minor));
      if (!amount) return { kind: 'declined', code: '1007', reason: FRACTION_REFUSED };
      return operate(`${psp(input.reference)}/captures`, 'capture', captureRequest(input, s.merchant_account, amount), call);
    },
    async cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome> {
      if (!input.reference) return operate('/cancels', 'cancel', standaloneCancelRequest(input, s.merchant_account), call);
      return operate(`${psp(input.reference)}/cancels`, 'cancel', cancelRequest(input, s.merchant_account), call);
    },
    async refund(input: RefundInput, call: ProcessorCall): Promise<OperationOutcome> {
      if (!input.reference) return { kind: 'declined', code: '1007', reason: 'no Adyen pspReference for this payment' };
      const amount = adyenAmount(input.currency, Number(input.amount_minor));
      if (!amount) return { kind: 'declined', code: '1007', reason: FRACTION_REFUSED };
      return operate(`${psp(input.reference)}/refunds`, 'refund', refundRequest(input, s.merchant_account, amount), call);
    },
    async operationStatus(): Promise<OperationStatusAnswer> {
      return { kind: 'unknown', reason: NO_STATUS };
    },
    respondToDispute(input: DisputeResponseInput, call: ProcessorCall): Promise<DisputeResponseOutcome> {
      const api = {
        merchant_account: s.merchant_account,
        send: (path: string, body: unknown, key: string) => send(path, body, call, disputes, key),
        refused: (status: number) =>
          log(
            {
              connector: 'adyen',
              attempt_id: call.attempt_id,
              operation: 'dispute',
              status,
              merchant_account: s.merchant_account,
              api_key: `••••${s.api_key.slice(-4)}`,
            },
            `Adyen refused our credentials (${status}) on its Disputes API: the API key needs the Disputes API role (tollgate processor set --connector adyen)`,
          ),
      };
      return respondAtAdyen(api, input, call.attempt_id);
    },
    parseWebhook(req: WebhookRequest): WebhookParse {
      return parseAdyenWebhook(s.hmac_key, req, (s.now_ms ?? Date.now)());
    },
  };
}

/**
 * Where Adyen's Disputes API is for a Checkout base URL: its Customer Area host, live for a
 * live Checkout address (`…-checkout-live…`), else test; a base URL that is not Adyen's (a
 * proxy, the tests' mock) serves it under the same origin.
 */
export function disputesUrlOf(base: URL): string {
  const path = '/ca/services/DisputeService/v30';
  if (!/(^|\.)adyen(payments)?\.com$/.test(base.hostname)) return `${base.origin}${path}`;
  return base.hostname.includes('-live') ? `https://ca-live.adyen.com${path}` : `https://ca-test.adyen.com${path}`;
}

/** Why a call got no answer: the deadline, a refused connection (nothing sent), a reset, another network error. */
function networkReason(e: unknown, call: ProcessorCall, sent: boolean): string {
  if (call.signal.aborted) return 'no answer by the deadline';
  const code = String((e as NodeJS.ErrnoException)?.code ?? '');
  if (code === 'ECONNREFUSED') return 'connection refused: nothing was sent';
  if (code === 'ECONNRESET' || (e as Error)?.message === 'socket hang up') return `connection reset ${sent ? 'after sending' : 'while sending'}`;
  return `network error ${code || (e as Error)?.name || 'unknown'}`.slice(0, 120);
}
