// The portal's route table (routes.ts) is what is registered: every entry once, in its order,
// under /portal, with the access it declares; and nothing is registered outside it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestGateway, testGateway } from '../test/harness.js';
import { PORTAL_ROUTES } from './plugin.js';
import { PORTAL_ROUTE_TABLE } from './routes.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

test('no method and URL appears twice in the table', () => {
  const keys = PORTAL_ROUTE_TABLE.map((r) => `${r.method} ${r.url}`);
  assert.deepEqual(
    keys.filter((k, i) => keys.indexOf(k) !== i),
    [],
  );
});

test('the registered routes are the table, in its order, under /portal, with the declared access', () => {
  // The table's `/` is the scope's prefix itself.
  const registered = PORTAL_ROUTES.filter((r) => r.url.startsWith('/portal')).map((r) => `${r.method} ${r.url} ${r.access}`);
  const expected = PORTAL_ROUTE_TABLE.map((r) => `${r.method} /portal${r.url === '/' ? '' : r.url} ${r.access}`);
  assert.deepEqual(registered, expected);
});

test('each route carries the schemas its entry declares', () => {
  for (const r of PORTAL_ROUTE_TABLE) {
    const info = PORTAL_ROUTES.find((x) => x.method === r.method && x.url === `/portal${r.url === '/' ? '' : r.url}`);
    assert.ok(info, `${r.method} ${r.url} is registered`);
    assert.equal(info.body, r.body, `${r.method} ${r.url} body`);
    assert.equal(info.querystring, r.querystring, `${r.method} ${r.url} querystring`);
  }
});
