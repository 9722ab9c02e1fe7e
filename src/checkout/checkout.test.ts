// The hosted checkout over HTTP (docs/contract.md §14), on SQLite and PostgreSQL: the loading page
// exactly as specified, signInfo, the payment page with its ranked methods, paying once
// (card, 3-D Secure, alternative method), cancel, expiry, the signed return, and every bad
// input refused with nothing stored. The browser tests drive the same pages in Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepAttempts } from '../attempts/sweeper.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { rankedPaymentMethods } from '../methods/service.js';
import { frameOriginsOf } from '../pages/frame-origins.js';
import { expireDue } from '../payments/expiry.js';
import type { Processor } from '../processors/types.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { captureBatch, item, orderOf, refundBatch } from '../test/lifecycle.js';
import { eventsOf, formTokenOf, pathOf } from '../threeds/testing.js';

const RETURN_URL = 'https://shop.example/done?cart=3';
const CANCEL_URL = 'https://shop.example/cart';
const MINUTE = 60_000;

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, [], 'the ledger balances after every test of this file');
  await gw.close();
});

let n = 0;
function checkoutBody(overrides: Record<string, unknown> = {}, m: CreatedMerchant = gw.merchant): Record<string, unknown> {
  const body: Record<string, unknown> = {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    order_no: `CO-${Date.now().toString(36)}-${++n}`,
    currency: 'USD',
    amount: '42.00',
    return_url: RETURN_URL,
    cancel_url: CANCEL_URL,
    notify_url: 'http://127.0.0.1:9/notify',
    first_name: 'Ana',
    last_name: 'Silva',
    shopper_email: 'ana@example.com',
    billing_country: 'US',
    website: 'shop.example',
    ...overrides,
  };
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

/** The merchant's page posts the signed form through the shopper's browser. */
const create = (body: Record<string, unknown>, m: CreatedMerchant = gw.merchant) =>
  gw.post('/v1/checkout', body, { format: 'form', merchant: m, remoteAddress: '198.51.100.7' });

const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  gw.app.inject({
    method: 'POST',
    url,
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
const get = (url: string, headers: Record<string, string> = {}) => gw.app.inject({ method: 'GET', url, headers });

interface Opened {
  session_id: string;
  transaction_id: string;
  order_no: string;
  loading: string;
  token: string;
  page: string;
}

const attr = (html: string, name: string) => new RegExp(`name="${name.replace(/[[\]]/g, '\\$&')}" value="([^"]*)"`).exec(html)?.[1];

/** Creates a session and follows the loading page's form to the payment page. */
async function open(overrides: Record<string, unknown> = {}, m: CreatedMerchant = gw.merchant): Promise<Opened> {
  const body = checkoutBody(overrides, m);
  const res = await create(body, m);
  assert.equal(res.statusCode, 200, res.body);
  const session_id = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/.exec(res.body)?.[1] as string;
  assert.ok(session_id, res.body);
  const fwd = await form(`/v1/checkout/${session_id}`, { signInfo: attr(res.body, 'signInfo') as string });
  assert.equal(fwd.statusCode, 303);
  assert.equal(fwd.headers.location, `/pay/${session_id}`);
  const page = await get(`/pay/${session_id}`);
  assert.equal(page.statusCode, 200);
  const row = await gw.runtime.store.db.selectFrom('checkout_sessions').select('transaction_id').where('session_id', '=', session_id).executeTakeFirstOrThrow();
  return {
    session_id,
    transaction_id: row.transaction_id,
    order_no: body.order_no as string,
    loading: res.body,
    token: formTokenOf(page.body),
    page: page.body,
  };
}

const card = (o: Opened, number = '4242 4242 4242 4242', extra: Record<string, string> = {}) =>
  form(`/pay/${o.session_id}`, {
    form_token: o.token,
    card_number: number,
    expiry_month: '12',
    expiry_year: String(new Date().getUTCFullYear() + 2),
    security_code: '123',
    holder: 'Ana Silva',
    ...extra,
  });

async function counts(transaction_id: string) {
  const db = gw.runtime.store.db;
  const one = async (t: 'events' | 'ledger_postings', col: 'object_id' | 'transaction_id') =>
    Number(
      (
        await db
          .selectFrom(t)
          .select((e) => e.fn.countAll().as('n'))
          .where(col as never, '=', transaction_id as never)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { events: await one('events', 'object_id'), postings: await one('ledger_postings', 'transaction_id') };
}

describe('POST /v1/checkout: the loading page (interface.md, docs/contract.md §14)', () => {
  test('title, form action, every fixed input, signInfo, the script’s fields and aliases, noscript; no secret; 1000 before payment', async () => {
    const o = await open({ default_lang: 'de', items: 'Book#,#1#,#42.00#,#B1' });
    const html = o.loading;
    assert.match(html, /<title>Loading…<\/title>/);
    assert.match(html, /<html lang="de">/);
    for (const name of [
      'gbc_id',
      'connector_code',
      'account_name',
      'webSite',
      'pm_id',
      'apm_type',
      'descriptor',
      'orderprefix',
      'rrtimezone',
      'ordernumlength',
      'sendbgoods',
      'replacename',
      'send_bank_website',
      'replace_up_id',
      'replace_match_address',
      'to_pass_page',
      'signInfo',
    ])
      assert.notEqual(attr(html, name), undefined, `hidden input ${name}`);
    assert.equal(attr(html, 'gbc_id'), o.session_id);
    assert.equal(attr(html, 'webSite'), 'shop.example');
    assert.match(html, /<noscript><p class="actions"><button type="submit" id="continue"/);
    const data = JSON.parse(/<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/.exec(html)?.[1] as string) as {
      fields: Array<[string, string]>;
    };
    const fields = new Map(data.fields);
    for (const [alias, value] of [
      ['merNo', gw.merchant.merchant_id],
      ['gatewayNo', gw.merchant.account_id],
      ['orderNo', o.order_no],
      ['orderCurrency', 'USD'],
      ['orderAmount', '42.00'],
      ['firstName', 'Ana'],
      ['email', 'ana@example.com'],
      ['country', 'US'],
      ['returnUrl', RETURN_URL],
      ['cancelUrl', CANCEL_URL],
      ['cancel_url', CANCEL_URL],
      ['notifyUrl', 'http://127.0.0.1:9/notify'],
      ['goodsInfo', 'Book#,#1#,#42.00#,#B1'],
      ['defaultLang', 'de'],
      ['default_lang', 'de'],
      ['source_request_ip', '198.51.100.7'],
      ['source_notify_url', 'http://127.0.0.1:9/notify'],
    ] as Array<[string, string]>)
      assert.equal(fields.get(alias), value, alias);
    for (const alias of [
      'itemTotal',
      'taxTotal',
      'shipFee',
      'shippingDiscount',
      'phone',
      'address',
      'city',
      'state',
      'zip',
      'shipFirstName',
      'remark',
      'shopperId',
      'shopperLevel',
      'isOpen3D',
      'token',
      'paymentToken',
      'cardType',
      'card_type',
      'merSendLogoNo',
      'logo_name',
      'verifyBillingAddress',
      'verify_billing_address',
      'APMType',
    ])
      assert.ok(fields.has(alias), `alias ${alias}`);
    const all = new URLSearchParams(fields.get('allParams'));
    assert.equal(all.get('orderNo'), o.order_no);
    assert.equal(all.get('source_request_ip'), '198.51.100.7');
    assert.ok(!html.includes('encryption_data'), 'the request’s signature is not in the page');
    assert.ok(!html.includes(gw.merchant.secret_key), 'no secret in the page');
    const res = await create(checkoutBody());
    const csp = res.headers['content-security-policy'] as string;
    assert.match(csp, /script-src 'nonce-[A-Za-z0-9_-]+'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '1000');
    assert.deepEqual(await eventsOf(gw, o.transaction_id), [], 'opening a session notifies nothing');
  });

  test('the same body again shows the same session; another body with the order_no is 1011 (signed XML)', async () => {
    const body = checkoutBody();
    const a = await create(body);
    const b = await create(body);
    const id = (h: string) => /gbc_id" value="([^"]+)"/.exec(h)?.[1];
    assert.equal(id(b.body), id(a.body));
    assert.notEqual(attr(a.body, 'signInfo'), undefined);
    const dup = await create({ ...body, amount: '1.00' });
    assert.equal(dup.statusCode, 200);
    const x = readXml(dup);
    assert.equal(x.result_info, '1011:Duplicate order');
  });

  test('the client library’s checkoutForm(): the signed hidden inputs a merchant renders are accepted as posted', async () => {
    const f = gw.client().checkoutForm({
      order_no: `CF-${Date.now()}`,
      currency: 'EUR',
      amount: '15.00',
      return_url: RETURN_URL,
      billing_country: 'NL',
      cart_items: [{ basic_item_data: { name: 'Mug', quantity: 2 } } as never],
    });
    assert.ok(f.action.endsWith('/v1/checkout'));
    assert.ok(f.fields.some(([k]) => k === 'encryption_data'));
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/checkout',
      payload: new URLSearchParams(f.fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /<title>Loading…<\/title>/);
  });

  test('Idempotency-Key: a repeat shows the same session on a fresh page; another body with the key is 409', async () => {
    const body = checkoutBody();
    const key = `idem-${Date.now()}`;
    const a = await gw.post('/v1/checkout', body, { format: 'form', headers: { 'idempotency-key': key } });
    const b = await gw.post('/v1/checkout', body, { format: 'form', headers: { 'idempotency-key': key } });
    assert.equal(b.statusCode, 200);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.equal(attr(b.body, 'gbc_id'), attr(a.body, 'gbc_id'));
    const nonce = (h: Record<string, string>) => /'nonce-([^']+)'/.exec(h['content-security-policy'] ?? '')?.[1];
    assert.ok(nonce(b.headers) && nonce(b.headers) !== nonce(a.headers), 'a fresh nonce and CSP on the repeat');
    const c = await gw.post('/v1/checkout', { ...body, amount: '2.00' }, { format: 'form', headers: { 'idempotency-key': key } });
    assert.equal(c.statusCode, 409);
  });

  test('signInfo binds the form to its session: another session’s or a forged one is 403; unknown id 404', async () => {
    const a = await open();
    const b = await open();
    assert.equal((await form(`/v1/checkout/${a.session_id}`, { signInfo: attr(b.loading, 'signInfo') as string })).statusCode, 403);
    assert.equal((await form(`/v1/checkout/${a.session_id}`, { signInfo: 'x' })).statusCode, 403);
    assert.equal((await form(`/v1/checkout/cs_${'A'.repeat(32)}`, { signInfo: 'x' })).statusCode, 404);
    assert.equal((await form(`/v1/checkout/${a.session_id}`, {})).statusCode, 400);
  });
});

describe('the payment page', () => {
  test('amount, merchant, card form, cancel; no alternative method for USD/US', async () => {
    const o = await open();
    assert.match(o.page, /id="amount">\$42\.00</);
    assert.match(o.page, /name="card_number"/);
    assert.match(o.page, /autocomplete="cc-number"/);
    assert.match(o.page, /id="cancel"/);
    assert.match(o.page, /id="test-mode"/);
    assert.ok(!o.page.includes('method-pix'));
  });

  test('the amount as the page language writes it (issue 36 item 10: the German page said 42.00 EUR)', async () => {
    const o = await open({ default_lang: 'de', currency: 'EUR' });
    assert.match(o.page, /id="amount">42,00\u00a0€</);
    assert.match(o.page, /42,00\u00a0€ bezahlen/, 'the pay button too');
  });

  test('BRL/BR lists Pix and Boleto with the card, in the ranking’s order (docs/contract.md §8)', async () => {
    const o = await open({ currency: 'BRL', billing_country: 'BR' });
    const ranked = await rankedPaymentMethods(
      gw.runtime.store.db,
      { account_id: gw.merchant.account_id, mode: 'test' },
      { currency: 'BRL', billing_country: 'BR' },
      gw.clock.now,
    );
    const expected: string[] = [];
    for (const m of ranked) {
      const key = m.type === 'card' ? 'card' : m.payment_method;
      if (!expected.includes(key)) expected.push(key);
    }
    const shown = [...o.page.matchAll(/<section id="method-([a-z]+)">/g)].map((x) => x[1]);
    assert.deepEqual(shown, expected);
    assert.ok(shown.includes('pix') && shown.includes('boleto') && !shown.includes('ideal'));
    const ids = [...o.page.matchAll(/ id="([^"]+)"/g)].map((x) => x[1]);
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'every element id once (labels point at the right input)',
    );
    assert.match(o.page, /<label for="f-pix-person-document_number">/);
  });

  test('frame-ancestors: none by default, the registered origins when the account has some', async () => {
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, 'https://shop.example');
    const o = await open({}, m);
    const res = await get(`/pay/${o.session_id}`);
    assert.match(res.headers['content-security-policy'] as string, /frame-ancestors https:\/\/shop\.example/);
    assert.equal(res.headers['x-frame-options'], undefined);
  });
});

describe('paying once', () => {
  test('4242: 303 to the page, approved (3000), notified, ledgered; the return is signed; a second submit charges nothing', async () => {
    const o = await open();
    const paid = await card(o);
    assert.equal(paid.statusCode, 303);
    assert.equal(paid.headers.location, `/pay/${o.session_id}`);
    const result = await get(`/pay/${o.session_id}`);
    assert.match(result.body, /data-outcome="approved"/);
    assert.match(result.body, new RegExp(`href="/pay/${o.session_id}/return"`));
    const order = await orderOf(gw, o.transaction_id);
    assert.equal(order.payment_status, '3000');
    assert.deepEqual(await eventsOf(gw, o.transaction_id), ['payment.succeeded']);
    const before = await counts(o.transaction_id);
    assert.ok(before.postings >= 1);

    const again = await card(o, '5555 5555 5555 4444');
    assert.equal(again.statusCode, 200);
    assert.match(again.body, /data-outcome="approved"/, 'the second submit shows the result');
    assert.deepEqual(await counts(o.transaction_id), before, 'the second submit changed nothing');
    assert.match((await orderOf(gw, o.transaction_id)).card_number ?? JSON.stringify(await orderOf(gw, o.transaction_id)), /424242/);

    const back = await get(`/pay/${o.session_id}/return`);
    assert.equal(back.statusCode, 303);
    const location = back.headers.location as string;
    assert.ok(location.startsWith('https://shop.example/done?cart=3&'), location);
    const r = gw.client().verifyReturn(location);
    assert.equal(r.order_status, '1');
    assert.equal(r.order_no, o.order_no);
    assert.equal(r.result_info, '0000:Success');
  });

  test('two tabs submit at once: exactly one charge', async () => {
    const o = await open();
    const [a, b] = await Promise.all([card(o), card(o, '5555555555554444')]);
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [200, 303], 'one pays, the other shows the result');
    const events = await eventsOf(gw, o.transaction_id);
    assert.deepEqual(events, ['payment.succeeded'], 'one payment, one notification');
    const cards = await gw.runtime.store.db.selectFrom('payments').select('card_masked').where('transaction_id', '=', o.transaction_id).execute();
    assert.equal(cards.length, 1);
  });

  test('a card that fails its check, a past expiry, a wrong code length: the form again (400), nothing charged, no card number echoed', async () => {
    const o = await open();
    for (const [number, extra, field] of [
      ['4242 4242 4242 4241', {}, 'card_number'],
      ['4242424242424242', { expiry_year: '2020' }, 'expiry_year'], // a past year under the year (issue 36 item 10)
      ['4242424242424242', { expiry_year: '20x4' }, 'expiry_year'],
      ['4242424242424242', { expiry_month: '13' }, 'expiry_month'],
      ['4242424242424242', { security_code: '12' }, 'security_code'],
      ['378282246310005', { security_code: '123' }, 'security_code'], // Amex: four digits
    ] as Array<[string, Record<string, string>, string]>) {
      const res = await card(o, number, extra);
      assert.equal(res.statusCode, 400, `${number} ${JSON.stringify(extra)}`);
      assert.match(res.body, new RegExp(`id="f-${field}-error"`), field);
      assert.ok(!res.body.includes(number.replace(/\s/g, '')) && !res.body.includes(number), 'the card number is not echoed');
    }
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '1000');
    assert.deepEqual(await counts(o.transaction_id), { events: 0, postings: 0 });
  });

  test('a declined card: declined (6000), the return says order_status 0; the session is not paid again', async () => {
    const o = await open();
    await card(o, '4000000000000002');
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '6000');
    const r = gw.client().verifyReturn((await get(`/pay/${o.session_id}/return`)).headers.location as string);
    assert.equal(r.order_status, '0');
    assert.equal((await card(o)).statusCode, 200);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '6000');
  });

  test('3-D Secure: 4000000000003220 goes to the challenge, which returns to the payment page; approved', async () => {
    const o = await open();
    const res = await card(o, '4000000000003220');
    assert.equal(res.statusCode, 303);
    const challenge = res.headers.location as string;
    assert.match(challenge, /\/threeds\/[A-Za-z0-9_-]{32}$/);
    assert.match((await get(`/pay/${o.session_id}`)).body, /data-outcome="pending"/);
    const page = await get(pathOf(challenge));
    const done = await form(pathOf(challenge), { form_token: formTokenOf(page.body), outcome: 'complete' });
    assert.equal(done.statusCode, 303);
    assert.ok((done.headers.location as string).endsWith(`/pay/${o.session_id}`), done.headers.location as string);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '3000');
    const r = gw.client().verifyReturn((await get(`/pay/${o.session_id}/return`)).headers.location as string);
    assert.equal(r.threeds_result, 'Y');
  });

  test('Pix from the page: the form asks for the missing fields (400 naming them), then the issuer page pays it', async () => {
    const o = await open({ currency: 'BRL', billing_country: 'BR', amount: '99.90' });
    const missing = await form(`/pay/${o.session_id}/apm`, { form_token: o.token, payment_method: 'pix', 'person[document_number]': '529.982.247-25' });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /id="f-person\[email\]-error"|class="error"/);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '1000');
    const started = await form(`/pay/${o.session_id}/apm`, {
      form_token: o.token,
      payment_method: 'pix',
      'person[document_number]': '529.982.247-25',
      'person[email]': 'ana@example.com',
    });
    assert.equal(started.statusCode, 303, started.body);
    const issuer = started.headers.location as string;
    assert.match(issuer, /\/issuer\/[A-Za-z0-9_-]{32}$/);
    const other = await card(o);
    assert.equal(other.statusCode, 200, 'the card form of another tab does not pay it now');
    assert.match(other.body, /data-outcome="pending"/);
    const shown = await get(pathOf(issuer));
    const done = await form(pathOf(issuer), { form_token: formTokenOf(shown.body), outcome: 'approve' });
    assert.ok((done.headers.location as string).endsWith(`/pay/${o.session_id}`));
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '3000');
    assert.deepEqual(await eventsOf(gw, o.transaction_id), ['payment.pending', 'payment.succeeded']);
  });

  test('a method the session does not offer is refused on the form', async () => {
    const o = await open();
    const res = await form(`/pay/${o.session_id}/apm`, { form_token: o.token, payment_method: 'ideal', bank_code: 'INGBNL2A' });
    assert.equal(res.statusCode, 400);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '1000');
  });

  test('forged form tokens: 403 and nothing changes', async () => {
    const o = await open();
    const other = await open();
    assert.equal((await card({ ...o, token: other.token })).statusCode, 403);
    assert.equal((await form(`/pay/${o.session_id}/cancel`, { form_token: 'x' })).statusCode, 403);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '1000');
    assert.equal((await get(`/pay/cs_${'B'.repeat(32)}`)).statusCode, 404);
    assert.equal((await get('/pay/whatever')).statusCode, 404);
  });
});

describe('cancel and expiry', () => {
  test('Cancel: 303 to cancel_url with the signed result (order_status 0), 5000, payment.cancelled; paying after it charges nothing', async () => {
    const o = await open();
    const res = await form(`/pay/${o.session_id}/cancel`, { form_token: o.token });
    assert.equal(res.statusCode, 303);
    const location = res.headers.location as string;
    assert.ok(location.startsWith(`${CANCEL_URL}?`), location);
    const r = gw.client().verifyReturn(location);
    assert.equal(r.order_status, '0');
    assert.equal(r.result_info, '1019:Cancelled by the shopper');
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '5000');
    assert.deepEqual(await eventsOf(gw, o.transaction_id), ['payment.cancelled']);
    assert.equal((await card(o)).statusCode, 200);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '5000');
    assert.match((await get(`/pay/${o.session_id}`)).body, /data-outcome="cancelled"/);
    assert.ok(((await get(`/pay/${o.session_id}/return`)).headers.location as string).startsWith(CANCEL_URL));
  });

  test('no cancel_url: Cancel goes to return_url', async () => {
    const o = await open({ cancel_url: undefined });
    const res = await form(`/pay/${o.session_id}/cancel`, { form_token: o.token });
    assert.ok((res.headers.location as string).startsWith(RETURN_URL), res.headers.location as string);
  });

  test('after 60 minutes the job expires the session: 7000, 1018, payment.expired; the page shows it and takes no card', async () => {
    const o = await open();
    gw.clock.advance(60 * MINUTE + 1);
    assert.ok((await expireDue(gw.runtime.deps, gw.clock.now)) >= 1);
    const order = await orderOf(gw, o.transaction_id);
    assert.equal(order.payment_status, '7000');
    assert.deepEqual(await eventsOf(gw, o.transaction_id), ['payment.expired']);
    assert.match((await get(`/pay/${o.session_id}`)).body, /data-outcome="expired"/);
    assert.equal((await card(o)).statusCode, 200);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '7000');
  });

  test('a page opened after the deadline expires the session itself', async () => {
    const o = await open();
    gw.clock.advance(60 * MINUTE);
    assert.match((await get(`/pay/${o.session_id}`)).body, /data-outcome="expired"/);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '7000');
  });
});

describe('the order afterwards: capture, refund and query as a card payment', () => {
  test('manual capture: authorised (2000), captured, refunded in part', async () => {
    const m = await gw.newMerchant({ capture_method: 'manual' });
    const o = await open({}, m);
    await card(o);
    assert.equal((await orderOf(gw, o.transaction_id, m)).payment_status, '2000');
    const p = { transaction_id: o.transaction_id, order_no: o.order_no, currency: 'USD', amount: '42.00' };
    assert.equal((await captureBatch(gw, [item(p)], m)).capture_orders[0].capture_status, '1');
    assert.equal((await refundBatch(gw, [item(p, { refund_amount: '2.00' })], m)).refund_orders[0].refund_status, '1');
    assert.equal((await orderOf(gw, o.transaction_id, m)).payment_status, '4100');
  });
});

describe('a subscription sold on the hosted page', () => {
  test('the card paid on the page creates it: subscription_result in the query', async () => {
    const o = await open({ subscription: { contract_name: `co-plan-${Date.now()}`, interval: 'month' } });
    await card(o);
    const order = await orderOf(gw, o.transaction_id);
    assert.equal(order.payment_status, '3000');
    assert.equal(order.subscription_result.recurring_status, '1');
    assert.equal(order.subscription_result.recurring_deduction_period, '1 month');
  });

  test('sessions paid at once with one contract_name: one creates it, the others are paid without it (no 500, no session left pending)', async () => {
    const sub = { contract_name: `co-race-${Date.now()}`, interval: 'month' };
    const sessions = await Promise.all([open({ subscription: sub }), open({ subscription: sub }), open({ subscription: sub })]);
    const paid = await Promise.all(sessions.map((o) => card(o)));
    assert.deepEqual(
      paid.map((r) => r.statusCode),
      [303, 303, 303],
    );
    const orders = await Promise.all(sessions.map((o) => orderOf(gw, o.transaction_id)));
    assert.deepEqual(
      orders.map((o) => o.payment_status),
      ['3000', '3000', '3000'],
    );
    assert.equal(orders.filter((o) => o.subscription_result.recurring_id !== '').length, 1);
  });

  test('a name taken after the session opened: the shopper still pays, the payment carries no subscription', async () => {
    const sub = { contract_name: `co-late-${Date.now()}`, interval: 'month' };
    const o = await open({ subscription: sub });
    const direct = readXml(await gw.post('/v1/authorise', directPayment(gw.merchant, { subscription: sub })));
    assert.ok(direct.recurring_id);
    const r = await card(o);
    assert.equal(r.statusCode, 303, r.body);
    const order = await orderOf(gw, o.transaction_id);
    assert.deepEqual([order.payment_status, order.subscription_result.recurring_id], ['3000', '']);
  });
});

describe('bad input to POST /v1/checkout: 400 naming the field, nothing stored', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no return_url', { return_url: undefined }, 'return_url'],
    ['return_url not a URL', { return_url: 'javascript:alert(1)' }, 'return_url'],
    ['cancel_url not a URL', { cancel_url: 'ftp://x' }, 'cancel_url'],
    ['a card number', { card: '4242424242424242' }, 'card'],
    ['a security code', { security_code: '123' }, 'security_code'],
    ['a token', { token_id: 'tok_x' }, 'token_id'],
    ['an alternative method', { payment_method: 'pix' }, 'payment_method'],
    ['no amount', { amount: undefined }, 'amount'],
    ['a zero amount', { amount: '0.00' }, 'amount'],
    ['an unknown currency', { currency: 'XXY' }, 'currency'],
    ['three decimals', { amount: '1.001' }, 'amount'],
    ['a bad billing country', { billing_country: 'ZZ' }, 'billing_country'],
    ['a subscription without an interval', { subscription: { contract_name: 'plan' } }, 'subscription.interval'],
  ];
  for (const [name, overrides, field] of cases) {
    test(`${name}: 400 naming ${field}`, async () => {
      const body = checkoutBody(overrides);
      const before = await gw.runtime.store.db
        .selectFrom('checkout_sessions')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      const res = await create(body);
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.headers['content-type'] as string, /xml/);
      assert.ok(res.body.includes(field), `names ${field}: ${res.body}`);
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', body.order_no as string)
        .execute();
      assert.deepEqual(stored, []);
      const afterCount = await gw.runtime.store.db
        .selectFrom('checkout_sessions')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n));
    });
  }

  test('unsigned or wrongly signed: 401, nothing stored', async () => {
    const body = checkoutBody();
    const res = await gw.post('/v1/checkout', { ...body, encryption_data: 'x'.repeat(64) }, { format: 'form', sign: false });
    assert.equal(res.statusCode, 401);
    const stored = await gw.runtime.store.db
      .selectFrom('payments')
      .select('transaction_id')
      .where('order_no', '=', body.order_no as string)
      .execute();
    assert.deepEqual(stored, []);
  });
});

describe('a card payment the processor never took (docs/attempts.md)', () => {
  test('no answer in time: the page shows it waiting; the sweeper finds it not taken and the session opens again; the card then pays it once', async () => {
    const { deps } = gw.runtime;
    const served = deps.processorFor;
    const timeout = deps.settings.processor_timeout_ms;
    const silent = {
      name: 'silent',
      authorise: () => new Promise(() => {}),
      authoriseStatus: async () => ({ kind: 'not_found' }),
      cancel: async () => ({ kind: 'approved', reference: '' }),
    } as unknown as Processor;
    const o = await open();
    deps.processorFor = () => silent;
    deps.settings.processor_timeout_ms = 100;
    try {
      const r = await card(o);
      assert.equal(r.statusCode, 303, r.body);
      const waiting = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', o.transaction_id).executeTakeFirstOrThrow();
      assert.equal(waiting.status, 'processing');
      assert.equal(waiting.authorised_minor + waiting.captured_minor, 0, 'nothing held while the processor has not answered');
      const swept = await sweepAttempts(deps, deps.now() + 60_000);
      assert.equal(swept.settled, 1, JSON.stringify(swept));
    } finally {
      deps.processorFor = served;
      deps.settings.processor_timeout_ms = timeout;
    }
    const reopened = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', o.transaction_id).executeTakeFirstOrThrow();
    assert.deepEqual([reopened.status, reopened.card_brand, reopened.card_masked], ['pending', '', '']);
    assert.deepEqual(await eventsOf(gw, o.transaction_id), [], 'the merchant was told nothing of it');
    const paid = await card(o);
    assert.equal(paid.statusCode, 303, paid.body);
    assert.equal((await orderOf(gw, o.transaction_id)).payment_status, '3000');
  });
});
