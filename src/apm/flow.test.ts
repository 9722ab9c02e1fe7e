// Alternative-method payments end to end (docs/contract.md §15), on SQLite and PostgreSQL: the
// merchant's POST /v1/authorise with payment_method, the shopper on the sandbox issuer's
// page (approve, decline, Boleto slip), the signed return, the notification, expiry at the
// method's deadline, the ledger, capture and refund; and every bad input refused with
// nothing stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sweepAttempts } from '../attempts/sweeper.js';
import { SignatureVerificationError } from '../client/index.js';
import { canonicalString } from '../crypto/signature.js';
import { WriteUnit } from '../db/unit.js';
import { verifyLedger } from '../ledger/verify.js';
import { setMethodsEnabled } from '../methods/enablement.js';
import { expireDue } from '../payments/expiry.js';
import { ABANDONED_START_MS, apmClaim, newAttempt } from '../processors/attempts.js';
import { readXml, type TestGateway, testGateway } from '../test/harness.js';
import { captureBatch, item, orderOf, refundBatch } from '../test/lifecycle.js';
import { eventsOf, formTokenOf, pathOf } from '../threeds/testing.js';

const RETURN_URL = 'https://shop.example/back?cart=9';
const NOTIFY_URL = 'http://127.0.0.1:9/notify';
const CPF = '529.982.247-25';
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
const orderNo = () => `APM-${Date.now().toString(36)}-${++n}`;

function pixBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: gw.merchant.merchant_id,
    account_id: gw.merchant.account_id,
    order_no: orderNo(),
    currency: 'BRL',
    amount: '120.50',
    billing_country: 'BR',
    payment_method: 'pix',
    person: { document_number: CPF, email: 'ana@example.com' },
    return_url: RETURN_URL,
    notify_url: NOTIFY_URL,
    default_lang: 'pt',
    ...overrides,
  };
}

const idealBody = (overrides: Record<string, unknown> = {}) =>
  pixBody({ currency: 'EUR', amount: '25.00', billing_country: 'NL', payment_method: 'ideal', person: undefined, bank_code: 'INGBNL2A', ...overrides });

const boletoBody = (overrides: Record<string, unknown> = {}) =>
  pixBody({
    payment_method: 'boleto',
    person: {
      document_number: '11.222.333/0001-81',
      address_street: 'Avenida Paulista',
      address_number: '1000',
      address_postal_code: '01310-100',
      address_city: 'São Paulo',
      address_state: 'SP',
      address_country: 'BR',
    },
    ...overrides,
  });

function strip(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

async function start(body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await gw.post('/v1/authorise', strip(body));
  assert.equal(res.statusCode, 200, res.body);
  assert.match(res.headers['content-type'] ?? '', /xml/);
  return readXml(res);
}

const page = (issuer_url: string) => gw.app.inject({ method: 'GET', url: pathOf(issuer_url), headers: { 'accept-language': 'en' } });
const answer = (issuer_url: string, form: Record<string, string>) =>
  gw.app.inject({
    method: 'POST',
    url: pathOf(issuer_url),
    payload: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

async function payload(transaction_id: string, type: string): Promise<Record<string, any>> {
  const row = await gw.runtime.store.db
    .selectFrom('events')
    .selectAll()
    .where('object_id', '=', transaction_id)
    .where('event_type', '=', type)
    .executeTakeFirstOrThrow();
  assert.equal(row.notify_url, NOTIFY_URL);
  return JSON.parse(row.payload).data;
}

describe('the APM answer (docs/contract.md §15)', () => {
  test('Pix: XML respon with issuer_url, order_status 2, 0003, signed; the order is 1000 with a payment.pending event', async () => {
    const client = gw.client();
    const body = pixBody();
    const { merchant_id: _m, account_id: _a, ...request } = body;
    const x = await client.authoriseApm(request as never); // the client verifies the signature
    assert.deepEqual(Object.keys(x).sort(), [
      'account_id',
      'amount',
      'currency',
      'encryption_data',
      'issuer_url',
      'merchant_id',
      'order_no',
      'order_status',
      'result_info',
      'transaction_id',
    ]);
    assert.equal(x.order_status, '2');
    assert.equal(x.result_info, '0003:Pending shopper action');
    assert.equal(x.amount, '120.50');
    assert.match(x.issuer_url, /\/issuer\/[A-Za-z0-9_-]{32}$/);
    const order = await orderOf(gw, x.transaction_id);
    assert.equal(order.payment_status, '1000');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.pending']);
    const stored = await gw.runtime.store.db
      .selectFrom('apm_issuer_pages')
      .selectAll()
      .where('transaction_id', '=', x.transaction_id)
      .executeTakeFirstOrThrow();
    assert.ok(!x.issuer_url.includes(stored.id_hash), 'the stored id is a hash, not the URL’s secret');
    // The document number is never echoed anywhere the merchant or a log reads.
    assert.ok(!JSON.stringify(order).includes('529.982') && !JSON.stringify(order).includes('52998224725'), 'no CPF in the order record');
  });

  test('the same body again gets the same answer; another body with the order_no gets 1011', async () => {
    const body = pixBody();
    const a = await start(body);
    const b = await start(body);
    assert.equal(b.issuer_url, a.issuer_url);
    assert.equal(b.transaction_id, a.transaction_id);
    const c = await start({ ...body, amount: '1.00' });
    assert.equal(c.result_info, '1011:Duplicate order');
    assert.equal(c.issuer_url, '');
  });

  test('10 concurrent identical starts reach the processor once; every answer is the winner’s (docs/contract.md §20)', async () => {
    const deps = gw.runtime.deps;
    const original = deps.processorFor;
    let starts = 0;
    deps.processorFor = (account, want) => {
      const p = original(account, want);
      if (!p?.startApm) return p;
      const startApm = p.startApm.bind(p);
      const slow: NonNullable<typeof p.startApm> = async (input, call) => {
        starts++;
        await new Promise((r) => setTimeout(r, 50));
        return startApm(input, call);
      };
      return Object.assign(Object.create(p), { startApm: slow });
    };
    try {
      const body = pixBody();
      const answers = await Promise.all(Array.from({ length: 10 }, () => start(body)));
      assert.equal(starts, 1);
      assert.deepEqual(new Set(answers.map((a) => `${a.result_info} ${a.transaction_id} ${a.issuer_url}`)).size, 1);
      assert.equal(answers[0]?.result_info, '0003:Pending shopper action');
    } finally {
      deps.processorFor = original;
    }
  });

  test('a start whose process died at the processor holds the order_no until the sweeper closes it a minute past its deadline; then it can start', async () => {
    const deps = gw.runtime.deps;
    const timeout = deps.settings.processor_timeout_ms;
    deps.settings.processor_timeout_ms = 200;
    try {
      const body = pixBody();
      const held = newAttempt(
        {
          account_id: gw.merchant.account_id,
          connector: 'sandbox',
          operation: 'apm_start',
          object_id: 'pay_dead',
          amount_minor: 12050,
          currency: 'BRL',
          claim_key: apmClaim(gw.merchant.account_id, String(body.order_no)),
        },
        deps.now(),
        200,
      );
      await gw.runtime.store.write(
        new WriteUnit(gw.runtime.store.engine).insertRows('processor_attempts', [{ ...held, next_check_at: held.deadline_at + ABANDONED_START_MS }]),
      );
      const refused = await start(body);
      assert.equal(refused.return_message, '1007:Processing error', 'not started: safe to retry');
      await sweepAttempts(deps, deps.now() + 30_000);
      assert.equal((await start(body)).return_message, '1007:Processing error', 'within the minute the claim stands');
      await sweepAttempts(deps, deps.now() + 61_000);
      const closed = await gw.runtime.store.db.selectFrom('processor_attempts').selectAll().where('attempt_id', '=', held.attempt_id).executeTakeFirstOrThrow();
      assert.deepEqual([closed.status, closed.claim_key], ['declined', null]);
      assert.equal((await start(body)).result_info, '0003:Pending shopper action');
    } finally {
      deps.settings.processor_timeout_ms = timeout;
    }
  });

  test('the stored request hash is the fingerprint of the body as sent (stored hashes stay valid); the order record keeps the bank', async () => {
    const body = strip(idealBody({ note: 'Mug' }));
    const x = await start(body);
    const row = await gw.runtime.store.db
      .selectFrom('payments')
      .select(['request_hash', 'details', 'amount_minor'])
      .where('transaction_id', '=', x.transaction_id)
      .executeTakeFirstOrThrow();
    assert.equal(row.request_hash, gw.runtime.keyring.fingerprint(canonicalString(body)));
    assert.equal(row.amount_minor, 2500);
    const details = JSON.parse(row.details) as Record<string, unknown>;
    assert.equal(details.bank_code, 'INGBNL2A');
    assert.equal(details.payment_method, 'ideal');
    assert.equal(details.note, 'Mug');
  });
});

describe('the sandbox issuer page', () => {
  test('Pix approve: the page (CSP, language, no CPF), 303 to return_url with signed fields, 3000, payment.succeeded, ledgered; single use', async () => {
    const x = await start(pixBody());
    const shown = await page(x.issuer_url);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.headers['content-security-policy'] as string, /default-src 'none'.*form-action 'self' https:\/\/shop\.example/);
    assert.match(shown.body, /<html lang="pt">/, 'default_lang of the payment chooses the language');
    assert.match(shown.body, /id="amount">R\$\u00a0120,50</, 'the amount as Portuguese writes it');
    assert.match(shown.body, /id="pix-code"/);
    assert.ok(!shown.body.includes('529.982') && !shown.body.includes('52998224725'), 'no CPF on the page');
    const token = formTokenOf(shown.body);

    const done = await answer(x.issuer_url, { form_token: token, outcome: 'approve' });
    assert.equal(done.statusCode, 303, done.body);
    const location = done.headers.location as string;
    assert.ok(location.startsWith('https://shop.example/back?cart=9&'), location);
    const back = gw.client().verifyReturn(location);
    assert.equal(back.order_status, '1');
    assert.equal(back.transaction_id, x.transaction_id);
    assert.equal(back.result_info, '0000:Success');
    const forged = location.replace('order_status=1', 'order_status=0');
    assert.throws(() => gw.client().verifyReturn(forged), SignatureVerificationError);

    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '3000');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.pending', 'payment.succeeded']);
    assert.equal((await payload(x.transaction_id, 'payment.succeeded')).payment_status, '3000');
    const postings = await gw.runtime.store.db.selectFrom('ledger_postings').select('posting_id').where('transaction_id', '=', x.transaction_id).execute();
    assert.ok(postings.length >= 1, 'the capture is ledgered');

    // Single use: the page is gone, a second submit changes nothing.
    assert.equal((await page(x.issuer_url)).statusCode, 410);
    const again = await answer(x.issuer_url, { form_token: token, outcome: 'decline' });
    assert.equal(again.statusCode, 410);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '3000');
  });

  test('iDEAL decline: 6000 with 1017, payment.failed, the bank shown; signed return with order_status 0', async () => {
    const x = await start(idealBody({ default_lang: 'nl' }));
    const shown = await page(x.issuer_url);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /<html lang="en">/, 'an unsupported default_lang falls back to Accept-Language');
    assert.match(shown.body, /id="bank">ING</);
    const done = await answer(x.issuer_url, { form_token: formTokenOf(shown.body), outcome: 'decline' });
    assert.equal(done.statusCode, 303);
    const back = gw.client().verifyReturn(done.headers.location as string);
    assert.equal(back.order_status, '0');
    assert.equal(back.result_info, '1017:Declined by the issuer');
    const order = await orderOf(gw, x.transaction_id);
    assert.equal(order.payment_status, '6000');
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.failed', 'payment.pending']);
  });

  test('Boleto: the slip with its digitable line and due date, no decline; paid later; refund follows the card rules', async () => {
    const x = await start(boletoBody());
    const shown = await page(x.issuer_url);
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /id="digitable-line">2379\d\.\d{5} \d{5}\.\d{6} \d{5}\.\d{6} \d \d{4}0000012050</);
    assert.ok(!shown.body.includes('id="decline"'));
    const token = formTokenOf(shown.body);
    assert.equal((await answer(x.issuer_url, { form_token: token, outcome: 'decline' })).statusCode, 403);
    gw.clock.advance(2 * 24 * 60 * MINUTE); // two days later, still before the deadline
    const paid = await answer(x.issuer_url, { form_token: token, outcome: 'approve' });
    assert.equal(paid.statusCode, 303);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '3000');

    const p = { transaction_id: x.transaction_id, order_no: x.order_no, currency: 'BRL', amount: '120.50' };
    const r1 = await refundBatch(gw, [item(p, { refund_amount: '20.50' })]);
    assert.equal(r1.refund_orders[0].refund_status, '1', JSON.stringify(r1));
    const r2 = await refundBatch(gw, [item(p, { refund_amount: '100.01' })]);
    assert.notEqual(r2.refund_orders[0].refund_status, '1', 'no refund beyond what was paid');
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '4100', 'partially refunded');
  });

  test('Boleto expiry: after 3 days the job expires it (7000, 1018, payment.expired) and the slip is gone', async () => {
    const x = await start(boletoBody());
    gw.clock.advance(3 * 24 * 60 * MINUTE + 1);
    assert.ok((await expireDue(gw.runtime.deps, gw.clock.now)) >= 1);
    const order = await orderOf(gw, x.transaction_id);
    assert.equal(order.payment_status, '7000');
    assert.match(JSON.stringify(order), /1018/);
    assert.deepEqual(await eventsOf(gw, x.transaction_id), ['payment.expired', 'payment.pending']);
    assert.equal((await payload(x.transaction_id, 'payment.expired')).payment_status, '7000');
    assert.equal((await page(x.issuer_url)).statusCode, 410);
  });

  test('Pix opened after its 30 minutes: the page expires the payment itself (410, 7000)', async () => {
    const x = await start(pixBody());
    const token = formTokenOf((await page(x.issuer_url)).body);
    gw.clock.advance(30 * MINUTE);
    assert.equal((await answer(x.issuer_url, { form_token: token, outcome: 'approve' })).statusCode, 410);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '7000');
  });

  test('manual capture: approval authorises (2000), the merchant captures it', async () => {
    const m = await gw.newMerchant({ capture_method: 'manual' });
    const body = pixBody({ merchant_id: m.merchant_id, account_id: m.account_id });
    const x = readXml(await gw.post('/v1/authorise', strip(body), { merchant: m }));
    const shown = await page(x.issuer_url);
    await answer(x.issuer_url, { form_token: formTokenOf(shown.body), outcome: 'approve' });
    assert.equal((await orderOf(gw, x.transaction_id, m)).payment_status, '2000');
    const p = { transaction_id: x.transaction_id, order_no: x.order_no, currency: 'BRL', amount: '120.50' };
    const c = await captureBatch(gw, [item(p)], m);
    assert.equal(c.capture_orders[0].capture_status, '1', JSON.stringify(c));
    assert.equal((await orderOf(gw, x.transaction_id, m)).payment_status, '3000');
  });

  test('the merchant cancels a pending APM payment: 5000, and the issuer page is gone', async () => {
    const x = await start(pixBody());
    const p = { transaction_id: x.transaction_id, order_no: x.order_no, currency: 'BRL', amount: '120.50' };
    const res = await gw.post('/v1/cancel', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, cancel_orders: [item(p)] });
    assert.equal(JSON.parse(res.body).cancel_orders[0].cancel_status, '1', res.body);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '5000');
    assert.equal((await page(x.issuer_url)).statusCode, 410);
  });

  test('unknown, malformed and forged requests: 404, 403, 400; nothing changes', async () => {
    const x = await start(pixBody());
    assert.equal((await page(`http://x/issuer/${'A'.repeat(32)}`)).statusCode, 404);
    assert.equal((await page('http://x/issuer/short')).statusCode, 404);
    assert.equal((await page(`http://x/issuer/${'A'.repeat(65)}`)).statusCode, 400);
    assert.equal((await answer(x.issuer_url, { form_token: 'x'.repeat(32), outcome: 'approve' })).statusCode, 403);
    assert.equal((await answer(x.issuer_url, { form_token: 'x' })).statusCode, 400);
    assert.equal((await answer(x.issuer_url, { form_token: 'x', outcome: 'steal' })).statusCode, 400);
    assert.equal((await orderOf(gw, x.transaction_id)).payment_status, '1000');
  });
});

describe('bad input (docs/contract.md §15): 404 for a method not offered, 400 naming the field, nothing stored', () => {
  const cases: Array<[string, () => Record<string, unknown>, number, string]> = [
    ['unknown method', () => pixBody({ payment_method: 'bitcoin' }), 404, 'payment_method'],
    ['Pix in USD', () => pixBody({ currency: 'USD' }), 404, 'payment_method'],
    ['Pix for a Dutch billing address', () => pixBody({ billing_country: 'NL' }), 404, 'payment_method'],
    ['Pix without billing_country', () => pixBody({ billing_country: undefined }), 404, 'payment_method'],
    ['malformed payment_method', () => pixBody({ payment_method: 'PIX!' }), 400, 'payment_method'],
    ['Pix without a document', () => pixBody({ person: { email: 'a@example.com' } }), 400, 'person.document_number'],
    [
      'Pix with a CPF whose check digits are wrong',
      () => pixBody({ person: { document_number: '529.982.247-24', email: 'a@example.com' } }),
      400,
      'person.document_number',
    ],
    ['Pix without e-mail', () => pixBody({ person: { document_number: CPF } }), 400, 'person.email'],
    ['Pix with a bad e-mail', () => pixBody({ person: { document_number: CPF, email: 'not-mail' } }), 400, 'person.email'],
    ['Pix without person', () => pixBody({ person: undefined }), 400, 'person.document_number'],
    ['person not an object', () => pixBody({ person: 'me' }), 400, 'person'],
    [
      'Boleto without a postal code',
      () =>
        boletoBody({
          person: { document_number: CPF, address_street: 'R', address_number: '1', address_city: 'SP', address_state: 'SP', address_country: 'BR' },
        }),
      400,
      'person.address_postal_code',
    ],
    [
      'Boleto with a bad state',
      () =>
        boletoBody({
          person: {
            document_number: CPF,
            address_street: 'R',
            address_number: '1',
            address_postal_code: '01310-100',
            address_city: 'SP',
            address_state: 'XX',
            address_country: 'BR',
          },
        }),
      400,
      'person.address_state',
    ],
    ['iDEAL without bank_code', () => idealBody({ bank_code: undefined }), 400, 'bank_code'],
    ['iDEAL with a bank not on the list', () => idealBody({ bank_code: 'FAKENL2A' }), 400, 'bank_code'],
    ['card fields with payment_method', () => pixBody({ card: '4242424242424242' }), 400, 'card'],
    ['no return_url', () => pixBody({ return_url: undefined }), 400, 'return_url'],
    ['a subscription', () => pixBody({ subscription: { contract_name: 'p', interval: 'month' } }), 400, 'subscription'],
    ['amount not a decimal', () => pixBody({ amount: '12,00' }), 400, 'amount'],
  ];
  for (const [name, make, status, field] of cases) {
    test(`${name}: ${status} naming ${field}`, async () => {
      const body = strip(make());
      const before = await gw.runtime.store.db
        .selectFrom('events')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      const res = await gw.post('/v1/authorise', body);
      assert.equal(res.statusCode, status, res.body);
      assert.match(res.body, status === 404 ? /0404:Record not found/ : /0400:Invalid input/);
      assert.ok(res.body.includes(field), `the answer names ${field}: ${res.body}`);
      assert.ok(!res.body.includes('529.982.247') && !res.body.includes('11.222.333'), 'no document number in the answer');
      const stored = await gw.runtime.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('order_no', '=', body.order_no as string)
        .execute();
      assert.deepEqual(stored, [], 'no payment stored');
      const afterCount = await gw.runtime.store.db
        .selectFrom('events')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(afterCount.n), Number(before.n), 'no event');
    });
  }

  test('a method the operator disabled for the account: 404', async () => {
    const m = await gw.newMerchant();
    await setMethodsEnabled(gw.runtime.store, m.account_id, ['pix'], false, gw.clock.now);
    const body = pixBody({ merchant_id: m.merchant_id, account_id: m.account_id });
    const res = await gw.post('/v1/authorise', body, { merchant: m });
    assert.equal(res.statusCode, 404, res.body);
    assert.match(res.body, /not offered by this account/);
  });

  test('a method not offered is 404 before its missing fields or return_url are named', async () => {
    const m = await gw.newMerchant();
    await setMethodsEnabled(gw.runtime.store, m.account_id, ['ideal'], false, gw.clock.now);
    const body = strip(idealBody({ merchant_id: m.merchant_id, account_id: m.account_id, bank_code: undefined, return_url: undefined }));
    const res = await gw.post('/v1/authorise', body, { merchant: m });
    assert.equal(res.statusCode, 404, res.body);
    assert.match(res.body, /not offered by this account/);
  });
});
