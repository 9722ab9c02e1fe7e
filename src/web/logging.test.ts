// Logs (issue 9): readable lines on a terminal, JSON otherwise, TOLLGATE_LOG_FORMAT to choose;
// card numbers and secrets censored in both formats.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { loadSettings } from '../config/index.js';
import { sign } from '../crypto/signature.js';
import { directPayment, ENGINE } from '../test/harness.js';
import { createMerchant, type FreshDatabase, freePort, freshDatabase, type GatewayProcess, gatewayEnv, ROOT, startGateway } from '../test/process.js';
import { createLogger } from './logging.js';

const CARD = '4242424242424242';

function capture(format: 'json' | 'pretty') {
  const sink = new PassThrough();
  let text = '';
  sink.on('data', (d: Buffer) => {
    text += d.toString('utf8');
  });
  return { log: createLogger({ log_level: 'info', log_format: format }, sink), text: () => text };
}

test('the format: TOLLGATE_LOG_FORMAT wins; otherwise readable on a terminal and JSON elsewhere; a bad value is named', () => {
  assert.equal(loadSettings({}, true).log_format, 'pretty');
  assert.equal(loadSettings({}, false).log_format, 'json');
  assert.equal(loadSettings({ TOLLGATE_LOG_FORMAT: 'json' }, true).log_format, 'json');
  assert.equal(loadSettings({ TOLLGATE_LOG_FORMAT: 'pretty' }, false).log_format, 'pretty');
  assert.throws(() => loadSettings({ TOLLGATE_LOG_FORMAT: 'xml' }), /TOLLGATE_LOG_FORMAT must be json or pretty, got "xml"/);
});

test('pretty: a request line reads as a sentence; a card number and a secret are still censored', () => {
  const { log, text } = capture('pretty');
  // The request line app.ts writes for every answer.
  log.info({ reqId: 'req-7', method: 'POST', url: '/v1/authorise', status: 200, ms: 3.2 }, 'request');
  log.warn({ body: { card: CARD, security_code: '123' }, secret_key: 'abcdef0123' }, 'a body that must not leak');
  const out = text();
  const [request, warning] = out.split('\n');
  assert.match(request as string, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: POST \/v1\/authorise 200 3\.2 ms \[req-7\]$/);
  assert.match(warning as string, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] WARN: a body that must not leak$/);
  assert.ok(!out.includes(CARD), out);
  assert.ok(!out.includes('abcdef0123'), out);
  assert.ok(!out.includes('"123"'), out);
  assert.match(out, /"card": "\[redacted\]"/);
  assert.match(out, /secret_key: "\[redacted\]"/);
});

test('json: one object per line, censored the same way', () => {
  const { log, text } = capture('json');
  log.info({ reqId: 'req-7', method: 'POST', url: '/v1/authorise', status: 200, ms: 3.2 }, 'request');
  log.warn({ body: { card: CARD } }, 'x');
  const lines = text()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    { ...lines[0], time: 0, pid: 0, hostname: '' },
    { level: 30, time: 0, pid: 0, hostname: '', reqId: 'req-7', method: 'POST', url: '/v1/authorise', status: 200, ms: 3.2, msg: 'request' },
  );
  assert.deepEqual(lines[1]?.body, { card: '[redacted]' });
});

let db: FreshDatabase;
let gateway: GatewayProcess | null = null;
before(async () => {
  db = await freshDatabase(ENGINE, 'logs');
});
after(async () => {
  await gateway?.stop();
  await db.drop();
});

test('a real gateway with TOLLGATE_LOG_FORMAT=pretty: readable request lines, no card number', async () => {
  const env = gatewayEnv(db, await freePort(), { TOLLGATE_LOG_FORMAT: 'pretty', TOLLGATE_LOG_LEVEL: 'info', TOLLGATE_WORKERS: '1' });
  const m = createMerchant(env, 'logs');
  gateway = await startGateway(env, { capture_output: true });
  const body = directPayment(m, { card: CARD });
  body.encryption_data = sign(body, m.secret_key);
  const res = await fetch(`${gateway.url}/v1/authorise`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  await res.text();
  await gateway.stop();
  const out = gateway.output();
  gateway = null;
  assert.match(out, /^\[[\d:.]+\] INFO: POST \/v1\/authorise 200 [\d.]+ ms \[\w+\]$/m);
  assert.match(out, /^\[[\d:.]+\] INFO: shutting down$/m);
  assert.ok(!out.includes(CARD), 'the card number never reaches the log');
  assert.ok(!out.includes(m.secret_key));
  assert.ok(!/^\{"level"/m.test(out), 'no JSON lines in the pretty format');
});

test('a real gateway with TOLLGATE_LOG_FORMAT=json: every line it writes is JSON, the banner included (issue 36 item 7)', async () => {
  // On PostgreSQL two worker processes, so the cluster primary's lines are covered too.
  const workers = ENGINE === 'postgres' ? '2' : '1';
  const env = gatewayEnv(db, await freePort(), {
    TOLLGATE_LOG_FORMAT: 'json',
    TOLLGATE_LOG_LEVEL: 'info',
    TOLLGATE_WORKERS: workers,
    TOLLGATE_DEMO_MERCHANT: '1',
  });
  gateway = await startGateway(env, { capture_output: true });
  await gateway.stop();
  const out = gateway.output();
  gateway = null;
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const records = lines.map((l): { level: number; msg?: string } => {
    try {
      return JSON.parse(l) as { level: number; msg?: string };
    } catch {
      return assert.fail(`not a JSON line: ${l}`);
    }
  });
  const msgs = records.map((r) => r.msg ?? '');
  assert.ok(
    msgs.some((m) => /^Tollgate listening on http:\/\/\S+ \(database /.test(m)),
    `the banner is a log record: ${msgs.join(' | ')}`,
  );
  assert.ok(msgs.some((m) => m.startsWith('test cards')));
  if (ENGINE === 'postgres') assert.ok(msgs.some((m) => /^Tollgate primary \d+: 2 worker processes/.test(m)));
});

test('`tollgate worker` with TOLLGATE_LOG_FORMAT=json: its start line is a JSON record, nothing else on stdout (issue 36 item 7)', async () => {
  // The gateway tests above migrated the database: the worker opens it as any command would.
  const env = gatewayEnv(db, await freePort(), { TOLLGATE_LOG_FORMAT: 'json', TOLLGATE_LOG_LEVEL: 'info' });
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), 'worker'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line within 30 s: ${out}`)), 30_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('background tasks')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await started;
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const msgs = lines.map((l) => {
    try {
      return (JSON.parse(l) as { msg?: string }).msg ?? '';
    } catch {
      return assert.fail(`not a JSON line: ${l}`);
    }
  });
  assert.ok(
    msgs.some((m) => /^worker running \d+ background tasks$/.test(m)),
    msgs.join(' | '),
  );
});
