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

  test('an account the merchant does not have, and another merchant’s live account: the same words', async () => {
    for (const account_id of ['987654321', live.account_id]) {
      const x = readXml(await postSigned('/v1/authorise', directPayment(gw.merchant, { account_id }), gw.merchant.secret_key));
      assert.deepEqual(
        [x.error_field, x.error_message],
        ['account_id', `account_id ${account_id} is not an account of merchant_id ${gw.merchant.merchant_id}`],
      );
    }
  });

  test('card data is masked wherever it stands: lists, objects, other names, inside text; cryptograms and keys too', async () => {
    const body = directPayment(gw.merchant, {
      note: 'card 4111111111111111 on file',
      account_owner: [{ first_name: 'A', account_id: '5555555555554444' }],
      additional_information: [{ mpi_info: { eci: '05', cavv: 'AAABBBCCCDDDEEEFFF00112233=', dsTransID: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f' } }],
    });
    const hostile = {
      ...body,
      card: ['4242424242424242', '4000000000000002'],
      card_number: '4111111111111111',
      cardNumber: { number: '378282246310005', cvc: '1234' },
      cvv2: '999',
      api_key: 'sk_test_abcdef',
    };
    const res = await postSigned('/v1/authorise', hostile, WRONG_SECRET);
    const x = readXml(res);
    assert.equal(res.statusCode, 401);
    for (const secret of [
      '4242424242424242',
      '4000000000000002',
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '1234',
      '999',
      'sk_test_abcdef',
      'AAABBBCCC',
    ]) {
      assert.ok(!res.body.includes(secret), `${secret} is not echoed: ${x.canonical_string}`);
    }
    assert.match(x.canonical_string, /card\[0\]=424242\*{6}4242/);
    assert.match(x.canonical_string, /note=card 411111\*{6}1111 on file/);
    assert.match(x.canonical_string, /order_no=ORD-/, 'everything else is as sent');
  });
});

describe('anything that could confirm live data: one sentence, one field, whatever the reason', () => {
  const PLAIN = ['encryption_data', 'encryption_data does not verify for this merchant_id and account_id (check both ids and the secret key)'];
  const refusal = async (body: Record<string, unknown>, secret: string) => {
    const x = readXml(await postSigned('/v1/authorise', body, secret));
    return [x.error_field, x.error_message, x.canonical_string];
  };

  test('a live account with a wrong signature, a live merchant with a wrong or unknown account, an unknown merchant', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['live account, wrong signature', directPayment(live), WRONG_SECRET],
      ['live merchant, unknown account', directPayment(live, { account_id: '987654329' }), live.secret_key],
      ['live merchant, a test merchant’s account', directPayment(live, { account_id: gw.merchant.account_id }), live.secret_key],
      ['unknown merchant', directPayment(gw.merchant, { merchant_id: '987654321', account_id: '987654322' }), gw.merchant.secret_key],
      ['unknown merchant, a live account id', directPayment(gw.merchant, { merchant_id: '987654321', account_id: live.account_id }), gw.merchant.secret_key],
    ];
    for (const [what, body, secret] of cases) assert.deepEqual(await refusal(body, secret), [...PLAIN, undefined], what);
  });
});
