// /metrics is not for the public (issue 29 item 5): open on the development default only;
// on a production start it needs TOLLGATE_METRICS_TOKEN as a Bearer token, or is served on
// TOLLGATE_METRICS_LISTEN's address alone, or answers 404.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { startServer } from '../cli/serve.js';
import { loadSettings, type Settings } from '../config/index.js';
import { createPgDatabase, ENGINE, TEST_MASTER_KEY, testGateway } from '../test/harness.js';
import { freePort } from '../test/process.js';
import { bearerMatches, metricsAccess } from './metrics-access.js';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('settings', () => {
  test('a production start: anything but the embedded development default on loopback', () => {
    const table: Array<[env: NodeJS.ProcessEnv, production: boolean]> = [
      [{}, false],
      [{ HOST: '::1' }, false],
      [{ HOST: 'localhost', PORT: '9000' }, false],
      [{ HOST: '127.0.0.2' }, false],
      [{ HOST: '0.0.0.0' }, true],
      [{ HOST: '10.1.2.3' }, true],
      [{ DATABASE_URL: 'postgres://db/tollgate' }, true],
      [{ DATABASE_URL: 'sqlite:/srv/tollgate.db' }, true],
      [{ TOLLGATE_MASTER_KEY: TEST_MASTER_KEY }, true],
      [{ TOLLGATE_TRUSTED_PROXIES: '10.0.0.0/8' }, true],
      [{ NODE_ENV: 'production' }, true],
      [{ NODE_ENV: 'development' }, false],
    ];
    for (const [env, production] of table) assert.equal(loadSettings(env).production, production, JSON.stringify(env));
  });

  test('TOLLGATE_METRICS_LISTEN and TOLLGATE_METRICS_TOKEN are read, and a bad value is named', () => {
    assert.deepEqual(loadSettings({ TOLLGATE_METRICS_LISTEN: '10.0.0.5:9464' }).metrics_listen, { host: '10.0.0.5', port: 9464 });
    assert.deepEqual(loadSettings({ TOLLGATE_METRICS_LISTEN: '[::1]:9464' }).metrics_listen, { host: '::1', port: 9464 });
    assert.deepEqual(loadSettings({ TOLLGATE_METRICS_LISTEN: '9464' }).metrics_listen, { host: '127.0.0.1', port: 9464 });
    assert.equal(loadSettings({}).metrics_listen, undefined);
    for (const bad of ['host', 'host:0', 'host:70000', ':9464', '::1:9464'])
      assert.throws(() => loadSettings({ TOLLGATE_METRICS_LISTEN: bad }), /TOLLGATE_METRICS_LISTEN must be host:port/, bad);
    assert.equal(loadSettings({ TOLLGATE_METRICS_TOKEN: TOKEN }).metrics_token, TOKEN);
    assert.throws(() => loadSettings({ TOLLGATE_METRICS_TOKEN: 'short' }), /at least 16 characters/);
  });

  test('how the main address answers /metrics', () => {
    const table: Array<[Pick<Settings, 'production' | 'metrics_token' | 'metrics_listen'>, string]> = [
      [{ production: false, metrics_token: undefined, metrics_listen: undefined }, 'open'],
      [{ production: true, metrics_token: undefined, metrics_listen: undefined }, 'absent'],
      [{ production: true, metrics_token: TOKEN, metrics_listen: undefined }, 'token'],
      [{ production: false, metrics_token: TOKEN, metrics_listen: undefined }, 'token'],
      [{ production: true, metrics_token: TOKEN, metrics_listen: { host: '127.0.0.1', port: 9464 } }, 'absent'],
      [{ production: false, metrics_token: undefined, metrics_listen: { host: '127.0.0.1', port: 9464 } }, 'absent'],
    ];
    for (const [s, access] of table) assert.equal(metricsAccess(s), access, JSON.stringify(s));
  });

  test('the bearer check takes exactly the token', () => {
    assert.ok(bearerMatches(`Bearer ${TOKEN}`, TOKEN));
    assert.ok(bearerMatches(`bearer ${TOKEN}`, TOKEN));
    for (const h of [undefined, '', 'Bearer', 'Bearer ', TOKEN, `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, `Bearer ${TOKEN} x`])
      assert.ok(!bearerMatches(h, TOKEN), String(h));
  });
});

describe('the main address', () => {
  test('production with neither setting: 404', async () => {
    const gw = await testGateway({ settings: { production: true } });
    try {
      const res = await gw.app.inject('/metrics');
      assert.equal(res.statusCode, 404);
      assert.doesNotMatch(res.body, /tollgate_/);
    } finally {
      await gw.close();
    }
  });

  test('the development default: open', async () => {
    const gw = await testGateway({ settings: { production: false } });
    try {
      const res = await gw.app.inject('/metrics');
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /tollgate_http_requests_total/);
    } finally {
      await gw.close();
    }
  });

  test('with TOLLGATE_METRICS_TOKEN: only with the Bearer token, else 401', async () => {
    const gw = await testGateway({ settings: { production: true, metrics_token: TOKEN } });
    try {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${TOKEN}`]) {
        const res = await gw.app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
        assert.equal(res.statusCode, 401, String(authorization));
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
        assert.doesNotMatch(res.body, /tollgate_/);
      }
      const res = await gw.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /tollgate_http_requests_total\{route="\/metrics",status="401"\} 3/);
    } finally {
      await gw.close();
    }
  });
});

test('TOLLGATE_METRICS_LISTEN: /metrics on its own address only (with the token when set), none on the main one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-metrics-'));
  const pg = ENGINE === 'postgres' ? await createPgDatabase() : null;
  const metrics_port = await freePort();
  const settings: Settings = {
    ...loadSettings({}),
    database_url: pg?.url ?? `sqlite:${path.join(dir, 'tollgate.db')}`,
    data_dir: dir,
    master_key: TEST_MASTER_KEY,
    log_level: 'silent',
    demo_merchant: false,
    worker_enabled: false,
    port: 0,
    production: true,
    metrics_token: TOKEN,
    metrics_listen: { host: '127.0.0.1', port: metrics_port },
  };
  const server = await startServer(settings, () => {}, { banner: false });
  try {
    const address = server.app.server.address();
    const main = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const side = `http://127.0.0.1:${metrics_port}`;
    const bearer = { authorization: `Bearer ${TOKEN}` };
    assert.equal((await fetch(`${main}/healthz`)).status, 200);
    assert.equal((await fetch(`${main}/metrics`, { headers: bearer })).status, 404, 'not on the main address');
    assert.equal((await fetch(`${side}/metrics`)).status, 401, 'the token is still required');
    const res = await fetch(`${side}/metrics`, { headers: bearer });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(await res.text(), /tollgate_http_requests_total\{route="\/healthz",status="200"\} 1/);
    for (const p of ['/healthz', '/v1/authorise', '/docs']) assert.equal((await fetch(`${side}${p}`, { headers: bearer })).status, 404, p);
  } finally {
    await server.close();
    await pg?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await assert.rejects(fetch(`http://127.0.0.1:${metrics_port}/metrics`), 'the metrics listener closes with the server');
});
