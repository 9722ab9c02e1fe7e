// The remote sandbox's connector (docs/remote-sandbox.md): the `Processor` of types.ts over
// the sandbox's HTTP protocol (protocol.ts). Every call carries `Idempotency-Key` = the
// attempt id and ends when the call's signal aborts (its deadline, callWithDeadline). What
// is not a readable answer is `unknown`, with a reason that names the failure and never the
// request (docs/security.md): a network error or reset, the deadline, a 5xx, and a 4xx (our
// request was malformed or our key refused: logged apart, since asking again will not help).
//
// The transport is node:http with a keep-alive Agent bounded at 1,024 connections: a
// gateway waits on up to that many calls at once (issue 31: at 64 a 300 ms processor caps a
// closed loop at about 210 a second). The brief named undici's Agent; undici is not a
// dependency of this package, and node's Agent gives the same bound without one.
import http from 'node:http';
import https from 'node:https';
import type {
  ApmStart,
  ApmStartInput,
  AttemptStatusAnswer,
  AuthoriseInput,
  AuthoriseOutcome,
  CancelInput,
  CaptureInput,
  MoneyOperation,
  OperationOutcome,
  OperationStatusAnswer,
  PayoutInput,
  PayoutOutcome,
  Processor,
  ProcessorCall,
  ProcessorNotification,
  RefundInput,
  WebhookParse,
  WebhookRequest,
} from '../types.js';
import {
  apmOfWire,
  authoriseOfWire,
  IDEMPOTENCY_HEADER,
  operationOfWire,
  outcomeOfWire,
  payoutOfWire,
  SIGNATURE_HEADER,
  type WireAnswer,
  type WireNotification,
} from './protocol.js';
import { checkWebhookSignature } from './webhooks.js';

export interface RemoteSandboxSettings {
  base_url: string;
  api_key?: string;
  webhook_secret?: string;
  /** Shown as `connector` in answers (default `sandbox`). */
  name?: string;
  /** Connections kept to the sandbox at most (default 1,024). */
  max_connections?: number;
  /** Where failures that asking again will not mend are told (default: one JSON line on standard error). */
  log?: (fields: Record<string, unknown>, message: string) => void;
  /** The clock the webhook signature's timestamp is checked against (tests). */
  now_ms?: () => number;
}

/** A sandbox answer larger than this is not read (the largest real one is under 1 KiB). */
const ANSWER_LIMIT = 65_536;
const DEFAULT_CONNECTIONS = 1_024;

type Reply = { kind: 'answer'; status: number; body: unknown } | { kind: 'failed'; reason: string; not_sent?: boolean };
type Unknown = { kind: 'unknown'; reason: string; not_sent?: boolean };

const stderrLog = (fields: Record<string, unknown>, message: string) => {
  process.stderr.write(`${JSON.stringify({ level: 'warn', time: Date.now(), ...fields, msg: message })}\n`);
};

// Longer than docs/style.md §16's 70 lines: one closure over the settings and the Agent, its
// parts (send, the calls, the webhook reader) each short, as in adyen/connector.ts.
export function createRemoteSandboxProcessor(s: RemoteSandboxSettings): Processor {
  const base = new URL(s.base_url);
  const client = base.protocol === 'https:' ? https : http;
  const connections = s.max_connections ?? DEFAULT_CONNECTIONS;
  const agent = new client.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections, timeout: 60_000 });
  const log = s.log ?? stderrLog;
  const prefix = base.pathname.replace(/\/+$/, '');

  function send(method: 'GET' | 'POST', path: string, body: unknown, call: ProcessorCall): Promise<Reply> {
    const raw = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', [IDEMPOTENCY_HEADER]: call.attempt_id };
    if (raw !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(raw)) });
    if (s.api_key) headers.authorization = `Bearer ${s.api_key}`;
    return new Promise<Reply>((resolve) => {
      if (call.signal.aborted) return resolve({ kind: 'failed', reason: 'no answer by the deadline (nothing sent)', not_sent: true });
      const req = client.request(
        { protocol: base.protocol, hostname: base.hostname, port: base.port, path: `${prefix}${path}`, method, headers, agent, signal: call.signal },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= ANSWER_LIMIT) chunks.push(c);
          });
          res.on('end', () => {
            if (size > ANSWER_LIMIT) return resolve({ kind: 'failed', reason: `the sandbox's answer is over ${ANSWER_LIMIT} bytes` });
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
      req.on('error', (e) => resolve({ kind: 'failed', reason: networkReason(e, call, req.writableFinished), not_sent: neverSent(e, call) }));
      req.end(raw);
    });
  }

  /** The answer of a POST operation, or `unknown` naming why there is none. */
  async function operate(path: string, body: unknown, call: ProcessorCall): Promise<WireAnswer | Unknown> {
    const r = readAnswer(await send('POST', path, body, call), path, call, false);
    // Only a status query reads 404 as not found; readAnswer made any other 404 unknown.
    return 'attempt_id' in r || r.kind === 'unknown' ? r : { kind: 'unknown', reason: 'the sandbox answered 404' };
  }

  /** A status query: the answer, `not_found`, or `unknown`. */
  async function ask(path: string, call: ProcessorCall): Promise<WireAnswer | Unknown | { kind: 'not_found' }> {
    const reply = await send('GET', path, undefined, call);
    return readAnswer(reply, path.split('?')[0] ?? path, call, true);
  }

  function readAnswer(reply: Reply, path: string, call: ProcessorCall, isStatus: boolean): WireAnswer | Unknown | { kind: 'not_found' } {
    if (reply.kind === 'failed') return { kind: 'unknown', reason: reply.reason, ...(reply.not_sent ? { not_sent: true } : {}) };
    const { status, body } = reply;
    const error = typeof (body as { error?: unknown })?.error === 'string' ? String((body as { error: string }).error).slice(0, 60) : '';
    if (isStatus && status === 404 && error === 'not_found') return { kind: 'not_found' };
    if (status >= 500) return { kind: 'unknown', reason: `the sandbox answered ${status}${error ? ` (${error})` : ''}` };
    if (status !== 200) {
      // Asking again will not mend a malformed request or a refused key: an operator must look.
      log({ connector: s.name ?? 'sandbox', attempt_id: call.attempt_id, path, status, error }, 'the remote sandbox refused our request');
      return { kind: 'unknown', reason: `the sandbox refused the request: ${status}${error ? ` ${error}` : ''}` };
    }
    const w = body as WireAnswer | undefined;
    if (!w || typeof w !== 'object' || typeof w.status !== 'string') return { kind: 'unknown', reason: 'the sandbox answered 200 without a readable answer' };
    if (w.attempt_id !== call.attempt_id) return { kind: 'unknown', reason: 'the sandbox answered about another attempt' };
    return w;
  }

  const mapped = <T>(w: WireAnswer | Unknown, map: (w: WireAnswer) => T): T | Unknown => ('attempt_id' in w ? map(w) : w);
  const id = (attempt_id: string) => encodeURIComponent(attempt_id);

  return {
    name: s.name ?? 'sandbox',
    async authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome> {
      const { pan, security_code, ...card } = input.card;
      const body = { ...input, card: { number: pan, ...card, ...(security_code === undefined ? {} : { security_code }) } };
      return mapped(await operate('/v1/authorise', body, call), authoriseOfWire);
    },
    async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
      const w = await ask(`/v1/authorise/${id(call.attempt_id)}`, call);
      return 'attempt_id' in w ? authoriseOfWire(w) : w;
    },
    async capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome> {
      return mapped(await operate('/v1/capture', input, call), operationOfWire);
    },
    async cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome> {
      return mapped(await operate('/v1/cancel', input, call), operationOfWire);
    },
    async refund(input: RefundInput, call: ProcessorCall): Promise<OperationOutcome> {
      return mapped(await operate('/v1/refund', input, call), operationOfWire);
    },
    async operationStatus(input: { operation: MoneyOperation; transaction_id: string }, call: ProcessorCall): Promise<OperationStatusAnswer> {
      const w = await ask(`/v1/operations/${id(call.attempt_id)}?operation=${input.operation}`, call);
      return 'attempt_id' in w ? operationOfWire(w) : w;
    },
    async startApm(input: ApmStartInput, call: ProcessorCall): Promise<ApmStart | Unknown> {
      return mapped(await operate('/v1/apm', input, call), apmOfWire);
    },
    async payout(input: PayoutInput, call: ProcessorCall): Promise<PayoutOutcome> {
      return mapped(await operate('/v1/payout', input, call), payoutOfWire);
    },
    async payoutStatus(_input: PayoutInput & { reference: string }, call: ProcessorCall): Promise<PayoutOutcome | { kind: 'not_found' }> {
      const w = await ask(`/v1/payout/${id(call.attempt_id)}`, call);
      return 'attempt_id' in w ? payoutOfWire(w) : w;
    },
    parseWebhook(req: WebhookRequest): WebhookParse {
      return parseSandboxWebhook(s.webhook_secret, req, (s.now_ms ?? Date.now)());
    },
  };
}

/** Why a call got no answer: the deadline, a refused connection (nothing sent), a reset, another network error. */
/** The request certainly never reached the sandbox: no connection was made (refused, no such host). */
function neverSent(e: unknown, call: ProcessorCall): boolean {
  const code = String((e as NodeJS.ErrnoException)?.code ?? '');
  return !call.signal.aborted && (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
}

function networkReason(e: unknown, call: ProcessorCall, sent: boolean): string {
  if (call.signal.aborted) return 'no answer by the deadline';
  const code = String((e as NodeJS.ErrnoException)?.code ?? '');
  if (code === 'ECONNREFUSED') return 'connection refused: nothing was sent';
  if (code === 'ECONNRESET' || (e as Error)?.message === 'socket hang up') return `connection reset ${sent ? 'after sending' : 'while sending'}`;
  return `network error ${code || (e as Error)?.name || 'unknown'}`.slice(0, 120);
}

const WEBHOOK_OPERATIONS: ReadonlySet<string> = new Set(['authorise', 'capture', 'cancel', 'refund', 'payout']);

/**
 * A sandbox webhook, verified (HMAC-SHA256 over `<t>.<raw body>`, 5 minutes' tolerance,
 * constant-time comparison) and read into notifications; answered `[accepted]`.
 */
export function parseSandboxWebhook(secret: string | undefined, req: WebhookRequest, now_ms: number): WebhookParse {
  if (!secret) return { kind: 'refused', status: 401, message: 'no webhook secret is set for this processor (--credential webhook_secret=…)' };
  const check = checkWebhookSignature(secret, req.headers[SIGNATURE_HEADER], req.raw, Math.floor(now_ms / 1000));
  if (check !== 'ok') return { kind: 'refused', status: 401, message: `bad signature (${check})` };
  let body: { notifications?: unknown };
  try {
    body = JSON.parse(req.raw.toString('utf8')) as typeof body;
  } catch {
    return { kind: 'refused', status: 400, message: 'the body is not JSON' };
  }
  if (!Array.isArray(body?.notifications) || body.notifications.length > 1_000)
    return { kind: 'refused', status: 400, message: 'notifications must be a list of at most 1000' };
  const notifications: ProcessorNotification[] = [];
  for (const n of body.notifications as WireNotification[]) {
    const readable =
      n &&
      typeof n.id === 'string' &&
      typeof n.attempt_id === 'string' &&
      WEBHOOK_OPERATIONS.has(n.operation) &&
      n.outcome !== null &&
      typeof n.outcome === 'object' &&
      typeof n.outcome.status === 'string';
    if (!readable) return { kind: 'refused', status: 400, message: 'a notification lacks id, attempt_id, operation or outcome' };
    notifications.push({
      id: n.id.slice(0, 200),
      operation: n.operation,
      attempt_id: n.attempt_id.slice(0, 100),
      ...(typeof n.object_id === 'string' ? { object_id: n.object_id.slice(0, 100) } : {}),
      ...(typeof n.reference === 'string' ? { reference: n.reference.slice(0, 200) } : {}),
      outcome: outcomeOfWire({ ...n.outcome, operation: n.operation, attempt_id: n.attempt_id }),
      occurred_at: Number.isSafeInteger(n.occurred_at) ? n.occurred_at : now_ms,
    });
  }
  return { kind: 'accepted', notifications, reply: { status: 200, content_type: 'text/plain', body: '[accepted]' } };
}
