// Idempotency-Key on every POST (docs/contract.md §4; field-facts "Idempotency"), on SQLite and
// PostgreSQL: replay, conflict, concurrency, nothing stored for refusals, 24 h, scope.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { item, pay } from '../test/lifecycle.js';
import { IDEMPOTENCY_TTL_MS, purgeExpiredKeys } from './plugin.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

let n = 0;
const key = () => `key-${process.pid}-${++n}-${Math.random().toString(36).slice(2)}`;
const refundBody = (p: Awaited<ReturnType<typeof pay>>, refund_amount = '1.00') => ({
  merchant_id: gw.merchant.merchant_id,
  account_id: gw.merchant.account_id,
  refund_orders: [item(p, { refund_amount })],
});
const refundsOf = async (transaction_id: string) =>
  (await gw.runtime.store.db.selectFrom('refunds').select('refund_reference_id').where('transaction_id', '=', transaction_id).execute()).length;

describe('Idempotency-Key', () => {
  test('the same key and body replays the first answer without doing the work again', async () => {
    const p = await pay(gw);
    const k = key();
    const first = await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    const again = await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    assert.equal(first.statusCode, 200);
    assert.equal(again.statusCode, 200);
    assert.equal(again.body, first.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(await refundsOf(p.transaction_id), 1);
  });

  test('the same key with another body gets 409 0409:Conflict', async () => {
    const p = await pay(gw);
    const k = key();
    await gw.post('/v1/refund', refundBody(p, '1.00'), { headers: { 'idempotency-key': k } });
    const other = await gw.post('/v1/refund', refundBody(p, '2.00'), { headers: { 'idempotency-key': k } });
    assert.equal(other.statusCode, 409);
    const b = JSON.parse(other.body);
    assert.equal(b.return_status, '0');
    assert.equal(b.return_message, '0409:Conflict');
    assert.match(b.error_message, /another request/);
    assert.equal(await refundsOf(p.transaction_id), 1);
  });

  test('concurrent requests with one key: one execution, every caller gets its answer', async () => {
    const p = await pay(gw);
    const k = key();
    const answers = await Promise.all(Array.from({ length: 5 }, () => gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } })));
    assert.equal(await refundsOf(p.transaction_id), 1);
    for (const a of answers) {
      assert.equal(a.statusCode, 200, a.body);
      assert.equal(a.body, answers[0]!.body);
    }
    assert.equal(answers.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 4);
  });

  test('a refused request stores nothing, so a corrected retry with the same key works', async () => {
    const k = key();
    // Schema refusal (before any work).
    const bad = await gw.post('/v1/authorise', directPayment(gw.merchant, { amount: 'ten' }), { headers: { 'idempotency-key': k } });
    assert.equal(bad.statusCode, 400);
    // Domain refusal (after the key was claimed): components that do not add up.
    const body = directPayment(gw.merchant, { item_total: '5.00' });
    const refused = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': k } });
    assert.equal(refused.statusCode, 400);
    const good = await gw.post('/v1/authorise', { ...body, item_total: '10.00' }, { headers: { 'idempotency-key': k } });
    assert.equal(readXml(good).result_info, '0000:Success');
  });

  test('authorise: a declined answer is replayed as it was', async () => {
    const k = key();
    const body = directPayment(gw.merchant, { card: '4000000000000002' });
    const a = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': k } });
    const b = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': k } });
    assert.equal(readXml(a).result_info, '1002:Card declined');
    assert.equal(b.body, a.body);
    assert.match(String(b.headers['content-type']), /application\/xml/);
  });

  test('keys are scoped per account', async () => {
    const other = await gw.newMerchant();
    const k = key();
    const a = await gw.post('/v1/authorise', directPayment(gw.merchant, { order_no: 'SCOPE-1' }), { headers: { 'idempotency-key': k } });
    const b = await gw.post('/v1/authorise', directPayment(other, { order_no: 'SCOPE-1' }), { merchant: other, headers: { 'idempotency-key': k } });
    assert.equal(readXml(a).result_info, '0000:Success');
    assert.equal(readXml(b).result_info, '0000:Success');
    assert.notEqual(readXml(a).transaction_id, readXml(b).transaction_id);
    assert.equal(b.headers['idempotent-replayed'], undefined);
  });

  test('a key longer than 255 characters, or with spaces, is refused with 400', async () => {
    for (const bad of ['x'.repeat(256), 'has space']) {
      const res = await gw.post('/v1/authorise', directPayment(gw.merchant), { headers: { 'idempotency-key': bad } });
      assert.equal(res.statusCode, 400);
      assert.match(JSON.stringify(readXml(res)), /Idempotency-Key/);
    }
    const ok = await gw.post('/v1/authorise', directPayment(gw.merchant), { headers: { 'idempotency-key': 'k'.repeat(255) } });
    assert.equal(ok.statusCode, 200);
  });

  test('after 24 h a key is forgotten and purged', async () => {
    const p = await pay(gw);
    const k = key();
    await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    gw.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    const later = await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    assert.equal(later.headers['idempotent-replayed'], undefined);
    assert.equal(await refundsOf(p.transaction_id), 2);
    gw.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    assert.ok((await purgeExpiredKeys(gw.runtime.deps, gw.clock.now)) >= 1);
    const left = await gw.runtime.store.db.selectFrom('idempotency_keys').select('id').where('expires_at', '<=', gw.clock.now).execute();
    assert.equal(left.length, 0);
  });

  test('a request whose first attempt never answered (a crash) runs again after the lease, and refunds nothing twice', async () => {
    const p = await pay(gw);
    const k = key();
    const first = await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    // Simulate a crash between claiming the key and storing the answer.
    await gw.runtime.store.transaction((tx) =>
      tx.updateTable('idempotency_keys').set({ status: 'started', response_body: '', locked_until: gw.clock.now }).where('idem_key', '=', k).execute(),
    );
    const retry = await gw.post('/v1/refund', refundBody(p), { headers: { 'idempotency-key': k } });
    assert.equal(retry.statusCode, 200);
    assert.equal(retry.headers['idempotent-replayed'], undefined, 'it ran again…');
    // …but found the refund its first run made (a recovery point), so nothing is refunded twice.
    assert.equal(await refundsOf(p.transaction_id), 1);
    const a = (first.json() as { refund_orders: Array<Record<string, string>> }).refund_orders[0];
    const b = (retry.json() as { refund_orders: Array<Record<string, string>> }).refund_orders[0];
    assert.equal(b?.refund_reference_id, a?.refund_reference_id);
    assert.equal(b?.refund_status, '1');
  });
});
