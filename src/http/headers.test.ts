// Security headers on every answer (issue 29 item 5): `Cache-Control: no-store` on the API,
// the pages and the errors (the docs' static assets stay cacheable), and
// `Strict-Transport-Security` when the request came over HTTPS, which behind a proxy means
// a trusted proxy said so in X-Forwarded-Proto; never over plain HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestGateway, testGateway } from '../test/harness.js';

const HSTS = 'max-age=31536000; includeSubDomains';

let gw: TestGateway;
before(async () => {
  gw = await testGateway({ settings: { trusted_proxies: ['10.0.0.0/8'] } });
});
after(async () => {
  await gw.close();
});

// One answer of each kind: acquiring, generic, shopper pages, portal, probes, docs, unknown paths.
const answers: Array<[method: 'GET' | 'POST', url: string]> = [
  ['POST', '/v1/authorise'],
  ['POST', '/v1/retrievalTrans'],
  ['GET', '/v1/payments'],
  ['GET', '/v1/payments/pay_nothing'],
  ['GET', '/pay/nothing'],
  ['GET', '/threeds/nothing'],
  ['GET', '/portal/signin'],
  ['GET', '/healthz'],
  ['GET', '/metrics'],
  ['GET', '/openapi.json'],
  ['GET', '/nowhere'],
];

function ask(method: 'GET' | 'POST', url: string, o: { from?: string; proto?: string } = {}) {
  return gw.app.inject({
    method,
    url,
    remoteAddress: o.from ?? '10.1.2.3',
    headers: { ...(o.proto ? { 'x-forwarded-proto': o.proto } : {}), 'content-type': 'application/json' },
    payload: method === 'POST' ? '{}' : undefined,
  });
}

test('Cache-Control: no-store on every API answer, page and error', async () => {
  for (const [method, url] of answers) {
    const res = await ask(method, url);
    assert.equal(res.headers['cache-control'], 'no-store', `${method} ${url} (${res.statusCode})`);
  }
});

test('the docs’ static assets keep their own caching', async () => {
  const res = await ask('GET', '/docs/swagger-ui.css');
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'public, max-age=86400');
});

test('Strict-Transport-Security on every answer over HTTPS (a trusted proxy’s X-Forwarded-Proto)', async () => {
  for (const [method, url] of [...answers, ['GET', '/docs/swagger-ui.css'] as const]) {
    const res = await ask(method, url, { proto: 'https' });
    assert.equal(res.headers['strict-transport-security'], HSTS, `${method} ${url} (${res.statusCode})`);
  }
});

test('no Strict-Transport-Security over plain HTTP, nor when an untrusted client claims HTTPS', async () => {
  for (const [method, url] of answers) {
    for (const o of [{}, { proto: 'http' }, { from: '192.0.2.7', proto: 'https' }]) {
      const res = await ask(method, url, o);
      assert.equal(res.headers['strict-transport-security'], undefined, `${method} ${url} ${JSON.stringify(o)}`);
    }
  }
});
