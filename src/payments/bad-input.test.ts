// docs/contract.md §1 and "bad input gets a clear error and changes nothing": every refusal is a
// 4xx that names the problem, and nothing is stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

async function counts() {
  const db = gw.runtime.store.db;
  const p = await db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const c = await db
    .selectFrom('cards')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const e = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return [Number(p.n), Number(c.n), Number(e.n)];
}

function raw(payload: string, contentType = 'application/json') {
  return gw.app.inject({ method: 'POST', url: '/v1/authorise', payload, headers: { 'content-type': contentType } });
}

describe('unparseable and hostile bodies', () => {
  const cases: Array<[name: string, payload: string, status: number, pattern: RegExp]> = [
    ['malformed JSON', '{"merchant_id": "1",', 400, /malformed JSON/],
    ['a JSON array', '[1,2]', 400, /must be an object/],
    ['malformed XML', '<request><merchant_id>1</request>', 400, /malformed XML/],
    ['XML with a DTD', '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><r><merchant_id>&a;</merchant_id></r>', 400, /DOCTYPE or ENTITY/],
    [
      'an XML entity bomb',
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
      400,
      /DOCTYPE or ENTITY/,
    ],
    ['an external entity', '<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>', 400, /DOCTYPE or ENTITY/],
    ['text that is no format', 'hello world', 400, /neither JSON, XML nor form/],
    ['JSON nested too deep', `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`, 400, /nested deeper/],
  ];
  for (const [name, payload, status, pattern] of cases) {
    test(`${name} → ${status}, named, nothing stored`, async () => {
      const before = await counts();
      const res = await raw(payload);
      assert.equal(res.statusCode, status, res.body);
      assert.match(readXml(res).error_message, pattern);
      assert.deepEqual(await counts(), before);
    });
  }

  test('a JSON syntax error names where, never the text around it (it may be card data)', async () => {
    const res = await raw('{"card":"4242424242424242","security_code":"738","a":x}');
    assert.equal(res.statusCode, 400);
    const message = readXml(res).error_message as string;
    assert.match(message, /^malformed JSON/);
    assert.ok(!message.includes('738') && !message.includes('4242'), message);
  });

  test('a NUL character in any field → 400 naming the field, in every body shape', async () => {
    for (const payload of ['{"merchant_id":"1","order_no":"A\\u0000B"}', 'merchant_id=1&order_no=A%00B', '{"x":[{"y":"\\u0000"}]}']) {
      const res = await raw(payload);
      assert.equal(res.statusCode, 400, payload);
      assert.match(readXml(res).error_message, /(order_no|x\[0\]\.y) holds a NUL character/);
    }
  });

  test('a malformed URL and an over-long path parameter answer in the gateway’s error shape', async () => {
    const bad = await gw.app.inject({ method: 'GET', url: '/threeds/%E0%A4%A' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().return_message, '0400:Invalid input');
  });

  test('an error never echoes a malformed merchant_id', async () => {
    const res = await raw(JSON.stringify({ merchant_id: '1'.repeat(5000), account_id: '2' }));
    assert.equal(res.statusCode, 400);
    assert.equal(readXml(res).merchant_id, '');
  });

  test('a 2 MiB body → 413 and 0413', async () => {
    const body = JSON.stringify({ ...directPayment(gw.merchant), note: 'x'.repeat(2 * 1024 * 1024) });
    const res = await raw(body);
    assert.equal(res.statusCode, 413);
    assert.equal(readXml(res).return_message, '0413:Body too large');
  });

  test('an empty body → 400 naming merchant_id', async () => {
    const res = await raw('');
    assert.equal(res.statusCode, 400);
    assert.match(readXml(res).error_message, /merchant_id is required/);
  });

  test('an unsigned request → 401', async () => {
    const res = await gw.post('/v1/authorise', directPayment(gw.merchant), { sign: false });
    assert.equal(res.statusCode, 401);
    assert.equal(readXml(res).return_message, '0401:Invalid signature');
  });

  test('an unknown account of a test merchant → 401 that says so (src/web/signature-refusal.test.ts has every case)', async () => {
    const body = directPayment(gw.merchant, { account_id: '99999999' });
    const res = await gw.post('/v1/authorise', body);
    assert.equal(res.statusCode, 401);
    assert.match(readXml(res).error_message, /account_id 99999999 is not an account of merchant_id/);
  });
});

describe('fields of the wrong type or shape (signed, so validation is reached)', () => {
  const cases: Array<[name: string, overrides: Record<string, unknown>, field: RegExp]> = [
    ['amount without decimals for USD', { amount: '10' }, /^amount must be a decimal with exactly 2 decimal places/],
    ['amount with 2 decimals for JPY', { currency: 'JPY', amount: '12.00' }, /^amount must be a decimal with exactly 0 decimal places/],
    ['amount 3 decimals for KWD is fine, 2 is not', { currency: 'KWD', amount: '1.50' }, /^amount .*3 decimal places/],
    ['amount zero', { amount: '0.00' }, /^amount must be greater than zero/],
    ['amount as an object', { amount: { v: 1 } }, /^amount must be/],
    ['unknown currency', { currency: 'ABC' }, /^currency "ABC" is not a supported ISO 4217/],
    ['lowercase currency', { currency: 'usd' }, /^currency must be a three-letter uppercase/],
    ['card with letters', { card: '4242abcd42424242' }, /^card must be 12 to 19 digits/],
    ['month 13', { expiration_month: '13' }, /^expiration_month must be a month from 1 to 12/],
    ['3-digit security code on Amex', { card: '378282246310005', security_code: '123' }, /^security_code must be 4 digits/],
    ['5-digit security code', { security_code: '12345' }, /^security_code must be 3 or 4 digits/],
    ['shopper_ip not an address', { shopper_ip: '300.1.1.1' }, /^shopper_ip must be/],
    ['shopper_ip in octal spelling', { shopper_ip: '0177.0.0.1' }, /^shopper_ip must be/],
    ['billing_country not ISO', { billing_country: 'XX' }, /^billing_country "XX" is not an ISO 3166-1/],
    ['birth_date shape', { birth_date: '1990-01-01' }, /^birth_date must be shaped NN-NN-NNNN/],
    ['birth_date impossible', { birth_date: '45-45-1990' }, /^birth_date is not a real date/],
    ['resolution shape', { resolution: '1920*1080' }, /^resolution must be shaped <width>x<height>/],
    ['items packing', { items: 'Tee#,#1#,#10.00' }, /^items item 1 has 3 segments/],
    ['cookie shape', { cookie_new: 'novalue' }, /^cookie_new must be key=value pairs/],
    ['time_zone out of range', { time_zone: '5000' }, /^time_zone must be an integer offset between/],
    ['checkout_time not a number', { checkout_time: 'soon' }, /^checkout_time must be a whole number$/],
    ['cart_items not an array', { cart_items: 'tee' }, /^cart_items must be a list/],
    [
      'cart_items price not a number',
      { cart_items: [{ basic_item_data: { price: { amount_usd: 'ten' } } }] },
      /^cart_items\[0\]\.basic_item_data\.price\.amount_usd must be a number$/,
    ],
    ['account_owner ip', { account_owner: [{ registration_ip: '1.2.3' }] }, /^account_owner\[0\]\.registration_ip must be/],
    ['total_discount extra field', { total_discount: [{ coupon: 'x' }] }, /^total_discount\[0\]\.coupon is not a known field/],
    ['mpi_info eci shape', { additional_information: [{ mpi_info: { eci: '5' } }] }, /^additional_information\[0\]\.mpi_info\.eci must be a two-digit ECI/],
    ['subscription interval', { subscription: { interval: 'fortnight' } }, /^subscription\.interval must be one of day, week, month, year/],
    ['an unknown field', { colour: 'red' }, /^colour is not a known field/],
    ['order_no with a space', { order_no: 'A B' }, /^order_no must be 1 to 64 printable/],
    ['order_no too long', { order_no: 'A'.repeat(65) }, /^order_no must be at most 64 characters long$/],
    ['notify_url not http', { notify_url: 'ftp://example.com/' }, /^notify_url must be an http or https URL/],
    ['components do not add up', { amount: '10.00', item_total: '8.00', shipping: '1.00' }, /^amount is 10\.00 but item_total .* is 9\.00/],
    ['a component in the wrong shape', { item_total: '8' }, /^item_total must be a decimal with exactly 2/],
    ['capture_method unknown', { capture_method: 'later' }, /^capture_method must be automatic or manual/],
    ['card and token together', { token_id: 'tok_x' }, /^token_id cannot be sent together with card/],
    ['unknown token', { card: undefined, token_id: 'tok_nope' }, /^token_id is not a token of this account/],
  ];
  for (const [name, overrides, message] of cases) {
    test(`${name} → 400 naming the field, nothing stored`, async () => {
      const before = await counts();
      const body = directPayment(gw.merchant, overrides);
      for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
      const res = await gw.post('/v1/authorise', body);
      assert.equal(res.statusCode, 400, res.body);
      const x = readXml(res);
      assert.equal(x.return_message, '0400:Invalid input');
      assert.match(x.error_message, message);
      assert.ok(!res.body.includes('4242424242424242'), 'no card number in the error');
      assert.deepEqual(await counts(), before);
    });
  }

  for (const field of ['merchant_id', 'account_id', 'order_no', 'currency', 'amount', 'card', 'expiration_month', 'expiration_year', 'security_code']) {
    test(`missing ${field} → 4xx naming it`, async () => {
      const body = directPayment(gw.merchant);
      delete body[field];
      const res = await gw.app.inject({
        method: 'POST',
        url: '/v1/authorise',
        payload: JSON.stringify({ ...body, encryption_data: sign(body, gw.merchant.secret_key) }),
        headers: { 'content-type': 'application/json' },
      });
      assert.ok(res.statusCode === 400, `${res.statusCode} ${res.body}`);
      assert.match(readXml(res).error_message, new RegExp(`^${field} is required`));
    });
  }
});
