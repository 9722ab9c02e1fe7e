// 3-D Secure in the direct flow (decisions §10), driven through real HTTP requests to
// /v1/authorise and to the challenge page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import { setThresholds } from '../risk/settings.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { ChallengeService } from './service.js';
import { authorise, eventsOf, formTokenOf, mpiInfo, openPage, queryOrder, submit } from './testing.js';

const CHALLENGE_CARD = '4000000000003220';
const RETURN_URL = 'https://shop.example/return?cart=7';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

async function challenged(overrides: Record<string, unknown> = {}) {
  const x = await authorise(gw, directPayment(gw.merchant, { card: CHALLENGE_CARD, return_url: RETURN_URL, ...overrides }));
  assert.equal(x.order_status, '2');
  assert.equal(x.result_info, '0002:Pending 3-D Secure authentication');
  assert.match(x.threeds_url, /^http:\/\/[^/]+\/threeds\/[A-Za-z0-9_-]{32}$/);
  return x;
}

function signedReturn(location: string): Record<string, string> {
  const u = new URL(location);
  assert.equal(`${u.origin}${u.pathname}`, 'https://shop.example/return');
  assert.equal(u.searchParams.get('cart'), '7', 'the merchant’s own parameters are kept');
  const fields: Record<string, string> = {};
  for (const k of ['merchant_id', 'account_id', 'order_no', 'transaction_id', 'order_status', 'result_info', 'threeds_result'])
    fields[k] = u.searchParams.get(k) ?? '';
  assert.equal(u.searchParams.get('encryption_data'), sign(fields, gw.merchant.secret_key), 'return parameters are signed with the account key');
  return fields;
}

describe('challenge page', () => {
  test('shows merchant, amount and masked card, escaped, under a strict CSP', async () => {
    const m = await gw.newMerchant({ name: `<script>alert("x")</script> & Sons` });
    const x = await authorise(gw, directPayment(m, { card: CHALLENGE_CARD, amount: '25.50', return_url: RETURN_URL }), m);
    const page = await openPage(gw, x.threeds_url);
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.ok(page.body.includes('400000******3220'));
    assert.ok(page.body.includes('25.50 USD'));
    assert.ok(page.body.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Sons'));
    assert.ok(!page.body.includes('<script'), 'no script element at all');
    assert.ok(!page.body.includes(CHALLENGE_CARD), 'never the full card number');
    const csp = page.headers['content-security-policy'] as string;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /style-src 'nonce-[A-Za-z0-9_-]+'/);
    assert.match(csp, /form-action 'self' https:\/\/shop\.example;/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['cache-control'], 'no-store');
  });

  test('completed: authorised with 3-D Secure, signed return, notification, single use', async () => {
    const x = await challenged();
    const page = await openPage(gw, x.threeds_url);
    const token = formTokenOf(page.body);
    const res = await submit(gw, x.threeds_url, token, 'complete');
    assert.equal(res.statusCode, 303);
    const back = signedReturn(res.headers.location as string);
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result, back.transaction_id], ['1', '0000:Success', 'Y', x.transaction_id]);
    const order = await queryOrder(gw, gw.merchant, x.transaction_id);
    assert.equal(order.payment_status, '3000');
    assert.equal(order.is3ds, '1');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.pending', 'payment.succeeded']);
    // Single use: neither the page nor the form works a second time.
    assert.equal((await submit(gw, x.threeds_url, token, 'complete')).statusCode, 410);
    assert.equal((await openPage(gw, x.threeds_url)).statusCode, 410);
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.pending', 'payment.succeeded']);
  });

  test('failed: declined with 1009 and threeds_result N', async () => {
    const x = await challenged();
    const token = formTokenOf((await openPage(gw, x.threeds_url)).body);
    const res = await submit(gw, x.threeds_url, token, 'fail');
    const back = signedReturn(res.headers.location as string);
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result], ['0', '1009:3-D Secure authentication failed', 'N']);
    const order = await queryOrder(gw, gw.merchant, x.transaction_id);
    assert.deepEqual([order.payment_status, order.is3ds], ['6000', '0']);
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.failed', 'payment.pending']);
  });

  test('expired: a page opened after 15 minutes fails the payment', async () => {
    const x = await challenged();
    gw.clock.advance(15 * 60 * 1000);
    const res = await openPage(gw, x.threeds_url);
    assert.equal(res.statusCode, 303);
    const back = signedReturn(res.headers.location as string);
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result], ['0', '1009:3-D Secure authentication failed', 'N']);
    assert.equal((await openPage(gw, x.threeds_url)).statusCode, 410);
  });

  test('expired: the scheduled job fails lapsed challenges and sends the notification', async () => {
    const x = await challenged({ return_url: undefined });
    const token = formTokenOf((await openPage(gw, x.threeds_url)).body);
    gw.clock.advance(15 * 60 * 1000 + 1);
    assert.ok((await new ChallengeService(gw.runtime.deps).expireDue()) >= 1);
    const order = await queryOrder(gw, gw.merchant, x.transaction_id);
    assert.equal(order.payment_status, '6000');
    assert.equal(order.result_info, '1009:3-D Secure authentication failed');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.failed', 'payment.pending']);
    assert.equal((await submit(gw, x.threeds_url, token, 'complete')).statusCode, 410, 'too late to complete');
  });

  test('without return_url the shopper sees a result page', async () => {
    const x = await challenged({ return_url: undefined });
    const token = formTokenOf((await openPage(gw, x.threeds_url)).body);
    const res = await submit(gw, x.threeds_url, token, 'complete');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /Authentication complete/);
  });

  test('a wrong form token or an unknown id changes nothing', async () => {
    const x = await challenged();
    assert.equal((await submit(gw, x.threeds_url, 'A'.repeat(32), 'complete')).statusCode, 403);
    assert.equal((await openPage(gw, x.threeds_url.replace(/[^/]{32}$/, 'B'.repeat(32)))).statusCode, 404);
    assert.equal((await queryOrder(gw, gw.merchant, x.transaction_id)).payment_status, '1000');
  });
});

describe('open3d and mpi_info (decisions §10)', () => {
  test('open3d 1 challenges a card that does not need it', async () => {
    const x = await authorise(gw, directPayment(gw.merchant, { open3d: '1' }));
    assert.equal(x.order_status, '2');
    assert.ok(x.threeds_url);
  });

  test('open3d 0 never challenges: a card that requires it fails with 1009, result U', async () => {
    const x = await authorise(gw, directPayment(gw.merchant, { card: CHALLENGE_CARD, open3d: '0' }));
    assert.deepEqual([x.order_status, x.result_info, x.threeds_result, x.threeds_url], ['0', '1009:3-D Secure authentication failed', 'U', undefined]);
  });

  test('the review band asks for a challenge; authentication lowers the score and the payment goes through', async () => {
    const m = await gw.newMerchant();
    await setThresholds(gw.runtime.store, m.account_id, { review: 30, reject: 90 }, gw.clock.now);
    const x = await authorise(gw, directPayment(m, { shopper_email: 'a@mailinator.com' }), m);
    assert.deepEqual([x.order_status, x.risk_action, x.risk_score], ['2', 'REVIEW', '30']);
    const token = formTokenOf((await openPage(gw, x.threeds_url)).body);
    await submit(gw, x.threeds_url, token, 'complete');
    const order = await queryOrder(gw, m, x.transaction_id);
    assert.deepEqual([order.payment_status, order.is3ds], ['3000', '1']);
  });

  const valid: Array<[string, Record<string, unknown>, string]> = [
    ['ECI 05 authenticated', { additional_information: [{ mpi_info: mpiInfo() }] }, 'Y'],
    ['ECI 06 attempted', { additional_information: [{ mpi_info: mpiInfo({ eci: '06' }) }] }, 'A'],
    ['Mastercard ECI 02', { card: '5555555555554444', additional_information: [{ mpi_info: mpiInfo({ eci: '02' }) }] }, 'Y'],
    [
      '3-D Secure 1 with xid',
      { additional_information: [{ mpi_info: { eci: '05', cavv: mpiInfo().cavv as string, xid: Buffer.alloc(20, 1).toString('base64') } }] },
      'Y',
    ],
  ];
  for (const [name, overrides, result] of valid) {
    test(`mpi_info ${name}: authenticated without a challenge (threeds_result ${result})`, async () => {
      const x = await authorise(gw, directPayment(gw.merchant, { card: CHALLENGE_CARD, ...overrides }));
      assert.deepEqual([x.order_status, x.result_info, x.threeds_result, x.threeds_url], ['1', '0000:Success', result, undefined]);
      assert.equal((await queryOrder(gw, gw.merchant, x.transaction_id)).is3ds, '1');
    });
  }

  const invalid: Array<[string, Record<string, string>, string]> = [
    ['ECI 07 (not authenticated)', mpiInfo({ eci: '07' }), 'additional_information[0].mpi_info.eci'],
    ['a Mastercard ECI on a Visa card', mpiInfo({ eci: '01' }), 'additional_information[0].mpi_info.eci'],
    ['a CAVV of the wrong length', mpiInfo({ cavv: 'AAAA' }), 'additional_information[0].mpi_info.cavv'],
    ['no dsTransID or xid', { eci: '05', cavv: mpiInfo().cavv as string }, 'additional_information[0].mpi_info.dsTransID'],
    ['no ECI', { cavv: mpiInfo().cavv as string, dsTransID: mpiInfo().dsTransID as string }, 'additional_information[0].mpi_info.eci'],
  ];
  for (const [name, mpi, field] of invalid) {
    test(`mpi_info with ${name} gets HTTP 400 naming ${field}, nothing stored`, async () => {
      const body = directPayment(gw.merchant, { additional_information: [{ mpi_info: mpi }] });
      const res = await gw.post('/v1/authorise', body);
      assert.equal(res.statusCode, 400);
      assert.equal(readXml(res).error_field, field);
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', body.order_no as string)
        .execute();
      assert.equal(stored.length, 0);
    });
  }
});
