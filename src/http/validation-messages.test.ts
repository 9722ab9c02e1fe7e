// Every 4xx names the field and the rule in words a merchant reads (issue 9): no validator
// wording ("must NOT have fewer than 1 items", "must be array"), on every endpoint and shape.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type BodyFormat, directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { problemOf } from '../web/error-answer.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

const VALIDATOR_WORDING =
  /must NOT|must be (array|string|object|integer|number|boolean)\b|must match|must have required|must be equal to one of|must match format/;
const item = { transaction_id: 'T1', order_no: 'A', currency: 'USD', amount: '1.00' };

async function refusal(url: string, fields: Record<string, unknown>, format: BodyFormat = 'json') {
  const base = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id };
  const res = await gw.post(url, { ...base, ...fields }, { format });
  const x = url === '/v1/authorise' ? readXml(res) : JSON.parse(res.body);
  return { status: res.statusCode, field: x.error_field as string, message: x.error_message as string, return_status: x.return_status };
}

const CASES: Array<[goal: string, url: string, fields: () => Record<string, unknown>, field: string, message: string]> = [
  [
    'an empty capture batch (empty counts as absent, docs/contract.md §2)',
    '/v1/capture',
    () => ({ capture_orders: [] }),
    'capture_orders',
    'capture_orders is required: give at least 1 item',
  ],
  [
    'an empty cancel batch (empty counts as absent, docs/contract.md §2)',
    '/v1/cancel',
    () => ({ cancel_orders: [] }),
    'cancel_orders',
    'cancel_orders is required: give at least 1 item',
  ],
  [
    'an empty refund batch (empty counts as absent, docs/contract.md §2)',
    '/v1/refund',
    () => ({ refund_orders: [] }),
    'refund_orders',
    'refund_orders is required: give at least 1 item',
  ],
  [
    'an empty review batch (empty counts as absent, docs/contract.md §2)',
    '/v1/review',
    () => ({ review_orders: [] }),
    'review_orders',
    'review_orders is required: give at least 1 item',
  ],
  [
    'a capture batch over 50',
    '/v1/capture',
    () => ({ capture_orders: Array.from({ length: 51 }, () => item) }),
    'capture_orders',
    'capture_orders must have at most 50 items (got 51)',
  ],
  [
    'a batch that is not a list',
    '/v1/capture',
    () => ({ capture_orders: { a: { b: 1 } } }),
    'capture_orders',
    'capture_orders must be a list (a JSON array, or repeated form or XML fields)',
  ],
  [
    'an over-long id in a batch item',
    '/v1/capture',
    () => ({ capture_orders: [{ ...item, transaction_id: 'T'.repeat(300) }] }),
    'capture_orders[0].transaction_id',
    'capture_orders[0].transaction_id must be at most 64 characters long',
  ],
  ['an empty order_no', '/v1/authorise', () => directPayment(gw.merchant, { order_no: '' }), 'order_no', 'order_no is required'],
  [
    'a word where a whole number goes',
    '/v1/authorise',
    () => directPayment(gw.merchant, { checkout_time: 'soon' }),
    'checkout_time',
    'checkout_time must be a whole number',
  ],
  [
    'a string where an object goes',
    '/v1/authorise',
    () => directPayment(gw.merchant, { subscription: 'monthly' }),
    'subscription',
    'subscription must be an object of fields',
  ],
  [
    'a word where a number goes, deep in a cart item',
    '/v1/authorise',
    () => directPayment(gw.merchant, { cart_items: [{ basic_item_data: { name: 'Tee', price: { amount_usd: 'ten' } } }] }),
    'cart_items[0].basic_item_data.price.amount_usd',
    'cart_items[0].basic_item_data.price.amount_usd must be a number',
  ],
  ['an unknown field', '/v1/authorise', () => directPayment(gw.merchant, { colour: 'red' }), 'colour', 'colour is not a known field'],
  [
    'ids that are neither a list nor a string',
    '/v1/retrievalTrans',
    () => ({ order_nos: { x: 'A' } }),
    'order_nos',
    'order_nos must be a JSON array, or a comma-separated string, of at most 100 ids in total',
  ],
];

describe('validation messages in words', () => {
  for (const [goal, url, fields, field, message] of CASES) {
    test(`${goal}: 400 "${message}"`, async () => {
      const body = fields();
      const r = await refusal(url, body);
      assert.deepEqual([r.status, r.return_status, r.field, r.message], [400, '0', field, message]);
      assert.doesNotMatch(r.message, VALIDATOR_WORDING);
    });
  }

  test('patterns without a description and the rarer keywords are said in words too', () => {
    const cases: Array<[Parameters<typeof problemOf>[0], string]> = [
      [{ keyword: 'pattern', instancePath: '', params: { pattern: '^\\d{1,20}$' } }, 'must be a string of 1 to 20 digits'],
      [{ keyword: 'pattern', instancePath: '', params: { pattern: '^[0-9a-fA-F]{64}$' } }, 'must be 64 hexadecimal characters (HMAC-SHA256)'],
      [{ keyword: 'pattern', instancePath: '', params: { pattern: '^x$' } }, 'is not in the expected form'],
      [{ keyword: 'enum', instancePath: '', params: { allowedValues: ['day', 'week', 'month'] } }, 'must be day, week or month'],
      [{ keyword: 'minimum', instancePath: '', params: { limit: 1 } }, 'must be at least 1'],
      [{ keyword: 'maxLength', instancePath: '', params: { limit: 1 } }, 'must be at most 1 character long'],
      [{ keyword: 'type', instancePath: '', params: { type: 'string,number' } }, 'must be a string or a number'],
      [{ keyword: 'somethingNew', instancePath: '', params: {} }, 'is not valid here'],
    ];
    for (const [error, words] of cases) assert.equal(problemOf(error), words);
  });

  test('form bodies past their limits are refused in words, never cut short', async () => {
    const cases: Array<[string, string]> = [
      [`merchant_id=1&a${'[b]'.repeat(12)}=1`, 'the form body nests more than 8 levels of brackets'],
      [Array.from({ length: 5001 }, (_, i) => `f${i}=1`).join('&'), 'the form body has more than 5000 fields'],
      [Array.from({ length: 300 }, (_, i) => `a[${i}]=1`).join('&'), 'a list in the form body has more than 200 items'],
    ];
    for (const [payload, message] of cases) {
      const res = await gw.app.inject({ method: 'POST', url: '/v1/capture', payload, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.deepEqual([res.statusCode, JSON.parse(res.body).error_message], [400, message]);
    }
  });

  test('the same words for a form body and an XML body', async () => {
    for (const format of ['form', 'xml'] as const) {
      const r = await refusal('/v1/authorise', directPayment(gw.merchant, { checkout_time: 'soon' }), format);
      assert.deepEqual([r.status, r.message], [400, 'checkout_time must be a whole number'], format);
    }
  });

  test('a form or XML number past the double range ("1e309", "Infinity") is refused naming the field, never coerced to Infinity', async () => {
    for (const format of ['form', 'xml'] as const) {
      for (const value of ['1e309', 'Infinity', '-Infinity']) {
        const r = await refusal('/v1/authorise', directPayment(gw.merchant, { checkout_time: value }), format);
        assert.deepEqual([r.status, r.field, r.message], [400, 'checkout_time', 'checkout_time must be a finite number'], `${format} ${value}`);
      }
      const deep = directPayment(gw.merchant, { cart_items: [{ basic_item_data: { name: 'Tee', price: { amount_usd: '1e400' } } }] });
      const r = await refusal('/v1/authorise', deep, format);
      assert.deepEqual([r.status, r.field], [400, 'cart_items[0].basic_item_data.price.amount_usd'], format);
    }
  });
});
