// Mixed load for the fault test (issue 17), as merchants send it: authorise through the client
// library (tollgate/client) with an Idempotency-Key and a unique order_no, captures of
// earlier manual-capture approvals, refunds of captured payments, payouts from a topped-up
// balance, and generic-interface payments and balance reads (Bearer key). Every logical
// request is retried with the SAME Idempotency-Key and body every ≤100 ms until it gets an
// answer that is not a 5xx, a refused or dropped connection or "still being processed";
// every attempt is recorded (start, end, status, result code, Retry-After, socket error) so
// the fault windows can be judged afterwards, and every final answer is kept to compare
// with a replay and with the database.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EndpointName, type Endpoints, type FetchLike, NetworkError, TollgateApiError, type TollgateClient } from '../../client/index.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { gatewayClient } from '../process.js';

export type OpKind = 'authorise' | 'capture' | 'refund' | 'payout' | 'payment' | 'balance' | 'query';
/** Kinds that write: their answers are replayed under their Idempotency-Key and found in the database. */
export const WRITES: readonly OpKind[] = ['authorise', 'capture', 'refund', 'payout', 'payment'];

/** One HTTP attempt. status 0: no HTTP answer (`error` says why: ECONNREFUSED, ECONNRESET, TimeoutError, …). */
export interface Attempt {
  kind: OpKind;
  start: number;
  end: number;
  status: number;
  /** The result code (acquiring, `0503`) or the generic error code (`database_unavailable`); `0000` for a 2xx. */
  code: string;
  retry_after: string | null;
  error: string | null;
  /** The gateway said the key's first request is still being processed (409). */
  busy: boolean;
  /** The body of a 5xx (its start), to show what an unexpected one said. */
  body?: string;
  /** Not the request's first attempt. */
  retry: boolean;
}

export interface Final {
  status: number;
  code: string;
  /** What a replay must repeat (ids and outcome). */
  sig: string;
  answer: Record<string, any>;
  at: number;
}

export interface Op {
  kind: OpKind;
  key: string;
  body: Record<string, unknown>;
  /** authorise: order_no; capture/refund: the payment's transaction_id; payout: request_id. */
  ref: string;
  tries: number;
  /** An attempt before the final answer got a 5xx, no answer or 409 "still being processed". */
  faulted: boolean;
  final?: Final;
  /** The amount in minor units (authorise, capture, payment). */
  minor?: number;
  /** A recovery probe refused once and not sent again. */
  abandoned?: boolean;
}

interface Payment {
  transaction_id: string;
  order_no: string;
  amount: string;
}

export interface LoadOptions {
  url: string;
  m: CreatedMerchant;
  /** A generic-interface key (sk_test_…) of the same account. */
  api_key: string;
  /** Payouts are sent only when the account was topped up. */
  funded: boolean;
  request_timeout_ms: number;
  /** Pause between the attempts of one request (the brief: ≤100 ms). */
  retry_ms: number;
}

const YEAR = String(new Date().getUTCFullYear() + 3);

const ACH = {
  entity_type: 'COMPANY',
  company_name: 'Fault Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: {
    account_name: 'Fault Supplies LLC',
    account_number: '000123456789',
    bank_code: '011000015',
    bank_country_code: 'US',
    account_currency: 'USD',
  },
};

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;
const money = (lo: number, hi: number) => `${lo + Math.floor(Math.random() * (hi - lo))}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`;

export function minor(amount: string): number {
  const [a, b = ''] = amount.split('.');
  return Number(a) * 100 + Number(b.padEnd(2, '0'));
}

/** What the probe saw of the last fetch of one client (each client runs one request at a time, without the library's own retries). */
interface Probe {
  status: number;
  retry_after: string | null;
  error: string | null;
  body?: string;
}

function errorName(e: unknown): string {
  const err = e as { name?: string; code?: string; cause?: { code?: string; name?: string; message?: string } };
  return err?.cause?.code ?? err?.code ?? err?.cause?.name ?? err?.name ?? String(e);
}

function probed(probe: Probe): FetchLike {
  return (async (input: Parameters<FetchLike>[0], init?: Parameters<FetchLike>[1]) => {
    probe.status = 0;
    probe.retry_after = null;
    probe.error = null;
    probe.body = undefined;
    try {
      const r = await fetch(input, init);
      probe.status = r.status;
      probe.retry_after = r.headers.get('retry-after');
      if (r.status >= 500) probe.body = (await r.clone().text()).slice(0, 300);
      return r;
    } catch (e) {
      probe.error = errorName(e);
      throw e;
    }
  }) as FetchLike;
}

export class Load {
  readonly attempts: Attempt[] = [];
  readonly ops: Op[] = [];
  /** Answers the load cannot accept whatever the fault: category → count and examples. */
  readonly problems = new Map<string, { n: number; examples: string[] }>();
  /** Manual-capture approvals not yet sent to capture; captured payments (refundable). */
  private readonly toCapture: Payment[] = [];
  private readonly captured: Payment[] = [];
  private readonly approvedOrders: string[] = [];
  private stopping = false;
  private drainUntil = Number.POSITIVE_INFINITY;
  private loops: Promise<void>[] = [];
  private seq = 0;

  constructor(private readonly o: LoadOptions) {}

  problem(category: string, example: string): void {
    const p = this.problems.get(category) ?? { n: 0, examples: [] };
    p.n++;
    if (p.examples.length < 3) p.examples.push(example.slice(0, 300));
    this.problems.set(category, p);
  }

  start(clients: number): void {
    for (let i = 0; i < clients; i++) this.loops.push(this.loop(i));
  }

  /** Stops new requests; those under way keep retrying until answered or `drain_ms` has passed. */
  async stop(drain_ms: number): Promise<void> {
    this.stopping = true;
    this.drainUntil = Date.now() + drain_ms;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private client(probe: Probe): TollgateClient {
    return gatewayClient(this.o.url, this.o.m, { retry: { max_retries: 0 }, timeout_ms: this.o.request_timeout_ms, fetch: probed(probe) });
  }

  private async loop(id: number): Promise<void> {
    const probe: Probe = { status: 0, retry_after: null, error: null };
    const c = this.client(probe);
    while (!this.stopping) {
      const op = this.next(id);
      await this.run(op, c, probe);
    }
  }

  private next(id: number): Op {
    const dice = Math.random();
    const key = randomUUID();
    if (dice < 0.15 && this.toCapture.length > 0) {
      const p = this.toCapture.splice(Math.floor(Math.random() * this.toCapture.length), 1)[0] as Payment;
      const body = { capture_orders: [{ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount: p.amount }] };
      return { kind: 'capture', key, body, ref: p.transaction_id, tries: 0, faulted: false, minor: minor(p.amount) };
    }
    if (dice < 0.28 && this.captured.length > 0) {
      const p = pick(this.captured);
      const body = {
        refund_orders: [
          { transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount: p.amount, refund_amount: '0.01', refund_reason: 'fault test' },
        ],
      };
      return { kind: 'refund', key, body, ref: p.transaction_id, tries: 0, faulted: false };
    }
    if (dice < 0.36 && this.o.funded) {
      const request_id = randomUUID();
      const body = {
        request_id,
        beneficiary: ACH,
        payment_currency: 'USD',
        payment_method: 'LOCAL',
        reason: 'fault test',
        reference: `FT-${this.seq++}`,
        source_currency: 'USD',
        payment_amount: money(1, 10),
      };
      return { kind: 'payout', key, body, ref: request_id, tries: 0, faulted: false };
    }
    if (dice < 0.43) {
      const amount = 100 + Math.floor(Math.random() * 9900);
      const body = {
        amount,
        currency: 'usd',
        payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: Number(YEAR), cvc: '123' } },
      };
      return { kind: 'payment', key, body, ref: key, tries: 0, faulted: false, minor: amount };
    }
    if (dice < 0.46) return { kind: 'balance', key, body: {}, ref: '', tries: 0, faulted: false };
    if (dice < 0.49 && this.approvedOrders.length > 0) {
      const order_nos = Array.from({ length: 5 }, () => pick(this.approvedOrders));
      return { kind: 'query', key, body: { order_nos }, ref: '', tries: 0, faulted: false };
    }
    return this.newAuthorise(`F${id}`, key);
  }

  private newAuthorise(prefix: string, key = randomUUID()): Op {
    const order_no = `${prefix}-${this.seq++}-${key.slice(0, 6)}`;
    const amount = money(1, 100);
    const body = {
      order_no,
      currency: 'USD',
      amount,
      card: Math.random() < 0.1 ? '4000000000000002' : '4242424242424242',
      expiration_month: '12',
      expiration_year: YEAR,
      security_code: '123',
      ...(Math.random() < 0.35 ? { capture_method: 'manual' } : {}),
    };
    return { kind: 'authorise', key, body, ref: order_no, tries: 0, faulted: false, minor: minor(amount) };
  }

  /** Retries `op` with its key and body until it has an answer (or the drain is over). */
  private async run(op: Op, c: TollgateClient, probe: Probe): Promise<void> {
    this.ops.push(op);
    for (;;) {
      op.tries++;
      const { attempt, final } = await this.attempt(op, c, probe);
      this.attempts.push(attempt);
      if (final) {
        op.final = final;
        this.settled(op);
        return;
      }
      op.faulted = true;
      if (Date.now() > this.drainUntil) return;
      await sleep(this.o.retry_ms / 2 + Math.random() * (this.o.retry_ms / 2));
    }
  }

  /**
   * The recovery measure, apart from the retries of the load (whose keys a fault may hold):
   * a new authorise (new order_no and key) every `retry_ms`, one attempt each, until
   * `done()`. One refused with a 503 is left alone (`abandoned`), as the answer allows.
   */
  async probe(done: (last: Attempt | null) => boolean): Promise<void> {
    const probe: Probe = { status: 0, retry_after: null, error: null };
    const c = this.client(probe);
    let last: Attempt | null = null;
    while (!done(last)) {
      const op = this.newAuthorise('P');
      this.ops.push(op);
      op.tries++;
      const { attempt, final } = await this.attempt(op, c, probe);
      this.attempts.push(attempt);
      last = attempt;
      if (final) {
        op.final = final;
        this.settled(op);
      } else op.abandoned = true;
      await sleep(this.o.retry_ms / 2 + Math.random() * (this.o.retry_ms / 2));
    }
  }

  /** One attempt of `op` (also used for the replays after the run). */
  async attempt(op: Op, c: TollgateClient, probe: Probe): Promise<{ attempt: Attempt; final: Final | null }> {
    const start = Date.now();
    const base = { kind: op.kind, start, busy: false, retry: op.tries > 1 };
    if (op.kind === 'payment' || op.kind === 'balance') return this.generic(op, start);
    const endpoint: EndpointName = op.kind === 'payout' ? 'createPayout' : op.kind === 'query' ? 'queryOrders' : op.kind;
    try {
      const r = await c.call(endpoint, op.body as unknown as Endpoints[typeof endpoint]['request'], { idempotency_key: op.key });
      const answer = r.answer as unknown as Record<string, any>;
      const end = Date.now();
      const { code, sig } = readAnswer(op.kind, answer);
      return {
        attempt: { ...base, end, status: r.http_status, code, retry_after: probe.retry_after, error: null },
        final: { status: r.http_status, code, sig, answer, at: end },
      };
    } catch (e) {
      const end = Date.now();
      if (e instanceof TollgateApiError) {
        const busy = e.http_status === 409 && e.error_message.includes('still being processed');
        const attempt: Attempt = { ...base, end, status: e.http_status, code: e.code, retry_after: probe.retry_after, error: null, busy, body: probe.body };
        if (e.http_status >= 500 || e.http_status === 429 || busy) return { attempt, final: null };
        // A refusal of a valid request is an answer, but not one this load should get.
        this.problem(`${op.kind} refused HTTP ${e.http_status}`, `${op.ref}: ${e.message}`);
        return { attempt, final: { status: e.http_status, code: e.code, sig: `${e.http_status}|${e.code}`, answer: {}, at: end } };
      }
      const error = e instanceof NetworkError ? (probe.error ?? errorName(e.cause)) : `${(e as Error).name}: ${(e as Error).message}`;
      if (!(e instanceof NetworkError)) this.problem(`${op.kind}: unreadable or unverifiable answer`, `${op.ref}: HTTP ${probe.status} ${error}`);
      return { attempt: { ...base, end, status: e instanceof NetworkError ? 0 : probe.status, code: '', retry_after: probe.retry_after, error }, final: null };
    }
  }

  private async generic(op: Op, start: number): Promise<{ attempt: Attempt; final: Final | null }> {
    const post = op.kind === 'payment';
    const base = { kind: op.kind, start, busy: false, retry: op.tries > 1 };
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.o.url}${post ? '/v1/payments' : '/v1/balance'}`, {
        method: post ? 'POST' : 'GET',
        headers: {
          authorization: `Bearer ${this.o.api_key}`,
          ...(post ? { 'content-type': 'application/json', 'idempotency-key': op.key } : {}),
        },
        body: post ? JSON.stringify(op.body) : undefined,
        signal: AbortSignal.timeout(this.o.request_timeout_ms),
      });
      text = await res.text();
    } catch (e) {
      return { attempt: { ...base, end: Date.now(), status: 0, code: '', retry_after: null, error: errorName(e) }, final: null };
    }
    const end = Date.now();
    let body: Record<string, any> = {};
    try {
      body = JSON.parse(text) as Record<string, any>;
    } catch {
      this.problem(`${op.kind}: answer not JSON`, `HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    const retry_after = res.headers.get('retry-after');
    const error = body.error as Record<string, any> | undefined;
    if (res.status >= 200 && res.status < 300) {
      const sig = post ? `${body.id}|${body.status}|${body.amount}` : 'balance';
      return {
        attempt: { ...base, end, status: res.status, code: '0000', retry_after, error: null },
        final: { status: res.status, code: '0000', sig, answer: body, at: end },
      };
    }
    const code = `${error?.type ?? '?'}/${error?.code ?? outageOf(res.status, error?.message)}`;
    const busy = res.status === 409 && /still being processed|in progress|idempotency/i.test(String(error?.message ?? ''));
    const attempt: Attempt = {
      ...base,
      end,
      status: res.status,
      code,
      retry_after,
      error: null,
      busy,
      body: res.status >= 500 ? text.slice(0, 300) : undefined,
    };
    if (res.status >= 500 || res.status === 429 || busy) return { attempt, final: null };
    this.problem(`${op.kind} refused HTTP ${res.status}`, `${code}: ${String(error?.message ?? text).slice(0, 200)}`);
    return { attempt, final: { status: res.status, code, sig: `${res.status}|${code}`, answer: body, at: end } };
  }

  /** Feeds the pools from an answered request. */
  private settled(op: Op): void {
    const a = op.final?.answer ?? {};
    if (op.kind === 'authorise' && op.final?.code === '0000') {
      const p = { transaction_id: String(a.transaction_id), order_no: op.ref, amount: String(op.body.amount) };
      this.approvedOrders.push(op.ref);
      if (op.body.capture_method === 'manual') this.toCapture.push(p);
      else this.captured.push(p);
    }
    if (op.kind === 'capture' && a.capture_orders?.[0]?.capture_status === '1') {
      const o = (op.body.capture_orders as Array<Record<string, string>>)[0] as Record<string, string>;
      this.captured.push({ transaction_id: String(o.transaction_id), order_no: String(o.order_no), amount: String(o.amount) });
    }
  }

  /** A client for replays (same recording of Retry-After and socket errors). */
  replayClient(): { c: TollgateClient; probe: Probe } {
    const probe: Probe = { status: 0, retry_after: null, error: null };
    return { c: this.client(probe), probe };
  }
}

/** The result code and the part of an answer a replay must repeat. */
function readAnswer(kind: OpKind, a: Record<string, any>): { code: string; sig: string } {
  const codeOf = (s: unknown) => /^(\d{4}):/.exec(String(s ?? ''))?.[1] ?? '';
  switch (kind) {
    case 'authorise':
      return { code: codeOf(a.result_info), sig: `${a.transaction_id}|${a.result_info}|${a.amount}` };
    case 'capture': {
      const o = a.capture_orders?.[0] ?? {};
      return { code: o.capture_status === '1' ? '0000' : codeOf(o.error_message), sig: `${o.transaction_id}|${o.capture_status}|${o.error_message}` };
    }
    case 'refund': {
      const o = a.refund_orders?.[0] ?? {};
      return {
        code: codeOf(o.refund_message) || (o.refund_status === '1' ? '0000' : ''),
        sig: `${o.refund_reference_id}|${o.refund_status}|${o.refund_message}`,
      };
    }
    case 'payout':
      return { code: '0000', sig: `${a.transaction_id}|${a.request_id}` };
    default:
      return { code: '0000', sig: kind };
  }
}

/** A generic 503 carries no code (the platform family publishes none for outages): which one, by its message. */
function outageOf(status: number, message: unknown): string {
  const m = String(message ?? '');
  if (status !== 503) return '?';
  if (/cannot write to its storage/.test(m)) return 'storage_unavailable';
  if (/cannot reach its database/.test(m)) return 'database_unavailable';
  if (/overloaded/.test(m)) return 'overloaded';
  return '?';
}
