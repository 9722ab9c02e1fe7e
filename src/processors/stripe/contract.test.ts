// Contract tests against Stripe's own documents (issue 32 item 4, docs/contract.md §21): every
// request the connector sends, as the mock received it, validates against its operation's
// schema in spec3.json (form bodies decoded, strings coerced to the schema's types as Stripe
// does; `x-stripeBypassValidation` enums not enforced; `oneOf` read as `anyOf`), with the two
// parameters the 2022 document lacks added from vendor/amendments.json; and the document's
// example PaymentIntent, Refund and Event parse into the right outcomes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import type { ProcessorCall } from '../types.js';
import { createStripeProcessor } from './connector.js';
import { type MockStripe, startMockStripe } from './mock.js';
import { authoriseOfIntent, cancelOfIntent, captureOfIntent, notificationsOfEvent, refundOutcome, STRIPE_DECLINES } from './outcomes.js';

const vendor = (name: string) => JSON.parse(fs.readFileSync(new URL(`../../../src/processors/stripe/vendor/${name}`, import.meta.url), 'utf8'));
type Json = Record<string, any>;
const spec: Json = vendor('spec3.trimmed.json');
const fixtures: Json = vendor('fixtures3.trimmed.json').resources;
const amendments: Json = vendor('amendments.json');

/** The vendor's readings (vendor/README.md): bypassed enums dropped, oneOf as anyOf. */
function readable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(readable);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'description' || k === 'title' || k.startsWith('x-')) continue;
    if (k === 'enum' && (schema as Json)['x-stripeBypassValidation']) continue;
    out[k === 'oneOf' ? 'anyOf' : k] = readable(v);
  }
  return out;
}

/** Adds an amendment at `at`, descending through properties (and an anyOf's object branch). */
function amend(schema: Json, at: string[], add: Json): void {
  let node = schema;
  for (const name of at.slice(0, -1)) {
    const next = node.properties?.[name];
    assert.ok(next, `amendment path ${at.join('.')}: no ${name}`);
    node = next.anyOf ? next.anyOf.find((b: Json) => b.type === 'object') : next;
  }
  const last = at[at.length - 1] as string;
  assert.equal(node.properties?.[last], undefined, `amendment ${at.join('.')} would replace the vendor's own schema`);
  node.properties = { ...node.properties, [last]: add };
}

const ajv = new Ajv({ coerceTypes: true, strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ValidateFunction>();
for (const [path, ops] of Object.entries(spec.paths as Json)) {
  const post = (ops as Json).post;
  if (!post) continue;
  const schema = structuredClone(post.requestBody.content['application/x-www-form-urlencoded'].schema);
  for (const a of amendments.add) if (a.operation === `POST ${path}`) amend(schema, a.at, a.schema);
  validators.set(path, ajv.compile(readable(schema) as Json));
}
const template = (path: string) => path.replace(/^\/v1\/payment_intents\/(?!search$)[^/]+/, '/v1/payment_intents/{intent}');

const KEY = 'sk_test_contract_1';
let mock: MockStripe;
before(async () => {
  mock = await startMockStripe({ secret_key: KEY });
});
after(async () => mock?.close());

let n = 0;
const call = (): ProcessorCall => ({ attempt_id: `att_contract_${++n}`, deadline_at: Date.now() + 10_000, signal: new AbortController().signal });
const card = (pan: string, cvc?: string) => ({ pan, brand: 'visa', exp_month: 12, exp_year: 2031, ...(cvc ? { security_code: cvc } : {}) });

describe('Stripe contract: requests', () => {
  test('every request the connector sends validates against its operation in spec3.json', async () => {
    const stripe = createStripeProcessor({ secret_key: KEY, webhook_secret: 'whsec_x', base_url: mock.url });
    const base = { transaction_id: 'pay_c1', amount_minor: 1000, currency: 'USD' };
    const manual = await stripe.authorise({ ...base, card: card('4242424242424242', '123'), capture_method: 'manual' }, call());
    assert.equal(manual.kind, 'approved');
    const ref = (manual as { reference: string }).reference;
    assert.equal((await stripe.capture({ transaction_id: 'pay_c1', reference: ref, amount_minor: 800, currency: 'USD' }, call())).kind, 'approved');
    const refund = await stripe.refund({ transaction_id: 'pay_c1', refund_id: 'rf_c1', reference: ref, amount_minor: 300, currency: 'USD' }, call());
    assert.equal(refund.kind, 'approved');
    const threeds = { eci: '05', cavv: 'AAABBBCCCDDDEEEFFF0123456789=', xid: '', ds_trans_id: 'f25084f0-5b16-4c0a-ae5d-b24808a95e4b' };
    const authenticated = await stripe.authorise({ ...base, transaction_id: 'pay_c2', card: card('4000000000003220', '123'), threeds }, call());
    assert.equal(authenticated.kind, 'approved', '3-D Secure result accepted');
    const v1 = { eci: '05', cavv: 'AAABBBCCCDDDEEEFFF0123456789=', xid: 'MDAwMDAwMDAwMDAwMDAwMDAwMDE=', ds_trans_id: '' };
    assert.equal(
      (await stripe.authorise({ ...base, transaction_id: 'pay_c3', card: card('4242424242424242'), threeds: v1, merchant_initiated: true }, call())).kind,
      'approved',
    );
    const toCancel = await stripe.authorise({ ...base, transaction_id: 'pay_c4', card: card('5555555555554444', '999'), capture_method: 'manual' }, call());
    assert.equal((await stripe.cancel({ transaction_id: 'pay_c4', reference: '' }, call())).kind, 'approved', 'cancel by our transaction id');
    assert.equal(toCancel.kind, 'approved');
    assert.equal((await stripe.authoriseStatus({ transaction_id: 'pay_c1' }, { ...call(), attempt_id: 'att_contract_1' })).kind, 'approved');
    assert.equal(
      (await stripe.operationStatus({ operation: 'refund', transaction_id: 'pay_c1' }, { ...call(), attempt_id: 'att_contract_3' })).kind,
      'approved',
    );

    const posts = mock.requests.filter((r) => r.method === 'POST');
    assert.equal(posts.length, 7, 'each operation above that writes is one POST');
    for (const r of posts) {
      const validate = validators.get(template(r.path));
      assert.ok(validate, `no schema for POST ${r.path}`);
      assert.ok(validate(structuredClone(r.body)), `POST ${r.path}: ${ajv.errorsText(validate.errors)}`);
      assert.match(r.idempotency_key ?? '', /^att_contract_\d+$/, 'Idempotency-Key is the attempt id');
    }
    for (const r of mock.requests.filter((x) => x.method === 'GET')) {
      const params = (spec.paths[r.path]?.get?.parameters ?? []) as Json[];
      assert.ok(params.length > 0, `no operation GET ${r.path}`);
      for (const q of Object.keys(r.query))
        assert.ok(
          params.some((p) => p.name === q),
          `GET ${r.path}: ${q} is not a parameter`,
        );
    }
  });

  test('the validator is not lenient: a misspelt or mistyped parameter fails', () => {
    const validate = validators.get('/v1/payment_intents') as ValidateFunction;
    const good = {
      amount: '1000',
      currency: 'usd',
      confirm: 'true',
      payment_method_data: { type: 'card', card: { number: '4242424242424242', exp_month: '12', exp_year: '2031' } },
    };
    assert.ok(validate(structuredClone(good)), ajv.errorsText(validate.errors));
    assert.equal(validate({ ...good, amount: 'ten' }), false);
    assert.equal(validate({ ...good, capture_method: 'later' }), false);
    assert.equal(validate({ ...good, payment_method_data: { type: 'card', card: { num: '4242' } } }), false);
    assert.equal(validate({ ...good, metadata_x: 'y' }), false);
    assert.equal(validators.get('/v1/refunds')?.({ payment_intent: 'pi_1', amount: '5', amount_to_capture: '5' }), false);
  });
});

describe('Stripe contract: the document’s examples', () => {
  const pi = (over: Json) => ({ ...fixtures.payment_intent, ...over });
  test('PaymentIntent statuses (the enum of spec3.json) read into authorisation, capture and cancel outcomes', () => {
    const statuses = spec.components.schemas.payment_intent.properties.status.enum as string[];
    const expect: Record<string, [string, string, string]> = {
      succeeded: ['approved', 'approved', 'declined'],
      requires_capture: ['approved', 'unknown', 'unknown'],
      processing: ['pending', 'pending', 'unknown'],
      // Without a redirect the gateway can follow (the fixture's): never a bare challenge.
      requires_action: ['declined', 'unknown', 'unknown'],
      requires_payment_method: ['declined', 'unknown', 'unknown'],
      requires_confirmation: ['unknown', 'unknown', 'unknown'],
      canceled: ['declined', 'declined', 'approved'],
    };
    assert.deepEqual([...statuses].sort(), Object.keys(expect).sort(), 'every status the document names has a reading');
    for (const status of statuses) {
      const got = [authoriseOfIntent(pi({ status })).kind, captureOfIntent(pi({ status })).kind, cancelOfIntent(pi({ status })).kind];
      assert.deepEqual(got, expect[status], status);
    }
    assert.deepEqual(authoriseOfIntent(pi({ status: 'requires_capture' })), { kind: 'approved', reference: fixtures.payment_intent.id });
    const failed = authoriseOfIntent(
      pi({ status: 'requires_payment_method', last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' } }),
    );
    assert.deepEqual(failed, { kind: 'declined', code: '1001', reference: fixtures.payment_intent.id });
    const redirect = { type: 'redirect_to_url', redirect_to_url: { url: 'https://hooks.stripe.com/3d_secure_2/hosted', return_url: 'https://gw.example/r' } };
    assert.deepEqual(authoriseOfIntent(pi({ status: 'requires_action', next_action: redirect })), {
      kind: 'challenge_required',
      reference: fixtures.payment_intent.id,
      action: { url: redirect.redirect_to_url.url, method: 'GET', data: {} },
    });
    const unauthenticated = authoriseOfIntent(pi({ status: 'requires_payment_method', last_payment_error: { code: 'payment_intent_authentication_failure' } }));
    assert.deepEqual(unauthenticated, { kind: 'declined', code: '1002', reference: fixtures.payment_intent.id, authentication_failed: true });
    assert.equal(authoriseOfIntent({ ...fixtures.payment_intent, object: 'charge' }).kind, 'unknown', 'another object is not an answer');
  });

  test('Refund statuses read into refund outcomes', () => {
    const table: Array<[string, string]> = [
      ['succeeded', 'approved'],
      ['pending', 'pending'],
      ['requires_action', 'pending'],
      ['failed', 'declined'],
      ['canceled', 'declined'],
      ['who_knows', 'unknown'],
    ];
    for (const [status, kind] of table) assert.equal(refundOutcome({ ...fixtures.refund, status }).kind, kind, status);
    assert.deepEqual(refundOutcome(fixtures.refund), { kind: 'approved', reference: fixtures.refund.id });
  });

  test('events read into notifications: id the event’s, object our transaction or refund, reference Stripe’s', () => {
    const metadata = { transaction_id: 'pay_1', attempt_id: 'att_1' };
    const event = (type: string, object: Json) => ({ ...fixtures.event, type, data: { object } });
    const one = (type: string, object: Json) => notificationsOfEvent(event(type, object));
    const piId = fixtures.payment_intent.id;
    assert.deepEqual(one('payment_intent.amount_capturable_updated', pi({ status: 'requires_capture', capture_method: 'manual', metadata })), [
      {
        id: fixtures.event.id,
        occurred_at: fixtures.event.created * 1000,
        operation: 'authorise',
        attempt_id: 'att_1',
        object_id: 'pay_1',
        reference: piId,
        outcome: { kind: 'approved', reference: piId },
      },
    ]);
    const failed = one('payment_intent.payment_failed', pi({ status: 'requires_payment_method', metadata, last_payment_error: { code: 'expired_card' } }));
    assert.deepEqual(failed[0]?.outcome, { kind: 'declined', code: '1005', reference: piId });
    assert.equal(one('payment_intent.succeeded', pi({ status: 'succeeded', capture_method: 'manual', metadata }))[0]?.operation, 'capture');
    assert.equal(one('payment_intent.succeeded', pi({ status: 'succeeded', capture_method: 'automatic', metadata }))[0]?.operation, 'authorise');
    assert.deepEqual(
      one('payment_intent.canceled', pi({ status: 'canceled', metadata })).map((x) => [x.operation, x.outcome.kind]),
      [['cancel', 'approved']],
    );
    const charge = { ...fixtures.charge, payment_intent: piId, metadata };
    assert.deepEqual(
      one('charge.captured', charge).map((x) => [x.operation, x.object_id, x.reference]),
      [['capture', 'pay_1', piId]],
    );
    const refund = { ...fixtures.refund, payment_intent: piId, metadata: { refund_id: 'rf_1', attempt_id: 'att_r' } };
    assert.deepEqual(
      one('refund.updated', { ...refund, status: 'failed' }).map((x) => [x.operation, x.object_id, x.attempt_id, x.outcome.kind]),
      [['refund', 'rf_1', 'att_r', 'declined']],
    );
    assert.deepEqual(
      one('charge.refund.updated', refund).map((x) => x.outcome),
      [{ kind: 'approved', reference: fixtures.refund.id }],
    );
    const two = one('charge.refunded', { ...charge, refunds: { data: [refund, { ...refund, id: 're_2', metadata: { refund_id: 'rf_2' } }] } });
    assert.deepEqual(
      two.map((x) => [x.id, x.object_id]),
      [
        [`${fixtures.event.id}:0`, 'rf_1'],
        [`${fixtures.event.id}:1`, 'rf_2'],
      ],
    );
    assert.deepEqual(notificationsOfEvent(fixtures.event), [], `the example event (${fixtures.event.type}) is not one Tollgate acts on`);
    assert.deepEqual(one('charge.dispute.created', { object: 'dispute' }), [], 'disputes come later');
    assert.deepEqual(one('payment_intent.succeeded', pi({ status: 'succeeded' })), [], 'a PaymentIntent not made by Tollgate (no metadata) is nobody’s');
  });

  test('the decline table maps Stripe’s codes onto 1001–1007; anything else is 1002', () => {
    for (const code of Object.values(STRIPE_DECLINES)) assert.match(code, /^100[1-7]$/);
    assert.equal(authoriseOfIntent(pi({ status: 'requires_payment_method', last_payment_error: { decline_code: 'brand_new_reason' } })).kind, 'declined');
  });
});
