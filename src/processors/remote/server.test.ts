// The remote sandbox alone (docs/remote-sandbox.md), over real HTTP: every operation answers
// by the in-process sandbox's tables, one attempt id acts once however many requests carry it
// at once, bad input is a 4xx naming the field (never its value), each fault is deterministic
// by the fault header, webhooks are signed and played duplicated, delayed and reordered, and
// /stats reports what it served. The latency and fault tables are pure and tested as tables.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { FaultPicker, latencySampler, parseFaultSpec, seededRandom } from './faults.js';
import { sandboxOptions } from './run.js';
import { type RemoteSandbox, startRemoteSandbox } from './server.js';
import { checkWebhookSignature } from './webhooks.js';

const KEY = 'sbx_key_test_1';
const CARD = { number: '4242424242424242', brand: 'visa', exp_month: 12, exp_year: 2031, security_code: '123' };
let n = 0;
const newId = (p = 'att') => `${p}_${process.pid}_${++n}`;

let sandbox: RemoteSandbox;
before(async () => {
  sandbox = await startRemoteSandbox({ api_key: KEY, swift_delay_ms: 1_000 });
});
after(async () => {
  await sandbox.close();
});

async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  o: { key?: string; fault?: string; api_key?: string; raw?: string; server?: RemoteSandbox } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${o.api_key ?? KEY}` };
  if (o.key) headers['idempotency-key'] = o.key;
  if (o.fault) headers['x-sandbox-fault'] = o.fault;
  if (body !== undefined || o.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${(o.server ?? sandbox).url}${path}`, { method, headers, body: o.raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const authorise = (card = CARD, extra: Record<string, unknown> = {}) => ({ transaction_id: newId('tx'), amount_minor: 1000, currency: 'USD', card, ...extra });

describe('operations answer by the in-process sandbox’s tables', () => {
  test('authorise: table of test cards → status and code; its status by attempt id; an unknown id is 404', async () => {
    const cases: Array<[string, Record<string, unknown>, string, string | undefined]> = [
      ['4242424242424242', {}, 'approved', undefined],
      ['4000000000000002', {}, 'declined', '1002'],
      ['4000000000009995', {}, 'declined', '1001'],
      ['4000000000003220', {}, 'challenge_required', undefined],
      ['4000000000003220', { threeds: { eci: '05', cavv: 'AAAA', xid: '', ds_trans_id: 'ds-1' } }, 'approved', undefined],
      ['4000000000000341', { merchant_initiated: true }, 'declined', '1002'],
    ];
    for (const [number, extra, status, code] of cases) {
      const key = newId();
      const r = await call('POST', '/v1/authorise', authorise({ ...CARD, number }, extra), { key });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual([r.body.status, r.body.code, r.body.attempt_id], [status, code, key], number);
      assert.match(r.body.reference, /^SBX[0-9A-F]{12}$/);
      const asked = await call('GET', `/v1/authorise/${key}`);
      assert.deepEqual(asked.body, r.body, 'the status query answers what was answered');
    }
    const missing = await call('GET', `/v1/authorise/${newId()}`);
    assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
  });

  test('capture, cancel, refund: approved with the reference; operation status by attempt id, of its own operation only', async () => {
    const cap = await call('POST', '/v1/capture', { transaction_id: 'tx1', reference: 'SBXREF', amount_minor: 500, currency: 'USD' }, { key: 'cap-1' });
    assert.deepEqual([cap.status, cap.body.status, cap.body.reference, cap.body.operation], [200, 'approved', 'SBXREF', 'capture']);
    const voided = await call('POST', '/v1/cancel', { transaction_id: 'tx2', reference: '' }, { key: 'cancel-1' });
    assert.deepEqual([voided.body.status, voided.body.reference], ['approved', voided.body.reference]);
    assert.match(voided.body.reference, /^SBX/, 'a cancel by our transaction id gets the sandbox’s reference');
    const refund = await call(
      'POST',
      '/v1/refund',
      { transaction_id: 'tx1', refund_id: 'tx1-01', reference: 'SBXREF', amount_minor: 300, currency: 'USD' },
      { key: 'ref-1' },
    );
    assert.equal(refund.body.status, 'approved');
    assert.equal((await call('GET', '/v1/operations/ref-1')).body.status, 'approved');
    assert.equal((await call('GET', '/v1/operations/cap-1?operation=capture')).body.reference, 'SBXREF');
    assert.equal((await call('GET', '/v1/operations/cap-1?operation=refund')).status, 404, 'another operation’s attempt is not found');
    assert.equal((await call('GET', '/v1/authorise/cap-1')).status, 404);
  });

  test('APM start; payouts: LOCAL completed, the invalid test account failed, SWIFT processing then completed, the returned account RETURNED', async () => {
    const apm = await call(
      'POST',
      '/v1/apm',
      { transaction_id: 'tx-apm', payment_method: 'pix', amount_minor: 100, currency: 'BRL', fields: {} },
      { key: 'apm-1' },
    );
    assert.deepEqual([apm.status, apm.body.status], [200, 'started']);
    const payout = (over: Record<string, unknown>) => ({
      transaction_id: newId('po'),
      payment_method: 'LOCAL',
      local_clearing_system: 'SEPA',
      amount_minor: 100,
      currency: 'EUR',
      account: { country: 'DE', iban: 'DE89370400440532013000' },
      swift_charge_option: '',
      ...over,
    });
    assert.equal((await call('POST', '/v1/payout', payout({}), { key: 'po-1' })).body.status, 'completed');
    const invalid = await call('POST', '/v1/payout', payout({ account: { country: 'DE', account_number: '000111111116' } }), { key: 'po-2' });
    assert.deepEqual([invalid.body.status, invalid.body.failure_type], ['failed', 'INVALID_ACCOUNT']);
    const swift = await call('POST', '/v1/payout', payout({ payment_method: 'SWIFT' }), { key: 'po-3' });
    assert.deepEqual([swift.body.status, swift.body.check_after_ms], ['processing', 1_000]);
    const returned = await call('POST', '/v1/payout', payout({ account: { country: 'DE', account_number: '000222222226' } }), { key: 'po-4' });
    assert.equal(returned.body.status, 'processing');
    assert.equal((await call('GET', '/v1/payout/po-3')).body.status, 'processing');
    await new Promise((r) => setTimeout(r, 1_050));
    assert.equal((await call('GET', '/v1/payout/po-3')).body.status, 'completed');
    const back = (await call('GET', '/v1/payout/po-4')).body;
    assert.deepEqual([back.status, back.failure_type], ['failed', 'RETURNED']);
    assert.equal((await call('GET', '/v1/payout/nothing')).status, 404);
  });
});

describe('idempotency: the attempt id acts once', () => {
  test('20 identical requests at once act once and all get the first answer; the same key with another body is 409', async () => {
    const slow = await startRemoteSandbox({ latency: { median_ms: 30, p99_ms: 120 }, seed: 7 });
    try {
      const body = authorise();
      const all = await Promise.all(Array.from({ length: 20 }, () => call('POST', '/v1/authorise', body, { key: 'same-key', server: slow })));
      assert.ok(all.every((r) => r.status === 200));
      assert.equal(new Set(all.map((r) => JSON.stringify(r.body))).size, 1, 'one answer');
      const stats = slow.stats();
      assert.deepEqual([stats.acted, stats.replayed], [1, 19]);
      const other = await call('POST', '/v1/authorise', { ...body, amount_minor: 2000 }, { key: 'same-key', server: slow });
      assert.deepEqual([other.status, other.body.error], [409, 'idempotency_key_reused']);
      const otherOp = await call('POST', '/v1/cancel', { transaction_id: 'x', reference: '' }, { key: 'same-key', server: slow });
      assert.equal(otherOp.status, 409);
      assert.equal(slow.stats().acted, 1);
    } finally {
      await slow.close();
    }
  });
});

describe('bad input: a 4xx naming the problem, never the value', () => {
  test('table of refusals', async () => {
    const cases: Array<[string, string, unknown, { key?: string; api_key?: string; raw?: string; fault?: string }, number, RegExp]> = [
      ['POST', '/v1/authorise', authorise(), { key: 'k', api_key: 'wrong' }, 401, /API key/],
      ['POST', '/v1/authorise', authorise(), {}, 400, /Idempotency-Key is required/],
      ['POST', '/v1/authorise', undefined, { key: 'k-raw', raw: '{"transaction_id":' }, 400, /not JSON/],
      ['POST', '/v1/authorise', [1, 2], { key: 'k-arr' }, 400, /JSON object/],
      ['POST', '/v1/authorise', authorise({ ...CARD, number: '4242-4242' }), { key: 'k1' }, 400, /card\.number must be 12 to 19 digits/],
      ['POST', '/v1/authorise', authorise({ ...CARD, exp_month: 13 }), { key: 'k2' }, 400, /card\.exp_month must be a whole number from 1 to 12/],
      ['POST', '/v1/authorise', { ...authorise(), amount_minor: 1.5 }, { key: 'k3' }, 400, /amount_minor must be a whole number/],
      ['POST', '/v1/authorise', { ...authorise(), currency: 'usd' }, { key: 'k4' }, 400, /currency must be an ISO 4217 code/],
      [
        'POST',
        '/v1/capture',
        { transaction_id: 'x\nforged log line', reference: '', amount_minor: 1, currency: 'USD' },
        { key: 'k5' },
        400,
        /transaction_id must be a string/,
      ],
      ['POST', '/v1/payout', { transaction_id: 'p', payment_method: 'ACH' }, { key: 'k6' }, 400, /payment_method must be LOCAL or SWIFT/],
      ['POST', '/v1/authorise', authorise(), { key: 'k7', fault: 'meltdown' }, 400, /"meltdown" is not a fault/],
      ['GET', '/v1/capture/abc', undefined, {}, 405, /use POST \/v1\/capture/],
      ['POST', '/v1/authorise/abc', authorise(), { key: 'k8' }, 405, /use GET/],
      ['GET', '/v1/nothing', undefined, {}, 404, /no route/],
      ['GET', '/v1/authorise/%E0%A4%A', undefined, {}, 400, /not valid percent-encoding/],
    ];
    for (const [method, path, body, o, status, message] of cases) {
      const r = await call(method as 'GET', path, body, o);
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(r.body)}`);
      assert.match(r.body.message, message);
      assert.ok(!JSON.stringify(r.body).includes('4242'), 'the card number does not come back');
    }
    const big = await call('POST', '/v1/authorise', undefined, { key: 'k9', raw: JSON.stringify({ pad: 'x'.repeat(70_000) }) });
    assert.deepEqual([big.status, big.body.error], [413, 'too_large']);
    assert.ok(!JSON.stringify(sandbox.stats()).includes('4242'), 'nor in the stats');
  });
});

/** A raw request, to see a reset or an answer that never comes. */
async function rawOutcome(path: string, body: unknown, key: string, fault: string, wait_ms = 400): Promise<string> {
  try {
    const res = await fetch(`${sandbox.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': key, 'x-sandbox-fault': fault, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(wait_ms),
    });
    await res.text();
    return `answered ${res.status}`;
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    return (e as Error).name === 'TimeoutError' ? 'no answer' : `failed ${cause?.code ?? (e as Error).message}`;
  }
}

describe('faults, deterministic by the X-Sandbox-Fault header', () => {
  test('each answer fault: what the client sees, and whether the operation happened (its status query)', async () => {
    const cases: Array<[string, RegExp, boolean]> = [
      ['5xx-before', /^answered 503$/, false],
      ['5xx-after', /^answered 500$/, true],
      ['hang-after', /^no answer$/, true],
      ['reset-before', /^failed (ECONNRESET|UND_ERR_SOCKET)/, false],
      ['reset-after', /^failed (ECONNRESET|UND_ERR_SOCKET)/, true],
    ];
    for (const [fault, seen, happened] of cases) {
      const key = newId(fault);
      const body = authorise();
      const before = sandbox.stats().acted;
      assert.match(await rawOutcome('/v1/authorise', body, key, fault), seen, fault);
      const asked = await call('GET', `/v1/authorise/${key}`);
      assert.equal(asked.status, happened ? 200 : 404, `${fault}: the operation ${happened ? 'happened' : 'did not happen'}`);
      assert.equal(sandbox.stats().acted - before, happened ? 1 : 0, fault);
      // Sent again with the same key (a retry): an answer now, the operation done once in all.
      const again = await call('POST', '/v1/authorise', body, { key });
      assert.deepEqual([again.status, again.body.status], [200, 'approved'], fault);
      assert.equal(sandbox.stats().acted - before, 1, `${fault}: done once in all`);
    }
    const counted = sandbox.stats().faults;
    for (const [fault] of cases) assert.ok((counted[fault] ?? 0) >= 1, `${fault} counted in /stats`);
  });

  test('slow: the long tail (at least the p99 floor of 100 ms); `none` turns random faults off', async () => {
    const t0 = performance.now();
    assert.equal((await call('POST', '/v1/authorise', authorise(), { key: newId(), fault: 'slow' })).status, 200);
    assert.ok(performance.now() - t0 >= 95, 'slow waited');
    const always = await startRemoteSandbox({ faults: parseFaultSpec('5xx-before:1') });
    try {
      assert.equal((await call('POST', '/v1/authorise', authorise(), { key: 'a', server: always })).status, 503);
      assert.equal((await call('POST', '/v1/authorise', authorise(), { key: 'b', server: always, fault: 'none' })).status, 200);
    } finally {
      await always.close();
    }
  });

  test('a queued fault (control endpoint) hits the next request of its operation only', async () => {
    const r = await call('POST', '/control/faults', { operation: 'capture', faults: ['5xx-after'], times: 1 });
    assert.equal(r.status, 200);
    const body = { transaction_id: 'txq', reference: 'R', amount_minor: 1, currency: 'USD' };
    assert.equal((await call('POST', '/v1/capture', body, { key: newId() })).status, 500);
    assert.equal((await call('POST', '/v1/capture', body, { key: newId() })).status, 200);
    assert.equal((await call('POST', '/control/faults', { operation: 'nope', faults: [] })).status, 400);
  });
});

/** A receiver of webhooks: every body with its signature check. */
async function receiver(secret: string) {
  const got: Array<{ id: string; status: string; attempt_id: string; check: string; operation: string }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const check = checkWebhookSignature(secret, req.headers['sandbox-signature'] as string, raw, Math.floor(Date.now() / 1000));
      for (const x of JSON.parse(raw.toString()).notifications)
        got.push({ id: x.id, status: x.outcome.status, attempt_id: x.attempt_id, check, operation: x.operation });
      res.end('[accepted]');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { got, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const until = async (ok: () => boolean, ms = 3_000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return ok();
};

describe('webhooks', () => {
  test('signed final outcomes; a capture confirmed later; duplicated, delayed and reordered deliveries', async () => {
    const hook = await receiver('whsec_1');
    const s = await startRemoteSandbox({
      webhook: { url: hook.url, secret: 'whsec_1', delay_max_ms: 150, reorder_hold_ms: 500 },
      confirm_by_webhook: ['capture'],
      confirm_delay_ms: 50,
    });
    try {
      const cap = await call('POST', '/v1/capture', { transaction_id: 't', reference: 'R', amount_minor: 1, currency: 'USD' }, { key: 'w-cap', server: s });
      assert.equal(cap.body.status, 'pending', 'confirmed later');
      assert.ok(await until(() => hook.got.some((g) => g.attempt_id === 'w-cap')));
      assert.deepEqual(
        hook.got.map((g) => [g.attempt_id, g.operation, g.status, g.check]),
        [['w-cap', 'capture', 'approved', 'ok']],
      );
      assert.equal((await call('GET', '/v1/operations/w-cap', undefined, { server: s })).body.status, 'approved', 'and its status says so');

      await call('POST', '/v1/authorise', authorise(), { key: 'w-dup', fault: 'dup-webhooks', server: s });
      assert.ok(await until(() => hook.got.filter((g) => g.attempt_id === 'w-dup').length === 2));
      const dups = hook.got.filter((g) => g.attempt_id === 'w-dup');
      assert.equal(dups[0]?.id, dups[1]?.id, 'a duplicate repeats the notification id');

      // Reordered: the first is held until the second has gone.
      await call('POST', '/v1/authorise', authorise(), { key: 'w-first', fault: 'reorder-webhooks', server: s });
      await call('POST', '/v1/authorise', authorise(), { key: 'w-second', server: s });
      assert.ok(await until(() => hook.got.some((g) => g.attempt_id === 'w-first')));
      const order = hook.got.map((g) => g.attempt_id).filter((a) => a === 'w-first' || a === 'w-second');
      assert.deepEqual(order, ['w-second', 'w-first']);

      await call('POST', '/v1/authorise', authorise({ ...CARD, number: '4000000000000002' }), { key: 'w-late', fault: 'delay-webhooks', server: s });
      assert.ok(await until(() => hook.got.some((g) => g.attempt_id === 'w-late' && g.status === 'declined')));
      const st = s.stats().webhooks;
      assert.ok(st && st.duplicated === 1 && st.reordered === 1 && st.delayed === 1, JSON.stringify(st));
      assert.ok(hook.got.every((g) => g.check === 'ok'));
      // A 5xx before processing did nothing, so it notifies nothing.
      await call('POST', '/v1/authorise', authorise(), { key: 'w-none', fault: '5xx-before', server: s });
      await new Promise((r) => setTimeout(r, 100));
      assert.ok(!hook.got.some((g) => g.attempt_id === 'w-none'));
    } finally {
      await s.close();
      await hook.close();
    }
  });
});

describe('latency and stats', () => {
  test('lognormal latency from median and p99, reproducible by seed; /stats reports p50/p99 served and the process CPU', async () => {
    const a = latencySampler({ median_ms: 250, p99_ms: 2000 }, seededRandom(42));
    const again = latencySampler({ median_ms: 250, p99_ms: 2000 }, seededRandom(42));
    const other = latencySampler({ median_ms: 250, p99_ms: 2000 }, seededRandom(43));
    const firstFive = Array.from({ length: 5 }, a);
    assert.deepEqual(Array.from({ length: 5 }, again), firstFive, 'the same seed, the same delays');
    assert.notDeepEqual(Array.from({ length: 5 }, other), firstFive);
    const xs = Array.from({ length: 20_000 }, a).sort((x, y) => x - y);
    const p50 = xs[10_000] ?? 0;
    const p99 = xs[19_800] ?? 0;
    assert.ok(p50 > 230 && p50 < 270, `median ${p50}`);
    assert.ok(p99 > 1700 && p99 < 2300, `p99 ${p99}`);

    // A median well above this shared machine's scheduling noise; the bounds are loose on purpose.
    const s = await startRemoteSandbox({ latency: { median_ms: 100, p99_ms: 300 }, seed: 3 });
    try {
      await Promise.all(Array.from({ length: 100 }, (_, i) => call('POST', '/v1/authorise', authorise(), { key: `lat-${i}`, server: s })));
      const r = await fetch(`${s.url}/stats`);
      const stats = (await r.json()) as ReturnType<RemoteSandbox['stats']>;
      assert.equal(stats.latency_ms.count, 100);
      assert.ok(stats.latency_ms.p50 >= 80 && stats.latency_ms.p50 < 400, `p50 ${stats.latency_ms.p50}`);
      assert.ok(stats.latency_ms.p99 >= 150, `p99 ${stats.latency_ms.p99}: the tail is served`);
      assert.ok(stats.latency_ms.p99 >= stats.latency_ms.p50);
      assert.ok(stats.cpu_us.user > 0);
      assert.equal(stats.acted, 100);
      assert.equal(stats.by_operation.authorise, 100);
    } finally {
      await s.close();
    }
  });

  test('the command’s options: defaults, and each bad one refused by name', () => {
    const o = sandboxOptions({ port: '0' });
    assert.deepEqual([o.latency, o.faults, o.webhook, o.host], [{ median_ms: 250, p99_ms: 2000 }, [], undefined, '127.0.0.1']);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /--port is required/],
      [{ port: 'x' }, /--port must be a whole number/],
      [{ port: '0', 'latency-median-ms': '300', 'latency-p99-ms': '200' }, /--latency-p99-ms must be at least/],
      [{ port: '0', faults: 'slow:2' }, /--faults: slow:2/],
      [{ port: '0', 'webhook-url': 'http://127.0.0.1:1/h' }, /needs --webhook-secret/],
      [{ port: '0', 'webhook-url': 'ftp://x', 'webhook-secret': 's' }, /--webhook-url must be an http/],
      [{ port: '0', 'confirm-by-webhook': 'capture,payout' }, /"payout" is not capture, cancel or refund/],
    ];
    for (const [values, message] of cases) assert.throws(() => sandboxOptions(values), message, JSON.stringify(values));
  });

  test('fault spec: rates, every N-th, and refusals naming the part', () => {
    assert.deepEqual(parseFaultSpec('slow:0.1,hang-after:1/20,reset:0'), [
      { fault: 'slow', trigger: { kind: 'rate', rate: 0.1 } },
      { fault: 'hang-after', trigger: { kind: 'every', every: 20 } },
      { fault: 'reset', trigger: { kind: 'rate', rate: 0 } },
    ]);
    for (const bad of ['slow', 'slow:2', 'slow:-0.1', 'nope:0.5', 'slow:1/0', 'slow:0.1:3']) assert.throws(() => parseFaultSpec(bad), /--faults/, bad);
    const picker = new FaultPicker(parseFaultSpec('5xx-after:1/3,5xx-before:1'), seededRandom(1));
    const picked = Array.from({ length: 6 }, () => [...picker.pick(undefined)].join('+'));
    assert.deepEqual(
      picked,
      ['5xx-before', '5xx-before', '5xx-after', '5xx-before', '5xx-before', '5xx-after'],
      'one answer fault a request, the first that fires',
    );
  });
});

describe('the operations listing (GET /control/operations)', () => {
  test('each attempt acted on once, oldest first, with our transaction id and its outcome; paged; no card data; the API key required', async () => {
    const s = await startRemoteSandbox({ api_key: KEY });
    try {
      const approved = authorise();
      const declined = authorise({ ...CARD, number: '4000000000000002' });
      await call('POST', '/v1/authorise', approved, { key: 'list-1', server: s });
      await call('POST', '/v1/authorise', approved, { key: 'list-1', server: s }); // a replay: not a second line
      await call('POST', '/v1/authorise', declined, { key: 'list-2', server: s });
      await call('POST', '/v1/cancel', { transaction_id: approved.transaction_id, reference: '' }, { key: 'list-1.void', server: s });
      await call('GET', '/v1/authorise/list-1', undefined, { server: s }); // a status query: not a line
      const all = await call('GET', '/control/operations', undefined, { server: s });
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.operations.map((o: Record<string, unknown>) => [o.attempt_id, o.operation, o.transaction_id, o.status, o.code]),
        [
          ['list-1', 'authorise', approved.transaction_id, 'approved', undefined],
          ['list-2', 'authorise', declined.transaction_id, 'declined', '1002'],
          ['list-1.void', 'cancel', approved.transaction_id, 'approved', undefined],
        ],
      );
      assert.equal(all.body.next_offset, null);
      assert.match(all.body.operations[0].reference, /^SBX[0-9A-F]{12}$/);
      const raw = JSON.stringify(all.body);
      assert.ok(!raw.includes(CARD.number) && !raw.includes('4000000000000002') && !raw.includes('"123"'), 'no card number or security code');

      const first = await call('GET', '/control/operations?limit=2', undefined, { server: s });
      assert.deepEqual([first.body.operations.length, first.body.next_offset], [2, 2]);
      const rest = await call('GET', '/control/operations?offset=2&limit=2', undefined, { server: s });
      assert.deepEqual([rest.body.operations.map((o: { attempt_id: string }) => o.attempt_id), rest.body.next_offset], [['list-1.void'], null]);

      for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'offset=x']) {
        const bad = await call('GET', `/control/operations?${q}`, undefined, { server: s });
        assert.deepEqual([bad.status, bad.body.error], [400, 'bad_request'], q);
      }
      const stranger = await call('GET', '/control/operations', undefined, { server: s, api_key: 'wrong' });
      assert.equal(stranger.status, 401);
      const posted = await call('POST', '/control/operations', {}, { server: s });
      assert.equal(posted.status, 404);
    } finally {
      await s.close();
    }
  });
});
