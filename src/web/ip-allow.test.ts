// The IP allow-list guards every endpoint that reads data back (docs/contract.md §3; issue 29):
// the acquiring retrievals and every GET of the generic interface, from an address the
// account did not register refused (403), from a registered one served; an Idempotency-Key
// replay is no way around it. Writes are not guarded by it (they are signed or keyed).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';

const LISTED = '198.51.100.7';
const UNLISTED = '203.0.113.9';

let gw: TestGateway;
let m: CreatedMerchant;
let key: string;
let tx: { transaction_id: string; order_no: string };

before(async () => {
  gw = await testGateway();
  m = await gw.newMerchant({ allow_ips: ['198.51.100.0/24'] });
  key = await gw.apiKey(m);
  // A payment and a refund to read back; made from an unlisted address, since writes are not guarded.
  const body = directPayment(m);
  const paid = await gw.post('/v1/authorise', body, { merchant: m, remoteAddress: UNLISTED });
  assert.equal(paid.statusCode, 200);
  tx = { transaction_id: /<transaction_id>([^<]+)</.exec(paid.body)?.[1] as string, order_no: body.order_no as string };
  const refunded = await gw.post(
    '/v1/refund',
    {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      refund_orders: [{ ...tx, currency: 'USD', amount: '10.00', refund_amount: '1.00', refund_reason: 'test' }],
    },
    { merchant: m, remoteAddress: UNLISTED },
  );
  assert.equal(refunded.json().refund_orders[0].refund_status, '1');
});

after(async () => {
  await gw.close();
});

/** The acquiring retrievals, each with a selector that finds something, and where its records come back. */
const RETRIEVALS: Array<[path: string, select: () => Record<string, unknown>, records: string]> = [
  ['/v1/retrievalTrans', () => ({ transaction_ids: [tx.transaction_id] }), 'orders_list'],
  ['/v1/retrievalRefund', () => ({ transaction_ids: [tx.transaction_id] }), 'refund_orders'],
  ['/v1/retrievalPayout', () => ({ request_ids: [randomUUID()] }), 'payouts'],
  ['/v1/retrievalDispute', () => ({ transaction_ids: [tx.transaction_id] }), 'disputes'],
];

const ids = () => ({ merchant_id: m.merchant_id, account_id: m.account_id });

describe('acquiring retrievals', () => {
  for (const [path, select, records] of RETRIEVALS) {
    test(`${path}: refused from an unlisted address, served from a listed one`, async () => {
      const refused = await gw.post(path, { ...ids(), ...select() }, { merchant: m, remoteAddress: UNLISTED });
      assert.equal(refused.statusCode, 403);
      const r = refused.json();
      assert.equal(r.return_status, '0');
      assert.equal(r.return_message, '0403:IP not allowed');
      assert.equal(r[records], undefined, 'nothing is read back');
      const served = await gw.post(path, { ...ids(), ...select() }, { merchant: m, remoteAddress: LISTED });
      assert.equal(served.statusCode, 200);
      assert.equal(served.json().return_status, '1');
      assert.ok(Array.isArray(served.json()[records]));
      if (path !== '/v1/retrievalPayout') assert.equal(served.json()[records][0].transaction_id, tx.transaction_id);
    });

    test(`${path}: an Idempotency-Key replay does not hand the stored answer to an unlisted address`, async () => {
      const body = { ...ids(), ...select() };
      const headers = { 'idempotency-key': `ip-${randomUUID()}` };
      const first = await gw.post(path, body, { merchant: m, remoteAddress: LISTED, headers });
      assert.equal(first.statusCode, 200);
      const again = await gw.post(path, body, { merchant: m, remoteAddress: LISTED, headers });
      assert.equal(again.headers['idempotent-replayed'], 'true', 'the key does replay for a listed address');
      const replay = await gw.post(path, body, { merchant: m, remoteAddress: UNLISTED, headers });
      assert.equal(replay.statusCode, 403);
      assert.equal(replay.headers['idempotent-replayed'], undefined);
      assert.equal(replay.json().return_message, '0403:IP not allowed');
    });
  }

  test('every retrieval the API publishes (later dispute and settlement ones too) is guarded', async () => {
    const doc = (await gw.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId?: string }>> };
    const retrievals = Object.entries(doc.paths)
      .filter(([, ops]) => /^retrieval/.test(ops.post?.operationId ?? ''))
      .map(([path]) => path);
    assert.deepEqual(
      RETRIEVALS.map(([p]) => p).filter((p) => !retrievals.includes(p)),
      [],
      'the table above names published paths',
    );
    for (const path of retrievals) {
      assert.ok(doc.paths[path]?.post && '403' in ((doc.paths[path].post as { responses?: object }).responses ?? {}), `${path} documents its 403`);
      const refused = await gw.post(path, ids(), { merchant: m, remoteAddress: UNLISTED });
      assert.equal(refused.statusCode, 403, path);
      assert.equal(refused.json().return_message, '0403:IP not allowed', path);
    }
  });

  test('an address inside a registered range, and its IPv4-mapped IPv6 spelling, are served', async () => {
    const body = { ...ids(), transaction_ids: [tx.transaction_id] };
    for (const remoteAddress of ['198.51.100.250', `::ffff:${LISTED}`]) {
      assert.equal((await gw.post('/v1/retrievalTrans', body, { merchant: m, remoteAddress })).statusCode, 200, remoteAddress);
    }
  });
});

describe('generic interface reads (every GET)', () => {
  /** Every GET the generic interface publishes, with `{param}`s filled in. */
  async function genericGets(): Promise<string[]> {
    const doc = (await gw.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    return Object.entries(doc.paths)
      .filter(([path, ops]) => path.startsWith('/v1/') && ops.get)
      .map(([path]) => path.replace(/\{[^}]+\}/g, 'x_1'));
  }

  test('the published GETs include the payments, refunds, accounts, transfers and balance reads, and each documents its 403', async () => {
    const gets = await genericGets();
    const doc = (await gw.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, { get?: { responses: object } }> };
    for (const [path, ops] of Object.entries(doc.paths)) if (path.startsWith('/v1/') && ops.get) assert.ok('403' in ops.get.responses, path);
    for (const p of ['/v1/payments', '/v1/payments/x_1', '/v1/refunds', '/v1/refunds/x_1', '/v1/accounts', '/v1/transfers', '/v1/balance']) {
      assert.ok(gets.includes(p), `${p} among ${gets.join(', ')}`);
    }
  });

  test('each GET: refused from an unlisted address in the generic error shape, served from a listed one', async () => {
    for (const path of await genericGets()) {
      const refused = await gw.generic('GET', path, key, undefined, { remoteAddress: UNLISTED });
      assert.equal(refused.statusCode, 403, path);
      assert.deepEqual(
        refused.json(),
        { error: { type: 'invalid_request_error', message: `Calls from ${UNLISTED} are not registered for this account` } },
        path,
      );
      assert.ok(refused.headers['request-id'], path);
      const served = await gw.generic('GET', path, key, undefined, { remoteAddress: LISTED });
      assert.notEqual(served.statusCode, 403, `${path}: ${served.body}`);
      if (!path.includes('x_1')) assert.equal(served.statusCode, 200, `${path}: ${served.body}`);
    }
  });

  test('GET /v1/payments lists the payment to a listed address only', async () => {
    const refused = await gw.generic('GET', '/v1/payments?limit=10', key, undefined, { remoteAddress: UNLISTED });
    assert.equal(refused.statusCode, 403);
    assert.ok(!refused.body.includes(tx.order_no));
    const served = await gw.generic('GET', '/v1/payments?limit=10', key, undefined, { remoteAddress: LISTED });
    assert.equal(served.statusCode, 200);
    assert.ok(served.json().data.length >= 1);
  });

  test('HEAD (answered by the GET route) is refused too', async () => {
    const r = await gw.app.inject({ method: 'HEAD', url: '/v1/payments', headers: { authorization: `Bearer ${key}` }, remoteAddress: UNLISTED });
    assert.equal(r.statusCode, 403);
  });

  test('a write is not a read: POST from an unlisted address still works (it is keyed, and answers only what it made)', async () => {
    const r = await gw.generic(
      'POST',
      '/v1/payments',
      key,
      { amount: 500, currency: 'usd', payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } } },
      { remoteAddress: UNLISTED },
    );
    assert.equal(r.statusCode, 200, r.body);
  });
});
