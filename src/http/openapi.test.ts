// The published OpenAPI document holds the gateway to its word (issue 9): every route is in
// it with its real answers; every answer the gateway sends, success or refusal, validates
// against the schema the document publishes for that path, status and media type, declares
// every field it carries, and still verifies (the answer schemas never touch a signed
// answer); the `required` lists are what the server refuses; and nothing served cites an
// internal section. Runs on SQLite and PostgreSQL like every test.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { canonicalString, sign, verify } from '../crypto/signature.js';
import { EVIDENCE_BODY_LIMIT } from '../disputes/routes.js';
import { openDispute } from '../disputes/service.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { publishedTestCards } from '../processors/sandbox/cards.js';
import { directPayment, encodeBody, type TestGateway, testGateway } from '../test/harness.js';
import { item, type Paid, pay } from '../test/lifecycle.js';
import { coerceArrays } from '../web/acquiring.js';
import { RESULT_CODES } from '../web/errors.js';
import { answersAreStrings } from '../web/route-schema.js';
import { parseXmlBody } from '../web/xml.js';
import { apiDescription, SIGNING_EXAMPLE } from './api-description.js';
import { loadGuides, registeredRoutes } from './docs.js';

type Json = Record<string, any>;
/** An answer as a test sees it: from `gw.post` (a real socket) or `app.inject`. */
type Answer = { statusCode: number; headers: Record<string, unknown>; body: string };

let gw: TestGateway;
let live: CreatedMerchant;
let doc: Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });

before(async () => {
  gw = await testGateway();
  live = await gw.newMerchant({ name: 'Live shop', mode: 'live' });
  doc = (await gw.app.inject('/openapi.json')).json();
});
after(async () => {
  await gw.close();
});

/** Routes left out of the document on purpose, and why. */
const UNDOCUMENTED: Array<[RegExp, string]> = [
  [/^GET \/(openapi\.json|docs(\/.*)?)?$/, 'the documentation itself, and `/` pointing to it'],
  [/^GET \/(healthz|readyz|metrics)$/, 'operator probes, not part of the merchant interface'],
  [/^(GET|POST) \/portal(\/.*)?$/, 'the merchant portal: HTML pages for people (docs/contract.md §19), not the API'],
  [/^POST \/hooks\/:connector\/:processor_id$/, "processors' webhooks in each processor's own format (docs/processors.md), not the merchant interface"],
];

const SIGNED_ROUTES = [
  '/v1/authorise',
  '/v1/retrievalTrans',
  '/v1/capture',
  '/v1/cancel',
  '/v1/refund',
  '/v1/retrievalRefund',
  '/v1/review',
  '/v1/paymentmethods',
  '/v1/retrievalDispute',
  '/v1/disputeEvidence',
  '/v1/acceptDispute',
];

/** A chargeback on a new captured payment of the test merchant, opened as the sandbox would. */
async function openedDispute(): Promise<string> {
  const p = await pay(gw);
  const payment = await gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', p.transaction_id).executeTakeFirstOrThrow();
  const notice = { connector: 'sandbox', processor_ref: `openapi:${p.transaction_id}`, payment, kind: 'chargeback', reason: 'fraudulent' } as const;
  return (await openDispute(gw.runtime.deps, notice, gw.runtime.deps.now())).dispute.dispute_id;
}

const openapiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

describe('the document covers every route', () => {
  test('every registered route is documented with real answers, or left out on purpose for a named reason', () => {
    const seen: string[] = [];
    for (const r of registeredRoutes(gw.app)) {
      if (r.method === 'HEAD') continue; // Fastify's mirror of each GET
      const key = `${r.method} ${r.url}`;
      const op = doc.paths[openapiPath(r.url)]?.[r.method.toLowerCase()];
      if (UNDOCUMENTED.some(([re]) => re.test(key))) {
        assert.ok(r.hidden && !op, `${key} is left out on purpose`);
        continue;
      }
      seen.push(key);
      assert.ok(!r.hidden && op, `${key} is in the document`);
      assert.ok(op.operationId && op.summary && op.description, `${key} has an operationId, a summary and a description`);
      assert.ok(Array.isArray(op.security), `${key} says how it is authenticated`);
      const statuses = Object.keys(op.responses);
      assert.ok(statuses.some((s) => s.startsWith('2')) && statuses.some((s) => s.startsWith('4')), `${key} has a success and a refusal`);
      for (const [status, answer] of Object.entries(op.responses as Json)) {
        assert.notEqual(answer.description, 'Default Response', `${key} ${status}`);
        if (status !== '303') assert.ok(Object.keys(answer.content ?? {}).length > 0, `${key} ${status} has a body schema`);
      }
    }
    for (const path of SIGNED_ROUTES) assert.ok(seen.includes(`POST ${path}`), `${path} is registered and documented`);
  });

  test('signed operations: the signature scheme, every body format, the refusals in the answer’s media type', () => {
    assert.equal(doc.components.securitySchemes.encryption_data.type, 'apiKey');
    assert.match(doc.components.securitySchemes.encryption_data.description, /body field, not a header/);
    for (const path of SIGNED_ROUTES) {
      const op = doc.paths[path].post;
      assert.deepEqual(op.security, [{ encryption_data: [] }], path);
      assert.deepEqual(Object.keys(op.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded', 'application/xml'], path);
      const media = path === '/v1/authorise' ? 'application/xml' : 'application/json';
      for (const status of ['200', '400', '401', '409', '413', '500']) {
        assert.deepEqual(Object.keys(op.responses[status].content), [media], `${path} ${status} in ${media}`);
      }
      if (media === 'application/xml') assert.deepEqual(op.responses['200'].content[media].schema.xml, { name: 'respon' });
    }
    const authoriseOk = doc.paths['/v1/authorise'].post.responses['200'].content['application/xml'].schema;
    assert.deepEqual(
      authoriseOk.anyOf.map((b: Json) => b.properties.transaction_id && (b.properties.issuer_url ? 'apm' : 'card')),
      ['card', 'apm'],
      'a card answer or an APM answer',
    );
    const reasons = authoriseOk.anyOf[0].properties.risk_reasons;
    assert.deepEqual([reasons.xml, reasons.items.xml], [{ wrapped: false }, { name: 'risk_reasons' }], 'risk_reasons are repeated elements');
  });

  test('nothing served cites an internal section', async () => {
    const internal = /decisions\s*§|§\s*\d/;
    const served = ['/openapi.json', '/docs', ...loadGuides().map((g) => g.href)];
    for (const url of served) {
      const res = await gw.app.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.doesNotMatch(res.body, internal, url);
    }
    const descriptions: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, x] of Object.entries(v)) {
          if (k === 'description' && typeof x === 'string') descriptions.push(x);
          walk(x);
        }
    };
    for (const r of registeredRoutes(gw.app)) walk(r.schema);
    assert.ok(descriptions.length > 100);
    for (const d of descriptions) assert.doesNotMatch(d, internal, d);
  });
});

// ---- answers against the published schemas --------------------------------------------

/** Fields the answer carries that its schema does not declare (the document must name them all). */
/** The branch of an answer schema that is `anyOf` (the card or the APM answer) that fits the answer's fields. */
function branchOf(schema: Json, value: Json): Json {
  if (!schema.anyOf) return schema;
  return schema.anyOf.find((b: Json) => Object.keys(value).every((k) => k in (b.properties ?? {}))) ?? schema.anyOf[0];
}

function undeclared(value: unknown, schema: Json, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => (schema.items ? undeclared(v, schema.items, `${at}[${i}]`) : []));
  if (value === null || typeof value !== 'object' || !schema.properties) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k in schema.properties ? undeclared(v, schema.properties[k], at ? `${at}.${k}` : k) : [at ? `${at}.${k}` : k],
  );
}

/**
 * Holds an answer to the document: the path's documented status and media type, valid
 * against the published schema, nothing undeclared, and (for 200) a signature that
 * verifies over the answer exactly as received. Returns the answer read as a merchant would.
 */
function holdToDocument(path: string, res: Answer, secret?: string): Json {
  const op = doc.paths[path].post;
  const status = String(res.statusCode);
  const media = String(res.headers['content-type']).split(';')[0] as string;
  const documented = op.responses[status]?.content?.[media]?.schema;
  assert.ok(documented, `${path} documents ${status} ${media}: ${res.body}`);
  const read = media === 'application/xml' ? parseXmlBody(res.body) : (JSON.parse(res.body) as Json);
  if (secret) assert.ok(verify(read, read.encryption_data, [secret]), `${path} ${status}: the answer verifies as received`);
  const branch = branchOf(documented, read);
  const value = media === 'application/xml' ? (coerceArrays(structuredClone(read), branch) as Json) : read;
  const validate = ajv.compile(documented);
  assert.ok(validate(value), `${path} ${status}: ${ajv.errorsText(validate.errors)}\n${res.body}`);
  assert.deepEqual(undeclared(value, branch), [], `${path} ${status}: every field is in the document`);
  return value;
}

/** Declared properties of the published 200 answer that the answer does not carry. */
function missingDeclared(path: string, value: Json): string[] {
  const schema = doc.paths[path].post.responses['200'].content;
  const props = branchOf((Object.values(schema)[0] as Json).schema, value).properties as Json;
  return Object.keys(props).filter((k) => !(k in value));
}

const ids = (m: CreatedMerchant = gw.merchant) => ({ merchant_id: m.merchant_id, account_id: m.account_id });

describe('every answer is what the document says', () => {
  test('/v1/authorise: success with a token, a challenge (every optional field), a decline, a duplicate', async () => {
    const secret = gw.merchant.secret_key;
    const ok = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', directPayment(gw.merchant, { token_flag: '1' })), secret);
    assert.equal(ok.result_info, '0000:Success');
    assert.match(ok.token_id, /^tok_/);
    const challenge = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', directPayment(gw.merchant, { card: '4000000000003220' })), secret);
    assert.equal(challenge.order_status, '2');
    assert.deepEqual(missingDeclared('/v1/authorise', challenge), [], 'the answer keeps every field the schema declares, threeds_url too');
    holdToDocument('/v1/authorise', await gw.post('/v1/authorise', directPayment(gw.merchant, { card: '4000000000000002' })), secret);
    const first = directPayment(gw.merchant);
    await gw.post('/v1/authorise', first);
    const dup = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', { ...first, amount: '11.00' }), secret);
    assert.equal(dup.result_info, '1011:Duplicate order');
    const pix = {
      ...ids(),
      order_no: `OA-${Date.now()}`,
      currency: 'BRL',
      amount: '10.00',
      billing_country: 'BR',
      payment_method: 'pix',
      person: { document_number: '529.982.247-25', email: 'ana@example.com' },
      return_url: 'https://shop.example/back',
    };
    const apm = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', pix), secret);
    assert.equal(apm.result_info, '0003:Pending shopper action');
    assert.deepEqual(missingDeclared('/v1/authorise', apm), [], 'the APM answer keeps every field its schema declares');
    const notOffered = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', { ...pix, order_no: `OB-${Date.now()}`, payment_method: 'bitcoin' }));
    assert.equal(notOffered.return_message, '0404:Record not found');
  });

  test('/v1/authorise 403: a live account without a processor, in XML', async () => {
    const x = holdToDocument('/v1/authorise', await gw.post('/v1/authorise', directPayment(live), { merchant: live }));
    assert.equal(x.return_message, '1016:No processor configured for live mode');
  });

  test('/v1/retrievalTrans: found and unknown ids; 403 from an unregistered IP', async () => {
    const p = await pay(gw);
    const body = { ...ids(), transaction_ids: [p.transaction_id, 'T-UNKNOWN'] };
    const q = holdToDocument('/v1/retrievalTrans', await gw.post('/v1/retrievalTrans', body), gw.merchant.secret_key);
    assert.deepEqual(
      q.orders_list.map((o: Json) => o.query_result),
      ['1', '0'],
    );
    const refused = holdToDocument('/v1/retrievalTrans', await gw.post('/v1/retrievalTrans', body, { remoteAddress: '203.0.113.9' }));
    assert.equal(refused.return_message, '0403:IP not allowed');
  });

  test('capture, cancel, refund, refund search and review: items that succeed and items that fail', async () => {
    const secret = gw.merchant.secret_key;
    const unknown = { transaction_id: 'T-UNKNOWN', order_no: 'X', currency: 'USD', amount: '1.00' };
    const toCapture = await pay(gw, { manual: true });
    const c = holdToDocument('/v1/capture', await gw.post('/v1/capture', { ...ids(), capture_orders: [item(toCapture), unknown] }), secret);
    assert.deepEqual(
      c.capture_orders.map((i: Json) => i.capture_status),
      ['1', '0'],
    );
    const toCancel = await pay(gw, { manual: true });
    const x = holdToDocument('/v1/cancel', await gw.post('/v1/cancel', { ...ids(), cancel_orders: [item(toCancel), unknown] }), secret);
    assert.deepEqual(
      x.cancel_orders.map((i: Json) => i.cancel_status),
      ['1', '0'],
    );
    const paid = await pay(gw);
    const r = holdToDocument(
      '/v1/refund',
      await gw.post('/v1/refund', {
        ...ids(),
        refund_orders: [item(paid, { refund_amount: '1.00', refund_reason: 'size' }), { ...unknown, refund_amount: '1.00' }],
      }),
      secret,
    );
    assert.deepEqual(
      r.refund_orders.map((i: Json) => i.refund_status),
      ['1', '0'],
    );
    const s = holdToDocument(
      '/v1/retrievalRefund',
      await gw.post('/v1/retrievalRefund', { ...ids(), refund_reference_ids: [r.refund_orders[0].refund_reference_id, 'R-UNKNOWN'] }),
      secret,
    );
    assert.deepEqual(
      s.refund_orders.map((i: Json) => i.query_result),
      ['1', '0'],
    );
    const held = await pay(gw, { card: '4000000000009235' });
    const v = holdToDocument(
      '/v1/review',
      await gw.post('/v1/review', {
        ...ids(),
        review_orders: [
          { transaction_id: held.transaction_id, order_no: held.order_no, decision: 'ACCEPT' },
          { transaction_id: 'T-UNKNOWN', order_no: 'X', decision: 'REJECT' },
        ],
      }),
      secret,
    );
    assert.deepEqual(
      v.review_orders.map((i: Json) => i.review_status),
      ['1', '0'],
    );
  });

  test('disputes: found and unknown ids, evidence given, refused (400, 404, 409), accepted', async () => {
    const secret = gw.merchant.secret_key;
    const id = await openedDispute();
    const q = holdToDocument('/v1/retrievalDispute', await gw.post('/v1/retrievalDispute', { ...ids(), dispute_ids: [id, 'dp_unknown'] }), secret);
    assert.deepEqual(
      q.disputes.map((d: Json) => d.query_result),
      ['1', '0'],
    );
    const file = (bytes: string) => [{ field: 'receipt', file_name: 'receipt.pdf', content_base64: Buffer.from(bytes).toString('base64') }];
    const given = holdToDocument(
      '/v1/disputeEvidence',
      await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: id, uncategorized_text: 'signed for', files: file('%PDF-1.4 receipt') }),
      secret,
    );
    assert.equal(given.evidence.length, 2);
    assert.deepEqual(missingDeclared('/v1/disputeEvidence', given), []);
    const html = holdToDocument('/v1/disputeEvidence', await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: id, files: file('<html></html>') }));
    assert.deepEqual([html.return_message, html.error_field], ['0400:Invalid input', 'files[0].content_base64']);
    const unknown = holdToDocument('/v1/acceptDispute', await gw.post('/v1/acceptDispute', { ...ids(), dispute_id: 'dp_unknown' }));
    assert.deepEqual([unknown.return_message, unknown.error_field], ['0404:Record not found', 'dispute_id']);
    const accepted = holdToDocument('/v1/acceptDispute', await gw.post('/v1/acceptDispute', { ...ids(), dispute_id: id }), secret);
    assert.equal(accepted.status, 'accepted');
    const closed = holdToDocument('/v1/disputeEvidence', await gw.post('/v1/disputeEvidence', { ...ids(), dispute_id: id, uncategorized_text: 'late' }));
    assert.deepEqual([closed.return_message, closed.error_field], ['0409:Conflict', 'dispute_id']);
  });

  /** Disputes the bodies below name: evidence is given to one, the other is accepted. */
  const opened: Record<'evidence' | 'accept', string> = { evidence: '', accept: '' };
  before(async () => {
    opened.evidence = await openedDispute();
    opened.accept = await openedDispute();
  });

  /** A valid body for each signed route; `n` names its item (unknown ids: items fail alone). */
  const bodies: Record<string, (n: string) => Json> = {
    '/v1/authorise': () => directPayment(gw.merchant),
    '/v1/retrievalTrans': (n) => ({ ...ids(), transaction_ids: [`T-${n}`] }),
    '/v1/capture': (n) => ({ ...ids(), capture_orders: [{ transaction_id: `T-${n}`, order_no: 'A', currency: 'USD', amount: '1.00' }] }),
    '/v1/cancel': (n) => ({ ...ids(), cancel_orders: [{ transaction_id: `T-${n}`, order_no: 'A', currency: 'USD', amount: '1.00' }] }),
    '/v1/refund': (n) => ({ ...ids(), refund_orders: [{ transaction_id: `T-${n}`, order_no: 'A', currency: 'USD', amount: '1.00', refund_amount: '1.00' }] }),
    '/v1/retrievalRefund': (n) => ({ ...ids(), refund_reference_ids: [`R-${n}`] }),
    '/v1/review': (n) => ({ ...ids(), review_orders: [{ transaction_id: `T-${n}`, order_no: 'A', decision: 'ACCEPT' }] }),
    '/v1/paymentmethods': (n) => ({ ...ids(), currency: 'USD', amount: `${n}.00`, billing_country: 'US' }),
    '/v1/retrievalDispute': (n) => ({ ...ids(), dispute_ids: [`dp_${n}`] }),
    '/v1/disputeEvidence': (n) => ({ ...ids(), dispute_id: opened.evidence, uncategorized_text: `evidence ${n}` }),
    '/v1/acceptDispute': (n) => ({ ...ids(), dispute_id: n === '1' ? opened.accept : `dp_${n}` }),
  };

  test('every signed route: its 400, 401 (with canonical_string), 409 and 413 are the published refusal records', async () => {
    for (const path of SIGNED_ROUTES) {
      const body = bodies[path] as (n: string) => Json;
      const bad = holdToDocument(path, await gw.post(path, { ...body('1'), surprise: '1' }));
      assert.deepEqual([bad.return_message, bad.error_field], ['0400:Invalid input', 'surprise'], path);

      const wrong = { ...body('1'), encryption_data: sign(body('1'), 'not-the-secret') };
      const unsigned = holdToDocument(path, await gw.post(path, wrong, { sign: false }));
      assert.equal(unsigned.return_message, '0401:Invalid signature', path);
      assert.ok(unsigned.canonical_string, `${path}: a test account's 401 carries canonical_string, and the document declares it`);

      const key = { 'idempotency-key': `idem-${path}` };
      const first = await gw.post(path, body('1'), { headers: key });
      assert.equal(first.statusCode, 200, `${path}: ${first.body}`);
      const conflict = holdToDocument(path, await gw.post(path, body('2'), { headers: key }));
      assert.equal(conflict.return_message, '0409:Conflict', path);

      const limit = path === '/v1/disputeEvidence' ? EVIDENCE_BODY_LIMIT : gw.settings.body_limit_bytes;
      const { payload, contentType } = encodeBody({ ...body('1'), note: 'n'.repeat(limit) }, 'json');
      const big = holdToDocument(path, await gw.app.inject({ method: 'POST', url: path, payload, headers: { 'content-type': contentType } }));
      assert.equal(big.return_message, '0413:Body too large', path);
    }
  });
});

// ---- required lists against what the server refuses -----------------------------------

describe('the required lists are what the server requires', () => {
  const published = (path: string): Json => doc.paths[path].post.requestBody.content['application/json'].schema;
  const minimal: Record<string, () => Json> = {
    '/v1/authorise': () => ({ ...directPayment(gw.merchant) }),
    '/v1/retrievalTrans': () => ({ ...ids(), order_nos: ['A'] }),
    '/v1/capture': () => ({ ...ids(), capture_orders: [] }),
    '/v1/cancel': () => ({ ...ids(), cancel_orders: [] }),
    '/v1/refund': () => ({ ...ids(), refund_orders: [] }),
    '/v1/retrievalRefund': () => ({ ...ids(), order_nos: ['A'] }),
    '/v1/review': () => ({ ...ids(), review_orders: [] }),
    '/v1/paymentmethods': () => ({ ...ids(), currency: 'USD', amount: '10.00', billing_country: 'US' }),
    '/v1/retrievalDispute': () => ({ ...ids(), order_nos: ['A'] }),
    '/v1/disputeEvidence': () => ({ ...ids(), dispute_id: 'dp_unknown', uncategorized_text: 'x' }),
    '/v1/acceptDispute': () => ({ ...ids(), dispute_id: 'dp_unknown' }),
  };

  test('each required field of a request, left out, refuses the request naming that field', async () => {
    for (const path of SIGNED_ROUTES) {
      const required = published(path).required as string[];
      assert.ok(required.includes('merchant_id') && required.includes('encryption_data'), path);
      for (const field of required) {
        const body = (minimal[path] as () => Json)();
        const list = Object.keys(body).find((k) => Array.isArray(body[k]) && body[k].length === 0);
        if (list) body[list] = [Object.fromEntries((published(path).properties[list].items.required as string[]).map((k) => [k, 'ACCEPT']))];
        const signed: Json = { ...body, encryption_data: sign(body, gw.merchant.secret_key) };
        delete signed[field];
        if (field !== 'encryption_data') signed.encryption_data = sign({ ...signed, encryption_data: undefined }, gw.merchant.secret_key);
        const res = await gw.post(path, signed, { sign: false });
        const x = holdToDocument(path, res);
        assert.equal(x.error_field, field, `${path} without ${field}: ${res.body}`);
        assert.equal(res.statusCode, field === 'encryption_data' ? 401 : 400, `${path} without ${field}`);
      }
    }
  });

  test('batch items: each published required field, left out, fails that item alone; the other items still run', async () => {
    const cases: Array<[string, string, string, (p: Paid) => Json, () => Promise<Paid>]> = [
      ['/v1/capture', 'capture_orders', 'capture_status', (p) => item(p), () => pay(gw, { manual: true })],
      ['/v1/cancel', 'cancel_orders', 'cancel_status', (p) => item(p), () => pay(gw, { manual: true })],
      ['/v1/refund', 'refund_orders', 'refund_status', (p) => item(p, { refund_amount: '1.00', refund_reason: 'why' }), () => pay(gw)],
    ];
    for (const [path, list, status, full, payment] of cases) {
      const itemSchema = published(path).properties[list].items;
      const required = itemSchema.required as string[];
      assert.ok(required.length >= 4, `${path} items list their required fields`);
      for (const field of required) {
        const lacking = full(await payment());
        delete lacking[field];
        const whole = full(await payment());
        const res = await gw.post(path, { ...ids(), [list]: [lacking, whole] });
        const x = holdToDocument(path, res, gw.merchant.secret_key);
        const [a, b] = x[list] as Json[];
        assert.equal(a?.[status], '0', `${path} item without ${field} fails`);
        assert.match(a?.error_message ?? a?.refund_message, new RegExp(`^0400:.*${field} is required`), `${path} without ${field}`);
        assert.equal(b?.[status], '1', `${path}: the complete item still runs`);
      }
      for (const field of Object.keys(itemSchema.properties).filter((k) => !required.includes(k))) {
        const lacking = full(await payment());
        delete lacking[field];
        const x = holdToDocument(path, await gw.post(path, { ...ids(), [list]: [lacking] }), gw.merchant.secret_key);
        assert.equal((x[list] as Json[])[0]?.[status], '1', `${path}: ${field} is optional`);
      }
    }
  });
});

// ---- the description -------------------------------------------------------------------

describe('the description', () => {
  test('the worked signing example is the published test vector', () => {
    assert.equal(
      canonicalString(SIGNING_EXAMPLE.body),
      'account_id=20001&capture_orders[0].amount=10.00&capture_orders[0].currency=USD&capture_orders[0].order_no=A&capture_orders[0].transaction_id=T1&capture_orders[1].amount=1200&capture_orders[1].currency=JPY&capture_orders[1].order_no=B&capture_orders[1].transaction_id=T2&merchant_id=10001',
    );
    assert.equal(sign(SIGNING_EXAMPLE.body, SIGNING_EXAMPLE.secret), '78918cfb5ae4b1520522a462e5b7d4375a2de3c8b26234a52bd30d691244fc7a');
    assert.ok(doc.info.description.includes('78918cfb5ae4b1520522a462e5b7d4375a2de3c8b26234a52bd30d691244fc7a'));
  });

  test('every result code and every sandbox test card is in it, and the guides are linked', () => {
    const d = doc.info.description as string;
    for (const [code, { text, http }] of Object.entries(RESULT_CODES)) {
      assert.ok(d.includes(`| \`${code}\` | ${text.replace(/[\\`*_[\]|<>]/g, (c) => `\\${c}`)} | ${http === 200 ? '' : http} |`), code);
    }
    for (const { card } of publishedTestCards()) assert.ok(d.includes(/^\d+$/.test(card) ? `\`${card}\`` : card.slice(0, 20)), card);
    for (const g of loadGuides()) assert.ok(d.includes(`](${g.href})`), g.href);
    assert.equal(apiDescription([]).includes('Guides:'), false, 'no guide, no link');
  });
});

test('a signed route never serialises an object: its response schemas only describe', () => {
  assert.throws(() => answersAreStrings.serializerCompiler()(), /finished strings/);
});
