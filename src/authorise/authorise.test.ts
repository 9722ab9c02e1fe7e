// Direct payments through the public API (interface.md "Create a direct payment").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asXmlReadBack, sign } from '../crypto/signature.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

describe('sandbox test cards (docs/contract.md §9)', () => {
  const table: Array<[card: string, order_status: string, result_info: string, cvc?: string]> = [
    ['4242424242424242', '1', '0000:Success'],
    ['5555555555554444', '1', '0000:Success'],
    ['378282246310005', '1', '0000:Success', '1234'],
    ['6011111111111117', '1', '0000:Success'],
    ['3566002020360505', '1', '0000:Success'],
    ['4000000000000002', '0', '1002:Card declined'],
    ['4000000000009995', '0', '1001:Insufficient funds'],
    ['4000000000009987', '0', '1003:Lost card'],
    ['4000000000009979', '0', '1004:Stolen card'],
    ['4000000000000069', '0', '1005:Expired card'],
    ['4000000000000127', '0', '1006:Incorrect security code'],
    ['4000000000000119', '0', '1007:Processing error'],
    ['4100000000000019', '0', '1008:Rejected by risk control'],
    ['4242424242424241', '0', '1010:Invalid card number'],
  ];
  for (const [card, order_status, result_info, cvc] of table) {
    test(`${card.slice(0, 6)}…${card.slice(-4)} gives ${result_info}`, async () => {
      const res = await gw.post('/v1/authorise', directPayment(gw.merchant, { card, security_code: cvc ?? '123' }));
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /application\/xml/);
      const x = readXml(res);
      assert.equal(x.order_status, order_status);
      assert.equal(x.result_info, result_info);
      assert.equal(x.card, `${card.slice(0, 6)}${'*'.repeat(card.length - 10)}${card.slice(-4)}`);
    });
  }
});

describe('answers', () => {
  test('the answer is signed as the merchant reads it back', async () => {
    const res = await gw.post('/v1/authorise', directPayment(gw.merchant));
    const x = readXml(res);
    const { encryption_data, ...rest } = x;
    assert.equal(sign(asXmlReadBack(rest) as Record<string, unknown>, gw.merchant.secret_key), encryption_data);
    for (const f of [
      'merchant_id',
      'account_id',
      'order_no',
      'amount',
      'currency',
      'transaction_id',
      'card',
      'order_status',
      'result_info',
      'contract_name',
      'recurring_id',
      'recurring_deduction_period',
      'recurring_deduction_time',
      'note',
      'token_id',
      'connector',
      'threeds_result',
      'risk_action',
      'risk_score',
      'risk_reasons',
    ]) {
      assert.ok(f in x, `answer has ${f}`);
    }
  });

  test('a wrong signature gets 401 and 0401', async () => {
    const body = { ...directPayment(gw.merchant), encryption_data: 'a'.repeat(64) };
    const res = await gw.post('/v1/authorise', body, { sign: false });
    assert.equal(res.statusCode, 401);
    assert.equal(readXml(res).return_message, '0401:Invalid signature');
  });

  for (const format of ['json', 'form', 'xml'] as const) {
    test(`a ${format} body is accepted`, async () => {
      const res = await gw.post('/v1/authorise', directPayment(gw.merchant, { checkout_time: 1763596800 }), { format });
      assert.equal(readXml(res).result_info, '0000:Success', res.body);
    });
  }
});
