// Goal: the merchant client library drives every acquiring endpoint of a real listening
// gateway (in-process, port 0) on the engine under test, and does what it promises: typed
// answers with exactly the fields the gateway sends, declines as answers, refusals as typed
// errors, every answer's signature verified (a tampered one raises), retries after a lost
// answer that never charge or refund twice, and notifications verified on both signatures.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Static } from 'typebox';
import type { CreatedMerchant } from '../merchants/service.js';
import type { PaymentMethodsInput } from '../methods/schema.js';
import { DeliveryWorker } from '../notifications/worker.js';
import type { CancelBody, CaptureBody } from '../payments/lifecycle-routes.js';
import type { QueryBody } from '../payments/query.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import type { RefundBody } from '../refunds/routes.js';
import type { RefundSearchBody } from '../refunds/search.js';
import type { ReviewBody } from '../review/routes.js';
import { setThresholds } from '../risk/settings.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { formTokenOf, listenGateway, openPage, submit } from '../threeds/testing.js';
import {
  AuthenticationError,
  type AuthoriseAnswer,
  type AuthoriseRequest,
  type CancelRequest,
  type CaptureRequest,
  type FetchLike,
  InvalidRequestError,
  type OrderRecord,
  type PaymentMethodsAnswer,
  type PaymentMethodsRequest,
  type QueryOrdersRequest,
  type RankedPaymentMethod,
  type RefundRecord,
  type RefundRequest,
  type RefundResult,
  type ReviewRequest,
  resultCode,
  riskReasons,
  type SearchRefundsRequest,
  SignatureVerificationError,
  TollgateClient,
  type TollgateClientOptions,
  WebhookVerificationError,
} from './index.js';

// ---------- the types against the route schemas (checked by tsc, which npm test runs) ----------
type Wire<T> = Omit<T, 'merchant_id' | 'account_id' | 'encryption_data'>;
/** The field tree of a type: every key at every depth, array elements by their element type. */
type Shape<T> = T extends readonly (infer E)[] ? Shape<E> : T extends object ? { [K in keyof T]-?: Shape<NonNullable<T[K]>> } : 'leaf';
/** true when A has exactly B's fields at every depth and A's values fit B. */
type Matches<A, B> = [A] extends [B] ? ([Shape<A>] extends [Shape<B>] ? ([Shape<B>] extends [Shape<A>] ? true : false) : false) : false;
const requestTypesMatchSchemas: [
  Matches<AuthoriseRequest, Wire<AuthoriseDirect>>,
  Matches<QueryOrdersRequest, Wire<Static<typeof QueryBody>>>,
  Matches<CaptureRequest, Wire<Static<typeof CaptureBody>>>,
  Matches<CancelRequest, Wire<Static<typeof CancelBody>>>,
  Matches<RefundRequest, Wire<Static<typeof RefundBody>>>,
  Matches<SearchRefundsRequest, Wire<Static<typeof RefundSearchBody>>>,
  Matches<ReviewRequest, Wire<Static<typeof ReviewBody>>>,
  Matches<PaymentMethodsRequest, Wire<PaymentMethodsInput>>,
] = [true, true, true, true, true, true, true, true];

// ---------- the answer types against the answers (declared field lists tied to the types) ----------
type Declared<T> = Record<keyof T, 'required' | 'optional'>;
const R = 'required' as const;
const AUTHORISE_FIELDS: Declared<AuthoriseAnswer> = {
  merchant_id: R,
  account_id: R,
  order_no: R,
  amount: R,
  currency: R,
  transaction_id: R,
  card: R,
  order_status: R,
  result_info: R,
  contract_name: R,
  recurring_id: R,
  recurring_deduction_period: R,
  recurring_deduction_time: R,
  note: R,
  token_id: R,
  connector: R,
  threeds_result: R,
  risk_action: R,
  risk_score: R,
  risk_reasons: R,
  threeds_url: 'optional',
  encryption_data: R,
};
const ORDER_FIELDS: Declared<OrderRecord> = {
  amount: R,
  currency: R,
  delivery_information: R,
  antifraud_provider: R,
  fraud_check_result: R,
  is3ds: R,
  order_no: R,
  payment_status: R,
  query_result: R,
  reference_no: R,
  shopper_email: R,
  shopper_phone: R,
  subscription_result: R,
  transaction_date: R,
  transaction_id: R,
  website: R,
  captured_amount: R,
  refunded_amount: R,
  card: R,
  result_info: R,
};
const REFUND_RESULT_FIELDS: Declared<RefundResult> = {
  transaction_id: R,
  order_no: R,
  currency: R,
  amount: R,
  refund_amount: R,
  refund_reason: R,
  refund_reference: R,
  refund_reference_id: R,
  refund_status: R,
  refund_message: R,
};
const REFUND_RECORD_FIELDS: Declared<RefundRecord> = {
  transaction_id: R,
  order_no: R,
  currency: R,
  amount: R,
  refund_amount: R,
  refund_reason: R,
  refund_reference: R,
  refund_reference_id: R,
  refund_status: R,
  payment_status: R,
  refund_date: R,
  refund_processing_date: R,
  query_result: R,
};

const PAYMENT_METHODS_FIELDS: Declared<PaymentMethodsAnswer> = {
  merchant_id: R,
  account_id: R,
  return_status: R,
  return_message: R,
  currency: R,
  amount: R,
  billing_country: R,
  payment_methods: R,
  encryption_data: R,
};
const RANKED_METHOD_FIELDS: Declared<RankedPaymentMethod> = { payment_method: R, type: R, approval_rate: R, sample_size: R, recommended: R };

function assertFields(declared: Record<string, 'required' | 'optional'>, actual: object, what: string): void {
  const keys = Object.keys(actual);
  const undeclared = keys.filter((k) => !(k in declared));
  const missing = Object.entries(declared)
    .filter(([k, r]) => r === 'required' && !keys.includes(k))
    .map(([k]) => k);
  assert.deepEqual({ undeclared, missing }, { undeclared: [], missing: [] }, `${what}: fields differ from the client's type`);
}

// ---------- a real listening gateway ----------
let gw: TestGateway;
let origin: string;

before(async () => {
  gw = await testGateway();
  origin = await listenGateway(gw);
});
after(async () => {
  await gw.close();
});

let shopper = 0;
/** A new shopper per payment, so the risk rules' velocity counts never hold a test payment. */
function payment(overrides: Partial<AuthoriseRequest> = {}): AuthoriseRequest {
  const n = shopper++;
  return {
    order_no: `CL-${Date.now().toString(36)}-${n}`,
    currency: 'USD',
    amount: '10.00',
    card: '4242424242424242',
    expiration_month: '12',
    expiration_year: String(new Date().getUTCFullYear() + 2),
    security_code: '123',
    shopper_email: `client${n}@example.com`,
    shopper_ip: `198.18.${n >> 8}.${n & 255}`,
    ...overrides,
  };
}

/** A client over the socket for `m`, with quick retries; `fetch` may wrap the real one. */
function clientFor(m: CreatedMerchant, o: Partial<TollgateClientOptions> = {}): TollgateClient {
  return new TollgateClient({
    base_url: origin,
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    secret: m.secret_key,
    webhook_secret: m.webhook_secret,
    timeout_ms: 15_000,
    retry: { base_delay_ms: 10, max_delay_ms: 50 },
    ...o,
  });
}

/** Merchants are per test group: the card velocity rule counts per account. */
async function merchant(o: { capture_method?: 'automatic' | 'manual' } = {}): Promise<{ m: CreatedMerchant; client: TollgateClient }> {
  const m = await gw.newMerchant(o);
  return { m, client: clientFor(m) };
}

const itemOf = (x: AuthoriseAnswer) => ({ transaction_id: x.transaction_id, order_no: x.order_no, currency: x.currency, amount: x.amount });

describe('payments through the client', () => {
  test('pay 4242424242424242: success, the answer typed and verified, exactly the declared fields', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment({ note: ' spaced <&> "quoted" \'too\' ' }));
    assert.equal(x.order_status, '1');
    assert.equal(resultCode(x), '0000');
    assert.match(x.transaction_id, /\S/);
    assert.equal(x.card, '424242******4242');
    assert.equal(x.note, ' spaced <&> "quoted" \'too\' ', 'text read back as written (the signature covers it)');
    assertFields(AUTHORISE_FIELDS, x, 'authorise answer');
    assert.ok(riskReasons(x).length > 1, 'risk_reasons read back as a list of rules');
    for (const r of riskReasons(x)) assert.deepEqual(Object.keys(r).sort(), ['name', 'status']);
  });

  test('3-D Secure card: order_status 2 with threeds_url; the signed return to return_url verifies', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment({ card: '4000000000003220', return_url: 'https://shop.example/back?cart=7' }));
    assert.equal(x.order_status, '2');
    assert.equal(resultCode(x), '0002');
    assert.ok(x.threeds_url?.startsWith(origin), 'threeds_url on the gateway');
    const page = await openPage(x.threeds_url as string);
    const done = await submit(x.threeds_url as string, formTokenOf(page.body), 'complete');
    assert.equal(done.statusCode, 303);
    const back = client.verifyReturn(done.headers.location as string);
    assert.deepEqual([back.transaction_id, back.order_status, back.result_info, back.threeds_result], [x.transaction_id, '1', '0000:Success', 'Y']);
    const forged = (done.headers.location as string).replace('order_status=1', 'order_status=0');
    assert.throws(() => client.verifyReturn(forged), SignatureVerificationError);
    // What a Node handler has (req.url: path and query), the query with and without '?', a fragment.
    const url = new URL(done.headers.location as string);
    for (const given of [`${url.pathname}${url.search}`, url.search, url.search.slice(1), `${url.href}#top`]) {
      assert.equal(client.verifyReturn(given).transaction_id, x.transaction_id, given);
    }
    assert.throws(() => client.verifyReturn(url.pathname), /the return carries no encryption_data: pass the whole URL, req.url/);
    assert.throws(() => client.verifyReturn(`${url.pathname}${forged.slice(forged.indexOf('?'))}`), /the return's encryption_data does not match its fields/);
  });

  test('a decline is an answer, not an exception: order_status 0 and result_info 1002', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment({ card: '4000000000000002' }));
    assert.deepEqual([x.order_status, x.result_info, resultCode(x)], ['0', '1002:Card declined', '1002']);
  });

  test('query: found and not-found records, typed', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment());
    const q = await client.queryOrders({ transaction_ids: [x.transaction_id, 'T-NOT-MINE'] });
    assert.equal(q.return_status, '1');
    assert.equal(q.orders_list.length, 2);
    const [found, missing] = q.orders_list as [OrderRecord, OrderRecord];
    assertFields(ORDER_FIELDS, found, 'order record');
    assertFields(ORDER_FIELDS, missing, 'not-found order record');
    assert.deepEqual([found.query_result, found.payment_status, found.transaction_id, found.order_no], ['1', '3000', x.transaction_id, x.order_no]);
    assert.deepEqual([missing.query_result, missing.transaction_id], ['0', 'T-NOT-MINE']);
    const byOrder = await client.queryOrders({ order_nos: x.order_no });
    assert.equal(byOrder.orders_list[0]?.transaction_id, x.transaction_id, 'a comma-separated id string works too');
  });

  test('capture on a manual-capture merchant: partial capture, then it is paid', async () => {
    const { client } = await merchant({ capture_method: 'manual' });
    const x = await client.authorise(payment());
    assert.equal((await client.queryOrders({ transaction_ids: [x.transaction_id] })).orders_list[0]?.payment_status, '2000');
    const c = await client.capture({ capture_orders: [{ ...itemOf(x), amount: '6.00' }] });
    assert.deepEqual(c.capture_orders, [
      { amount: '6.00', capture_status: '1', currency: 'USD', error_message: '', order_no: x.order_no, transaction_id: x.transaction_id },
    ]);
    const order = (await client.queryOrders({ transaction_ids: [x.transaction_id] })).orders_list[0];
    assert.deepEqual([order?.payment_status, order?.captured_amount], ['3000', '6.00']);
    const again = await client.capture({ capture_orders: [{ ...itemOf(x), amount: '1.00' }] });
    assert.deepEqual([again.capture_orders[0]?.capture_status, resultCode(again.capture_orders[0] as { error_message: string })], ['0', '1012']);
  });

  test('cancel: an authorisation is released (5000); a failed item is an answer with its code', async () => {
    const { client } = await merchant({ capture_method: 'manual' });
    const x = await client.authorise(payment());
    const c = await client.cancel({ cancel_orders: [itemOf(x), { ...itemOf(x), transaction_id: 'T-UNKNOWN' }] });
    assert.deepEqual(
      c.cancel_orders.map((o) => [o.cancel_status, resultCode(o)]),
      [
        ['1', ''],
        ['0', '0404'],
      ],
    );
    assert.equal((await client.queryOrders({ transaction_ids: [x.transaction_id] })).orders_list[0]?.payment_status, '5000');
  });

  test('refund (partial) and refund search by id and by date range', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment());
    const r = await client.refund({ refund_orders: [{ ...itemOf(x), refund_amount: '3.00', refund_reason: 'size' }] });
    const item = r.refund_orders[0] as RefundResult;
    assertFields(REFUND_RESULT_FIELDS, item, 'refund result');
    assert.deepEqual([item.refund_status, item.refund_amount, item.refund_reference_id, resultCode(item)], ['1', '3.00', `${x.transaction_id}-01`, '0000']);
    const order = (await client.queryOrders({ transaction_ids: [x.transaction_id] })).orders_list[0];
    assert.deepEqual([order?.payment_status, order?.refunded_amount], ['4100', '3.00']);

    const found = await client.searchRefunds({ transaction_ids: [x.transaction_id] });
    assert.equal(found.refund_orders.length, 1);
    assertFields(REFUND_RECORD_FIELDS, found.refund_orders[0] as RefundRecord, 'refund record');
    assert.deepEqual([found.refund_orders[0]?.refund_reference_id, found.refund_orders[0]?.payment_status], [`${x.transaction_id}-01`, '4100']);
    const day = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');
    const now = new Date(gw.clock.now);
    const range = await client.searchRefunds({ start_date: `${day(now)}000000`, end_date: `${day(now)}235959` });
    assert.ok(range.refund_orders.some((o) => o.refund_reference_id === `${x.transaction_id}-01`));
  });

  test('review: a payment held by the account thresholds is accepted and captured', async () => {
    const { m, client } = await merchant();
    // A disposable e-mail address alone (score 30) lands in this account's review band.
    await setThresholds(gw.runtime.store, m.account_id, { review: 25, reject: 90 }, gw.clock.now);
    const x = await client.authorise(payment({ open3d: '0', shopper_email: 'held@mailinator.com' }));
    assert.deepEqual([x.order_status, resultCode(x), x.risk_action], ['3', '0004', 'REVIEW']);
    const r = await client.review({
      review_orders: [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT', note: 'called the shopper' }],
    });
    assert.deepEqual(r.review_orders, [
      { transaction_id: x.transaction_id, order_no: x.order_no, decision: 'ACCEPT', review_status: '1', payment_status: '3000', error_message: '' },
    ]);
  });

  test('review: the sandbox review card 4000000000009235 is held, and REJECT cancels it', async () => {
    const { client } = await merchant();
    const x = await client.authorise(payment({ card: '4000000000009235' }));
    assert.deepEqual([x.order_status, resultCode(x), x.risk_action], ['3', '0004', 'REVIEW']);
    const r = await client.review({ review_orders: [{ transaction_id: x.transaction_id, order_no: x.order_no, decision: 'REJECT', note: 'no' }] });
    assert.deepEqual(
      r.review_orders.map((o) => [o.review_status, o.payment_status]),
      [['1', '5000']],
    );
  });

  test('paymentMethods: the methods of a purchase, best first, with exactly the declared fields', async () => {
    const { client } = await merchant();
    await client.authorise(payment({ card: '5555555555554444' }));
    const x = await client.paymentMethods({ currency: 'BRL', amount: '50.00', billing_country: 'BR' });
    assertFields(PAYMENT_METHODS_FIELDS, x, 'paymentMethods answer');
    for (const method of x.payment_methods) assertFields(RANKED_METHOD_FIELDS, method, 'ranked method');
    assert.deepEqual(
      x.payment_methods.map((o) => [o.payment_method, o.type, o.approval_rate, o.sample_size, o.recommended]),
      [
        ['mastercard', 'card', '0.8571', '1', '1'],
        ['visa', 'card', '0.8500', '0', '1'],
        ['american-express', 'card', '0.8500', '0', '1'],
        ['discover', 'card', '0.8500', '0', '1'],
        ['jcb', 'card', '0.8500', '0', '1'],
        ['pix', 'apm', '0.7000', '0', '0'],
        ['boleto', 'apm', '0.7000', '0', '0'],
      ],
    );
  });
});

describe('typed errors', () => {
  test('a wrong secret: AuthenticationError 0401 with HTTP 401 and the request id; not retried', async () => {
    const { m } = await merchant();
    let calls = 0;
    const counting: FetchLike = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const client = clientFor(m, { secret: 'not-the-secret', fetch: counting });
    const e = await client.authorise(payment()).then(
      () => assert.fail('a wrong secret was accepted'),
      (err: unknown) => err,
    );
    assert.ok(e instanceof AuthenticationError, String(e));
    assert.deepEqual([e.code, e.http_status, e.return_message], ['0401', 401, '0401:Invalid signature']);
    assert.match(e.request_id, /\S/);
    assert.equal(e.error_field, 'encryption_data');
    assert.match(e.canonical_string ?? '', /card=424242\*{6}4242/, 'a test account is told what the gateway signed, card masked');
    assert.equal(calls, 1, 'a 4xx is never retried');
  });

  test('a bad field: InvalidRequestError 0400 naming the field, on XML and JSON endpoints', async () => {
    const { client } = await merchant();
    const e = await client.authorise(payment({ amount: '10' })).catch((err: unknown) => err);
    assert.ok(e instanceof InvalidRequestError, String(e));
    assert.deepEqual([e.code, e.http_status, e.error_field], ['0400', 400, 'amount']);
    assert.match(e.error_message, /^amount /);
    const batch = await client.capture({ capture_orders: [] }).catch((err: unknown) => err);
    assert.ok(batch instanceof InvalidRequestError, String(batch));
    assert.equal(batch.error_field, 'capture_orders');
  });
});

/** The real fetch with the answer text rewritten on the way (a man in the middle). */
const tampering =
  (edit: (text: string) => string): FetchLike =>
  async (input, init) => {
    const res = await fetch(input, init);
    return new Response(edit(await res.text()), { status: res.status, headers: res.headers });
  };

describe('answer signatures', () => {
  test('a tampered XML or JSON answer raises SignatureVerificationError; one without encryption_data too', async () => {
    const { m, client } = await merchant();
    const xml = clientFor(m, { fetch: tampering((t) => t.replace('<amount>10.00</amount>', '<amount>1.00</amount>')) });
    const e = await xml.authorise(payment()).catch((err: unknown) => err);
    assert.ok(e instanceof SignatureVerificationError, String(e));
    assert.equal(e.reason, 'mismatch');

    const x = await client.authorise(payment());
    const json = clientFor(m, { fetch: tampering((t) => t.replace('"payment_status":"3000"', '"payment_status":"5000"')) });
    const q = await json.queryOrders({ transaction_ids: [x.transaction_id] }).catch((err: unknown) => err);
    assert.ok(q instanceof SignatureVerificationError && q.reason === 'mismatch', String(q));

    const stripped = clientFor(m, { fetch: tampering((t) => t.replace(/,"encryption_data":"[0-9a-f]+"/, '')) });
    const s = await stripped.queryOrders({ transaction_ids: [x.transaction_id] }).catch((err: unknown) => err);
    assert.ok(s instanceof SignatureVerificationError && s.reason === 'missing', String(s));
  });
});

/**
 * The real fetch, except that the first request to `path` reaches the gateway and its
 * answer is then lost (as when a connection drops after the gateway committed).
 */
function losingFirstAnswer(path: string): { fetch: FetchLike; keys: Array<string | null> } {
  const keys: Array<string | null> = [];
  let lost = false;
  return {
    keys,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (new URL(String(input)).pathname !== path) return res;
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      if (!lost) {
        lost = true;
        await res.arrayBuffer();
        throw new TypeError('fetch failed (simulated: the answer was lost)');
      }
      return res;
    },
  };
}

describe('retries', () => {
  test('a lost authorise answer: the retry carries the same Idempotency-Key, is replayed, one payment', async () => {
    const { m, client } = await merchant();
    const lossy = losingFirstAnswer('/v1/authorise');
    const body = payment();
    const r = await clientFor(m, { fetch: lossy.fetch }).call('authorise', body);
    assert.equal(r.attempts, 2);
    assert.equal(r.replayed, true, 'answered from the idempotency store');
    assert.equal(lossy.keys.length, 2);
    assert.equal(lossy.keys[0], lossy.keys[1]);
    assert.equal(lossy.keys[0], r.idempotency_key);
    const q = await client.queryOrders({ order_nos: [body.order_no] });
    assert.deepEqual(
      q.orders_list.map((o) => [o.query_result, o.transaction_id]),
      [['1', r.answer.transaction_id]],
    );
    const payments = await gw.runtime.store.db.selectFrom('payments').select('transaction_id').where('account_id', '=', m.account_id).execute();
    assert.equal(payments.length, 1, 'charged once');
  });

  test('a lost refund answer: the retry does not refund twice', async () => {
    const { m, client } = await merchant();
    const x = await client.authorise(payment());
    const lossy = losingFirstAnswer('/v1/refund');
    const key = 'refund-once-1';
    const r = await clientFor(m, { fetch: lossy.fetch }).call('refund', { refund_orders: [{ ...itemOf(x), refund_amount: '1.00' }] }, { idempotency_key: key });
    assert.deepEqual(lossy.keys, [key, key], "the caller's key on both attempts");
    assert.equal(r.answer.refund_orders[0]?.refund_status, '1');
    const order = (await client.queryOrders({ transaction_ids: [x.transaction_id] })).orders_list[0];
    assert.equal(order?.refunded_amount, '1.00', 'refunded once');
    assert.equal((await client.searchRefunds({ transaction_ids: [x.transaction_id] })).refund_orders.length, 1);
  });
});

describe('notifications', () => {
  let m: CreatedMerchant;
  let client: TollgateClient;
  let delivery: { body: string; headers: Record<string, string> };
  let transaction_id: string;

  before(async () => {
    ({ m, client } = await merchant());
    // A notify_url that records the raw delivery, served by a plain local server.
    const { startReceiver } = await import('../notifications/test-receiver.js');
    const receiver = await startReceiver();
    try {
      const x = await client.authorise(payment({ notify_url: receiver.url }));
      transaction_id = x.transaction_id;
      const worker = new DeliveryWorker({
        store: gw.runtime.store,
        merchants: gw.runtime.merchants,
        allow_private: true,
        schedule_ms: [1_000],
        timeout_ms: 10_000,
        now: () => gw.clock.now,
      });
      await worker.drain();
      const got = receiver.received.find((r) => r.body.includes(transaction_id));
      assert.ok(got, 'the payment notification was delivered');
      delivery = { body: got.body, headers: got.headers as Record<string, string> };
    } finally {
      await receiver.close();
    }
  });

  test('a delivery verifies and comes back as a typed event', () => {
    const event = client.notifications.verify(delivery.body, delivery.headers, { now_ms: gw.clock.now });
    assert.equal(event.event_type, 'payment.succeeded');
    if (event.event_type !== 'payment.succeeded') return;
    assert.equal(event.data.transaction_id, transaction_id);
    assert.equal(event.data.payment_status, '3000');
    assertFields(ORDER_FIELDS, event.data, 'notification data');
    assert.equal(event.event_id, delivery.headers['webhook-id']);
  });

  const refused = (f: () => unknown, reason: string) =>
    assert.throws(f, (e: unknown) => e instanceof WebhookVerificationError && e.reason === reason, `expected a WebhookVerificationError (${reason})`);

  test('a tampered body, a wrong secret, a stale timestamp or a missing header is refused', () => {
    const now_ms = gw.clock.now;
    refused(() => client.notifications.verify(delivery.body.replace('"3000"', '"5000"'), delivery.headers, { now_ms }), 'signature');
    const otherWhsec = clientFor(m, { webhook_secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` });
    refused(() => otherWhsec.notifications.verify(delivery.body, delivery.headers, { now_ms }), 'signature');
    // The right whsec_ secret but another account key: the body's encryption_data fails.
    const otherKey = clientFor(m, { secret: 'another-account-key' });
    refused(() => otherKey.notifications.verify(delivery.body, delivery.headers, { now_ms }), 'encryption_data');
    refused(() => client.notifications.verify(delivery.body, delivery.headers, { now_ms: now_ms + 10 * 60_000 }), 'timestamp');
    refused(() => client.notifications.verify(delivery.body, delivery.headers, { now_ms: now_ms - 10 * 60_000 }), 'timestamp');
    const { 'webhook-signature': _, ...unsigned } = delivery.headers;
    refused(() => client.notifications.verify(delivery.body, unsigned, { now_ms }), 'missing_header');
  });
});

test('request types have the route schemas’ fields (compile-time; see requestTypesMatchSchemas)', () => {
  assert.ok(requestTypesMatchSchemas.every(Boolean));
});
