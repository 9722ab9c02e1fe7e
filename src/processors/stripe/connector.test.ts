// The Stripe connector against the mock (docs/contract.md §20–21): idempotency by attempt id,
// the outcomes of faults (a 500, a malformed answer, no answer by the deadline, a refused key,
// a refused request), 3-D Secure, status queries by search, and webhook verification. No
// card number, security code or key in any outcome or log line.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import type { AuthoriseInput, ProcessorCall } from '../types.js';
import { createStripeProcessor } from './connector.js';
import { type MockStripe, startMockStripe } from './mock.js';

const KEY = 'sk_test_unit_51AbCdSecret';
const WHSEC = 'whsec_unit_secret';
let mock: MockStripe;
const logged: string[] = [];
const log = (fields: Record<string, unknown>, message: string) => logged.push(JSON.stringify({ ...fields, message }));
let stripe: ReturnType<typeof createStripeProcessor>;
before(async () => {
  mock = await startMockStripe({ secret_key: KEY });
  stripe = createStripeProcessor({ secret_key: KEY, webhook_secret: WHSEC, base_url: mock.url, log });
});
after(async () => mock?.close());

let n = 0;
const call = (attempt_id = `att_unit_${++n}`, ms = 5_000): ProcessorCall => {
  const c = new AbortController();
  setTimeout(() => c.abort(), ms).unref();
  return { attempt_id, deadline_at: Date.now() + ms, signal: c.signal };
};
const PAN = '4242424242424242';
const input = (over: Partial<AuthoriseInput> = {}): AuthoriseInput => ({
  transaction_id: `pay_unit_${++n}`,
  amount_minor: 2500,
  currency: 'GBP',
  card: { pan: PAN, brand: 'visa', exp_month: 1, exp_year: 2030, security_code: '737' },
  ...over,
});
const secretsIn = (x: unknown) => /4242424242424242|737|sk_test_unit|whsec_unit/.test(JSON.stringify(x));

describe('Stripe connector', () => {
  test('the same attempt twice is one PaymentIntent (Idempotency-Key = attempt id); another attempt is another', async () => {
    const i = input({ capture_method: 'manual' });
    const c = call();
    const first = await stripe.authorise(i, c);
    const again = await stripe.authorise(i, call(c.attempt_id));
    assert.deepEqual(again, first);
    assert.equal([...mock.intents.values()].filter((pi) => pi.metadata.transaction_id === i.transaction_id).length, 1);
    const other = await stripe.authorise(i, call());
    assert.notDeepEqual(other, first);
  });

  test('faults: 500 and a malformed answer are unknown; a hang is unknown at the deadline; 401 declines 1007 with one log line', async () => {
    mock.fault('server_error');
    const e500 = await stripe.authorise(input(), call());
    assert.deepEqual(e500, { kind: 'unknown', reason: 'Stripe: StripeAPIError 500' });
    mock.fault('malformed');
    const garbled = await stripe.authorise(input(), call());
    assert.equal(garbled.kind, 'unknown');
    mock.fault('hang');
    const started = Date.now();
    const hung = await stripe.authorise(input(), call(undefined, 300));
    assert.deepEqual(hung, { kind: 'unknown', reason: 'no answer by the deadline' });
    assert.ok(Date.now() - started < 2_000, 'answered at the deadline, not at the HTTP timeout');
    logged.length = 0;
    mock.fault('unauthorized');
    const refused = await stripe.authorise(input(), call());
    assert.deepEqual(refused, { kind: 'declined', code: '1007', reference: '', credentials_refused: true });
    assert.equal(logged.length, 1);
    assert.match(logged[0] ?? '', /refused our credentials/);
    for (const x of [e500, garbled, hung, refused, logged]) assert.equal(secretsIn(x), false, JSON.stringify(x));
  });

  test('a malformed answer, then the status query finds the PaymentIntent by the attempt id', async () => {
    const c = call();
    mock.fault('malformed');
    const i = input();
    assert.equal((await stripe.authorise(i, c)).kind, 'unknown');
    const status = await stripe.authoriseStatus({ transaction_id: i.transaction_id }, call(c.attempt_id));
    assert.equal(status.kind, 'approved');
    assert.deepEqual(await stripe.authoriseStatus({ transaction_id: 'pay_never' }, call()), {
      kind: 'unknown',
      reason: 'no PaymentIntent found by search (yet)',
    });
  });

  test('3-D Secure: Stripe’s own with a return_url (a redirect, then its result); without one never a bare challenge; with a 3-D Secure result the issuer approves', async () => {
    const card = { pan: '4000000000003220', brand: 'visa', exp_month: 1, exp_year: 2030 };
    const bare = await stripe.authorise(input({ card }), call());
    assert.deepEqual([bare.kind, (bare as { code?: string }).code], ['declined', '1007']);
    const authentication = { return_url: 'https://gw.example/threeds/return/att_x', required: true };
    const own = await stripe.authorise(input({ card: { ...card, pan: '4242424242424242' }, authentication }), call());
    assert.equal(own.kind, 'challenge_required');
    const { action, reference } = own as { action: { url: string; method: string }; reference: string };
    assert.equal(action.method, 'GET');
    const asked = mock.requests.at(-1)?.body as { return_url?: string; payment_method_options?: { card: Record<string, string> } } | undefined;
    assert.equal(asked?.return_url, authentication.return_url);
    assert.equal(asked?.payment_method_options?.card.request_three_d_secure, 'any');
    // Back before finishing: not authenticated; then through the issuer's page.
    assert.deepEqual(await stripe.completeAuthentication?.({ transaction_id: 't', reference, params: {} }, call()), {
      kind: 'declined',
      code: '1007',
      reference,
      authentication_failed: true,
    });
    assert.equal((await fetch(`${action.url}?outcome=pass`, { redirect: 'manual' })).status, 302);
    assert.deepEqual(await stripe.completeAuthentication?.({ transaction_id: 't', reference, params: { payment_intent: 'pi_not_ours' } }, call()), {
      kind: 'approved',
      reference,
    });
    const threeds = { eci: '05', cavv: 'AJkBByEyYgAAAASwgmEodQAAAAA=', xid: '', ds_trans_id: '8f3a9a2c-2f7d-4d2c-9a34-0c7d2c6c1a11' };
    assert.equal((await stripe.authorise(input({ card, threeds }), call())).kind, 'approved');
    const sent = mock.requests.at(-1)?.body.payment_method_options as { card: { three_d_secure: Record<string, string> } };
    assert.deepEqual(sent.card.three_d_secure, {
      cryptogram: threeds.cavv,
      electronic_commerce_indicator: '05',
      transaction_id: threeds.ds_trans_id,
      version: '2.2.0',
    });
  });

  test('capture, refund and cancel; operation status by search; a refused request declines 1007', async () => {
    const i = input({ capture_method: 'manual' });
    const auth = await stripe.authorise(i, call());
    assert.equal(auth.kind, 'approved');
    const reference = (auth as { reference: string }).reference;
    assert.deepEqual(await stripe.operationStatus({ operation: 'capture', transaction_id: i.transaction_id }, call()), { kind: 'not_found' });
    const cap = call();
    mock.fault('malformed');
    assert.equal((await stripe.capture({ transaction_id: i.transaction_id, reference, amount_minor: 2000, currency: 'GBP' }, cap)).kind, 'unknown');
    assert.deepEqual(await stripe.operationStatus({ operation: 'capture', transaction_id: i.transaction_id }, call(cap.attempt_id)), {
      kind: 'approved',
      reference,
    });
    const rf = call();
    const refund = await stripe.refund({ transaction_id: i.transaction_id, refund_id: 'rf_unit_1', reference, amount_minor: 500, currency: 'GBP' }, rf);
    assert.equal(refund.kind, 'approved');
    assert.deepEqual(await stripe.operationStatus({ operation: 'refund', transaction_id: i.transaction_id }, call(rf.attempt_id)), refund);
    assert.deepEqual(await stripe.operationStatus({ operation: 'refund', transaction_id: i.transaction_id }, call()), { kind: 'not_found' });
    const tooMuch = await stripe.refund({ transaction_id: i.transaction_id, refund_id: 'rf_unit_2', reference, amount_minor: 99_999, currency: 'GBP' }, call());
    assert.deepEqual([tooMuch.kind, (tooMuch as { code?: string }).code], ['declined', '1007']);
    const late = await stripe.cancel({ transaction_id: i.transaction_id, reference }, call());
    assert.deepEqual([late.kind, (late as { code?: string }).code], ['declined', '1007'], 'a captured PaymentIntent cannot be cancelled');
    assert.deepEqual(await stripe.cancel({ transaction_id: 'pay_nothing_there', reference: '' }, call()), { kind: 'approved', reference: '' });
    // No reference came back: the PaymentIntent is found by our transaction id.
    const j = input({ capture_method: 'manual' });
    const second = await stripe.authorise(j, call());
    assert.deepEqual(await stripe.capture({ transaction_id: j.transaction_id, reference: '', amount_minor: 2500, currency: 'GBP' }, call()), second);
  });

  test('webhooks: verified by Stripe-Signature; a bad, missing or stale signature is 401, an unsigned body nothing', () => {
    const payload = JSON.stringify({
      id: 'evt_unit_1',
      object: 'event',
      type: 'payment_intent.canceled',
      created: 1_700_000_000,
      data: { object: { id: 'pi_1', object: 'payment_intent', status: 'canceled', metadata: { transaction_id: 'pay_1' } } },
    });
    const sign = (secret: string, timestamp?: number) =>
      new Stripe('sk_x').webhooks.generateTestHeaderString({ payload, secret, ...(timestamp ? { timestamp } : {}) });
    const raw = Buffer.from(payload);
    const ok = stripe.parseWebhook?.({ headers: { 'stripe-signature': sign(WHSEC) }, raw });
    assert.equal(ok?.kind, 'accepted');
    assert.deepEqual(ok?.kind === 'accepted' && ok.notifications.map((x) => [x.id, x.operation, x.object_id, x.outcome.kind]), [
      ['evt_unit_1', 'cancel', 'pay_1', 'approved'],
    ]);
    assert.deepEqual(ok?.kind === 'accepted' && ok.reply.status, 200);
    const refusals = [
      { 'stripe-signature': sign('whsec_other') },
      {},
      { 'stripe-signature': sign(WHSEC, Math.floor(Date.now() / 1000) - 3_600) },
      { 'stripe-signature': 'garbage' },
    ];
    for (const headers of refusals) assert.deepEqual(stripe.parseWebhook?.({ headers, raw })?.kind === 'refused' && 401, 401, JSON.stringify(headers));
    const tampered = stripe.parseWebhook?.({ headers: { 'stripe-signature': sign(WHSEC) }, raw: Buffer.from(payload.replace('canceled', 'succeeded')) });
    assert.equal(tampered?.kind, 'refused');
    const noSecret = createStripeProcessor({ secret_key: KEY, base_url: mock.url }).parseWebhook?.({ headers: { 'stripe-signature': sign(WHSEC) }, raw });
    assert.equal(noSecret?.kind, 'refused');
  });

  test('fuzz: signed bodies of any shape never throw; only readable events give notifications, each well formed', () => {
    // mulberry32: seeded, so a failure repeats.
    let seed = 42;
    const rand = (k: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % k;
    };
    const TYPES = [
      'payment_intent.succeeded',
      'payment_intent.payment_failed',
      'payment_intent.canceled',
      'payment_intent.amount_capturable_updated',
      'charge.captured',
      'charge.refunded',
      'refund.updated',
      'charge.dispute.created',
      'x',
    ];
    const STATUSES = ['succeeded', 'requires_capture', 'processing', 'requires_action', 'requires_payment_method', 'canceled', 'pending', 'failed', '', 7];
    const value = (depth: number): unknown => {
      const pick = rand(depth > 2 ? 5 : 8);
      const shapes: Array<() => unknown> = [
        () => null,
        () => rand(1000),
        () => 'str',
        () => true,
        () => [],
        () => ({
          id: 'pi_1',
          object: rand(2) ? 'payment_intent' : 'refund',
          status: STATUSES[rand(STATUSES.length)],
          metadata: { transaction_id: 'pay_f', refund_id: 'rf_f', attempt_id: 'att_f' },
        }),
        () => ({ object: 'charge', payment_intent: 'pi_1', refunds: { data: [value(depth + 1), value(depth + 1)] }, metadata: value(depth + 1) }),
        () => ({ metadata: value(depth + 1) }),
      ];
      return shapes[pick]?.();
    };
    const ops = new Set(['authorise', 'capture', 'cancel', 'refund']);
    const signer = new Stripe('sk_x').webhooks;
    let accepted = 0;
    let notified = 0;
    for (let i = 0; i < 400; i++) {
      const body =
        rand(10) === 0
          ? randomText(rand)
          : JSON.stringify({
              id: rand(5) ? `evt_${i}` : value(3),
              type: TYPES[rand(TYPES.length)],
              created: value(3),
              data: rand(6) ? { object: value(0) } : value(1),
            });
      const headers = { 'stripe-signature': signer.generateTestHeaderString({ payload: body, secret: WHSEC }) };
      const r = stripe.parseWebhook?.({ headers, raw: Buffer.from(body) });
      assert.ok(r, body);
      if (r.kind === 'refused') {
        assert.equal(r.status, 400, body);
        continue;
      }
      accepted++;
      notified += r.notifications.length;
      for (const x of r.notifications) {
        assert.ok(typeof x.id === 'string' && x.id.startsWith('evt_') && ops.has(x.operation) && typeof x.object_id === 'string', JSON.stringify(x));
        assert.ok(['approved', 'declined', 'pending', 'challenge_required'].includes(x.outcome.kind), JSON.stringify(x));
      }
    }
    assert.ok(accepted > 300, `${accepted} of 400 were JSON`);
    assert.ok(notified >= 5, `${notified} notifications: the checks above saw some`);
  });
});

function randomText(rand: (k: number) => number): string {
  return Array.from({ length: rand(40) }, () => String.fromCharCode(32 + rand(90))).join('');
}
