// The request log never carries what a URL may hold (issue 29 item 3): a card number, a
// security code or a secret sent in a query string, or a bearer id in a path (the portal's
// set-password token, a checkout session, a 3-D Secure or issuer page id). A matched request
// logs its route pattern, an unmatched one its path reduced to the routes' own words.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { type TestGateway, testGateway } from '../test/harness.js';
import { loggedUrl, routeWords } from '../web/logging.js';

const CARD = '4242424242424242';
const CVC = '987';
const SECRET = 'sk_leaky_0123456789abcdef';
const BEARER = 'bearerid_Zq7Xk2Lm9Np4Rs8Tv';
const QUERY = `?card=${CARD}&security_code=${CVC}&secret_key=${SECRET}&${CARD}`;

let gw: TestGateway;
let logged = '';
before(async () => {
  const sink = new PassThrough();
  sink.on('data', (d: Buffer) => {
    logged += d.toString('utf8');
  });
  gw = await testGateway({ settings: { log_level: 'info', log_format: 'json' }, log_destination: sink });
});
after(async () => {
  await gw.close();
});

/** The request lines written since `mark`. */
function requestLines(mark: number): Array<Record<string, unknown>> {
  return logged
    .slice(mark)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request');
}

const cases: Array<[method: 'GET' | 'POST', url: string, logged_url: string]> = [
  ['GET', `/pay/${BEARER}${QUERY}`, '/pay/:id?card=…&security_code=…&secret_key=…&…'],
  ['POST', `/pay/${BEARER}/cancel`, '/pay/:id/cancel'],
  ['GET', `/pay/${BEARER}/return`, '/pay/:id/return'],
  ['POST', `/v1/checkout/${BEARER}`, '/v1/checkout/:id'],
  ['GET', `/threeds/${BEARER}`, '/threeds/:id'],
  ['GET', `/issuer/${BEARER}?pan=${CARD}`, '/issuer/:id?pan=…'],
  ['GET', `/portal/setup/${BEARER}`, '/portal/setup/:token'],
  ['GET', `/v1/authorise${QUERY}`, '/v1/authorise?card=…&security_code=…&secret_key=…&…'],
  // No route: the path keeps only the routes' own words.
  ['GET', `/portal/setup/${BEARER}/again?token=${SECRET}`, '/portal/setup/:redacted/:redacted?token=…'],
  ['GET', `/${CARD}/${SECRET}`, '/:redacted/:redacted'],
  ['GET', `/v1/payments/${BEARER}/x/${CARD}`, '/v1/payments/:redacted/:redacted/:redacted'],
];

test('each request line shows the route pattern or the reduced path, and none of the card number, security code, secret or bearer id', async () => {
  const mark = logged.length;
  for (const [method, url] of cases)
    await gw.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: method === 'POST' ? '{}' : undefined });
  const lines = requestLines(mark);
  assert.deepEqual(
    lines.map((l) => `${l.method} ${l.url}`),
    cases.map(([method, , shown]) => `${method} ${shown}`),
  );
  const text = logged.slice(mark);
  for (const leak of [CARD, SECRET, BEARER, `=${CVC}`]) assert.ok(!text.includes(leak), `${leak} reached the log:\n${text}`);
});

test('an unexpected failure (500) is logged without the URL, its query or its ids', async () => {
  const mark = logged.length;
  const merchants = gw.runtime.deps.merchants;
  const credentials = merchants.credentials;
  merchants.credentials = async () => {
    throw new Error('the credentials store broke');
  };
  try {
    const body = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, encryption_data: 'x' };
    const res = await gw.app.inject({ method: 'POST', url: `/v1/authorise${QUERY}`, payload: body });
    assert.equal(res.statusCode, 500, res.body);
  } finally {
    merchants.credentials = credentials;
  }
  const text = logged.slice(mark);
  assert.match(text, /unhandled error/);
  assert.match(text, /"url":"\/v1\/authorise\?card=…&security_code=…&secret_key=…&…"/);
  for (const leak of [CARD, SECRET, BEARER, `=${CVC}`]) assert.ok(!text.includes(leak), `${leak} reached the log:\n${text}`);
});

test('loggedUrl: a query name that is a number or a token is dropped too; a long query is cut', () => {
  const words = routeWords();
  words.add('/v1/orders/:id');
  assert.equal(loggedUrl('/v1/orders?limit=10&expand[0]=x', '/v1/orders', words), '/v1/orders?limit=…&expand[0]=…');
  assert.equal(loggedUrl(`/v1/orders?${CARD}=1&a%ZZ=2&=3`, undefined, words), '/v1/orders?…&…&…');
  assert.equal(loggedUrl('/v1/nothing/orders', undefined, words), '/v1/:redacted/orders');
  const many = Array.from({ length: 30 }, (_, i) => `k${i}=v`).join('&');
  assert.equal(loggedUrl(`/v1/orders?${many}`, '/v1/orders', words).split('&').length, 21);
});
