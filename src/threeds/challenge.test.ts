// 3-D Secure in the direct flow (docs/contract.md §10), driven through real HTTP requests: the
// gateway listens on a real socket, the merchant's calls to /v1/authorise and
// /v1/retrievalTrans and the shopper's GET and form POST of the challenge page all go
// over it with fetch (redirects not followed, so the 303 to return_url is checked as sent).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { frameOriginsOf } from '../pages/frame-origins.js';
import { setThresholds } from '../risk/settings.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { parseXmlBody } from '../web/xml.js';
import { ChallengeService } from './service.js';
import { authorise, formTokenOf, httpPost, listenGateway, mpiInfo, openPage, queryOrder, submit } from './testing.js';

const CHALLENGE_CARD = '4000000000003220';
const RETURN_URL = 'https://shop.example/return?cart=7';
const NOTIFY_URL = 'http://127.0.0.1:9/notify'; // an IP literal: the arrival check needs no DNS
const FAILED_3DS = '1009:3-D Secure authentication failed';

let gw: TestGateway;
let origin = '';
before(async () => {
  gw = await testGateway();
  origin = await listenGateway(gw);
});
after(async () => {
  await gw.close();
});

/** Direct payment over the socket; the answer is XML (docs/contract.md §2). */
async function authoriseHttp(body: Record<string, unknown>, m: CreatedMerchant = gw.merchant): Promise<Record<string, any>> {
  const res = await httpPost(origin, '/v1/authorise', body, m);
  assert.equal(res.statusCode, 200, res.body);
  return parseXmlBody(res.body);
}

/** The payment as the merchant reads it back over the socket (/v1/retrievalTrans). */
async function queryHttp(transaction_id: string, m: CreatedMerchant = gw.merchant): Promise<Record<string, any>> {
  const res = await httpPost(origin, '/v1/retrievalTrans', { merchant_id: m.merchant_id, account_id: m.account_id, transaction_ids: [transaction_id] }, m);
  assert.equal(res.statusCode, 200, res.body);
  const order = JSON.parse(res.body).orders_list[0];
  assert.equal(order.transaction_id, transaction_id);
  return order;
}

/** The outbox rows of a payment: type and the payload the notification carries. */
async function eventsHttp(transaction_id: string): Promise<Array<{ type: string; data: Record<string, any>; notify_url: string }>> {
  const rows = await gw.runtime.store.db.selectFrom('events').select(['event_type', 'payload', 'notify_url']).where('object_id', '=', transaction_id).execute();
  return rows
    .map((r) => ({ type: r.event_type, data: JSON.parse(r.payload).data as Record<string, any>, notify_url: r.notify_url }))
    .sort((a, b) => a.type.localeCompare(b.type)); // one clock tick holds many events: compare as sets
}

async function challenged(overrides: Record<string, unknown> = {}) {
  const x = await authoriseHttp(directPayment(gw.merchant, { card: CHALLENGE_CARD, return_url: RETURN_URL, notify_url: NOTIFY_URL, ...overrides }));
  assert.equal(x.order_status, '2');
  assert.equal(x.result_info, '0002:Pending 3-D Secure authentication');
  assert.ok(x.threeds_url.startsWith(`${origin}/threeds/`), 'threeds_url points at the listening gateway');
  assert.match(x.threeds_url, /^http:\/\/[^/]+\/threeds\/[A-Za-z0-9_-]{32}$/);
  return x;
}

function assertStrictCsp(headers: Record<string, string>, formTarget: boolean): void {
  const csp = headers['content-security-policy'] as string;
  assert.ok(csp, 'a Content-Security-Policy header');
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /style-src 'nonce-[A-Za-z0-9_-]+'/);
  assert.match(csp, /img-src 'none'/);
  assert.match(csp, formTarget ? /form-action 'self' https:\/\/shop\.example;/ : /form-action 'self';/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /base-uri 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|script-src/);
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.equal(headers['cache-control'], 'no-store');
}

/** The 303 Location: return_url with the merchant's own parameters kept and the result signed. */
function signedReturn(res: { statusCode: number; headers: Record<string, string> }, m: CreatedMerchant = gw.merchant): Record<string, string> {
  assert.equal(res.statusCode, 303);
  const u = new URL(res.headers.location as string);
  assert.equal(`${u.origin}${u.pathname}`, 'https://shop.example/return');
  assert.equal(u.searchParams.get('cart'), '7', 'the merchant’s own parameters are kept');
  const fields: Record<string, string> = {};
  for (const k of ['merchant_id', 'account_id', 'order_no', 'transaction_id', 'order_status', 'result_info', 'threeds_result'])
    fields[k] = u.searchParams.get(k) ?? '';
  assert.equal(u.searchParams.get('encryption_data'), sign(fields, m.secret_key), 'return parameters are signed with the account key');
  assert.notEqual(u.searchParams.get('encryption_data'), sign(fields, 'another secret'));
  assert.deepEqual([fields.merchant_id, fields.account_id], [m.merchant_id, m.account_id]);
  return fields;
}

describe('challenge page over HTTP', () => {
  test('shows merchant, amount and masked card, escaped, under a strict CSP', async () => {
    const m = await gw.newMerchant({ name: `<script>alert("x")</script> & Sons` });
    const x = await authoriseHttp(directPayment(m, { card: CHALLENGE_CARD, amount: '25.50', return_url: RETURN_URL }), m);
    const page = await openPage(x.threeds_url);
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html; charset=utf-8/);
    assert.ok(page.body.includes('<dd id="card">400000******3220</dd>'));
    assert.ok(page.body.includes('<dd id="amount">$25.50</dd>'));
    assert.ok(page.body.includes('<dd id="merchant">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Sons</dd>'));
    assert.ok(!page.body.includes('<script'), 'no script element at all');
    assert.ok(!page.body.includes(CHALLENGE_CARD), 'never the full card number');
    assertStrictCsp(page.headers, true);
    const nonce = /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(page.headers['content-security-policy'] as string)?.[1];
    assert.ok(page.body.includes(`<style nonce="${nonce}">`), 'the only style carries the header’s nonce');
    // Opening the page is not using it: a second GET shows it again.
    assert.equal((await openPage(x.threeds_url)).statusCode, 200);
  });

  test('completed: authorised with 3-D Secure, signed 303 to return_url, notification, single use', async () => {
    const x = await challenged();
    const page = await openPage(x.threeds_url);
    assert.equal(page.statusCode, 200);
    assertStrictCsp(page.headers, true);
    assert.ok(page.body.includes('<dd id="card">400000******3220</dd>'));
    assert.ok(page.body.includes('<dd id="amount">$10.00</dd>'));
    assert.ok(page.body.includes('<dd id="merchant">Test merchant</dd>'));
    const token = formTokenOf(page.body);
    const res = await submit(x.threeds_url, token, 'complete');
    const back = signedReturn(res);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result, back.transaction_id], ['1', '0000:Success', 'Y', x.transaction_id]);
    const order = await queryHttp(x.transaction_id);
    assert.deepEqual([order.payment_status, order.is3ds], ['3000', '1']);
    const events = await eventsHttp(x.transaction_id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment.pending', 'payment.succeeded'],
    );
    const succeeded = events[1] as { data: Record<string, any>; notify_url: string };
    assert.equal(succeeded.notify_url, NOTIFY_URL);
    assert.deepEqual([succeeded.data.transaction_id, succeeded.data.payment_status], [x.transaction_id, order.payment_status]);
    // Single use: neither the form nor the page works a second time, and nothing more is written.
    const again = await submit(x.threeds_url, token, 'complete');
    assert.equal(again.statusCode, 410);
    assertStrictCsp(again.headers, false);
    assert.match(again.body, /Already used/);
    assert.equal((await submit(x.threeds_url, token, 'fail')).statusCode, 410);
    assert.equal((await openPage(x.threeds_url)).statusCode, 410);
    assert.equal((await queryHttp(x.transaction_id)).payment_status, '3000');
    assert.equal((await eventsHttp(x.transaction_id)).length, 2);
  });

  test('failed: declined with 1009 and threeds_result N, signed return, notification', async () => {
    const x = await challenged();
    const token = formTokenOf((await openPage(x.threeds_url)).body);
    const back = signedReturn(await submit(x.threeds_url, token, 'fail'));
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result, back.transaction_id], ['0', FAILED_3DS, 'N', x.transaction_id]);
    const order = await queryHttp(x.transaction_id);
    assert.deepEqual([order.payment_status, order.is3ds, order.result_info], ['6000', '0', FAILED_3DS]);
    const events = await eventsHttp(x.transaction_id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment.failed', 'payment.pending'],
    );
    assert.deepEqual([events[0]?.data.transaction_id, events[0]?.data.payment_status], [x.transaction_id, '6000']);
    assert.equal((await submit(x.threeds_url, token, 'complete')).statusCode, 410, 'a failed challenge cannot be completed after');
    assert.equal((await queryHttp(x.transaction_id)).payment_status, '6000');
  });

  test('expired: a page opened after 15 minutes fails the payment and redirects with the signed failure', async () => {
    const x = await challenged();
    const token = formTokenOf((await openPage(x.threeds_url)).body);
    gw.clock.advance(15 * 60 * 1000);
    const back = signedReturn(await openPage(x.threeds_url));
    assert.deepEqual([back.order_status, back.result_info, back.threeds_result], ['0', FAILED_3DS, 'N']);
    const order = await queryHttp(x.transaction_id);
    assert.deepEqual([order.payment_status, order.result_info], ['6000', FAILED_3DS]);
    assert.deepEqual(
      (await eventsHttp(x.transaction_id)).map((e) => e.type),
      ['payment.failed', 'payment.pending'],
    );
    assert.equal((await openPage(x.threeds_url)).statusCode, 410);
    assert.equal((await submit(x.threeds_url, token, 'complete')).statusCode, 410, 'too late to complete');
  });

  test('expired: the scheduled job fails lapsed challenges, notifies, and the page is gone', async () => {
    const x = await challenged();
    const token = formTokenOf((await openPage(x.threeds_url)).body);
    gw.clock.advance(15 * 60 * 1000 + 1);
    assert.ok((await new ChallengeService(gw.runtime.deps).expireDue()) >= 1);
    const order = await queryHttp(x.transaction_id);
    assert.deepEqual([order.payment_status, order.result_info], ['6000', FAILED_3DS]);
    const events = await eventsHttp(x.transaction_id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['payment.failed', 'payment.pending'],
    );
    assert.equal(events[0]?.data.payment_status, '6000');
    const late = await submit(x.threeds_url, token, 'complete');
    assert.equal(late.statusCode, 410, 'too late to complete');
    assertStrictCsp(late.headers, false);
    assert.equal((await openPage(x.threeds_url)).statusCode, 410);
    assert.equal((await queryHttp(x.transaction_id)).payment_status, '6000');
    assert.equal((await eventsHttp(x.transaction_id)).length, 2);
  });

  test('without return_url the shopper sees a result page', async () => {
    const x = await challenged({ return_url: undefined });
    const token = formTokenOf((await openPage(x.threeds_url)).body);
    const res = await submit(x.threeds_url, token, 'complete');
    assert.equal(res.statusCode, 200);
    assertStrictCsp(res.headers, false);
    assert.match(res.body, /Authentication complete/);
    assert.equal((await queryHttp(x.transaction_id)).payment_status, '3000');
  });

  test('a wrong form token, a bad form or an unknown id changes nothing', async () => {
    const x = await challenged();
    const forbidden = await submit(x.threeds_url, 'A'.repeat(32), 'complete');
    assert.equal(forbidden.statusCode, 403);
    assertStrictCsp(forbidden.headers, false);
    assert.equal((await openPage(x.threeds_url.replace(/[^/]{32}$/, 'B'.repeat(32)))).statusCode, 404);
    const bad = await fetch(x.threeds_url, {
      method: 'POST',
      body: 'form_token=x&outcome=<script>',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
    assert.equal(bad.status, 400);
    assert.ok(!(await bad.text()).includes('<script>'), 'the bad value is not echoed unescaped');
    assert.equal((await queryHttp(x.transaction_id)).payment_status, '1000');
    assert.deepEqual(
      (await eventsHttp(x.transaction_id)).map((e) => e.type),
      ['payment.pending'],
    );
  });
});

describe('challenge page language and framing (docs/contract.md §14, the shared page layer)', () => {
  /** GET or POST the page as a browser whose languages are `accept`. */
  async function page(url: string, accept: string, form?: Record<string, string>): Promise<{ status: number; csp: string; xfo: string | null; body: string }> {
    const r = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers: { 'accept-language': accept, ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    return { status: r.status, csp: r.headers.get('content-security-policy') ?? '', xfo: r.headers.get('x-frame-options'), body: await r.text() };
  }
  const ancestors = (csp: string) => /frame-ancestors ([^;]+)/.exec(csp)?.[1];

  test('the browser’s language, the payment’s own before it, and frame-ancestors from the account’s origins on every page of the challenge', async () => {
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, 'https://shop.example');
    const x = await authoriseHttp(directPayment(m, { card: CHALLENGE_CARD, return_url: RETURN_URL }), m);

    const de = await page(x.threeds_url, 'de-DE,de;q=0.9,en;q=0.5');
    assert.equal(de.status, 200);
    assert.ok(de.body.includes('<html lang="de">'));
    assert.ok(de.body.includes('<h1>Bestätigen Sie diese Zahlung</h1>'));
    // German writes amounts its own way (issue 36 item 10: it read `10.00 USD`).
    assert.ok(de.body.includes('<dt>Betrag</dt><dd id="amount">10,00\u00a0$</dd>'), de.body);
    assert.ok(de.body.includes('id="complete" class="primary">Authentifizierung abschließen</button>'));
    assert.equal(ancestors(de.csp), 'https://shop.example');
    assert.equal(de.xfo, null, 'X-Frame-Options cannot name an origin, so it is not sent when framing is allowed');
    assert.match(de.csp, /form-action 'self' https:\/\/shop\.example;/);

    // The payment's own language (its browser_lang field) comes before the header.
    const y = await authoriseHttp(directPayment(m, { card: CHALLENGE_CARD, return_url: RETURN_URL, browser_lang: 'pt-BR' }), m);
    const pt = await page(y.threeds_url, 'de');
    assert.ok(pt.body.includes('<html lang="pt">') && pt.body.includes('<h1>Confirme este pagamento</h1>'));

    // The pages that end the challenge keep its language and framing.
    const forbidden = await page(y.threeds_url, 'de', { form_token: 'A'.repeat(32), outcome: 'complete' });
    assert.equal(forbidden.status, 403);
    assert.ok(forbidden.body.includes('<h1>Não aceito</h1>'));
    assert.equal(ancestors(forbidden.csp), 'https://shop.example');
    signedReturn(await submit(y.threeds_url, formTokenOf(pt.body), 'complete'), m);
    const used = await page(y.threeds_url, 'fr');
    assert.equal(used.status, 410);
    assert.ok(used.body.includes('<h1>Já utilizado</h1>'));
    assert.equal(ancestors(used.csp), 'https://shop.example');
    assert.equal(used.xfo, null);

    // An id that names no challenge has no account: not framable, the browser's language.
    const unknown = await page(x.threeds_url.replace(/[^/]{32}$/, 'C'.repeat(32)), 'es-ES,es;q=0.9');
    assert.equal(unknown.status, 404);
    assert.ok(unknown.body.includes('<html lang="es">') && unknown.body.includes('Esta página de autenticación no existe.'));
    assert.deepEqual([ancestors(unknown.csp), unknown.xfo], ["'none'", 'DENY']);
  });

  test('an account without frame origins: not framable; no Accept-Language: English', async () => {
    const x = await challenged();
    const r = await page(x.threeds_url, '');
    assert.ok(r.body.includes('<html lang="en">') && r.body.includes('<h1>Confirm this payment</h1>'));
    assert.deepEqual([ancestors(r.csp), r.xfo], ["'none'", 'DENY']);
  });
});

describe('open3d and mpi_info (docs/contract.md §10)', () => {
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
    const token = formTokenOf((await openPage(x.threeds_url)).body);
    await submit(x.threeds_url, token, 'complete');
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
