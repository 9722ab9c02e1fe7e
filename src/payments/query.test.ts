// Order query (docs/contract.md §3, §8): selectors, cursor, unknown ids, IP allow-list, and one
// merchant never seeing another's orders.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { compactTime } from './format.js';

let gw: TestGateway;
let other: CreatedMerchant;
const mine: Array<{ order_no: string; transaction_id: string }> = [];
let theirs: { order_no: string; transaction_id: string };

before(async () => {
  gw = await testGateway({ start_ms: Date.UTC(2026, 10, 20, 12, 0, 0) });
  other = await gw.newMerchant({ name: 'Other', allow_ips: ['127.0.0.1/32'] });
  for (let i = 0; i < 5; i++) {
    const body = directPayment(gw.merchant, { order_no: `Q-${i}`, shopper_email: 'a@example.com', delivery_city: 'Lisbon' });
    const x = readXml(await gw.post('/v1/authorise', body));
    mine.push({ order_no: x.order_no, transaction_id: x.transaction_id });
    gw.clock.advance(1000);
  }
  const x = readXml(await gw.post('/v1/authorise', directPayment(other, { order_no: 'Q-0' }), { merchant: other }));
  theirs = { order_no: x.order_no, transaction_id: x.transaction_id };
});
after(async () => {
  await gw.close();
});

async function query(fields: Record<string, unknown>, o: { merchant?: CreatedMerchant; remoteAddress?: string; format?: 'json' | 'form' | 'xml' } = {}) {
  const m = o.merchant ?? gw.merchant;
  const res = await gw.post(
    '/v1/retrievalTrans',
    { merchant_id: m.merchant_id, account_id: m.account_id, ...fields },
    { merchant: m, format: o.format ?? 'form', remoteAddress: o.remoteAddress },
  );
  return { res, body: res.json() as Record<string, any> };
}

describe('selectors', () => {
  test('by transaction_ids as a comma-separated form field: every spec field present', async () => {
    const { res, body } = await query({
      transaction_ids: mine
        .slice(0, 2)
        .map((m) => m.transaction_id)
        .join(','),
    });
    assert.equal(res.statusCode, 200);
    assert.equal(body.return_status, '1');
    assert.equal(body.return_message, 'OK');
    assert.equal(body.orders_list.length, 2);
    const o = body.orders_list[0];
    for (const f of [
      'amount',
      'currency',
      'delivery_information',
      'antifraud_provider',
      'fraud_check_result',
      'is3ds',
      'order_no',
      'payment_status',
      'query_result',
      'reference_no',
      'shopper_email',
      'shopper_phone',
      'subscription_result',
      'transaction_date',
      'transaction_id',
      'website',
    ]) {
      assert.ok(f in o, `order record has ${f}`);
    }
    assert.equal(o.query_result, '1');
    assert.equal(o.payment_status, '3000');
    assert.equal(o.amount, '10.00');
    assert.equal(o.shopper_email, 'a@example.com');
    assert.equal(o.delivery_information.delivery_city, 'Lisbon');
    assert.equal(o.transaction_date, compactTime(Date.UTC(2026, 10, 20, 12, 0, 0)));
    assert.match(o.reference_no, /^SBX/);
  });

  test('the answer is signed', async () => {
    const { body } = await query({ order_nos: ['Q-1'] }, { format: 'json' });
    const { encryption_data, ...rest } = body;
    assert.equal(sign(rest, gw.merchant.secret_key), encryption_data);
  });

  test('by order_nos as a JSON array, in XML too', async () => {
    for (const format of ['json', 'xml'] as const) {
      const { body } = await query({ order_nos: ['Q-3', 'Q-4'] }, { format });
      assert.deepEqual(
        body.orders_list.map((o: any) => o.order_no),
        ['Q-3', 'Q-4'],
      );
    }
  });

  test('unknown ids answer query_result 0 and still name the id', async () => {
    const { body } = await query({ transaction_ids: ['NOPE'], order_nos: 'MISSING' });
    assert.equal(body.orders_list.length, 2);
    assert.equal(body.orders_list[0].query_result, '0');
    assert.equal(body.orders_list[0].transaction_id, 'NOPE');
    assert.equal(body.orders_list[1].order_no, 'MISSING');
  });

  test('more than 100 ids → 400, return_status 0', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `T${i}`);
    const { res, body } = await query({ transaction_ids: ids.join(',') });
    assert.equal(res.statusCode, 400);
    assert.equal(body.return_status, '0');
    assert.match(body.error_message, /at most 100 ids/);
  });

  test('more than 100 ids as a JSON array → the same clear message', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `T${i}`);
    const { res, body } = await query({ transaction_ids: ids }, { format: 'json' });
    assert.equal(res.statusCode, 400);
    assert.match(body.error_message, /at most 100 ids/);
  });

  test('no selector → 400 naming what is needed', async () => {
    const { res, body } = await query({});
    assert.equal(res.statusCode, 400);
    assert.match(body.error_message, /order_nos or transaction_ids, or start_date and end_date/);
  });

  test('date range pages with a cursor', async () => {
    const start = compactTime(Date.UTC(2026, 10, 20, 11, 0, 0));
    const end = compactTime(Date.UTC(2026, 10, 20, 13, 0, 0));
    // Page size is 100; prove the cursor by paging a range of 5 in steps via next_cursor.
    const first = await query({ start_date: start, end_date: end });
    assert.equal(first.body.orders_list.length, 5);
    assert.equal(first.body.next_cursor, undefined);
    const { body: bad } = await query({ start_date: start, end_date: end, cursor: 'garbage' });
    assert.match(bad.error_message, /^cursor is not a cursor this gateway issued/);
    const { body: inverted } = await query({ start_date: end, end_date: start });
    assert.match(inverted.error_message, /^end_date is before start_date/);
    const { body: impossible } = await query({ start_date: '20261340000000', end_date: end });
    assert.match(impossible.error_message, /^start_date is not a real time/);
  });
});

describe('isolation and access (docs/contract.md §3)', () => {
  test('a merchant never sees another merchant’s order, by id or by order_no', async () => {
    const { body } = await query({ transaction_ids: [theirs.transaction_id] });
    assert.equal(body.orders_list[0].query_result, '0');
    const { body: byNo } = await query({ order_nos: ['Q-0'] });
    assert.equal(byNo.orders_list.length, 1);
    assert.equal(byNo.orders_list[0].transaction_id, mine[0]!.transaction_id);
  });

  test('the other merchant sees only its own Q-0', async () => {
    const { body } = await query({ order_nos: ['Q-0', 'Q-1'] }, { merchant: other });
    assert.equal(body.orders_list[0].transaction_id, theirs.transaction_id);
    assert.equal(body.orders_list[1].query_result, '0');
  });

  test('signing with another merchant’s key for my ids is refused', async () => {
    const res = await gw.post(
      '/v1/retrievalTrans',
      { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, order_nos: 'Q-1' },
      { merchant: { ...gw.merchant, secret_key: other.secret_key } },
    );
    assert.equal(res.statusCode, 401);
  });

  test('an account of another merchant under my merchant_id is refused', async () => {
    const res = await gw.post(
      '/v1/retrievalTrans',
      { merchant_id: gw.merchant.merchant_id, account_id: other.account_id, order_nos: 'Q-1' },
      { merchant: other },
    );
    assert.equal(res.statusCode, 401);
  });

  test('an IP outside the allow-list → 403, 0403', async () => {
    const { res, body } = await query({ order_nos: 'Q-1' }, { remoteAddress: '203.0.113.9' });
    assert.equal(res.statusCode, 403);
    assert.equal(body.return_status, '0');
    assert.equal(body.return_message, '0403:IP not allowed');
  });

  test('allow-list changes take effect: add a range, then remove it', async () => {
    await gw.runtime.merchants.addIp(gw.merchant.account_id, '203.0.113.0/24');
    assert.equal((await query({ order_nos: 'Q-1' }, { remoteAddress: '203.0.113.9' })).res.statusCode, 200);
    assert.equal((await query({ order_nos: 'Q-1' }, { remoteAddress: '::ffff:203.0.113.9' })).res.statusCode, 200);
    await gw.runtime.merchants.removeIp(gw.merchant.account_id, '203.0.113.0/24');
    assert.equal((await query({ order_nos: 'Q-1' }, { remoteAddress: '203.0.113.9' })).res.statusCode, 403);
  });

  test('X-Forwarded-For is ignored unless the proxy is trusted', async () => {
    const res = await gw.post(
      '/v1/retrievalTrans',
      { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, order_nos: 'Q-1' },
      { remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' }, format: 'form' },
    );
    assert.equal(res.statusCode, 403);
  });
});

describe('paging across many orders', () => {
  test('205 orders come back as 100 + 100 + 5 with next_cursor', async () => {
    const m = await gw.newMerchant({ name: 'Pager' });
    const t0 = gw.clock.now;
    for (let i = 0; i < 205; i++) {
      await gw.post('/v1/authorise', directPayment(m, { order_no: `P-${i}` }), { merchant: m });
    }
    const seen = new Set<string>();
    let cursor: string | undefined;
    const sizes: number[] = [];
    for (let page = 0; page < 5; page++) {
      const { body } = await query(
        { start_date: compactTime(t0 - 1000), end_date: compactTime(gw.clock.now + 1000), ...(cursor ? { cursor } : {}) },
        { merchant: m },
      );
      sizes.push(body.orders_list.length);
      for (const o of body.orders_list) seen.add(o.order_no);
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    assert.deepEqual(sizes, [100, 100, 5]);
    assert.equal(seen.size, 205);
  });
});
