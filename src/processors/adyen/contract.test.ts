// Contract tests of the Adyen connector against Adyen's own published documents (issue 32
// item 4; trimmed copies in vendor/, MIT): every request the connector sends validates
// against its operation's request schema (Ajv, with the readings of ../shared/vendor/README.md:
// `oneOf` as `anyOf`, `nullable` as "or null"), every answer example of those operations and
// every webhook example reads into the outcome it means, and the faults (credentials
// refused, 5xx, malformed JSON, no answer) give the outcomes docs/processors.md promises,
// with no card number, security code or key in any reason or log line.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import fc from 'fast-check';
import { ROOT } from '../../test/process.js';
import type { AuthoriseInput, Processor, ProcessorCall } from '../types.js';
import { createAdyenProcessor } from './connector.js';
import { type AdyenMock, startAdyenMock } from './mock.js';
import { type NotificationRequestItem, parseAdyenWebhook, signItem } from './webhooks.js';
import { adyenAmount, authoriseOfAnswer, declineCodeOf, operationOfAnswer } from './wire.js';

const VENDOR = path.join(ROOT, 'src/processors/adyen/vendor');
const checkout = JSON.parse(fs.readFileSync(path.join(VENDOR, 'checkout-v71.json'), 'utf8'));
const webhooks = JSON.parse(fs.readFileSync(path.join(VENDOR, 'webhooks-v1.json'), 'utf8'));

/** OpenAPI 3.0 schema text as JSON Schema: `oneOf` read as `anyOf`, `nullable` as "or null". */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k === 'oneOf' ? 'anyOf' : k] = k === 'example' || k === 'examples' ? undefined : jsonSchema(v);
  if (out.nullable === true) {
    delete out.nullable;
    return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
// ajv-formats is CommonJS: its default export is the module object under node's ESM.
const addFormats = ((formats as unknown as { default?: typeof formats }).default ?? formats) as unknown as (a: Ajv) => void;
addFormats(ajv);
ajv.addSchema({ $id: 'checkout', components: { schemas: jsonSchema(checkout.components.schemas) } });
const requestSchema = (p: string) => {
  const ref = checkout.paths[p].post.requestBody.content['application/json'].schema.$ref as string;
  const v = ajv.getSchema(`checkout${ref}`);
  assert.ok(v, ref);
  return v;
};
const example = (doc: any, ref: string) => doc.components.examples[ref.split('/').pop() as string].value;
const responseExamples = (p: string, status: string): Record<string, any> =>
  Object.fromEntries(
    Object.entries(checkout.paths[p].post.responses[status].content['application/json'].examples as Record<string, { $ref: string }>).map(([k, v]) => [
      k,
      example(checkout, v.$ref),
    ]),
  );

const API_KEY = 'AQE_test_api_key_9f3a';
const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';
const MERCHANT = 'TollgateTestECOM';
const PAN = '4111111111111111';
const CVC = '737';

let mock: AdyenMock;
let adyen: Processor;
const logged: string[] = [];
let seq = 0;
const call = (ms = 5_000): ProcessorCall => ({ attempt_id: `att_contract_${++seq}`, deadline_at: Date.now() + ms, signal: AbortSignal.timeout(ms) });
const card = (pan = PAN) => ({ pan, brand: 'visa', exp_month: 3, exp_year: 2030, security_code: CVC });
const input = (o: Partial<AuthoriseInput> = {}): AuthoriseInput => ({
  transaction_id: `pay_${seq}`,
  amount_minor: 1000 as never,
  currency: 'EUR',
  card: card(),
  ...o,
});

before(async () => {
  mock = await startAdyenMock({ api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
  adyen = createAdyenProcessor({
    base_url: mock.url,
    api_key: API_KEY,
    merchant_account: MERCHANT,
    hmac_key: HMAC_KEY,
    log: (fields, message) => logged.push(JSON.stringify({ ...fields, message })),
  });
});
after(async () => {
  await mock.close();
  const all = logged.join('\n');
  for (const secret of [PAN, CVC, API_KEY, HMAC_KEY]) assert.ok(!all.includes(secret), 'no card number, security code or key in a log line');
});

describe('every request the connector sends validates against its operation in CheckoutService-v71', () => {
  test('payments (plain, manual capture, 3-D Secure data, merchant-initiated), captures, cancels, refunds, cancels by our reference', async () => {
    const from = mock.requests.length;
    const plain = await adyen.authorise(input(), call());
    assert.equal(plain.kind, 'approved');
    const manual = await adyen.authorise(input({ capture_method: 'manual' }), call());
    const threeds = { eci: '05', cavv: 'AAABBEg0VhI0VniQEjRWAAAAAAA=', xid: 'ODUzNTYzOTcwODU5NzY3Qw==', ds_trans_id: 'f25084f0-5b16-4c0a-ae5d-b24808a95e4b' };
    assert.equal((await adyen.authorise(input({ threeds }), call())).kind, 'approved');
    const mit = { ...card(), security_code: undefined };
    assert.equal((await adyen.authorise(input({ card: mit, merchant_initiated: true }), call())).kind, 'approved');
    assert.equal(manual.kind, 'approved');
    const reference = manual.kind === 'approved' ? manual.reference : '';
    assert.equal((await adyen.capture({ transaction_id: 'pay_m', reference, amount_minor: 600 as never, currency: 'EUR' }, call())).kind, 'pending');
    assert.equal(
      (await adyen.refund({ transaction_id: 'pay_m', refund_id: 'ref_1', reference, amount_minor: 200 as never, currency: 'EUR' }, call())).kind,
      'pending',
    );
    assert.equal((await adyen.cancel({ transaction_id: 'pay_m', reference }, call())).kind, 'pending');
    assert.equal((await adyen.cancel({ transaction_id: 'pay_1', reference: '' }, call())).kind, 'pending');
    // Adyen's own 3-D Secure: the redirect, the issuer's page, then /payments/details.
    const authentication = { return_url: 'https://gw.example/threeds/return/att_contract_x', required: true };
    const own = await adyen.authorise(input({ authentication }), call());
    assert.equal(own.kind, 'challenge_required');
    const back = await fetch(`${(own as { action: { url: string } }).action.url}?outcome=pass`, { redirect: 'manual' });
    const params = Object.fromEntries(new URL(String(back.headers.get('location'))).searchParams);
    assert.equal((await adyen.completeAuthentication?.({ transaction_id: 'pay_3ds', reference: '', params }, call()))?.kind, 'approved');

    const sent = mock.requests.slice(from);
    assert.deepEqual(
      sent.map((r) => r.path.replace(/\/payments\/[A-Z0-9]+\//, '/payments/{paymentPspReference}/')),
      [
        '/payments',
        '/payments',
        '/payments',
        '/payments',
        '/payments/{paymentPspReference}/captures',
        '/payments/{paymentPspReference}/refunds',
        '/payments/{paymentPspReference}/cancels',
        '/cancels',
        '/payments',
        '/payments/details',
      ],
    );
    for (const r of sent) {
      const op = r.path.replace(/\/payments\/[A-Z0-9]+\//, '/payments/{paymentPspReference}/');
      const validate = requestSchema(op);
      assert.ok(validate(r.body), `${op}: ${JSON.stringify(validate.errors)}`);
      const key = String(r.headers['idempotency-key'] ?? '');
      assert.match(key, /^att_contract_\d+$/, 'Idempotency-Key is the attempt id');
      assert.ok(key.length <= 64, 'the document allows 64 characters');
      assert.equal(r.headers['x-api-key'], API_KEY);
    }
    const [p0, p1, p2, p3] = sent.map((r) => r.body as Record<string, any>);
    assert.deepEqual(p0?.paymentMethod, { type: 'scheme', number: PAN, expiryMonth: '03', expiryYear: '2030', cvc: CVC });
    assert.deepEqual(p0?.amount, { currency: 'EUR', value: 1000 });
    assert.equal(p0?.additionalData, undefined, 'an automatic payment is captured by Adyen');
    assert.deepEqual(p1?.additionalData, { manualCapture: 'true' });
    assert.deepEqual(p2?.mpiData, {
      eci: '05',
      cavv: threeds.cavv,
      xid: threeds.xid,
      dsTransID: threeds.ds_trans_id,
      authenticationResponse: 'Y',
      directoryResponse: 'Y',
    });
    assert.deepEqual([p3?.shopperInteraction, p3?.recurringProcessingModel, p3?.paymentMethod.cvc], ['ContAuth', 'Subscription', undefined]);
    assert.equal((sent[5]?.body as Record<string, any> | undefined)?.reference, 'ref_1', 'a refund is named by our refund id');
    assert.deepEqual(sent[7]?.body, { merchantAccount: MERCHANT, paymentReference: 'pay_1', reference: 'pay_1' });
  });

  test('the validator is not blind: a body the document forbids fails', () => {
    const validate = requestSchema('/payments');
    assert.equal(
      validate({ amount: { currency: 'EUR', value: '10' }, merchantAccount: MERCHANT, reference: 'x', returnUrl: 'x', paymentMethod: { type: 'scheme' } }),
      false,
    );
    assert.equal(requestSchema('/cancels')({ merchantAccount: MERCHANT }), false, 'paymentReference is required');
  });
});

describe('the document’s answer examples read into the outcome they mean', () => {
  test('/payments 200: Authorised approves with its pspReference; the shopper actions decline 1007', () => {
    const seen = new Set<string>();
    for (const [name, body] of Object.entries(responseExamples('/payments', '200'))) {
      const o = authoriseOfAnswer(body);
      seen.add(body.resultCode);
      if (body.resultCode === 'Authorised') assert.deepEqual(o, { kind: 'approved', reference: body.pspReference }, name);
      else if (['RedirectShopper', 'IdentifyShopper', 'ChallengeShopper'].includes(body.resultCode))
        assert.deepEqual(o, { kind: 'declined', code: '1007', reference: body.pspReference ?? '' }, name);
      else if (['Pending', 'Received'].includes(body.resultCode)) assert.equal(o.kind, 'pending', name);
      else assert.fail(`${name}: resultCode ${body.resultCode} has no expectation here`);
    }
    assert.ok(seen.has('Authorised') && seen.has('RedirectShopper'), [...seen].join(','));
  });

  test('captures, cancels, refunds and cancels by reference 201: pending with the modification’s pspReference', () => {
    for (const p of [
      '/payments/{paymentPspReference}/captures',
      '/payments/{paymentPspReference}/cancels',
      '/payments/{paymentPspReference}/refunds',
      '/cancels',
    ])
      for (const [name, body] of Object.entries(responseExamples(p, '201')))
        assert.deepEqual(operationOfAnswer(body), { kind: 'pending', reference: body.pspReference }, `${p} ${name}`);
  });

  test('Refused by the refusal table; Error and anything unreadable are unknown', () => {
    assert.deepEqual(authoriseOfAnswer({ resultCode: 'Refused', refusalReasonCode: '12', pspReference: 'P1' }), {
      kind: 'declined',
      code: '1001',
      reference: 'P1',
    });
    assert.deepEqual(authoriseOfAnswer({ resultCode: 'Refused', refusalReasonCode: '24', pspReference: 'P2' }), {
      kind: 'declined',
      code: '1006',
      reference: 'P2',
    });
    assert.equal(declineCodeOf('5', 'LOST CARD'), '1003');
    assert.equal(declineCodeOf('25', 'Stolen card, pick up'), '1004');
    assert.equal(declineCodeOf('6'), '1005');
    assert.equal(declineCodeOf('9'), '1007');
    assert.equal(declineCodeOf('999'), '1002');
    assert.equal(declineCodeOf(undefined, 'CVC Declined'), '1006', 'a notification’s reason words');
    for (const b of [undefined, null, 'x', {}, { resultCode: 'Error', pspReference: 'P' }, { resultCode: 'Authorised' }, { resultCode: 'Bogus' }])
      assert.equal(authoriseOfAnswer(b).kind, 'unknown', JSON.stringify(b));
    assert.equal(operationOfAnswer({ status: 'received' }).kind, 'unknown');
  });

  test('amounts in Adyen’s minor units, which differ from ISO 4217 for CLP, ISK, CVE and IDR', async () => {
    const cases: [string, number, number | null][] = [
      ['EUR', 1050, 1050],
      ['JPY', 500, 500],
      ['BHD', 1234, 1234],
      ['CLP', 5000, 500_000],
      ['ISK', 2790, 279_000],
      ['CVE', 12_300, 123],
      ['IDR', 1_500_000, 15_000],
      ['IDR', 1_500_050, null],
    ];
    for (const [currency, ours, theirs] of cases) assert.equal(adyenAmount(currency, ours)?.value ?? null, theirs, `${currency} ${ours}`);
    const from = mock.requests.length;
    assert.equal((await adyen.authorise(input({ currency: 'ISK', amount_minor: 2790 as never }), call())).kind, 'approved');
    assert.deepEqual((mock.requests[from]?.body as { amount?: unknown } | undefined)?.amount, { currency: 'ISK', value: 279_000 });
    assert.deepEqual(await adyen.authorise(input({ currency: 'IDR', amount_minor: 1_500_050 as never }), call()), {
      kind: 'declined',
      code: '1007',
      reference: '',
    });
    assert.equal(mock.requests.length, from + 1, 'an amount Adyen cannot take is not sent');
  });
});

describe('faults', () => {
  /** A server answering every request with `status` and `body` (raw when a string). */
  async function answering(status: number, body: unknown): Promise<{ url: string; close: () => Promise<void> }> {
    const s = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body)));
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/v71`,
      close: () => {
        s.closeAllConnections();
        return new Promise((r) => s.close(() => r()));
      },
    };
  }

  test('the document’s 401 and 403 answers: an authorisation declines 1007, a capture declines 1007, one log line naming neither key nor card', async () => {
    for (const status of ['401', '403']) {
      const body = responseExamples('/payments', status);
      const server = await answering(Number(status), Object.values(body)[0]);
      const p = createAdyenProcessor({
        base_url: server.url,
        api_key: API_KEY,
        merchant_account: MERCHANT,
        hmac_key: HMAC_KEY,
        log: (f, m) => logged.push(JSON.stringify({ ...f, m })),
      });
      const before = logged.length;
      assert.deepEqual(await p.authorise(input(), call()), { kind: 'declined', code: '1007', reference: '', credentials_refused: true });
      assert.equal(logged.length, before + 1);
      assert.match(logged.at(-1) ?? '', new RegExp(`refused our credentials \\(${status}\\)`));
      assert.match(logged.at(-1) ?? '', /••••9f3a/);
      assert.deepEqual(await p.capture({ transaction_id: 't', reference: 'PSP', amount_minor: 1 as never, currency: 'EUR' }, call()), {
        kind: 'declined',
        code: '1007',
        reason: 'processor refused our credentials',
        credentials_refused: true,
      });
      await server.close();
    }
  });

  test('5xx (the document’s 500), 422, malformed JSON, a reset and no answer by the deadline are unknown', async () => {
    const cases: [number, unknown, RegExp][] = [
      [500, Object.values(responseExamples('/payments', '500'))[0], /answered 500/],
      [422, Object.values(responseExamples('/payments', '422'))[0], /refused the request: 422/],
      [200, '{"resultCode": "Authori', /without a JSON object/],
    ];
    for (const [status, body, reason] of cases) {
      const server = await answering(status, body);
      const p = createAdyenProcessor({ base_url: server.url, api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY, log: () => {} });
      const o = await p.authorise(input(), call());
      assert.equal(o.kind, 'unknown');
      assert.match((o as { reason: string }).reason, reason);
      await server.close();
    }
    mock.fault('hang-after');
    const hung = await adyen.authorise(input(), call(300));
    assert.deepEqual(hung, { kind: 'unknown', reason: 'no answer by the deadline' });
    const refused = createAdyenProcessor({ base_url: 'http://127.0.0.1:9/v71', api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
    assert.deepEqual(await refused.authorise(input(), call()), { kind: 'unknown', reason: 'connection refused: nothing was sent' });
    const reasons = JSON.stringify([hung]);
    assert.ok(!reasons.includes(PAN) && !reasons.includes(CVC));
  });

  test('the same Idempotency-Key is the same answer at the mock, as at Adyen', async () => {
    const c = call();
    const a = await adyen.authorise(input(), c);
    const b = await adyen.authorise(input(), { ...c });
    assert.deepEqual(a, b);
    assert.equal(a.kind, 'approved');
  });
});

describe('standard notifications', () => {
  const signed = (n: NotificationRequestItem): NotificationRequestItem => ({
    ...n,
    additionalData: { ...(n.additionalData ?? {}), hmacSignature: signItem(HMAC_KEY, n) },
  });
  const raw = (items: NotificationRequestItem[]) =>
    Buffer.from(JSON.stringify({ live: 'false', notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })) }));
  const parse = (items: NotificationRequestItem[]) => parseAdyenWebhook(HMAC_KEY, { headers: {}, raw: raw(items) }, 1_000);
  const itemOf = (event: string) =>
    example(
      webhooks,
      webhooks.webhooks[`/${event}`].post.requestBody.content['application/json'].examples[
        Object.keys(webhooks.webhooks[`/${event}`].post.requestBody.content['application/json'].examples)[0] as string
      ].$ref,
    ).notificationItems[0].NotificationRequestItem as NotificationRequestItem;

  test('every webhook example, signed, reads into its notification; an event not mapped is acknowledged and left out', () => {
    const expected: Record<string, { operation: string; kind: string } | null> = {
      AUTHORISATION: { operation: 'authorise', kind: 'approved' },
      CAPTURE: { operation: 'capture', kind: 'approved' },
      CAPTURE_FAILED: { operation: 'capture', kind: 'declined' },
      CANCELLATION: { operation: 'cancel', kind: 'approved' },
      CANCEL_OR_REFUND: { operation: 'cancel', kind: 'approved' },
      // The document's REFUND example is a refusal (success false: not captured yet).
      REFUND: { operation: 'refund', kind: 'declined' },
      REFUND_FAILED: { operation: 'refund', kind: 'declined' },
      CHARGEBACK: null,
    };
    for (const [event, want] of Object.entries(expected)) {
      const n = itemOf(event);
      const r = parse([signed(n)]);
      assert.equal(r.kind, 'accepted', event);
      if (r.kind !== 'accepted') continue;
      assert.deepEqual(r.reply, { status: 200, content_type: 'text/plain', body: '[accepted]' });
      if (!want) {
        assert.deepEqual(r.notifications, [], `${event} is left for a later issue`);
        continue;
      }
      const [got] = r.notifications;
      assert.ok(got, event);
      assert.equal(got.operation, want.operation, event);
      assert.equal(got.outcome.kind, want.kind, event);
      assert.equal(got.id, `${n.pspReference}:${event}:${n.success}`);
      assert.equal(got.object_id, n.merchantReference);
      assert.equal(got.reference, n.originalReference || n.pspReference);
      assert.equal((got.outcome as { reference?: string }).reference, n.pspReference);
      assert.equal(got.occurred_at, Date.parse(n.eventDate as string));
      if (want.kind === 'declined' && want.operation !== 'authorise')
        assert.match((got.outcome as { reason: string }).reason, new RegExp(`^Adyen ${event}: ${n.reason}`));
    }
  });

  test('one item with a bad HMAC refuses the whole delivery (401); unreadable bodies are 400', () => {
    const good = signed(itemOf('CAPTURE'));
    const bad = { ...signed(itemOf('REFUND')), amount: { currency: 'EUR', value: 999_999 } };
    assert.equal(parse([good]).kind, 'accepted');
    assert.deepEqual(parse([good, bad]), { kind: 'refused', status: 401, message: 'bad HMAC signature' });
    assert.deepEqual(parse([itemOf('CAPTURE')]), { kind: 'refused', status: 401, message: 'bad HMAC signature' }, 'unsigned');
    const otherKey = parseAdyenWebhook('00'.repeat(32), { headers: {}, raw: raw([good]) }, 0);
    assert.equal(otherKey.kind === 'refused' && otherKey.status, 401);
    assert.equal(parseAdyenWebhook(HMAC_KEY, { headers: {}, raw: Buffer.from('[accepted') }, 0).kind, 'refused');
    const notItems = parseAdyenWebhook(HMAC_KEY, { headers: {}, raw: Buffer.from('{"live":"false"}') }, 0);
    assert.equal(notItems.kind === 'refused' && notItems.status, 400);
  });

  test('an AUTHORISATION refused carries its decline code by the refusal words', () => {
    const r = parse([signed({ ...itemOf('AUTHORISATION'), success: 'false', reason: 'Not enough balance' })]);
    assert.equal(r.kind, 'accepted');
    if (r.kind === 'accepted') assert.deepEqual(r.notifications[0]?.outcome, { kind: 'declined', code: '1001', reference: 'QFQTPCQ8HXSKGK82' });
  });

  test('fuzz: no body throws; a signed delivery with any signed field changed is refused 401', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
        ),
        (text) => {
          const r = parseAdyenWebhook(HMAC_KEY, { headers: {}, raw: Buffer.from(text, 'latin1') }, 0);
          assert.ok(r.kind === 'refused' || r.notifications.length === 0, 'nothing unsigned is read into a notification');
        },
      ),
      { numRuns: 500 },
    );
    const fields = ['pspReference', 'originalReference', 'merchantAccountCode', 'merchantReference', 'eventCode', 'success'] as const;
    fc.assert(
      fc.property(fc.constantFrom(...fields, 'value', 'currency'), fc.string({ minLength: 1, maxLength: 20 }), (field, value) => {
        const good = signed(itemOf('CAPTURE'));
        const changed: NotificationRequestItem =
          field === 'value' || field === 'currency'
            ? {
                ...good,
                amount: { ...good.amount, [field]: field === 'value' ? (good.amount?.value ?? 0) + value.length : `${good.amount?.currency}${value}` },
              }
            : { ...good, [field]: `${good[field] ?? ''}${value}` };
        assert.deepEqual(parse([changed]), { kind: 'refused', status: 401, message: 'bad HMAC signature' });
      }),
      { numRuns: 200 },
    );
  });
});
