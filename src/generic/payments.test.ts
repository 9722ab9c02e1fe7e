// `/v1/payments` and `/v1/refunds` (issue 13 part 2): the acquiring interface's payment in
// the card-platform shape, through the same domain path: statuses, 402 declines with a
// decline_code, 3-D Secure's next_action, capture, cancel, refunds, the ledger, visibility
// to /v1/retrievalTrans, idempotent replays, and test/live separation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { canonicalString } from '../crypto/signature.js';
import { verifyLedger } from '../ledger/verify.js';
import { type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
let key: string;
const YEAR = new Date().getUTCFullYear() + 2;
const card = (number: string, extra: Record<string, unknown> = {}) => ({
  amount: 1000,
  currency: 'usd',
  payment_method: { type: 'card', card: { number, exp_month: 12, exp_year: YEAR, cvc: '123' } },
  ...extra,
});

before(async () => {
  gw = await testGateway();
  key = await gw.apiKey();
});
after(async () => gw.close());

describe('generic payments', () => {
  test('an approved card payment succeeds and is the acquiring interface’s payment too', async () => {
    const r = await gw.generic('POST', '/v1/payments', key, card('4242424242424242', { description: 'Tee', metadata: { order: '6735' } }));
    assert.equal(r.statusCode, 200, r.body);
    const p = r.json();
    assert.match(p.id, /^pay_/);
    assert.equal(p.object, 'payment');
    assert.equal(p.status, 'succeeded');
    assert.equal(p.amount, 1000);
    assert.equal(p.amount_received, 1000);
    assert.equal(p.currency, 'usd');
    assert.equal(p.livemode, false);
    assert.deepEqual(p.metadata, { order: '6735' });
    assert.equal(p.description, 'Tee');
    assert.deepEqual(p.payment_method, { type: 'card', card: { brand: 'visa', bin: '424242', last4: '4242' } });
    assert.doesNotMatch(r.body, /4242424242424242/);
    // The same payment through the signed acquiring query.
    const q = await gw.client().queryOrders({ transaction_ids: [p.transaction_id] });
    assert.ok(JSON.stringify(q).includes(p.order_no), 'found by /v1/retrievalTrans');
    const got = await gw.generic('GET', `/v1/payments/${p.id}`, key);
    assert.deepEqual(got.json(), p);
  });

  test('a decline answers 402 card_error / card_declined with its decline_code and the failed payment', async () => {
    for (const [number, decline] of [
      ['4000000000000002', 'generic_decline'],
      ['4000000000009995', 'insufficient_funds'],
      ['4000000000009987', 'lost_card'],
      ['4000000000000127', 'incorrect_cvc'],
    ] as const) {
      const r = await gw.generic('POST', '/v1/payments', key, card(number));
      assert.equal(r.statusCode, 402, r.body);
      const e = r.json().error;
      assert.equal(e.type, 'card_error');
      assert.equal(e.code, 'card_declined');
      assert.equal(e.decline_code, decline);
      assert.equal(e.payment.status, 'failed');
      const stored = await gw.generic('GET', `/v1/payments/${e.payment.id}`, key);
      assert.equal(stored.json().last_payment_error.decline_code, decline);
    }
  });

  test('a card that fails Luhn is a 402 naming the number; a missing parameter is a 400 naming it', async () => {
    const luhn = await gw.generic('POST', '/v1/payments', key, card('4242424242424241'));
    assert.equal(luhn.statusCode, 402);
    assert.equal(luhn.json().error.param, 'payment_method[card][number]');
    const missing = await gw.generic('POST', '/v1/payments', key, {
      currency: 'usd',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR, cvc: '123' } },
    });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.param, 'amount');
    assert.equal(missing.json().error.code, 'parameter_missing');
    const badCurrency = await gw.generic('POST', '/v1/payments', key, card('4242424242424242', { currency: 'xyz' }));
    assert.equal(badCurrency.statusCode, 400);
    assert.equal(badCurrency.json().error.param, 'currency');
  });

  test('3-D Secure: requires_action with next_action.redirect_to_url', async () => {
    const r = await gw.generic(
      'POST',
      '/v1/payments',
      key,
      card('4242424242424242', { return_url: 'https://shop.example/back', payment_method_options: { card: { request_three_d_secure: 'any' } } }),
    );
    assert.equal(r.statusCode, 200, r.body);
    const p = r.json();
    assert.equal(p.status, 'requires_action');
    assert.equal(p.next_action.type, 'redirect_to_url');
    assert.match(p.next_action.redirect_to_url.url, /^http/);
    assert.equal(p.next_action.redirect_to_url.return_url, 'https://shop.example/back');
  });

  test('manual capture: requires_capture, partial capture, then refunds up to the captured amount', async () => {
    const r = await gw.generic('POST', '/v1/payments', key, card('4242424242424242', { capture_method: 'manual' }));
    const p = r.json();
    assert.equal(p.status, 'requires_capture');
    assert.equal(p.amount_capturable, 1000);
    const c = await gw.generic('POST', `/v1/payments/${p.id}/capture`, key, { amount_to_capture: 600 });
    assert.equal(c.statusCode, 200, c.body);
    assert.equal(c.json().status, 'succeeded');
    assert.equal(c.json().amount_received, 600);
    const again = await gw.generic('POST', `/v1/payments/${p.id}/capture`, key);
    assert.equal(again.statusCode, 400);
    assert.equal(again.json().error.code, 'payment_intent_unexpected_state');
    const r1 = await gw.generic('POST', '/v1/refunds', key, { payment: p.id, amount: 200, reason: 'requested_by_customer', metadata: { ticket: 'T-1' } });
    assert.equal(r1.statusCode, 200, r1.body);
    assert.match(r1.json().id, /^re_/);
    assert.equal(r1.json().status, 'succeeded');
    assert.equal(r1.json().payment, p.id);
    const tooMuch = await gw.generic('POST', '/v1/refunds', key, { payment: p.id, amount: 401 });
    assert.equal(tooMuch.statusCode, 400);
    assert.equal(tooMuch.json().error.code, 'amount_too_large');
    gw.clock.advance(1);
    const rest = await gw.generic('POST', '/v1/refunds', key, { payment: p.id });
    assert.equal(rest.json().amount, 400);
    const done = await gw.generic('POST', '/v1/refunds', key, { payment: p.id });
    assert.equal(done.json().error.code, 'charge_already_refunded');
    const after = (await gw.generic('GET', `/v1/payments/${p.id}`, key)).json();
    assert.equal(after.amount_refunded, 600);
    const list = (await gw.generic('GET', `/v1/refunds?payment=${p.id}`, key)).json();
    assert.equal(list.data.length, 2);
    assert.equal(list.data[0].amount, 400, 'newest first');
    const one = await gw.generic('GET', `/v1/refunds/${r1.json().id}`, key);
    assert.deepEqual(one.json().metadata, { ticket: 'T-1' });
    // docs/contract.md §24: expand[]=payment answers the refunded payment itself; data.payment in a list.
    const expanded = (await gw.generic('GET', `/v1/refunds/${r1.json().id}?expand[]=payment`, key)).json();
    assert.equal(expanded.payment.id, p.id);
    assert.equal(expanded.payment.amount_refunded, 600);
    const expandedList = (await gw.generic('GET', `/v1/refunds?payment=${p.id}&expand[]=data.payment`, key)).json();
    assert.equal(expandedList.data[1].payment.object, 'payment');
    const report = await verifyLedger(gw.runtime.store.db);
    assert.ok(report.ok, report.problems.join('\n'));
  });

  test('cancel releases an authorisation; a succeeded payment must be refunded instead', async () => {
    const p = (await gw.generic('POST', '/v1/payments', key, card('4242424242424242', { capture_method: 'manual' }))).json();
    const c = await gw.generic('POST', `/v1/payments/${p.id}/cancel`, key, { cancellation_reason: 'requested_by_customer' });
    assert.equal(c.json().status, 'canceled');
    const s = (await gw.generic('POST', '/v1/payments', key, card('4242424242424242'))).json();
    const refused = await gw.generic('POST', `/v1/payments/${s.id}/cancel`, key);
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().error.message, /refund/);
  });

  test('Idempotency-Key: a retry replays the payment (one payment, one charge); a changed body is 409', async () => {
    const body = card('4242424242424242', { amount: 777 });
    const a = await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'pay-retry-1' } });
    const b = await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'pay-retry-1' } });
    assert.equal(b.json().id, a.json().id);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    const c = await gw.generic('POST', '/v1/payments', key, { ...body, amount: 778 }, { headers: { 'idempotency-key': 'pay-retry-1' } });
    assert.equal(c.statusCode, 400);
    assert.equal(c.json().error.type, 'idempotency_error');
    const declined = card('4000000000000002');
    const d1 = await gw.generic('POST', '/v1/payments', key, declined, { headers: { 'idempotency-key': 'decl-1' } });
    const d2 = await gw.generic('POST', '/v1/payments', key, declined, { headers: { 'idempotency-key': 'decl-1' } });
    assert.equal(d2.statusCode, 402);
    assert.equal(d2.json().error.payment.id, d1.json().error.payment.id, 'a decline is replayed, not charged again');
    const r1 = await gw.generic('POST', '/v1/refunds', key, { payment: a.json().id, amount: 100 }, { headers: { 'idempotency-key': 'ref-1' } });
    const r2 = await gw.generic('POST', '/v1/refunds', key, { payment: a.json().id, amount: 100 }, { headers: { 'idempotency-key': 'ref-1' } });
    assert.equal(r2.json().id, r1.json().id);
    assert.equal((await gw.generic('GET', `/v1/payments/${a.json().id}`, key)).json().amount_refunded, 100);
  });

  test('a re-run under the same Idempotency-Key after a lost answer (the lease lapsed) charges nothing twice', async () => {
    // What a crash between the commit and the stored answer leaves: the key still `started`, its lease over.
    const lapse = (k: string) =>
      gw.runtime.store.transaction((tx) =>
        tx.updateTable('idempotency_keys').set({ status: 'started', locked_until: 1, response_body: '' }).where('idem_key', '=', k).execute(),
      );
    const body = card('4242424242424242', { amount: 1234, capture_method: 'manual' });
    const first = (await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'rerun-pay' } })).json();
    await lapse('rerun-pay');
    const again = await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'rerun-pay' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().id, first.id, 'the re-run answers the payment it made');
    const rows = await gw.runtime.store.db.selectFrom('payments').select('transaction_id').where('amount_minor', '=', 1234).execute();
    assert.equal(rows.length, 1);

    const cap = await gw.generic('POST', `/v1/payments/${first.id}/capture`, key, { amount_to_capture: 1000 }, { headers: { 'idempotency-key': 'rerun-cap' } });
    assert.equal(cap.json().status, 'succeeded');
    await lapse('rerun-cap');
    const capAgain = await gw.generic(
      'POST',
      `/v1/payments/${first.id}/capture`,
      key,
      { amount_to_capture: 1000 },
      { headers: { 'idempotency-key': 'rerun-cap' } },
    );
    assert.equal(capAgain.statusCode, 200, capAgain.body);
    assert.equal(capAgain.json().amount_received, 1000);
    const other = await gw.generic(
      'POST',
      `/v1/payments/${first.id}/capture`,
      key,
      { amount_to_capture: 1000 },
      { headers: { 'idempotency-key': 'another-cap' } },
    );
    assert.equal(other.statusCode, 400, 'a new request to capture it again is still refused');
  });

  test('the stored request hash is the fingerprint of the acquiring body this interface once built (stored hashes stay valid)', async () => {
    const body = card('4242424242424242', {
      capture_method: 'manual',
      description: 'Mug',
      receipt_email: 'ana@example.com',
      return_url: 'https://shop.example/back',
    });
    const r = await gw.generic('POST', '/v1/payments', key, body);
    assert.equal(r.statusCode, 200, r.body);
    const p = r.json();
    const row = await gw.runtime.store.db
      .selectFrom('payments')
      .select('request_hash')
      .where('transaction_id', '=', p.transaction_id)
      .executeTakeFirstOrThrow();
    // The body as it was built before the card payment became a command: fields, order and spellings.
    const wire = {
      merchant_id: gw.merchant.merchant_id,
      account_id: gw.merchant.account_id,
      order_no: p.order_no,
      currency: 'USD',
      amount: '10.00',
      card: '4242424242424242',
      expiration_month: '12',
      expiration_year: String(YEAR),
      security_code: '123',
      capture_method: 'manual',
      note: 'Mug',
      shopper_email: 'ana@example.com',
      return_url: 'https://shop.example/back',
    };
    assert.equal(row.request_hash, gw.runtime.keyring.fingerprint(canonicalString(wire)));
  });

  test('unknown query parameters are refused on retrieve routes too', async () => {
    const p = (await gw.generic('POST', '/v1/payments', key, card('4242424242424242'))).json();
    const r = await gw.generic('GET', `/v1/payments/${p.id}?colour=red`, key);
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().error.param, 'colour');
    // expand[] is a known parameter; a payment offers no expandable field, so naming one is refused (docs/contract.md §24).
    const expand = await gw.generic('GET', `/v1/payments/${p.id}?expand[0]=payment_method`, key);
    assert.equal(expand.statusCode, 400);
    assert.equal(expand.json().error.param, 'expand[0]');
    assert.equal((await gw.generic('GET', '/v1/balance?foo=1', key)).statusCode, 400);
  });

  test('list: newest first, cursors, only this account', async () => {
    const other = await gw.newMerchant();
    const otherKey = await gw.apiKey(other);
    gw.clock.advance(1); // the test clock stands still: a later payment needs a later millisecond
    const mine = (await gw.generic('POST', '/v1/payments', key, card('4242424242424242'))).json();
    const theirs = (await gw.generic('POST', '/v1/payments', otherKey, card('4242424242424242'))).json();
    const page = (await gw.generic('GET', '/v1/payments?limit=2', key)).json();
    assert.equal(page.object, 'list');
    assert.equal(page.url, '/v1/payments');
    assert.equal(page.data[0].id, mine.id);
    assert.equal(page.has_more, true);
    const next = (await gw.generic('GET', `/v1/payments?limit=2&starting_after=${page.data[1].id}`, key)).json();
    assert.ok(!next.data.some((x: { id: string }) => x.id === page.data[0].id || x.id === page.data[1].id));
    assert.equal((await gw.generic('GET', `/v1/payments/${theirs.id}`, key)).statusCode, 404);
    assert.equal((await gw.generic('POST', `/v1/payments/${theirs.id}/capture`, key)).statusCode, 404);
    assert.equal((await gw.generic('POST', '/v1/refunds', key, { payment: theirs.id })).statusCode, 404);
  });

  test('live: a live key is refused without a processor, and never sees test payments (nor the reverse)', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const liveKey = await gw.apiKey(live);
    assert.match(liveKey, /^sk_live_/);
    const refused = await gw.generic('POST', '/v1/payments', liveKey, card('4242424242424242'));
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error.code, undefined, 'no published code fits');
    assert.match(refused.json().error.message, /processor/i);
    const sandbox = gw.runtime.deps.processorFor({ mode: 'test' } as never);
    const original = gw.runtime.deps.processorFor;
    gw.runtime.deps.processorFor = () => sandbox;
    try {
      const lp = (await gw.generic('POST', '/v1/payments', liveKey, card('4242424242424242'))).json();
      assert.equal(lp.livemode, true);
      const tp = (await gw.generic('POST', '/v1/payments', key, card('4242424242424242'))).json();
      assert.equal((await gw.generic('GET', `/v1/payments/${lp.id}`, key)).statusCode, 404);
      assert.equal((await gw.generic('GET', `/v1/payments/${tp.id}`, liveKey)).statusCode, 404);
      const liveList = (await gw.generic('GET', '/v1/payments?limit=100', liveKey)).json();
      assert.ok(liveList.data.every((p: { livemode: boolean }) => p.livemode));
    } finally {
      gw.runtime.deps.processorFor = original;
    }
  });
});
