// Route schemas compiled at ready or on first use (schema-compilers.ts): the same validation,
// coercion and answers as Fastify's own compilers; an invalid schema stops `ready` when
// compiled there, and fails only its own route when compiled on first use.
// Runs on one engine: plain Fastify apps, no database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { loadSettings } from '../config/index.js';
import { type SchemaCompilation, schemaCompilers } from './schema-compilers.js';

const body = {
  type: 'object',
  properties: { amount: { type: 'integer', minimum: 1 }, note: { type: 'string' } },
  required: ['amount'],
  additionalProperties: false,
} as const;
const answer = { 200: { type: 'object', properties: { amount: { type: 'integer' } } } } as const;

function app(when: SchemaCompilation, extra?: (app: FastifyInstance) => void): { app: FastifyInstance; pending: () => number } {
  const compilers = schemaCompilers();
  const app = Fastify({
    schemaController: { compilersFactory: compilers.compilersFactory },
    ajv: { customOptions: { coerceTypes: true, removeAdditional: false } },
    exposeHeadRoutes: false,
  });
  if (when === 'at_ready') app.addHook('onReady', async () => compilers.compileAll());
  // The answer schema drops what it does not name: `secret` never leaves.
  app.post('/pay', { schema: { body, response: answer } }, async (req) => ({ ...(req.body as object), secret: 'x' }));
  app.get('/echo', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async (req) => req.query);
  extra?.(app);
  return { app, pending: compilers.pending };
}

for (const when of ['at_ready', 'on_first_use'] as const) {
  test(`${when}: validation, coercion, errors and answers as Fastify's own compilers give them`, async () => {
    const { app: a, pending } = app(when);
    await a.ready();
    assert.equal(pending(), when === 'at_ready' ? 0 : 3, 'the schemas still to compile');
    const ok = await a.inject({ method: 'POST', url: '/pay', payload: { amount: '5' } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { amount: 5 }, 'coerced, and the answer schema applied');
    const bad = await a.inject({ method: 'POST', url: '/pay', payload: { amount: 0 } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\/amount must be >= 1/);
    const extra = await a.inject({ method: 'POST', url: '/pay', payload: { amount: 1, other: 1 } });
    assert.equal(extra.statusCode, 400);
    assert.match(extra.json().message, /must NOT have additional properties/);
    assert.deepEqual((await a.inject('/echo?n=7')).json(), { n: 7 });
    assert.equal((await a.inject('/echo?n=x')).statusCode, 400);
    assert.equal(pending(), 0, 'every route used, every schema compiled');
    await a.close();
  });
}

test('an invalid schema stops ready when compiled there; on first use only its route fails', async () => {
  const invalid = (a: FastifyInstance) => a.post('/broken', { schema: { body: { type: 'nonsense' } } }, async () => ({}));
  const eager = app('at_ready', invalid).app;
  await assert.rejects(async () => {
    await eager.ready();
  }, /schema is invalid|type must be/);
  const lazy = app('on_first_use', invalid).app;
  await lazy.ready();
  assert.equal((await lazy.inject({ method: 'POST', url: '/broken', payload: {} })).statusCode, 500);
  assert.equal((await lazy.inject({ method: 'POST', url: '/pay', payload: { amount: 2 } })).statusCode, 200);
  await lazy.close();
});

test('a second app of the process reuses what the first compiled, and answers the same', async () => {
  const first = app('at_ready').app;
  await first.ready();
  const second = app('at_ready').app;
  await second.ready();
  for (const a of [first, second]) {
    assert.deepEqual((await a.inject({ method: 'POST', url: '/pay', payload: { amount: 3 } })).json(), { amount: 3 });
    assert.equal((await a.inject({ method: 'POST', url: '/pay', payload: {} })).statusCode, 400);
  }
  await first.close();
  await second.close();
});

test('serve compiles them at start unless TOLLGATE_ROUTE_SCHEMAS says on_first_use; another value is refused', () => {
  assert.equal(loadSettings({}).route_schemas, 'at_start');
  assert.equal(loadSettings({ TOLLGATE_ROUTE_SCHEMAS: 'at_start' }).route_schemas, 'at_start');
  assert.equal(loadSettings({ TOLLGATE_ROUTE_SCHEMAS: 'on_first_use' }).route_schemas, 'on_first_use');
  assert.throws(() => loadSettings({ TOLLGATE_ROUTE_SCHEMAS: 'lazy' }), /TOLLGATE_ROUTE_SCHEMAS must be at_start or on_first_use, got "lazy"/);
});
