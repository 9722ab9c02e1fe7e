// Goal: the client library's parts without a gateway: the signature test vectors, XML
// answers read back exactly as the gateway signs them (a property over random records),
// the retry policy (what is retried, how often, for how long, with which key), the result
// helpers, notifications against the public Standard Webhooks library, and that the
// library imports nothing of the server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { asXmlReadBack, sign as serverSign } from '../crypto/signature.js';
import { ROOT } from '../test/process.js';
import { toXml } from '../web/xml.js';
import {
  AnswerFormatError,
  canonicalString,
  type FetchLike,
  InvalidRequestError,
  NetworkError,
  parseXmlAnswer,
  RateLimitError,
  resultCode,
  riskReasons,
  ServerError,
  sign,
  signBody,
  TollgateClient,
  UnexpectedAnswerError,
  verifyNotification,
  WebhookVerificationError,
} from './index.js';

const SECRET = '0123456789abcdef0123456789abcdef';

describe('signature (docs/contract.md §2 test vectors)', () => {
  test('the two published vectors', () => {
    const a = JSON.parse(
      '{"merchant_id":"10001","account_id":"20001","order_no":"ORD-1001","currency":"USD","amount":"10.00","note":"","card":"4242424242424242","checkout_time":1763596800,"cart_items":[{"basic_item_data":{"name":"Tee","quantity":"1","price":{"amount_usd":10.5,"amount_local_currency":10.5,"currency":"USD"}}}],"encryption_data":"ignored"}',
    );
    assert.equal(
      canonicalString(a),
      'account_id=20001&amount=10.00&card=4242424242424242&cart_items[0].basic_item_data.name=Tee&cart_items[0].basic_item_data.price.amount_local_currency=10.5&cart_items[0].basic_item_data.price.amount_usd=10.5&cart_items[0].basic_item_data.price.currency=USD&cart_items[0].basic_item_data.quantity=1&checkout_time=1763596800&currency=USD&merchant_id=10001&order_no=ORD-1001',
    );
    assert.equal(sign(a, SECRET), 'b824c592e22aeae2413b1a8e0aa03b985105333d2e901c2dc8d6a886b15a4ba2');
    const b = JSON.parse(
      '{"merchant_id":"10001","account_id":"20001","capture_orders":[{"transaction_id":"T1","order_no":"A","currency":"USD","amount":"10.00"},{"transaction_id":"T2","order_no":"B","currency":"JPY","amount":"1200"}]}',
    );
    assert.equal(signBody(b, SECRET).encryption_data, '78918cfb5ae4b1520522a462e5b7d4375a2de3c8b26234a52bd30d691244fc7a');
  });
});

describe('XML answers read back as signed', () => {
  test('once a member, repeated an array, empty an empty string, entities decoded, text untrimmed', () => {
    const x = parseXmlAnswer(
      '<?xml version="1.0" encoding="UTF-8"?><respon><a>1</a><note> a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#233; </note><empty/><r><name>x</name><status>ACCEPT</status></r><rs><name>p</name></rs><rs><name>q</name></rs></respon>',
    );
    assert.deepEqual(x, { a: '1', note: ' a <b> & "c" \'d\' é ', empty: '', r: { name: 'x', status: 'ACCEPT' }, rs: [{ name: 'p' }, { name: 'q' }] });
  });

  test('whitespace between elements is not a value', () => {
    assert.deepEqual(parseXmlAnswer('<respon>\n  <a>1</a>\n  <b><c>2</c>\n</b>\n</respon>'), { a: '1', b: { c: '2' } });
  });

  test('refused: DTDs, entity declarations, malformed XML, several roots', () => {
    for (const bad of ['<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>', '<respon><a>1</respon>', '<a>1</a><b>2</b>'])
      assert.throws(() => parseXmlAnswer(bad), AnswerFormatError, bad);
  });

  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(' padded ', '<&>"\'', 'é ü 🙂', '', '0', 'a\tb'));
  const name = fc.constantFrom('a', 'b', 'c', 'risk_reasons', 'name', 'status');
  const record: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
    rec: fc.dictionary(name, fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: tie('list') }, { weight: 1, arbitrary: tie('rec') }), {
      maxKeys: 4,
      depthIdentifier: 'x',
    }),
    list: fc.array(tie('rec'), { maxLength: 3, depthIdentifier: 'x' }),
  })).rec as fc.Arbitrary<Record<string, unknown>>;

  test('for any record, the signature of what the client reads equals what the gateway signs', () => {
    fc.assert(
      fc.property(record, (r) => {
        // No raw control characters other than tab in XML text; the gateway never writes them.
        const clean = JSON.parse(JSON.stringify(r).replace(/\\u00[01][0-9a-fA-F]/g, 'x')) as Record<string, unknown>;
        const expected = serverSign(asXmlReadBack(clean) as Record<string, unknown>, SECRET);
        assert.equal(sign(parseXmlAnswer(toXml('respon', clean)), SECRET), expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('result helpers', () => {
  test('resultCode of texts, answers and items', () => {
    const rows: Array<[Parameters<typeof resultCode>[0], string]> = [
      ['1002:Card declined', '1002'],
      ['', ''],
      ['no code here', ''],
      [{ result_info: '0000:Success' }, '0000'],
      [{ error_message: '' }, ''],
      [{ error_message: '1012:Invalid state for this operation: captured' }, '1012'],
      [{ refund_message: '1013:Amount exceeds the available amount' }, '1013'],
      [{ return_message: '0400:Invalid input', error_message: 'amount must be …' } as { return_message: string }, '0400'],
    ];
    for (const [input, code] of rows) assert.equal(resultCode(input), code, JSON.stringify(input));
  });

  test('riskReasons lists none, one and several', () => {
    assert.deepEqual(riskReasons({ risk_reasons: '' }), []);
    assert.deepEqual(riskReasons({ risk_reasons: { name: 'a', status: 'ACCEPT' } }), [{ name: 'a', status: 'ACCEPT' }]);
    assert.equal(
      riskReasons({
        risk_reasons: [
          { name: 'a', status: 'ACCEPT' },
          { name: 'b', status: 'REVIEW' },
        ],
      }).length,
      2,
    );
  });
});

// ---------- retries against a scripted fetch ----------
type Step = { status: number; body?: string; headers?: Record<string, string> } | 'network' | 'hang';

const signedOk = () => JSON.stringify(signBody({ merchant_id: '1', account_id: '2', return_status: '1', return_message: 'OK', orders_list: [] }, SECRET));
const refusal = (code: string, field = '') =>
  JSON.stringify({ merchant_id: '1', account_id: '2', return_status: '0', return_message: code, error_message: 'why', error_field: field, request_id: 'RQ1' });

function scripted(steps: Step[]): { fetch: FetchLike; keys: Array<string | null>; times: number[] } {
  const keys: Array<string | null> = [];
  const times: number[] = [];
  let i = 0;
  const fetchFn: FetchLike = async (_input, init) => {
    keys.push(new Headers(init?.headers).get('idempotency-key'));
    times.push(Date.now());
    const step = steps[Math.min(i++, steps.length - 1)] as Step;
    if (step === 'network') throw new TypeError('fetch failed');
    if (step === 'hang')
      return new Promise<Response>((_, reject) => {
        // A real hanging request holds a socket; this timer stands in for it (AbortSignal.timeout's own timer is unref'd).
        const socket = setTimeout(() => reject(new Error('never aborted')), 60_000);
        init?.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(socket);
            reject(init.signal?.reason);
          },
          { once: true },
        );
      });
    return new Response(step.body ?? signedOk(), { status: step.status, headers: { 'content-type': 'application/json', ...step.headers } });
  };
  return { fetch: fetchFn, keys, times };
}

function client(fetchFn: FetchLike, retry: Record<string, number> = {}, timeout_ms = 5_000): TollgateClient {
  return new TollgateClient({
    base_url: 'http://gateway.test/',
    merchant_id: '1',
    account_id: '2',
    secret: SECRET,
    fetch: fetchFn,
    timeout_ms,
    retry: { base_delay_ms: 1, max_delay_ms: 5, ...retry },
  });
}

describe('retry policy', () => {
  test('network errors and 5xx are retried with one Idempotency-Key until an answer', async () => {
    const s = scripted(['network', { status: 503, body: refusal('0503:Service unavailable') }, { status: 200 }]);
    const r = await client(s.fetch).call('queryOrders', { order_nos: ['A'] });
    assert.equal(r.attempts, 3);
    assert.equal(new Set(s.keys).size, 1);
    assert.equal(s.keys[0], r.idempotency_key);
  });

  test('429 waits for Retry-After, then retries', async () => {
    const s = scripted([{ status: 429, body: refusal('0429:Too many requests'), headers: { 'retry-after': '1' } }, { status: 200 }]);
    const r = await client(s.fetch).call('queryOrders', { order_nos: ['A'] });
    assert.equal(r.attempts, 2);
    assert.ok((s.times[1] as number) - (s.times[0] as number) >= 990, 'waited the second Retry-After asked for');
  });

  test('a Retry-After beyond the time budget is not waited for: RateLimitError at once', async () => {
    const s = scripted([{ status: 429, body: refusal('0429:Too many requests'), headers: { 'retry-after': '120' } }]);
    const e = await client(s.fetch, { max_elapsed_ms: 1_000 })
      .queryOrders({ order_nos: ['A'] })
      .catch((err: unknown) => err);
    assert.ok(e instanceof RateLimitError, String(e));
    assert.equal(e.code, '0429');
    assert.equal(s.keys.length, 1);
  });

  test('a 4xx is never retried and carries code, status, field, message and request id', async () => {
    const s = scripted([{ status: 400, body: refusal('0400:Invalid input', 'order_nos'), headers: { 'x-request-id': 'RQ-HEADER' } }]);
    const e = await client(s.fetch)
      .queryOrders({ order_nos: ['A'] })
      .catch((err: unknown) => err);
    assert.ok(e instanceof InvalidRequestError, String(e));
    assert.deepEqual([e.code, e.http_status, e.error_field, e.error_message, e.request_id], ['0400', 400, 'order_nos', 'why', 'RQ1']);
    assert.equal(s.keys.length, 1);
  });

  test('retries are bounded by count: NetworkError after 1 + max_retries attempts, with the cause', async () => {
    const s = scripted(['network']);
    const e = await client(s.fetch, { max_retries: 2 })
      .queryOrders({ order_nos: ['A'] })
      .catch((err: unknown) => err);
    assert.ok(e instanceof NetworkError, String(e));
    assert.equal(e.attempts, 3);
    assert.equal(s.keys.length, 3);
    assert.ok(e.cause instanceof TypeError);
  });

  test('retries are bounded by time: no attempt starts after max_elapsed_ms', async () => {
    const s = scripted(['network']);
    const t0 = Date.now();
    const e = await client(s.fetch, { max_retries: 1000, base_delay_ms: 40, max_delay_ms: 40, max_elapsed_ms: 300 })
      .queryOrders({ order_nos: ['A'] })
      .catch((err: unknown) => err);
    assert.ok(e instanceof NetworkError, String(e));
    assert.ok(Date.now() - t0 < 1_000, 'gave up within the budget');
    assert.ok(s.keys.length >= 3 && s.keys.length <= 16, `${s.keys.length} attempts in 300 ms with 20–40 ms backoff`);
  });

  test('a timeout is a network failure (retried); the last 5xx is raised as ServerError', async () => {
    const hang = scripted(['hang', { status: 200 }]);
    assert.equal((await client(hang.fetch, {}, 50).call('queryOrders', { order_nos: ['A'] })).attempts, 2);
    const down = scripted([{ status: 502, body: '<html>Bad gateway</html>' }]);
    const e = await client(down.fetch, { max_retries: 1 })
      .queryOrders({ order_nos: ['A'] })
      .catch((err: unknown) => err);
    assert.ok(e instanceof ServerError, String(e));
    assert.deepEqual([e.http_status, e.code], [502, '']);
    assert.equal(down.keys.length, 2);
  });

  test("the caller's abort is not retried", async () => {
    const s = scripted(['hang']);
    const ac = new AbortController();
    const pending = client(s.fetch).queryOrders({ order_nos: ['A'] }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
    assert.equal(s.keys.length, 1);
  });

  test('a 200 the client cannot read is UnexpectedAnswerError', async () => {
    const s = scripted([{ status: 200, body: 'OK' }]);
    await assert.rejects(client(s.fetch).queryOrders({ order_nos: ['A'] }), UnexpectedAnswerError);
  });
});

describe('notifications', () => {
  const whsec = `whsec_${Buffer.alloc(24, 5).toString('base64')}`;
  const body = JSON.stringify(
    signBody({ event_id: 'evt_1', event_type: 'refund.succeeded', created_at: '2026-01-01T00:00:00.000Z', data: { a: '1' } }, SECRET),
  );

  test('signed by the public Standard Webhooks library: verified (also among several signatures)', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const signature = new Webhook(whsec).sign('evt_1', at, body);
    const headers = { 'Webhook-Id': 'evt_1', 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': `v1,AAAA ${signature}` };
    const event = verifyNotification(body, headers, { webhook_secret: whsec, secrets: [SECRET] }, { now_ms: at.getTime() + 60_000 });
    assert.equal(event.event_type, 'refund.succeeded');
    assert.throws(
      () => verifyNotification(body, new Headers(headers), { webhook_secret: whsec, secrets: [SECRET] }, { now_ms: at.getTime() + 301_000 }),
      WebhookVerificationError,
    );
  });

  test('a body whose event_id is not the webhook-id is refused', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const headers = {
      'webhook-id': 'evt_2',
      'webhook-timestamp': String(at.getTime() / 1000),
      'webhook-signature': new Webhook(whsec).sign('evt_2', at, body),
    };
    assert.throws(
      () => verifyNotification(body, headers, { webhook_secret: whsec, secrets: [SECRET] }, { now_ms: at.getTime() }),
      (e: unknown) => e instanceof WebhookVerificationError && e.reason === 'body',
    );
  });
});

describe('no server in the library', () => {
  test('src/client imports only node built-ins, fast-xml-parser and the signature code, which imports only node:crypto', () => {
    const here = path.join(ROOT, 'src', 'client');
    const seen = new Set<string>();
    const outside: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = fs.readFileSync(file, 'utf8');
      for (const m of source.matchAll(/^\s*(?:import|export)\s[^'";]*?from\s+'([^']+)'/gm)) {
        const spec = m[1] as string;
        if (spec.startsWith('node:') || spec === 'fast-xml-parser') continue;
        if (!spec.startsWith('.')) {
          outside.push(`${path.relative(here, file)} → ${spec}`);
          continue;
        }
        const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
        if (!target.startsWith(here) && target !== path.resolve(here, '../crypto/signature.ts')) outside.push(`${path.relative(here, file)} → ${spec}`);
        visit(target);
      }
    };
    visit(path.join(here, 'index.ts'));
    assert.ok(seen.size >= 7, `walked ${seen.size} files`);
    assert.deepEqual(outside, []);
  });
});
