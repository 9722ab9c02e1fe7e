// The sandbox as a remote processor (docs/remote-sandbox.md, docs/contract.md §20, issue 31 item 5):
// a separate HTTP server that answers through the SAME decision tables as the in-process
// sandbox (the test cards of sandbox/cards.ts, the payout accounts of sandbox/payouts.ts),
// with its own small JSON protocol (protocol.ts), a seeded latency distribution and faults
// (faults.ts), and signed webhooks (webhooks.ts). `Idempotency-Key` is the attempt id: the
// first request with a key acts, every later one (concurrent too) gets the first answer.
// It logs ids and outcomes only: no card number, security code or key reaches a log or /stats.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxAuthorise, sandboxReference } from '../sandbox/index.js';
import { sandboxPayout, sandboxPayoutStatus } from '../sandbox/payouts.js';
import {
  type AnswerFault,
  type Fault,
  FaultPicker,
  type FaultSpec,
  FaultSpecError,
  type LatencyModel,
  latencySampler,
  MAX_DELAY_MS,
  parseFaultHeader,
  seededRandom,
  slowDelay,
} from './faults.js';
import {
  FAULT_HEADER,
  IDEMPOTENCY_HEADER,
  type WireAnswer,
  type WireNotification,
  type WireOperation,
  wireOfAuthorise,
  wireOfOperation,
  wireOfPayout,
} from './protocol.js';
import { apmInput, authoriseInput, BadRequest, cancelInput, captureInput, payoutInput, refundInput } from './requests.js';
import { WebhookSender, type WebhookStats } from './webhooks.js';

export interface RemoteSandboxOptions {
  port: number;
  host: string;
  /** Required as `Authorization: Bearer <key>` when set; any key is taken when not. */
  api_key?: string;
  latency: LatencyModel;
  faults: FaultSpec;
  seed: number;
  /** Where final outcomes (and confirmations of pending ones) are POSTed, signed with `secret`. */
  webhook?: { url: string; secret: string; delay_max_ms?: number; reorder_hold_ms?: number };
  /** Operations answered `pending`, then confirmed `confirm_delay_ms` later (by webhook, and in their status). */
  confirm_by_webhook: ReadonlyArray<'capture' | 'cancel' | 'refund'>;
  confirm_delay_ms: number;
  /** How long a SWIFT payout (or a payout's return) takes. */
  swift_delay_ms: number;
  /** Attempts remembered for replays and status queries; the oldest are forgotten past this. */
  remember: number;
  log?: (level: 'debug' | 'info' | 'warn', fields: Record<string, unknown>, message: string) => void;
}

export const REMOTE_SANDBOX_DEFAULTS: RemoteSandboxOptions = {
  port: 0,
  host: '127.0.0.1',
  latency: { median_ms: 0, p99_ms: 0 },
  faults: [],
  seed: 1,
  confirm_by_webhook: [],
  confirm_delay_ms: 1_000,
  swift_delay_ms: 5_000,
  remember: 1_000_000,
};

/** A request body larger than this is refused (413): the largest real one is under 2 KiB. */
const BODY_LIMIT = 65_536;
/** Served latencies kept for /stats' percentiles (the most recent). */
const LATENCY_WINDOW = 100_000;

export type Acting = 'authorise' | 'capture' | 'cancel' | 'refund' | 'apm' | 'payout';

/** One line of `GET /control/operations`: an attempt the sandbox acted on and where it stands. */
export interface OperationRecord {
  attempt_id: string;
  operation: Acting;
  transaction_id: string;
  status: WireAnswer['status'];
  code?: string;
  reference?: string;
}

/** Lines of `GET /control/operations` per page. */
const LISTING_PAGE = 1_000;

/** What the sandbox remembers of one attempt id: never the card or the bank account. */
interface Remembered {
  operation: Acting;
  /** Our transaction id the request named (a payment's or payout's; a refund's payment). */
  transaction_id: string;
  /** SHA-256 of the body: the same key with another body is refused (409). */
  fingerprint: string;
  answer: WireAnswer;
  /** A processing payout's outcome and when it is reached. */
  later?: { answer: WireAnswer; at_ms: number };
}

export interface RemoteSandboxStats {
  requests: number;
  by_operation: Record<string, number>;
  /** Operations actually performed (a replay or a refused request is not one). */
  acted: number;
  replayed: number;
  refused: Record<string, number>;
  faults: Record<string, number>;
  latency_ms: { count: number; p50: number; p99: number; max: number };
  cpu_us: { user: number; system: number };
  rss_bytes: number;
  remembered: number;
  webhooks: WebhookStats | null;
  uptime_ms: number;
}

export interface RemoteSandbox {
  url: string;
  port: number;
  stats(): RemoteSandboxStats;
  /** The next `times` requests of `operation` get `faults` (as if named in the fault header). */
  queueFaults(operation: WireOperation, faults: Array<Fault | 'reset'>, times?: number): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, Math.min(ms, MAX_DELAY_MS))) : Promise.resolve());

export async function startRemoteSandbox(given: Partial<RemoteSandboxOptions> = {}): Promise<RemoteSandbox> {
  const o: RemoteSandboxOptions = { ...REMOTE_SANDBOX_DEFAULTS, ...given };
  const s = new SandboxState(o);
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    s.handle(req, res).catch((e) => {
      o.log?.('warn', { error: (e as Error).name }, 'remote sandbox: request failed');
      if (!res.headersSent) answer(res, 500, { error: 'internal', message: 'the sandbox failed on this request' });
    });
  });
  // Connections kept open for many waiting calls (the gateway keeps up to 1,024).
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    port,
    stats: () => s.stats(),
    queueFaults: (operation, faults, times = 1) => s.queueFaults(operation, faults, times),
    close: () => closeServer(server, s),
  };
}

async function closeServer(server: Server, s: SandboxState): Promise<void> {
  s.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Hanging answers (`hang-after`) and idle keep-alive connections end now.
    server.closeAllConnections();
  });
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  const raw = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(raw) });
  res.end(raw);
}

/** A request refused before it acts: its status and `{ error, message }`. */
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

/** A body over BODY_LIMIT is read to its end (so the client hears 413) unless it passes this too: then the connection is cut. */
const BODY_CUT = 1_048_576;

const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= BODY_LIMIT) chunks.push(c);
      else if (size > BODY_CUT) req.destroy();
    });
    req.on('end', () => (size > BODY_LIMIT ? reject(new Refused(413, 'too_large', `the body is over ${BODY_LIMIT} bytes`)) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
  });

/** The route of a request: its operation and the attempt id in its path, if any. */
function route(method: string, path: string): { operation: WireOperation | 'stats' | 'health' | 'control' | 'listing'; id?: string } {
  const m = /^\/v1\/(authorise|capture|cancel|refund|apm|payout|operations)(?:\/([^/]{1,200}))?$/.exec(path);
  if (m) {
    const [, name = '', id] = m;
    const status = { authorise: 'authorise_status', operations: 'operation_status', payout: 'payout_status' } as const;
    if (id !== undefined) {
      if (!(name in status)) throw new Refused(405, 'method_not_allowed', `${method} ${path}: use POST /v1/${name}`);
      if (method !== 'GET') throw new Refused(405, 'method_not_allowed', `${method} ${path}: use GET /v1/${name}/<attempt id>`);
      return { operation: status[name as keyof typeof status], id: decodedId(id) };
    }
    if (method !== 'POST' || name === 'operations') throw new Refused(405, 'method_not_allowed', `${method} ${path}: use POST /v1/${name}`);
    return { operation: name as WireOperation };
  }
  if (path === '/stats' && method === 'GET') return { operation: 'stats' };
  if (path === '/health' && method === 'GET') return { operation: 'health' };
  if (path === '/control/faults' && method === 'POST') return { operation: 'control' };
  if (path === '/control/operations' && method === 'GET') return { operation: 'listing' };
  throw new Refused(404, 'not_found', `no route ${method} ${path}`);
}

function decodedId(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new BadRequest('the attempt id in the path is not valid percent-encoding');
  }
}

const INPUTS: Readonly<Record<Acting, (b: Record<string, unknown>) => unknown>> = {
  authorise: authoriseInput,
  capture: captureInput,
  cancel: cancelInput,
  refund: refundInput,
  apm: apmInput,
  payout: payoutInput,
};

class SandboxState {
  private readonly remembered = new Map<string, Remembered>();
  private readonly random: () => number;
  private readonly latency: () => number;
  private readonly picker: FaultPicker;
  private readonly queued = new Map<WireOperation, Array<{ faults: Array<Fault | 'reset'>; left: number }>>();
  private readonly webhooks: WebhookSender | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly served = new Float64Array(LATENCY_WINDOW);
  private servedCount = 0;
  private readonly started_ms = Date.now();
  private readonly cpuAtStart = process.cpuUsage();
  private readonly counts = { requests: 0, acted: 0, replayed: 0 };
  private readonly byOperation: Record<string, number> = {};
  private readonly refused: Record<string, number> = {};
  private readonly faultCounts: Record<string, number> = {};

  constructor(private readonly o: RemoteSandboxOptions) {
    this.random = seededRandom(o.seed);
    this.latency = latencySampler(o.latency, this.random);
    this.picker = new FaultPicker(o.faults, this.random);
    if (o.webhook)
      this.webhooks = new WebhookSender({
        url: o.webhook.url,
        secret: o.webhook.secret,
        delay_max_ms: o.webhook.delay_max_ms ?? 3_000,
        reorder_hold_ms: o.webhook.reorder_hold_ms ?? 1_000,
        random: this.random,
      });
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    this.counts.requests++;
    try {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const r = route(req.method ?? 'GET', path);
      if (r.operation === 'health') return answer(res, 200, { ok: true });
      if (r.operation === 'stats') return answer(res, 200, this.stats());
      this.authenticate(req);
      const raw = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
      if (r.operation === 'control') return this.control(res, raw);
      if (r.operation === 'listing') return answer(res, 200, this.listing(new URL(req.url ?? '/', 'http://x').searchParams));
      this.byOperation[r.operation] = (this.byOperation[r.operation] ?? 0) + 1;
      await this.operate(req, res, r.operation, r.id, raw, t0);
    } catch (e) {
      if (!(e instanceof Refused || e instanceof BadRequest || e instanceof FaultSpecError)) throw e;
      const [status, error] = e instanceof Refused ? [e.status, e.error] : [400, 'bad_request'];
      this.refused[error] = (this.refused[error] ?? 0) + 1;
      this.o.log?.('warn', { status, error }, `remote sandbox refused a request: ${e.message}`);
      answer(res, status, { error, message: e.message });
      this.record(t0);
    }
  }

  private authenticate(req: IncomingMessage): void {
    if (this.o.api_key === undefined) return;
    const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    const want = Buffer.from(this.o.api_key);
    if (given.length !== want.length || !timingSafeEqual(given, want))
      throw new Refused(401, 'unauthorised', 'a wrong or missing API key (Authorization: Bearer <key>)');
  }

  /** One operation: latency, then the fault before processing, the act (or its replay), the fault after, the answer. */
  private async operate(req: IncomingMessage, res: ServerResponse, operation: WireOperation, id: string | undefined, raw: Buffer, t0: number): Promise<void> {
    const acting = id === undefined ? (operation as Acting) : undefined;
    const key = acting ? idempotencyKey(req) : (id ?? '');
    const input = acting ? INPUTS[acting](parseJson(raw)) : undefined;
    const faults = this.faultsFor(operation, req.headers[FAULT_HEADER]);
    const answerFault = [...faults].find((f): f is AnswerFault => f !== 'slow' && !f.endsWith('-webhooks'));
    await sleep(faults.has('slow') ? slowDelay(this.o.latency, this.random) : this.latency());
    if (answerFault === '5xx-before') return this.fail(res, t0, 503, 'before processing: nothing was done');
    if (answerFault === 'reset-before') return void resetSocket(req);
    const result = acting
      ? this.act(acting, key, raw, input, faults)
      : this.status(operation, key, new URL(req.url ?? '/', 'http://x').searchParams.get('operation'));
    this.o.log?.(
      'debug',
      { operation, attempt_id: key, status: result.status, outcome: 'status' in result.body ? result.body.status : undefined },
      'remote sandbox answered',
    );
    if (answerFault === '5xx-after') return this.fail(res, t0, 500, 'after processing: the operation was done');
    if (answerFault === 'reset-after') return void resetSocket(req);
    // The operation happened; the answer never comes (the client's deadline decides).
    if (answerFault === 'hang-after') return;
    answer(res, result.status, result.body);
    this.record(t0);
  }

  private fail(res: ServerResponse, t0: number, status: number, message: string): void {
    answer(res, status, { error: 'fault', message: `injected fault ${status === 503 ? '5xx-before' : '5xx-after'}: ${message}` });
    this.record(t0);
  }

  private faultsFor(operation: WireOperation, header: string | string[] | undefined): Set<Fault> {
    let named: Array<Fault | 'reset'> | undefined;
    if (typeof header === 'string') named = parseFaultHeader(header);
    else {
      const q = this.queued.get(operation);
      const next = q?.[0];
      if (q && next) {
        named = next.faults;
        if (--next.left <= 0) q.shift();
      }
    }
    const faults = this.picker.pick(named);
    for (const f of faults) this.faultCounts[f] = (this.faultCounts[f] ?? 0) + 1;
    return faults;
  }

  /** The first request with this key acts; a later one with the same body gets the same answer, another body 409. Synchronous: nothing runs between the look-up and the record. */
  private act(operation: Acting, key: string, raw: Buffer, input: unknown, faults: Set<Fault>): { status: number; body: WireAnswer | object } {
    const fingerprint = createHash('sha256').update(operation).update('\0').update(raw).digest('base64url');
    const earlier = this.remembered.get(key);
    if (earlier) {
      if (earlier.operation !== operation || earlier.fingerprint !== fingerprint)
        throw new Refused(
          409,
          'idempotency_key_reused',
          `Idempotency-Key ${key} was used for another ${earlier.operation === operation ? 'body' : 'operation'}`,
        );
      this.counts.replayed++;
      return { status: 200, body: this.current(earlier) };
    }
    this.counts.acted++;
    const transaction_id = (input as { transaction_id: string }).transaction_id;
    const entry: Remembered = { operation, transaction_id, fingerprint, answer: this.decide(operation, key, input) };
    if (operation === 'payout' && entry.answer.status === 'processing') {
      const p = input as Parameters<typeof sandboxPayoutStatus>[0];
      entry.later = {
        answer: wireOfPayout(key, sandboxPayoutStatus({ ...p, reference: entry.answer.reference ?? '' })),
        at_ms: Date.now() + this.o.swift_delay_ms,
      };
    }
    this.remember(key, entry);
    this.o.log?.('info', { operation, attempt_id: key, outcome: entry.answer.status }, 'remote sandbox acted');
    this.afterAct(key, entry, input, faults);
    return { status: 200, body: entry.answer };
  }

  /** The decision tables of the in-process sandbox; a confirm-later operation answers `pending`. */
  private decide(operation: Acting, key: string, input: unknown): WireAnswer {
    switch (operation) {
      case 'authorise': {
        return wireOfAuthorise(key, sandboxAuthorise(input as Parameters<typeof sandboxAuthorise>[0]));
      }
      case 'capture':
      case 'cancel':
      case 'refund': {
        const i = input as { transaction_id: string; reference: string; refund_id?: string };
        const reference = operation === 'refund' ? sandboxReference(i.refund_id ?? '') : i.reference || sandboxReference(i.transaction_id);
        const kind = this.o.confirm_by_webhook.includes(operation) ? 'pending' : 'approved';
        return wireOfOperation(key, operation, { kind, reference });
      }
      case 'apm':
        return { attempt_id: key, operation: 'apm', status: 'started', reference: sandboxReference((input as { transaction_id: string }).transaction_id) };
      case 'payout': {
        const p = input as Parameters<typeof sandboxPayout>[0];
        return wireOfPayout(key, sandboxPayout(p, sandboxReference(p.transaction_id), this.o.swift_delay_ms));
      }
    }
  }

  /** Webhooks of what was done: the final outcome now, or the confirmation of a pending one later. */
  private afterAct(key: string, entry: Remembered, input: unknown, faults: Set<Fault>): void {
    const i = input as { transaction_id: string; refund_id?: string };
    const object_id = entry.operation === 'refund' ? (i.refund_id ?? '') : i.transaction_id;
    const webhookFaults = {
      dup: faults.has('dup-webhooks'),
      delay: faults.has('delay-webhooks'),
      reorder: faults.has('reorder-webhooks'),
      drop: faults.has('drop-webhooks'),
    };
    const notify = (w: WireAnswer) => {
      if (!this.webhooks || entry.operation === 'apm') return;
      if (w.status === 'pending' || w.status === 'processing' || w.status === 'challenge_required') return;
      const n: WireNotification = {
        id: `ntf_${createHash('sha256').update(`${key}\0${w.status}\0${this.o.seed}\0${this.started_ms}`).digest('hex').slice(0, 24)}`,
        attempt_id: key,
        operation: entry.operation as WireNotification['operation'],
        object_id,
        reference: w.reference ?? '',
        outcome: w,
        occurred_at: Date.now(),
      };
      this.webhooks.send(n, webhookFaults);
    };
    notify(entry.answer);
    if (entry.answer.status === 'pending') {
      this.after(this.o.confirm_delay_ms, () => {
        entry.answer = { ...entry.answer, status: 'approved' };
        notify(entry.answer);
      });
    }
    const later = entry.later;
    if (later) this.after(later.at_ms - Date.now(), () => notify(this.current(entry)));
  }

  private after(ms: number, fn: () => void): void {
    const t = setTimeout(
      () => {
        this.timers.delete(t);
        fn();
      },
      Math.max(0, Math.min(ms, MAX_DELAY_MS)),
    );
    this.timers.add(t);
  }

  /** A status query by attempt id: what was answered (a payout's outcome once its time came), or 404. */
  private status(operation: WireOperation, key: string, asked: string | null): { status: number; body: WireAnswer | object } {
    const e = this.remembered.get(key);
    const ops: Record<string, readonly Acting[]> = {
      authorise_status: ['authorise'],
      operation_status: ['capture', 'cancel', 'refund'],
      payout_status: ['payout'],
    };
    const fits = e && (ops[operation] ?? []).includes(e.operation) && (asked === null || asked === e.operation);
    if (!e || !fits) return { status: 404, body: { error: 'not_found', message: `no ${operation.replace('_status', '')} attempt ${key} at this sandbox` } };
    return { status: 200, body: this.current(e) };
  }

  private current(e: Remembered): WireAnswer {
    if (e.later && Date.now() >= e.later.at_ms) {
      e.answer = e.later.answer;
      e.later = undefined;
    }
    return e.answer;
  }

  private remember(key: string, e: Remembered): void {
    this.remembered.set(key, e);
    if (this.remembered.size > this.o.remember) this.remembered.delete(this.remembered.keys().next().value as string);
  }

  private control(res: ServerResponse, raw: Buffer): void {
    const b = parseJson(raw);
    const operation = b.operation as WireOperation;
    const ops: readonly string[] = ['authorise', 'authorise_status', 'capture', 'cancel', 'refund', 'operation_status', 'apm', 'payout', 'payout_status'];
    if (!ops.includes(operation)) throw new BadRequest(`operation must be one of ${ops.join(', ')}`);
    if (!Array.isArray(b.faults) || !b.faults.every((f) => typeof f === 'string')) throw new BadRequest('faults must be a list of fault names');
    const times = b.times ?? 1;
    if (!Number.isSafeInteger(times) || (times as number) < 1 || (times as number) > 10_000)
      throw new BadRequest('times must be a whole number from 1 to 10000');
    this.queueFaults(operation, parseFaultHeader(b.faults.join(',')), times as number);
    answer(res, 200, { queued: times });
  }

  /**
   * `GET /control/operations[?offset=N&limit=M]`: what the sandbox did, oldest first, a page at
   * a time (at most 1,000): each remembered attempt's id, operation, our transaction id and
   * the answer as it stands now. For a test to compare with the gateway's books (the crash
   * test's remote part); no card or bank data is remembered, so none can be listed.
   */
  private listing(q: URLSearchParams): { operations: OperationRecord[]; next_offset: number | null } {
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? LISTING_PAGE);
    if (!Number.isSafeInteger(offset) || offset < 0) throw new BadRequest('offset must be a whole number from 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > LISTING_PAGE) throw new BadRequest(`limit must be a whole number from 1 to ${LISTING_PAGE}`);
    const operations: OperationRecord[] = [];
    let i = 0;
    for (const [attempt_id, e] of this.remembered) {
      if (i++ < offset) continue;
      if (operations.length === limit) return { operations, next_offset: offset + limit };
      const a = this.current(e);
      operations.push({ attempt_id, operation: e.operation, transaction_id: e.transaction_id, status: a.status, code: a.code, reference: a.reference });
    }
    return { operations, next_offset: null };
  }

  queueFaults(operation: WireOperation, faults: Array<Fault | 'reset'>, times: number): void {
    const q = this.queued.get(operation) ?? [];
    q.push({ faults, left: times });
    this.queued.set(operation, q);
  }

  private record(t0: number): void {
    this.served[this.servedCount % LATENCY_WINDOW] = performance.now() - t0;
    this.servedCount++;
  }

  stats(): RemoteSandboxStats {
    const n = Math.min(this.servedCount, LATENCY_WINDOW);
    const sorted = Float64Array.from(this.served.subarray(0, n)).sort();
    const at = (q: number) => (n === 0 ? 0 : Math.round((sorted[Math.min(n - 1, Math.floor(q * n))] ?? 0) * 10) / 10);
    const cpu = process.cpuUsage(this.cpuAtStart);
    return {
      requests: this.counts.requests,
      by_operation: { ...this.byOperation },
      acted: this.counts.acted,
      replayed: this.counts.replayed,
      refused: { ...this.refused },
      faults: { ...this.faultCounts },
      latency_ms: { count: this.servedCount, p50: at(0.5), p99: at(0.99), max: at(1) },
      cpu_us: { user: cpu.user, system: cpu.system },
      rss_bytes: process.memoryUsage.rss(),
      remembered: this.remembered.size,
      webhooks: this.webhooks ? { ...this.webhooks.stats } : null,
      uptime_ms: Date.now() - this.started_ms,
    };
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.webhooks?.close();
  }
}

function idempotencyKey(req: IncomingMessage): string {
  const key = req.headers[IDEMPOTENCY_HEADER];
  if (typeof key !== 'string' || !/^[A-Za-z0-9_.:-]{1,200}$/.test(key))
    throw new BadRequest('Idempotency-Key is required: the attempt id, 1 to 200 letters, digits and _.:-');
  return key;
}

function parseJson(raw: Buffer): Record<string, unknown> {
  let b: unknown;
  try {
    b = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequest('the body is not JSON');
  }
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new BadRequest('the body must be a JSON object');
  return b as Record<string, unknown>;
}

/** A connection reset (RST where the platform has it): the client sees ECONNRESET. */
function resetSocket(req: IncomingMessage): void {
  const socket = req.socket as typeof req.socket & { resetAndDestroy?: () => void };
  if (socket.resetAndDestroy) socket.resetAndDestroy();
  else socket.destroy();
}
