// Goal: POST /v1/paymentmethods, through the public API on the engine under test, ranks the
// methods that apply to a purchase by the account's own measured approval: history built
// with real payments (sandbox success and decline cards) moves the brands apart; only the
// account's own recent attempts that reached an outcome count; `card_bin` narrows the cards
// to its brand; the alternative methods follow currency, country and the operator's
// switches; bad input is a 400 naming the field; and every answer is what the published
// document says.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CompiledQuery } from 'kysely';
import { InvalidRequestError, type PaymentMethodsAnswer, type PaymentMethodsRequest, PermissionError, type TollgateClient } from '../client/index.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { paymentRequest, type TestGateway, testGateway } from '../test/harness.js';
import { setMethodsEnabled } from './enablement.js';
import { HISTORY_LIMIT, HISTORY_WINDOW_MS, methodHistory, recentAttempts } from './history.js';

type Json = Record<string, any>;

let gw: TestGateway;
let doc: Json;
before(async () => {
  gw = await testGateway();
  doc = (await gw.app.inject('/openapi.json')).json();
});
after(async () => {
  await gw.close();
});

const US: PaymentMethodsRequest = { currency: 'USD', amount: '10.00', billing_country: 'US' };
const BR: PaymentMethodsRequest = { currency: 'BRL', amount: '50.00', billing_country: 'BR' };
const NL: PaymentMethodsRequest = { currency: 'EUR', amount: '25.00', billing_country: 'NL' };

/** [payment_method, type, approval_rate, sample_size, recommended] per ranked method. */
const rows = (a: PaymentMethodsAnswer) => a.payment_methods.map((m) => [m.payment_method, m.type, m.approval_rate, m.sample_size, m.recommended]);
const names = (a: PaymentMethodsAnswer) => a.payment_methods.map((m) => m.payment_method);

let shopper = 0;
/** A payment by a new shopper (own e-mail and IP), so the velocity rules never count across them. */
async function payWith(client: TollgateClient, card: string, extra: Json = {}) {
  const n = shopper++;
  return client.authorise(paymentRequest({ card, shopper_email: `pm${n}@example.com`, shopper_ip: `198.18.${n >> 8}.${n & 255}`, ...extra }));
}

async function freshMerchant(): Promise<{ m: CreatedMerchant; client: TollgateClient }> {
  const m = await gw.newMerchant();
  return { m, client: gw.client(m) };
}

/** Holds an answer to the published document: status, media type, schema, nothing undeclared. */
function holdToDocument(res: { statusCode: number; headers: Record<string, string>; body: string }): Json {
  const op = doc.paths['/v1/paymentmethods'].post;
  const media = String(res.headers['content-type']).split(';')[0] as string;
  const schema = op.responses[String(res.statusCode)]?.content?.[media]?.schema;
  assert.ok(schema, `the document has ${res.statusCode} ${media}: ${res.body}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validate = ajv.compile(schema);
  const value = JSON.parse(res.body) as Json;
  assert.ok(validate(value), `${ajv.errorsText(validate.errors)}\n${res.body}`);
  const declared = (v: Json, s: Json): string[] =>
    Object.entries(v).flatMap(([k, x]) =>
      !(k in (s.properties ?? {}))
        ? [k]
        : Array.isArray(x)
          ? x.flatMap((i) => (i && typeof i === 'object' ? declared(i, s.properties[k].items) : []))
          : x && typeof x === 'object'
            ? declared(x, s.properties[k])
            : [],
    );
  assert.deepEqual(declared(value, schema), [], 'every field is in the document');
  return value;
}

describe('a new test account: every method at its prior', () => {
  test('USD in the US: the five card brands at 0.8500, sample 0, all recommended; no alternative method', async () => {
    const { client } = await freshMerchant();
    const a = await client.paymentMethods(US);
    assert.deepEqual(rows(a), [
      ['visa', 'card', '0.8500', '0', '1'],
      ['mastercard', 'card', '0.8500', '0', '1'],
      ['american-express', 'card', '0.8500', '0', '1'],
      ['discover', 'card', '0.8500', '0', '1'],
      ['jcb', 'card', '0.8500', '0', '1'],
    ]);
    assert.deepEqual([a.return_status, a.return_message, a.currency, a.amount, a.billing_country], ['1', 'OK', 'USD', '10.00', 'US']);
  });

  test('BRL in Brazil adds Pix and Boleto at 0.7000; EUR in the Netherlands adds iDEAL; EUR in Germany none', async () => {
    const { client } = await freshMerchant();
    assert.deepEqual((await client.paymentMethods(BR)).payment_methods.slice(5), [
      { payment_method: 'pix', type: 'apm', approval_rate: '0.7000', sample_size: '0', recommended: '0' },
      { payment_method: 'boleto', type: 'apm', approval_rate: '0.7000', sample_size: '0', recommended: '0' },
    ]);
    assert.deepEqual(names(await client.paymentMethods(NL)).slice(5), ['ideal']);
    assert.deepEqual(names(await client.paymentMethods({ ...NL, billing_country: 'DE' })).slice(5), []);
    assert.deepEqual(names(await client.paymentMethods({ ...BR, currency: 'USD', amount: '10.00' })).slice(5), [], 'Pix takes BRL only');
  });

  test('a method the operator switched off is not listed; switched on again, it is', async () => {
    const { m, client } = await freshMerchant();
    await setMethodsEnabled(gw.runtime.store, m.account_id, ['pix'], false, gw.clock.now);
    assert.deepEqual(names(await client.paymentMethods(BR)).slice(5), ['boleto']);
    await setMethodsEnabled(gw.runtime.store, m.account_id, ['pix'], true, gw.clock.now);
    assert.deepEqual(names(await client.paymentMethods(BR)).slice(5), ['pix', 'boleto']);
  });

  test('a live account without a processor is refused as a payment would be (403, 1016)', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const res = await gw.post('/v1/paymentmethods', { merchant_id: live.merchant_id, account_id: live.account_id, ...US }, { merchant: live });
    assert.equal(res.statusCode, 403);
    assert.equal(holdToDocument(res).return_message, '1016:No processor configured for live mode');
    await assert.rejects(gw.client(live).paymentMethods(US), PermissionError);
  });
});

describe('ranking by measured history', () => {
  let m: CreatedMerchant;
  let client: TollgateClient;
  before(async () => {
    ({ m, client } = await freshMerchant());
    // Mastercard: 8 approvals of 8. Visa: 2 approvals, 6 issuer declines.
    for (let i = 0; i < 8; i++) assert.equal((await payWith(client, '5555555555554444')).result_info, '0000:Success');
    for (const card of ['4242424242424242', '4242424242424242']) assert.equal((await payWith(client, card)).order_status, '1');
    const declines = ['4000000000000002', '4000000000009995', '4000000000009987', '4000000000009979', '4000000000000127', '4000000000000119'];
    for (const card of declines) assert.equal((await payWith(client, card)).order_status, '0', card);
  });

  test('two brands with different decline rates rank apart, the untried ones between them at the prior', async () => {
    const a = await client.paymentMethods(US);
    assert.deepEqual(rows(a), [
      ['mastercard', 'card', '0.8929', '8', '1'], // (17 + 8) / (20 + 8)
      ['american-express', 'card', '0.8500', '0', '0'],
      ['discover', 'card', '0.8500', '0', '0'],
      ['jcb', 'card', '0.8500', '0', '0'],
      ['visa', 'card', '0.6786', '8', '0'], // (17 + 2) / (20 + 8)
    ]);
  });

  test('card_bin ranks only its brand among the cards (6 or 8 digits); the APMs still apply', async () => {
    assert.deepEqual(rows(await client.paymentMethods({ ...US, card_bin: '555555' })), [['mastercard', 'card', '0.8929', '8', '1']]);
    assert.deepEqual(rows(await client.paymentMethods({ ...US, card_bin: '40000000' })), [['visa', 'card', '0.6786', '8', '1']]);
    assert.deepEqual(rows(await client.paymentMethods({ ...US, card_bin: '36000000' })), [['diners-club', 'card', '0.8500', '0', '1']]);
    assert.deepEqual(rows(await client.paymentMethods({ ...BR, card_bin: '400000' })), [
      ['pix', 'apm', '0.7000', '0', '1'],
      ['boleto', 'apm', '0.7000', '0', '1'],
      ['visa', 'card', '0.6786', '8', '0'],
    ]);
  });

  test('another merchant’s history never counts', async () => {
    const other = await freshMerchant();
    assert.deepEqual(
      rows(await other.client.paymentMethods(US)).map((r) => r[3]),
      ['0', '0', '0', '0', '0'],
    );
    for (let i = 0; i < 3; i++) await payWith(other.client, '4000000000000002');
    assert.deepEqual(rows(await client.paymentMethods({ ...US, card_bin: '424242' })), [['visa', 'card', '0.6786', '8', '1']], 'unchanged');
  });

  test('device_type is accepted; the rates are the account’s over every device', async () => {
    assert.deepEqual(rows(await client.paymentMethods({ ...US, card_bin: '424242', device_type: 'mobile' })), [['visa', 'card', '0.6786', '8', '1']]);
  });

  test('a form or XML body gets the same signed answer as JSON', async () => {
    const body = { merchant_id: m.merchant_id, account_id: m.account_id, ...US, card_bin: '555555' };
    for (const format of ['form', 'xml'] as const) {
      const res = await gw.post('/v1/paymentmethods', body, { merchant: m, format });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(holdToDocument(res).payment_methods, [
        { payment_method: 'mastercard', type: 'card', approval_rate: '0.8929', sample_size: '8', recommended: '1' },
      ]);
    }
  });
});

describe('what counts as an attempt', () => {
  test('pending, risk-refused and mistyped payments are not counted; approved-and-held and expired cards are', async () => {
    const { client } = await freshMerchant();
    const visa = async () => (await client.paymentMethods({ ...US, card_bin: '424242' })).payment_methods[0]!;
    assert.equal((await payWith(client, '4242424242424242')).order_status, '1');
    assert.deepEqual([(await visa()).sample_size, (await visa()).approval_rate], ['1', '0.8571']); // 18/21

    assert.equal((await payWith(client, '4000000000003220')).order_status, '2', 'a 3-D Secure challenge pends');
    assert.equal((await payWith(client, '4100000000000019')).result_info, '1008:Rejected by risk control');
    assert.equal((await payWith(client, '4242424242424241')).result_info, '1010:Invalid card number');
    assert.equal((await visa()).sample_size, '1', 'none of the three counts');

    assert.equal((await payWith(client, '4000000000009235')).order_status, '3', 'approved by the issuer, held for review');
    assert.equal((await payWith(client, '4000000000000069')).result_info, '1005:Expired card');
    assert.deepEqual([(await visa()).sample_size, (await visa()).approval_rate], ['3', '0.8261']); // (17 + 2) / (20 + 3)
  });

  test('the window: attempts older than 30 days no longer count', async () => {
    const { client } = await freshMerchant();
    await payWith(client, '4000000000000002');
    const visa = async () => (await client.paymentMethods({ ...US, card_bin: '424242' })).payment_methods[0]!;
    assert.equal((await visa()).sample_size, '1');
    gw.clock.advance(HISTORY_WINDOW_MS - 1000);
    assert.equal((await visa()).sample_size, '1');
    gw.clock.advance(2000);
    assert.deepEqual([(await visa()).sample_size, (await visa()).approval_rate], ['0', '0.8500']);
  });
});

describe('the history read', () => {
  /** A payments row as the APM flow writes one: `kind` apm, the method in `card_brand`. */
  async function apmRow(m: CreatedMerchant, n: number, method: string, status: PaymentRow['status'], result_code: string, created_at: number) {
    const row: PaymentRow = {
      transaction_id: `T-APM-${m.account_id}-${n}`,
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      order_no: `APM-${n}`,
      kind: 'apm',
      livemode: 0,
      currency: 'BRL',
      amount_minor: 5000,
      authorised_minor: 0,
      captured_minor: status === 'captured' ? 5000 : 0,
      refunded_minor: 0,
      status,
      capture_method: 'automatic',
      result_code,
      card_id: null,
      card_brand: method,
      card_masked: '',
      connector: 'sandbox',
      is3ds: 0,
      threeds_result: '',
      risk_score: null,
      risk_action: '',
      risk_reasons: '[]',
      notify_url: '',
      return_url: '',
      request_hash: '',
      details: '{}',
      answer: '',
      created_at,
      updated_at: created_at,
      expires_at: null,
    };
    await gw.runtime.store.transaction(async (tx) => {
      await tx.insertInto('payments').values(row).execute();
    });
  }

  test('APM payments count under their method: paid approves, declined and expired fail, pending waits', async () => {
    const { m, client } = await freshMerchant();
    const now = gw.clock.now;
    let n = 0;
    for (let i = 0; i < 6; i++) await apmRow(m, n++, 'pix', 'captured', '0000', now - 1000 - i);
    await apmRow(m, n++, 'pix', 'declined', '1002', now - 2000);
    await apmRow(m, n++, 'pix', 'expired', '0003', now - 3000);
    await apmRow(m, n++, 'pix', 'pending', '0003', now - 4000);
    await apmRow(m, n++, 'boleto', 'expired', '0003', now - 5000);
    const a = await client.paymentMethods({ ...BR, card_bin: '424242' });
    assert.deepEqual(rows(a), [
      ['visa', 'card', '0.8500', '0', '1'],
      ['pix', 'apm', '0.7143', '8', '0'], // (14 + 6) / (20 + 8): the pending one waits
      ['boleto', 'apm', '0.6667', '1', '0'], // 14 / (20 + 1)
    ]);
  });

  test('the read is a backward range of the covering index payments_method_recent', async () => {
    const store = gw.runtime.store;
    const q = recentAttempts(store.db, gw.merchant.account_id, 'visa', gw.clock.now).compile();
    const plan =
      store.engine === 'sqlite'
        ? (await store.db.executeQuery(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${q.sql}`, [...q.parameters]))).rows
        : await store.transaction(async (tx) => {
            // The test tables are tiny; the question is which index fits, not whether to scan.
            await tx.executeQuery(CompiledQuery.raw('SET LOCAL enable_seqscan = off'));
            return (await tx.executeQuery(CompiledQuery.raw(`EXPLAIN ${q.sql}`, [...q.parameters]))).rows;
          });
    const text = JSON.stringify(plan);
    // On PostgreSQL the test's tiny table leaves two indexes of equal cost: this one, and the
    // portal's (account_id, created_at, …), which reads the same bounded range backward and
    // filters the rest. Either is a bounded backward range without a sort; at size the
    // planner's statistics pick the covering one (the card brand narrows the range).
    assert.match(
      text,
      store.engine === 'sqlite' ? /COVERING INDEX payments_method_recent/ : /Index (Only )?Scan Backward using payments_(method_recent|portal_created)/,
      text,
    );
    assert.doesNotMatch(text, /TEMP B-TREE|Sort/, 'no sort: the index gives the order');
  });

  test(`bounded: at most the latest ${HISTORY_LIMIT} attempts of a method, newest first`, async () => {
    const { m } = await freshMerchant();
    const now = gw.clock.now;
    // Three old declines, then five newer approvals: a limit of 5 sees only the approvals.
    for (let i = 0; i < 3; i++) await apmRow(m, i, 'ideal', 'declined', '1002', now - 10_000 + i);
    for (let i = 3; i < 8; i++) await apmRow(m, i, 'ideal', 'captured', '0000', now - 5_000 + i);
    const key = { payment_method: 'ideal', type: 'apm' as const };
    assert.deepEqual(await methodHistory(gw.runtime.store.db, m.account_id, key, now, 5), { ...key, attempts: 5, approved: 5 });
    assert.deepEqual(await methodHistory(gw.runtime.store.db, m.account_id, key, now), { ...key, attempts: 8, approved: 5 });
    assert.deepEqual(await methodHistory(gw.runtime.store.db, m.account_id, { ...key, payment_method: 'pix' }, now), {
      ...key,
      payment_method: 'pix',
      attempts: 0,
      approved: 0,
    });
  });
});

describe('bad input: a 400 naming the field, in the published refusal record', () => {
  test('a table of bodies', async () => {
    const m = gw.merchant;
    const base = { merchant_id: m.merchant_id, account_id: m.account_id, ...US };
    const table: Array<[Json, string, RegExp]> = [
      [{ currency: undefined }, 'currency', /is required/],
      [{ currency: 'usd' }, 'currency', /three-letter uppercase/],
      [{ currency: 'ABC' }, 'currency', /not a supported ISO 4217 currency/],
      [{ currency: 'XAU' }, 'currency', /not a supported ISO 4217 currency/],
      [{ amount: undefined }, 'amount', /is required/],
      [{ amount: '10.0' }, 'amount', /exactly 2 decimal places/],
      [{ amount: '10.00', currency: 'JPY' }, 'amount', /exactly 0 decimal places/],
      [{ amount: '0.00' }, 'amount', /greater than zero/],
      [{ amount: '-1.00' }, 'amount', /decimal/],
      [{ billing_country: undefined }, 'billing_country', /is required/],
      [{ billing_country: 'us' }, 'billing_country', /two-letter uppercase/],
      [{ billing_country: 'ZZ' }, 'billing_country', /not an ISO 3166-1 country code/],
      [{ card_bin: '42424' }, 'card_bin', /6 to 8 digits/],
      [{ card_bin: '424242424' }, 'card_bin', /6 to 8 digits/],
      [{ card_bin: '999999' }, 'card_bin', /any brand/],
      [{ device_type: 'x'.repeat(33) }, 'device_type', /32 characters/],
      [{ payment_method: 'pix' }, 'payment_method', /not a known field/],
    ];
    for (const [change, field, words] of table) {
      const body: Json = { ...base, ...change };
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
      const res = await gw.post('/v1/paymentmethods', body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(change)}: ${res.body}`);
      const x = holdToDocument(res);
      assert.equal(x.return_message, '0400:Invalid input');
      assert.equal(x.error_field, field, JSON.stringify(change));
      assert.match(x.error_message, words, JSON.stringify(change));
    }
  });

  test('unsigned or signed with another key: 401; through the client: typed errors', async () => {
    const body = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...US };
    const res = await gw.post('/v1/paymentmethods', body, { sign: false });
    assert.equal(res.statusCode, 401);
    assert.equal(holdToDocument(res).return_message, '0401:Invalid signature');
    const other = await gw.newMerchant();
    assert.equal((await gw.post('/v1/paymentmethods', body, { merchant: other })).statusCode, 401, "another merchant's key");
    await assert.rejects(
      gw.client().paymentMethods({ ...US, currency: 'EURO' }),
      (e: unknown) => e instanceof InvalidRequestError && e.error_field === 'currency',
    );
  });

  test('a 200 answer is the published record, signed', async () => {
    const res = await gw.post('/v1/paymentmethods', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...BR });
    assert.equal(res.statusCode, 200, res.body);
    const x = holdToDocument(res);
    assert.match(x.encryption_data, /^[0-9a-f]{64}$/);
    assert.equal(x.payment_methods.length, 7);
  });
});
