// A stateful fake of Stripe's API for the tests (node:http): PaymentIntents and Refunds kept
// in memory, written from spec3.json and Stripe's documented behaviour. It honours
// Idempotency-Key as Stripe does (the same key and parameters: the first answer again; the
// same key with other parameters: 400 idempotency_error), answers Stripe's test cards and
// Stripe's error shape, finds PaymentIntents by metadata (`/v1/payment_intents/search`),
// and sends its events to a webhook address signed with `Stripe-Signature`. Faults are
// switched on per request (or per path): a refused key (401), a 500, a malformed answer after
// doing the work, a request that is done and never answered, or whose connection is dropped
// after doing the work. Its events can be held, repeated and delivered out of order. Every
// request it took is kept (decoded) for the contract tests.
//
// Disputes: `openDispute` disputes a PaymentIntent's charge (its `charge.dispute.created`
// event sent like any other); `POST /v1/files` takes a multipart upload (purpose
// dispute_evidence, its bytes kept), `POST /v1/disputes/:id` takes evidence and submits it,
// `POST /v1/disputes/:id/close` accepts the dispute (lost). A closed or submitted dispute
// refuses evidence with 400 invalid_request_error (Stripe's code for it is not documented:
// none is sent), an unknown one is 404 resource_missing.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { decodeForm, type FormObject } from './form.js';

export type MockFault = 'unauthorized' | 'server_error' | 'malformed' | 'hang' | 'drop';

export interface MockStripeOptions {
  secret_key: string;
  /** Where its events go, signed with `secret`. */
  webhook?: { url: string; secret: string };
  /** Events are kept, not sent, until `deliver` (tests that repeat or reorder them). */
  hold_webhooks?: boolean;
  /** New refunds are `pending` until `settleRefund` (as a bank's refund may be). */
  refunds_pending?: boolean;
  /** The bench's processor latency (bench/connector-mock.ts): ms to wait before reading a request, and each answer's time from arrival to sent. */
  latency?: { delay: () => number; served?: (ms: number) => void };
}

export interface MockRequest {
  method: string;
  path: string;
  idempotency_key?: string;
  body: FormObject;
  /** The query string's parameters (GET). */
  query: Record<string, string>;
}

export interface MockEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

/** A dispute as the mock keeps it: Stripe's `dispute` object. */
export type MockDispute = Record<string, unknown> & {
  id: string;
  status: string;
  payment_intent: string;
  evidence: Record<string, string>;
  evidence_details: { due_by: number; has_evidence: boolean; past_due: boolean; submission_count: number };
};

/** An uploaded file: Stripe's `file` object, and the bytes the upload carried. */
export interface MockFile {
  id: string;
  purpose: string;
  filename: string;
  type: string;
  size: number;
  bytes: Buffer;
}

export interface MockStripe {
  url: string;
  requests: MockRequest[];
  events: MockEvent[];
  intents: Map<string, Intent>;
  disputes: Map<string, MockDispute>;
  files: Map<string, MockFile>;
  /** The next `times` API requests (to a path `on` matches, when given) meet `fault`. */
  fault(fault: MockFault, times?: number, on?: RegExp): void;
  /** A dispute of the PaymentIntent's charge (`needs_response` unless told), announced by `charge.dispute.created`. */
  openDispute(payment_intent: string, o?: { status?: string; reason?: string }): MockDispute;
  /** Sends an event to the webhook address (its signature forged with another secret when asked); the gateway's HTTP status. */
  deliver(event: MockEvent, opts?: { secret?: string }): Promise<number>;
  /** A pending refund ends `succeeded` or `failed` (its event `refund.updated` follows). */
  settleRefund(id: string, status: 'succeeded' | 'failed'): Promise<void>;
  /** Webhook deliveries still in flight. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** How long after the change its event is sent. */
const WEBHOOK_DELAY_MS = 50;

type Intent = Record<string, unknown> & { id: string; status: string; amount: number; amount_received: number; metadata: Record<string, string> };
type Refund = Record<string, unknown> & { id: string; status: string; amount: number; payment_intent: string; metadata: Record<string, string> };
type Answer = { status: number; body: unknown };
/** A multipart body read back: its fields, and its one file part. */
type Multipart = { fields: Record<string, string>; file?: { name: string; filename: string; type: string; bytes: Buffer } };

/** The dispute statuses that still take evidence or an acceptance. */
const DISPUTE_OPEN = new Set(['needs_response', 'warning_needs_response']);
/** Stripe's evidence fields (the `dispute_evidence_params` of spec3.json) and which of them name a file. */
const EVIDENCE_FILE_FIELDS = new Set([
  'cancellation_policy',
  'customer_communication',
  'customer_signature',
  'duplicate_charge_documentation',
  'receipt',
  'refund_policy',
  'service_documentation',
  'shipping_documentation',
  'uncategorized_file',
]);
const EVIDENCE_TEXT_FIELDS = new Set([
  'access_activity_log',
  'billing_address',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
  'product_description',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'service_date',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_tracking_number',
  'uncategorized_text',
]);
/** What `dispute_evidence` uploads may be (Stripe's file upload guide). */
const EVIDENCE_TYPES = new Set(['application/pdf', 'image/jpeg', 'image/png']);
/** A mock, but bounded: at most this many parts in one multipart body. */
const MAX_PARTS = 20;

/** Stripe's test cards (docs.stripe.com/testing) this mock knows; any other number succeeds. */
const CARD_ERRORS: Readonly<Record<string, { code: string; decline_code?: string }>> = {
  '4000000000000002': { code: 'card_declined', decline_code: 'generic_decline' },
  '4000000000009995': { code: 'card_declined', decline_code: 'insufficient_funds' },
  '4000000000009987': { code: 'card_declined', decline_code: 'lost_card' },
  '4000000000009979': { code: 'card_declined', decline_code: 'stolen_card' },
  '4000000000000069': { code: 'expired_card', decline_code: 'expired_card' },
  '4000000000000127': { code: 'incorrect_cvc', decline_code: 'incorrect_cvc' },
  '4000000000000119': { code: 'processing_error', decline_code: 'processing_error' },
};
/** 3-D Secure required: `requires_action` unless the request carries a 3-D Secure result. */
const THREEDS_REQUIRED = new Set(['4000000000003220', '4000002760003184']);

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const now_s = () => Math.floor(Date.now() / 1000);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const meta = (v: unknown): Record<string, string> =>
  v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
const err = (status: number, type: string, message: string, extra: Record<string, unknown> = {}): Answer => ({
  status,
  body: { error: { type, message, ...extra } },
});

/** Longer than docs/style.md §16 allows: one closure holds the fake's state; each route is a function of its own. `o` is read at each use, so a test may change it. */
export async function startMockStripe(o: MockStripeOptions): Promise<MockStripe> {
  const intents = new Map<string, Intent>();
  /** Where each PaymentIntent waiting for 3-D Secure sends the shopper back (its `return_url`). */
  const returnUrls = new Map<string, string>();
  const refunds = new Map<string, Refund>();
  const idempotent = new Map<string, { params: string; answer: Answer }>();
  const requests: MockRequest[] = [];
  const events: MockEvent[] = [];
  const faults: Array<{ fault: MockFault; on?: RegExp }> = [];
  const disputes = new Map<string, MockDispute>();
  const files = new Map<string, MockFile>();
  const inflight = new Set<Promise<unknown>>();
  const hanging = new Set<http.ServerResponse>();
  const signer = new Stripe('sk_mock_signer');

  function emit(type: string, object: Record<string, unknown>): void {
    const ev: MockEvent = { id: id('evt'), type, created: now_s(), data: { object: structuredClone(object) } };
    events.push(ev);
    if (o.webhook && !o.hold_webhooks) {
      // After the API's answer has gone, as Stripe's do (though they may still arrive first).
      const p = new Promise((r) => setTimeout(r, WEBHOOK_DELAY_MS)).then(() => deliver(ev)).catch(() => 0);
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
  }

  async function deliver(ev: MockEvent, opts: { secret?: string } = {}): Promise<number> {
    if (!o.webhook) throw new Error('the mock has no webhook address');
    const payload = JSON.stringify({ object: 'event', api_version: '2020-08-27', livemode: false, ...ev });
    const header = signer.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? o.webhook.secret });
    const res = await fetch(o.webhook.url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload });
    await res.arrayBuffer();
    return res.status;
  }

  const charge = (pi: Intent) => ({
    id: str(pi.latest_charge),
    object: 'charge',
    amount: pi.amount,
    amount_captured: pi.amount_received,
    captured: pi.amount_received > 0,
    currency: pi.currency,
    payment_intent: pi.id,
    metadata: pi.metadata,
    refunds: { object: 'list', data: [...refunds.values()].filter((r) => r.payment_intent === pi.id), has_more: false, url: '/v1/refunds' },
  });

  function createIntent(b: FormObject): Answer {
    const amount = Number(b.amount);
    if (!Number.isSafeInteger(amount) || amount < 1)
      return err(400, 'invalid_request_error', 'Invalid integer: amount', { param: 'amount', code: 'parameter_invalid_integer' });
    const pmd = (b.payment_method_data ?? {}) as FormObject;
    const card = (pmd.card ?? {}) as FormObject;
    const number = str(card.number);
    if (str(pmd.type) !== 'card' || !number) return err(400, 'invalid_request_error', 'Missing payment method', { param: 'payment_method_data' });
    const manual = b.capture_method === 'manual';
    const pi: Intent = {
      id: id('pi'),
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      capture_method: manual ? 'manual' : 'automatic',
      confirmation_method: 'automatic',
      created: now_s(),
      currency: str(b.currency),
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: meta(b.metadata),
      payment_method: id('pm'),
      payment_method_types: ['card'],
      status: 'requires_payment_method',
    };
    intents.set(pi.id, pi);
    const declined = CARD_ERRORS[number];
    const threeds = ((b.payment_method_options as FormObject | undefined)?.card as FormObject | undefined)?.three_d_secure;
    if (declined) {
      pi.last_payment_error = { type: 'card_error', ...declined, message: 'Your card was declined.' };
      emit('payment_intent.payment_failed', pi);
      return err(402, 'card_error', 'Your card was declined.', { ...declined, payment_intent: structuredClone(pi) });
    }
    const asked = ((b.payment_method_options as FormObject | undefined)?.card as FormObject | undefined)?.request_three_d_secure === 'any';
    if ((THREEDS_REQUIRED.has(number) || asked) && !threeds) {
      // Stripe's own 3-D Secure: with a return_url, a redirect to the issuer's page (the mock's `GET /3ds/<id>`).
      pi.status = 'requires_action';
      const return_url = str(b.return_url);
      if (return_url) returnUrls.set(pi.id, return_url);
      pi.next_action = return_url
        ? { type: 'redirect_to_url', redirect_to_url: { url: `http://127.0.0.1:${port}/3ds/${pi.id}`, return_url } }
        : { type: 'use_stripe_sdk' };
      return { status: 200, body: pi };
    }
    approve(pi);
    return { status: 200, body: pi };
  }

  function approve(pi: Intent): void {
    pi.latest_charge = id('ch');
    if (pi.capture_method === 'manual') {
      Object.assign(pi, { status: 'requires_capture', amount_capturable: pi.amount });
      emit('payment_intent.amount_capturable_updated', pi);
    } else {
      Object.assign(pi, { status: 'succeeded', amount_received: pi.amount });
      emit('payment_intent.succeeded', pi);
    }
  }

  /** The issuer's page of Stripe's 3-D Secure: `outcome=pass|fail`, then back to the return_url. */
  function issuerPage(url: URL, res: http.ServerResponse): void {
    const pi = intents.get(url.pathname.slice('/3ds/'.length));
    const back = pi ? returnUrls.get(pi.id) : undefined;
    const outcome = url.searchParams.get('outcome');
    if (!pi || !back || pi.status !== 'requires_action' || (outcome !== 'pass' && outcome !== 'fail')) {
      res.writeHead(404).end();
      return;
    }
    if (outcome === 'pass') approve(pi);
    else {
      pi.status = 'requires_payment_method';
      pi.last_payment_error = {
        type: 'card_error',
        code: 'payment_intent_authentication_failure',
        message: 'The provided PaymentMethod has failed authentication.',
      };
      emit('payment_intent.payment_failed', pi);
    }
    pi.next_action = null;
    const to = new URL(back);
    to.searchParams.set('payment_intent', pi.id);
    to.searchParams.set('redirect_status', outcome === 'pass' ? 'succeeded' : 'failed');
    res.writeHead(302, { location: to.toString() }).end();
  }

  function capture(pi: Intent, b: FormObject): Answer {
    if (pi.status !== 'requires_capture')
      return err(400, 'invalid_request_error', `This PaymentIntent could not be captured because it has a status of ${pi.status}.`, {
        code: 'payment_intent_unexpected_state',
      });
    const amount = b.amount_to_capture === undefined ? pi.amount : Number(b.amount_to_capture);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > pi.amount)
      return err(400, 'invalid_request_error', 'amount_to_capture is invalid', { param: 'amount_to_capture', code: 'amount_too_large' });
    Object.assign(pi, { status: 'succeeded', amount_received: amount, amount_capturable: 0 });
    emit('payment_intent.succeeded', pi);
    emit('charge.captured', charge(pi));
    return { status: 200, body: pi };
  }

  function cancel(pi: Intent): Answer {
    if (pi.status === 'succeeded' || pi.status === 'canceled')
      return err(400, 'invalid_request_error', `You cannot cancel this PaymentIntent because it has a status of ${pi.status}.`, {
        code: 'payment_intent_unexpected_state',
      });
    Object.assign(pi, { status: 'canceled', amount_capturable: 0, canceled_at: now_s(), cancellation_reason: 'requested_by_customer' });
    emit('payment_intent.canceled', pi);
    return { status: 200, body: pi };
  }

  function createRefund(b: FormObject): Answer {
    const pi = intents.get(str(b.payment_intent));
    if (!pi) return err(404, 'invalid_request_error', 'No such payment_intent', { code: 'resource_missing', param: 'payment_intent' });
    if (pi.status !== 'succeeded')
      return err(400, 'invalid_request_error', 'This PaymentIntent has no successful charge to refund.', { code: 'charge_not_refundable' });
    const refunded = [...refunds.values()].filter((r) => r.payment_intent === pi.id && r.status !== 'failed').reduce((s, r) => s + r.amount, 0);
    const amount = b.amount === undefined ? pi.amount_received - refunded : Number(b.amount);
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > pi.amount_received - refunded)
      return err(400, 'invalid_request_error', 'Refund amount is greater than unrefunded amount on charge', { code: 'amount_too_large', param: 'amount' });
    const r: Refund = {
      id: id('re'),
      object: 'refund',
      amount,
      charge: pi.latest_charge,
      created: now_s(),
      currency: pi.currency,
      metadata: meta(b.metadata),
      payment_intent: pi.id,
      reason: null,
      status: o.refunds_pending ? 'pending' : 'succeeded',
    };
    refunds.set(r.id, r);
    emit('refund.created', r);
    if (r.status === 'succeeded') emit('charge.refunded', charge(pi));
    return { status: 200, body: r };
  }

  function search(query: string): Answer {
    const m = /^metadata\['([a-z_]+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(query);
    if (!m) return err(400, 'invalid_request_error', 'This mock searches by one metadata value only', { param: 'query' });
    const [, key = '', value = ''] = m;
    const want = value.replace(/\\(.)/g, '$1');
    const data = [...intents.values()].filter((pi) => pi.metadata[key] === want);
    return { status: 200, body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' } };
  }

  function openDispute(payment_intent: string, o: { status?: string; reason?: string } = {}): MockDispute {
    const pi = intents.get(payment_intent);
    if (!pi) throw new Error(`no PaymentIntent ${payment_intent}`);
    const d: MockDispute = {
      id: id('dp'),
      object: 'dispute',
      amount: pi.amount_received || pi.amount,
      currency: pi.currency,
      charge: str(pi.latest_charge),
      payment_intent: pi.id,
      reason: o.reason ?? 'fraudulent',
      status: o.status ?? 'needs_response',
      evidence: {},
      evidence_details: { due_by: now_s() + 7 * 86400, has_evidence: false, past_due: false, submission_count: 0 },
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      created: now_s(),
    };
    disputes.set(d.id, d);
    emit('charge.dispute.created', d);
    return d;
  }

  /** `POST /v1/files` (files.stripe.com): a multipart upload of one file, purpose dispute_evidence. */
  function uploadFile(upload: Multipart | undefined): Answer {
    if (!upload) return err(400, 'invalid_request_error', 'A file upload is a multipart/form-data request.', { param: 'file' });
    const purpose = upload.fields.purpose ?? '';
    if (purpose !== 'dispute_evidence') return err(400, 'invalid_request_error', 'This mock takes dispute_evidence uploads only.', { param: 'purpose' });
    const f = upload.file;
    if (f?.name !== 'file' || f.bytes.length === 0)
      return err(400, 'invalid_request_error', 'Missing required param: file.', { code: 'parameter_missing', param: 'file' });
    if (!EVIDENCE_TYPES.has(f.type)) return err(400, 'invalid_request_error', 'dispute_evidence files are PDF, JPEG or PNG.', { param: 'file' });
    const file: MockFile = { id: id('file'), purpose, filename: f.filename, type: f.type, size: f.bytes.length, bytes: f.bytes };
    files.set(file.id, file);
    const ext = f.type === 'application/pdf' ? 'pdf' : f.type === 'image/png' ? 'png' : 'jpg';
    const body = { id: file.id, object: 'file', created: now_s(), filename: f.filename, purpose, size: file.size, title: null, type: ext, url: null };
    return { status: 200, body };
  }

  /** `POST /v1/disputes/:id`: evidence kept; submitted unless `submit=false`. Once submitted or closed, no more. */
  function updateDispute(d: MockDispute, b: FormObject): Answer {
    if (!DISPUTE_OPEN.has(d.status)) return err(400, 'invalid_request_error', `This dispute is ${d.status} and takes no evidence.`);
    const given = b.evidence ?? {};
    if (typeof given !== 'object' || Array.isArray(given)) return err(400, 'invalid_request_error', 'Invalid hash', { param: 'evidence' });
    let chars = 0;
    for (const [k, v] of Object.entries(given)) {
      if (typeof v !== 'string' || (!EVIDENCE_FILE_FIELDS.has(k) && !EVIDENCE_TEXT_FIELDS.has(k)))
        return err(400, 'invalid_request_error', `Received unknown parameter: evidence[${k}]`, { code: 'parameter_unknown', param: `evidence[${k}]` });
      if (EVIDENCE_FILE_FIELDS.has(k) && files.get(v)?.purpose !== 'dispute_evidence')
        return err(400, 'invalid_request_error', `No such file upload: '${v}'`, { code: 'resource_missing', param: `evidence[${k}]` });
      if (EVIDENCE_TEXT_FIELDS.has(k)) chars += [...v].length;
    }
    if (chars > 150_000) return err(400, 'invalid_request_error', 'The combined character count of all evidence is limited to 150,000.', { param: 'evidence' });
    Object.assign(d.evidence, given as Record<string, string>);
    d.evidence_details.has_evidence = true;
    if (b.submit !== 'false') {
      d.status = d.status === 'warning_needs_response' ? 'warning_under_review' : 'under_review';
      d.evidence_details.submission_count += 1;
    }
    emit('charge.dispute.updated', d);
    return { status: 200, body: d };
  }

  /** `POST /v1/disputes/:id/close`: the merchant accepts; the dispute is lost (an inquiry just closes). */
  function closeDispute(d: MockDispute): Answer {
    if (!DISPUTE_OPEN.has(d.status)) return err(400, 'invalid_request_error', `This dispute is ${d.status} and cannot be closed.`);
    d.status = d.status === 'warning_needs_response' ? 'warning_closed' : 'lost';
    emit('charge.dispute.closed', d);
    return { status: 200, body: d };
  }

  function disputeRoute(method: string, m: RegExpExecArray, b: FormObject): Answer {
    const d = disputes.get(m[1] ?? '');
    if (!d) return err(404, 'invalid_request_error', `No such dispute: '${m[1]}'`, { code: 'resource_missing', param: 'dispute' });
    if (method === 'GET' && !m[2]) return { status: 200, body: d };
    if (method === 'POST') return m[2] ? closeDispute(d) : updateDispute(d, b);
    return err(404, 'invalid_request_error', `Unrecognized request URL (${method}).`);
  }

  /** The API's routes: the answer, before any fault. */
  function route(method: string, url: URL, b: FormObject, upload?: Multipart): Answer {
    const path = url.pathname;
    if (method === 'POST' && path === '/v1/files') return uploadFile(upload);
    const dm = /^\/v1\/disputes\/([A-Za-z0-9_]+)(\/close)?$/.exec(path);
    if (dm) return disputeRoute(method, dm, b);
    if (method === 'POST' && path === '/v1/payment_intents') return createIntent(b);
    if (method === 'GET' && path === '/v1/payment_intents/search') return search(url.searchParams.get('query') ?? '');
    if (method === 'POST' && path === '/v1/refunds') return createRefund(b);
    if (method === 'GET' && path === '/v1/refunds') {
      const data = [...refunds.values()].filter((r) => r.payment_intent === url.searchParams.get('payment_intent'));
      return { status: 200, body: { object: 'list', data, has_more: false, url: '/v1/refunds' } };
    }
    const m = /^\/v1\/payment_intents\/([A-Za-z0-9_]+)(?:\/(capture|cancel))?$/.exec(path);
    const pi = m ? intents.get(m[1] ?? '') : undefined;
    if (m && !pi) return err(404, 'invalid_request_error', `No such payment_intent: '${m[1]}'`, { code: 'resource_missing', param: 'intent' });
    if (pi && method === 'GET' && !m?.[2]) return { status: 200, body: pi };
    if (pi && method === 'POST' && m?.[2] === 'capture') return capture(pi, b);
    if (pi && method === 'POST' && m?.[2] === 'cancel') return cancel(pi);
    return err(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  /** Stripe's idempotency: a POST under a key seen before answers the first answer, if its parameters are the same. */
  function answer(method: string, url: URL, body: { b: FormObject; fingerprint: string; upload?: Multipart }, key: string | undefined): Answer {
    if (method !== 'POST' || !key) return route(method, url, body.b, body.upload);
    const params = `${url.pathname}?${body.fingerprint}`;
    const seen = idempotent.get(key);
    if (seen)
      return seen.params === params
        ? seen.answer
        : err(400, 'idempotency_error', 'Keys for idempotent requests can only be used with the same parameters they were first used with.');
    const a = route(method, url, body.b, body.upload);
    idempotent.set(key, { params, answer: structuredClone(a) });
    return a;
  }

  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://mock');
      if (req.method === 'GET' && url.pathname.startsWith('/3ds/')) return issuerPage(url, res);
      const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
      const send = (a: Answer, body = JSON.stringify(a.body)) => {
        res.writeHead(a.status, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(body);
      };
      let body: { b: FormObject; fingerprint: string; upload?: Multipart };
      try {
        body = readBody(bytes, String(req.headers['content-type'] ?? ''));
      } catch {
        return send(err(400, 'invalid_request_error', 'Unreadable body'));
      }
      const b = body.b;
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        ...(key ? { idempotency_key: key } : {}),
        body: b,
        query: Object.fromEntries(url.searchParams),
      });
      const at = faults.findIndex((f) => !f.on || f.on.test(url.pathname));
      const fault = at < 0 ? undefined : faults.splice(at, 1)[0]?.fault;
      if (fault === 'unauthorized' || req.headers.authorization !== `Bearer ${o.secret_key}`)
        return send(err(401, 'invalid_request_error', 'Invalid API Key provided: sk_****'));
      if (fault === 'server_error') return send(err(500, 'api_error', 'Something went wrong on our end.'));
      const a = answer(req.method ?? 'GET', url, body, key);
      // Done, then the connection cut before any answer.
      if (fault === 'drop') return void req.socket.destroy();
      if (fault === 'malformed') return send(a, '{"id": "pi_');
      if (fault === 'hang') {
        hanging.add(res);
        return;
      }
      send(a);
    });
  };
  const server = http.createServer((req, res) => {
    if (!o.latency) return handle(req, res);
    const t0 = performance.now();
    res.once('finish', () => o.latency?.served?.(performance.now() - t0));
    setTimeout(() => handle(req, res), o.latency.delay());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    events,
    intents,
    disputes,
    files,
    fault(fault, times = 1, on) {
      for (let i = 0; i < times; i++) faults.push(on ? { fault, on } : { fault });
    },
    openDispute,
    deliver,
    async settleRefund(refund_id, status) {
      const r = refunds.get(refund_id);
      if (!r) throw new Error(`no refund ${refund_id}`);
      r.status = status;
      if (status === 'failed') r.failure_reason = 'expired_or_canceled_card';
      emit('refund.updated', r);
    },
    async idle() {
      while (inflight.size > 0) await Promise.all([...inflight]);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A request body: a multipart upload (its fields, its file, and what idempotency compares: not the random boundary), else a form. */
function readBody(bytes: Buffer, content_type: string): { b: FormObject; fingerprint: string; upload?: Multipart } {
  if (!/^multipart\/form-data/i.test(content_type)) {
    const raw = bytes.toString('utf8');
    return { b: decodeForm(raw), fingerprint: raw };
  }
  const upload = readMultipart(bytes, content_type);
  const f = upload.file;
  const sha256 = f ? createHash('sha256').update(f.bytes).digest('hex') : '';
  const b: FormObject = { ...upload.fields, ...(f ? { [f.name]: { filename: f.filename, type: f.type, size: String(f.bytes.length), sha256 } } : {}) };
  const fingerprint = JSON.stringify(Object.entries(b).sort(([x], [y]) => (x < y ? -1 : 1)));
  return { b, fingerprint, upload };
}

/** RFC 7578 multipart/form-data as stripe-node writes it: `--boundary` CRLF, part headers, a blank line, the content, CRLF; `--boundary--` ends. */
function readMultipart(body: Buffer, content_type: string): Multipart {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(content_type);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw new Error('no boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  if (body.indexOf(delimiter) !== 0) throw new Error('the body does not start with its boundary');
  const out: Multipart = { fields: {} };
  let at = 0;
  for (let n = 0; n <= MAX_PARTS; n++) {
    at += delimiter.length;
    const after = body.subarray(at, at + 2).toString('latin1');
    if (after === '--') return out;
    const next = body.indexOf(delimiter, at);
    if (after !== '\r\n' || next < 0 || body.subarray(next - 2, next).toString('latin1') !== '\r\n') throw new Error('a malformed part');
    const part = body.subarray(at + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) throw new Error('a part without its blank line');
    readPart(out, part.subarray(0, split).toString('utf8'), part.subarray(split + 4));
    at = next;
  }
  throw new Error(`more than ${MAX_PARTS} parts`);
}

function readPart(out: Multipart, headers: string, content: Buffer): void {
  const name = /;\s*name="([^"]*)"/i.exec(headers)?.[1];
  if (!name) throw new Error('a part without a name');
  const filename = /;\s*filename="([^"]*)"/i.exec(headers)?.[1];
  if (filename === undefined) {
    out.fields[name] = content.toString('utf8');
    return;
  }
  if (out.file) throw new Error('more than one file');
  const type = /^content-type:\s*(.+)$/im.exec(headers)?.[1]?.trim() ?? 'application/octet-stream';
  out.file = { name, filename, type, bytes: Buffer.from(content) };
}
