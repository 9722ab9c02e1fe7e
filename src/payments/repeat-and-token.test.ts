// docs/contract.md §4 (order_no unique, repeats answered from storage), token_flag/token_id,
// capture method (§7), key rotation (§2), request ids and operations endpoints.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

const countPayments = async () =>
  Number(
    (
      await gw.runtime.store.db
        .selectFrom('payments')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('duplicate orders (docs/contract.md §4)', () => {
  test('the same body again returns the original answer and charges once', async () => {
    const body = directPayment(gw.merchant, { order_no: 'DUP-1' });
    const first = readXml(await gw.post('/v1/authorise', body));
    const n = await countPayments();
    const again = readXml(await gw.post('/v1/authorise', body));
    assert.equal(again.transaction_id, first.transaction_id);
    assert.equal(again.result_info, '0000:Success');
    assert.equal(await countPayments(), n);
  });

  test('a different body with a used order_no → 1011 Duplicate order', async () => {
    const body = directPayment(gw.merchant, { order_no: 'DUP-2' });
    await gw.post('/v1/authorise', body);
    const n = await countPayments();
    const x = readXml(await gw.post('/v1/authorise', { ...body, amount: '11.00' }));
    assert.equal(x.result_info, '1011:Duplicate order');
    assert.equal(x.order_status, '0');
    assert.equal(x.transaction_id, '');
    assert.equal(await countPayments(), n);
  });

  test('a used order_no is answered before the card is checked: another body without a security code, or with a token too, is 1011', async () => {
    const body = directPayment(gw.merchant, { order_no: 'DUP-3' });
    await gw.post('/v1/authorise', body);
    const { security_code: _cvc, ...noCode } = body;
    for (const other of [noCode, { ...body, token_id: 'tok_unknown' }]) {
      const res = await gw.post('/v1/authorise', other);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(readXml(res).result_info, '1011:Duplicate order');
    }
  });

  test('20 concurrent identical requests create one payment with one transaction_id', async () => {
    const body = directPayment(gw.merchant, { order_no: 'DUP-RACE' });
    const n = await countPayments();
    const answers = await Promise.all(Array.from({ length: 20 }, () => gw.post('/v1/authorise', body)));
    const ids = new Set(answers.map((r) => readXml(r).transaction_id));
    assert.equal(ids.size, 1);
    assert.equal(await countPayments(), n + 1);
  });

  test('the same order_no at two merchants is two orders', async () => {
    const m2 = await gw.newMerchant({ name: 'Second' });
    const a = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { order_no: 'SHARED' })));
    const b = readXml(await gw.post('/v1/authorise', directPayment(m2, { order_no: 'SHARED' }), { merchant: m2 }));
    assert.equal(a.result_info, '0000:Success');
    assert.equal(b.result_info, '0000:Success');
    assert.notEqual(a.transaction_id, b.transaction_id);
  });
});

describe('tokens', () => {
  test('token_flag 1 returns a token; a later payment with only token_id charges the stored card', async () => {
    const first = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { token_flag: '1', card: '5555555555554444' })));
    assert.match(first.token_id, /^tok_/);
    const body = directPayment(gw.merchant, { token_id: first.token_id });
    for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code']) delete body[f];
    const second = readXml(await gw.post('/v1/authorise', body));
    assert.equal(second.result_info, '0000:Success');
    assert.equal(second.card, '555555******4444');
    assert.equal(second.token_id, first.token_id);
  });

  test('no token without token_flag, and none for a declined card', async () => {
    assert.equal(readXml(await gw.post('/v1/authorise', directPayment(gw.merchant))).token_id, '');
    assert.equal(readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { token_flag: '1', card: '4000000000000002' }))).token_id, '');
  });

  test('another merchant cannot use my token', async () => {
    const first = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { token_flag: '1' })));
    const m2 = await gw.newMerchant({ name: 'Thief' });
    const body = directPayment(m2, { token_id: first.token_id });
    for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code']) delete body[f];
    const res = await gw.post('/v1/authorise', body, { merchant: m2 });
    assert.equal(res.statusCode, 400);
    assert.match(readXml(res).error_message, /^token_id is not a token of this account/);
  });
});

describe('card checks before the processor', () => {
  test('an expiry in the past → 1005 Expired card', async () => {
    const x = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { expiration_month: '1', expiration_year: '2020' })));
    assert.equal(x.result_info, '1005:Expired card');
  });
  test('a two-digit expiry year is read as 20YY', async () => {
    const yy = String((new Date().getUTCFullYear() + 1) % 100).padStart(2, '0');
    const x = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { expiration_year: yy })));
    assert.equal(x.result_info, '0000:Success');
  });
});

describe('capture method (docs/contract.md §7)', () => {
  test('capture_method manual leaves the payment authorised (2000) with a 7-day expiry', async () => {
    const x = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { capture_method: 'manual' })));
    assert.equal(x.order_status, '1');
    const row = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'authorised');
    assert.equal(row.captured_minor, 0);
    assert.equal(row.authorised_minor, 1000);
    assert.equal(row.expires_at, gw.clock.now + 7 * 24 * 3600 * 1000);
  });

  test('an account whose default is manual authorises without capturing', async () => {
    const m = await gw.newMerchant({ name: 'Manual', capture_method: 'manual' });
    const x = readXml(await gw.post('/v1/authorise', directPayment(m), { merchant: m }));
    const row = await gw.runtime.store.db.selectFrom('payments').select('status').where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'authorised');
  });
});

describe('live accounts (docs/contract.md §3)', () => {
  test('a live account without a processor is refused with a clear error and nothing stored', async () => {
    const m = await gw.newMerchant({ name: 'Live', mode: 'live' });
    const n = await countPayments();
    const res = await gw.post('/v1/authorise', directPayment(m), { merchant: m });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500);
    assert.match(readXml(res).error_message, /live mode and no processor is configured/);
    assert.equal(await countPayments(), n);
  });
});

describe('key rotation (docs/contract.md §2)', () => {
  test('after rotation old and new keys both verify; after retiring only the new one', async () => {
    const m = await gw.newMerchant({ name: 'Rotating' });
    const newSecret = await gw.runtime.merchants.rotateKey(m.account_id);
    const oldKey = await gw.post('/v1/authorise', directPayment(m), { merchant: m });
    assert.equal(oldKey.statusCode, 200);
    const newKey = await gw.post('/v1/authorise', directPayment(m), { merchant: { ...m, secret_key: newSecret } });
    assert.equal(newKey.statusCode, 200);
    // Answers are signed with the new key.
    assert.equal(readXml(newKey).result_info, '0000:Success');
    await gw.runtime.merchants.retireKeys(m.account_id);
    assert.equal((await gw.post('/v1/authorise', directPayment(m), { merchant: m })).statusCode, 401);
    assert.equal((await gw.post('/v1/authorise', directPayment(m), { merchant: { ...m, secret_key: newSecret } })).statusCode, 200);
  });
});

describe('operations', () => {
  test('X-Request-Id is echoed, or generated', async () => {
    const given = await gw.post('/v1/authorise', directPayment(gw.merchant), { headers: { 'x-request-id': 'req-123' } });
    assert.equal(given.headers['x-request-id'], 'req-123');
    const made = await gw.post('/v1/authorise', directPayment(gw.merchant));
    assert.match(String(made.headers['x-request-id']), /^[0-9A-Z]{26}$/);
  });

  test('healthz, readyz, metrics and the OpenAPI document', async () => {
    assert.equal((await gw.app.inject('/healthz')).statusCode, 200);
    assert.equal((await gw.app.inject('/readyz')).json().status, 'ready');
    const metrics = (await gw.app.inject('/metrics')).body;
    assert.match(metrics, /tollgate_http_requests_total\{route="\/v1\/authorise",status="200"\}/);
    assert.match(metrics, /tollgate_payments_total\{outcome="0000"\}/);
    assert.match(metrics, /tollgate_http_request_duration_seconds_bucket/);
    const doc = (await gw.app.inject('/openapi.json')).json();
    assert.ok(doc.paths['/v1/authorise'].post.requestBody);
    assert.ok(doc.paths['/v1/retrievalTrans'].post);
    assert.equal((await gw.app.inject('/docs')).statusCode, 200);
  });

  test('an unknown path → 404 naming it', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/nothing', payload: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.statusCode, 404);
    assert.match(res.json().error_message, /no endpoint POST \/v1\/nothing/);
  });
});
