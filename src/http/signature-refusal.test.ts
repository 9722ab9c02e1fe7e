// A refused signature explains itself on test accounts and says nothing more on live ones
// (issue 9): unknown account, another merchant's account, or a signature that differs, with
// the canonical string the gateway computed (card data masked). Never the right signature.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { canonicalString, sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, encodeBody, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { CANONICAL_ECHO_MAX } from './signature-refusal.js';

let gw: TestGateway;
let other: CreatedMerchant;
let live: CreatedMerchant;
before(async () => {
  gw = await testGateway();
  other = await gw.newMerchant({ name: 'Other shop' });
  live = await gw.newMerchant({ name: 'Live shop', mode: 'live' });
});
after(async () => {
  await gw.close();
});

/** Posts a body signed with `secret` (JSON). */
async function postSigned(url: string, body: Record<string, unknown>, secret: string) {
  const { payload, contentType } = encodeBody({ ...body, encryption_data: sign(body, secret) }, 'json');
  return gw.app.inject({ method: 'POST', url, payload, headers: { 'content-type': contentType }, remoteAddress: '127.0.0.1' });
}

const WRONG_SECRET = 'not-the-secret-0000000000000000';

describe('a test account: the 0401 says what is wrong', () => {
  test('a wrong signature: the canonical string the gateway computed, card data masked (XML endpoint)', async () => {
    const body = directPayment(gw.merchant, { order_no: 'SIG-1', shopper_email: 'a@shop.test', security_code: '738' });
    const res = await postSigned('/v1/authorise', body, WRONG_SECRET);
    assert.equal(res.statusCode, 401);
    const x = readXml(res);
    assert.equal(x.return_message, '0401:Invalid signature');
    assert.equal(x.error_field, 'encryption_data');
    assert.match(x.error_message, /canonical_string/);
    const expected = canonicalString({ ...body, card: '424242******4242', security_code: '***' });
    assert.equal(x.canonical_string, expected);
    assert.ok(x.canonical_string.includes('order_no=SIG-1'));
    assert.ok(!res.body.includes('4242424242424242') && !res.body.includes('738'), 'no card number or security code in the answer');
    assert.ok(!res.body.includes(sign(body, gw.merchant.secret_key)), 'never the right signature');
  });

  test('a wrong signature on a JSON endpoint: the same field in the JSON record', async () => {
    const body = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, order_nos: ['A', 'B'] };
    const res = await postSigned('/v1/retrievalTrans', body, WRONG_SECRET);
    assert.equal(res.statusCode, 401);
    const x = res.json();
    assert.equal(x.canonical_string, `account_id=${gw.merchant.account_id}&merchant_id=${gw.merchant.merchant_id}&order_nos[0]=A&order_nos[1]=B`);
  });

  test('a very long body: the echoed canonical string is cut at a bound', async () => {
    const body = directPayment(gw.merchant, { note: 'n'.repeat(100_000) });
    const x = readXml(await postSigned('/v1/authorise', body, WRONG_SECRET));
    assert.ok(x.canonical_string.length <= CANONICAL_ECHO_MAX + 20);
    assert.match(x.canonical_string, /…\(truncated\)$/);
  });

  test("another merchant's test account: says it belongs to another merchant", async () => {
    const body = directPayment(gw.merchant, { account_id: other.account_id });
    const x = readXml(await postSigned('/v1/authorise', body, gw.merchant.secret_key));
    assert.equal(x.error_field, 'account_id');
    assert.match(x.error_message, new RegExp(`account_id ${other.account_id} belongs to another merchant`));
    assert.equal(x.canonical_string, undefined);
  });

  test('an account the merchant does not have: says there is no such account', async () => {
    const body = directPayment(gw.merchant, { account_id: '987654321' });
    const x = readXml(await postSigned('/v1/authorise', body, gw.merchant.secret_key));
    assert.deepEqual([x.error_field, x.error_message], ['account_id', `there is no account_id 987654321 (merchant_id ${gw.merchant.merchant_id} exists)`]);
  });

  test('a merchant that does not exist: says so', async () => {
    const body = directPayment(gw.merchant, { merchant_id: '987654321', account_id: '987654322' });
    const x = readXml(await postSigned('/v1/authorise', body, gw.merchant.secret_key));
    assert.deepEqual([x.error_field, x.error_message], ['merchant_id', 'there is no merchant_id 987654321 (and no account_id 987654322)']);
  });
});

describe('a live account: nothing beyond "does not verify"', () => {
  const PLAIN = 'encryption_data does not verify for this merchant_id and account_id';

  test('a wrong signature: no canonical string', async () => {
    const x = readXml(await postSigned('/v1/authorise', directPayment(live), WRONG_SECRET));
    assert.equal(x.error_message, PLAIN);
    assert.equal(x.canonical_string, undefined);
  });

  test('a live account named under another merchant: the same sentence', async () => {
    const x = readXml(await postSigned('/v1/authorise', directPayment(gw.merchant, { account_id: live.account_id }), gw.merchant.secret_key));
    assert.equal(x.error_message, PLAIN);
  });

  test('an unknown account of a merchant with a live account: the same sentence', async () => {
    const x = readXml(await postSigned('/v1/authorise', directPayment(live, { account_id: '987654329' }), live.secret_key));
    assert.equal(x.error_message, PLAIN);
  });
});
