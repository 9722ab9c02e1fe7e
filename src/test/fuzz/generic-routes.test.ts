// The generic fuzz's table of routes is complete (issue 33 review): every route of the generic
// interface this build registers (the routes whose schema asks for the Bearer key) is an entry of
// GENERIC_ROUTES, so a new route is fuzzed from the day it exists, not only once someone adds it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { registeredRoutes } from '../../http/docs.js';
import { type TestGateway, testGateway } from '../harness.js';
import { GENERIC_ROUTES, routeLabel } from './generic.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => gw.close());

test('every registered generic route is in the fuzz table GENERIC_ROUTES, and every entry is registered', () => {
  const bearer = (security: unknown) => Array.isArray(security) && security.some((s) => typeof s === 'object' && s !== null && 'bearer' in s);
  const registered = new Set(
    registeredRoutes(gw.app)
      .filter((r) => r.method !== 'HEAD' && r.url.startsWith('/v1/') && bearer((r.schema as { security?: unknown } | undefined)?.security))
      .map((r) => `${r.method} ${r.url}`),
  );
  assert.ok(registered.size > 30, `only ${registered.size} generic routes found: the filter no longer finds them`);
  const table = new Set(GENERIC_ROUTES.map(routeLabel));
  assert.deepEqual([...registered].filter((r) => !table.has(r)).sort(), [], 'registered generic routes missing from GENERIC_ROUTES (src/test/fuzz/generic.ts)');
  assert.deepEqual([...table].filter((r) => !registered.has(r)).sort(), [], 'GENERIC_ROUTES entries no route answers');
});
