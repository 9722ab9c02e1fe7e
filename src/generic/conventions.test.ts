// The generic interface's wire conventions (docs/contract.md §12, §18; issue 13 items 1 and 4),
// through /v1/accounts, the first resource to use them all: list pagination over 250
// objects (forward and back, limits, cursors, `created` filters in bracket notation,
// `expand[]` of a field not offered refused), Idempotency-Key replays, 409 on a changed body
// and 409 `idempotency_key_in_use` while the first request runs, the per-key rate
// limit, Request-Id on answers, and the error object for unknown URLs and hostile bodies
// (never a 5xx). Both engines: TOLLGATE_TEST_ENGINE=postgres for PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_WAIT_MS } from '../idempotency/plugin.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { type TestGateway, type TestResponse, testGateway } from '../test/harness.js';

/** The error object every refusal of the generic interface answers (docs/contract.md §12). */
function assertErrorShape(r: TestResponse, status: number, what: string): Record<string, unknown> {
  assert.equal(r.statusCode, status, `${what}: ${r.body.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/, what);
  const body = r.json() as { error?: Record<string, unknown> };
  assert.ok(body.error && typeof body.error === 'object', `${what}: no error object in ${r.body.slice(0, 300)}`);
  assert.equal(Object.keys(body).length, 1, `${what}: only { error }`);
  assert.match(String(body.error.type), /^(invalid_request_error|card_error|idempotency_error|api_error)$/, what);
  assert.ok(String(body.error.message).trim().length > 0, `${what}: a message`);
  assert.ok(r.headers['request-id'], `${what}: a Request-Id header`);
  return body.error;
}

let gw: TestGateway;
let key: string;
before(async () => {
  // Hundreds of requests per second with one key: well past the default bucket, which is tested on its own.
  gw = await testGateway({ settings: { api_rate_limit: 100_000 } });
  key = await gw.apiKey();
});
after(async () => gw.close());

describe('list pagination over 250 accounts', () => {
  let platform: CreatedMerchant;
  let pkey: string;
  /** Every account of the platform, as created: id and created_at (ms). */
  const made: Array<{ id: string; at: number }> = [];
  /** Newest first: created_at descending, then id descending (accounts created in the same millisecond). */
  let expected: string[] = [];
  const list = (query: string) => gw.generic('GET', `/v1/accounts${query}`, pkey);

  before(async () => {
    platform = await gw.newMerchant({ name: 'pagination platform' });
    pkey = await gw.apiKey(platform);
    for (let i = 0; i < 250; i++) {
      // Pairs share one millisecond (the id breaks the tie); each pair one second after the last.
      if (i % 2 === 0) gw.clock.advance(1000);
      const r = await gw.generic('POST', '/v1/accounts', pkey, { metadata: { i: String(i) } });
      assert.equal(r.statusCode, 200, r.body);
      made.push({ id: r.json().id, at: gw.clock.now });
    }
    // Ties are ordered by id in the database's collation (C on the test cluster, maybe not
    // elsewhere), so the tie order is read from the database; the order by time is ours.
    const rows = await gw.runtime.store.db
      .selectFrom('connected_accounts')
      .select('id')
      .where('platform_account_id', '=', platform.account_id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    expected = rows.map((r) => r.id);
    const at = new Map(made.map((x) => [x.id, x.at]));
    assert.deepEqual([...expected].sort(), made.map((x) => x.id).sort());
    assert.deepEqual(
      expected.map((id) => at.get(id)),
      made.map((x) => x.at).reverse(),
      'newest first by creation time',
    );
  });

  test('forward with starting_after at limit 100: pages of 100, 100, 50, has_more true, true, false; every account once, newest first', async () => {
    const pages: Array<{ n: number; has_more: boolean }> = [];
    const seen: string[] = [];
    let query = '?limit=100';
    for (;;) {
      const r = await list(query);
      assert.equal(r.statusCode, 200, r.body);
      const page = r.json() as { object: string; url: string; has_more: boolean; data: Array<{ id: string; object: string }> };
      assert.equal(page.object, 'list');
      assert.equal(page.url, '/v1/accounts');
      assert.ok(page.data.every((a) => a.object === 'account'));
      pages.push({ n: page.data.length, has_more: page.has_more });
      seen.push(...page.data.map((a) => a.id));
      if (!page.has_more) break;
      query = `?limit=100&starting_after=${page.data.at(-1)?.id}`;
      assert.ok(pages.length < 10, 'the walk ends');
    }
    assert.deepEqual(pages, [
      { n: 100, has_more: true },
      { n: 100, has_more: true },
      { n: 50, has_more: false },
    ]);
    assert.equal(new Set(seen).size, 250, 'no duplicates');
    assert.deepEqual(seen, expected, 'newest first, ties by id');
  });

  test('backward with ending_before from the oldest: pages newest first, 100, 100, 49; every newer account once', async () => {
    const oldest = expected.at(-1) as string;
    const pages: Array<{ n: number; has_more: boolean }> = [];
    const chunks: string[][] = [];
    let cursor = oldest;
    for (;;) {
      const r = await list(`?limit=100&ending_before=${cursor}`);
      assert.equal(r.statusCode, 200, r.body);
      const page = r.json() as { has_more: boolean; data: Array<{ id: string }> };
      pages.push({ n: page.data.length, has_more: page.has_more });
      chunks.unshift(page.data.map((a) => a.id)); // each page is newer than the one before it
      if (!page.has_more) break;
      cursor = page.data[0]?.id as string;
      assert.ok(pages.length < 10, 'the walk ends');
    }
    assert.deepEqual(pages, [
      { n: 100, has_more: true },
      { n: 100, has_more: true },
      { n: 49, has_more: false },
    ]);
    assert.deepEqual(chunks.flat(), expected.slice(0, 249));
  });

  test('default limit 10; limit 101, 0, -1 and "ten" are refused naming limit', async () => {
    const r = await list('');
    assert.deepEqual(
      r.json().data.map((a: { id: string }) => a.id),
      expected.slice(0, 10),
    );
    assert.equal(r.json().has_more, true);
    assert.equal((await list('?limit=100')).json().data.length, 100);
    for (const bad of ['101', '0', '-1', 'ten', '1.5', '1e309', '-1e309', 'Infinity', 'NaN']) {
      const e = assertErrorShape(await list(`?limit=${bad}`), 400, `limit=${bad}`);
      assert.equal(e.param, 'limit', `limit=${bad}`);
      assert.equal(e.type, 'invalid_request_error');
    }
  });

  test('an unknown cursor, another platform’s account, or both cursors at once are refused naming the parameter', async () => {
    const theirs = (await gw.generic('POST', '/v1/accounts', key, {})).json().id as string;
    for (const param of ['starting_after', 'ending_before']) {
      for (const id of ['acct_doesnotexist0000', theirs]) {
        const e = assertErrorShape(await list(`?${param}=${id}`), 404, `${param}=${id}`);
        assert.equal(e.param, param);
        assert.equal(e.code, 'resource_missing');
      }
    }
    const both = assertErrorShape(await list(`?starting_after=${expected[5]}&ending_before=${expected[1]}`), 400, 'both cursors');
    assert.equal(both.param, 'ending_before');
  });

  test('created filters in bracket notation: gte, gt, lt, lte, an exact second, and with a cursor', async () => {
    const secs = made.map((x) => ({ id: x.id, s: Math.floor(x.at / 1000) }));
    const mid = secs[100]?.s as number;
    const hi = secs[180]?.s as number;
    const ids = (pred: (s: number) => boolean) => expected.filter((id) => pred(secs.find((x) => x.id === id)?.s as number));
    const all = async (query: string) => {
      const r = await list(`?limit=100&${query}`);
      assert.equal(r.statusCode, 200, `${query}: ${r.body}`);
      assert.equal(r.json().has_more, false, query);
      return r.json().data.map((a: { id: string }) => a.id) as string[];
    };
    assert.deepEqual(
      await all(`created[gte]=${mid}&created[lt]=${hi}`),
      ids((s) => s >= mid && s < hi),
    );
    assert.equal((await all(`created[gte]=${mid}&created[lt]=${hi}`)).length, 80, '40 seconds of two accounts each');
    assert.deepEqual(
      await all(`created[gt]=${mid}&created[lte]=${hi}`),
      ids((s) => s > mid && s <= hi),
    );
    assert.deepEqual(
      await all(`created=${mid}`),
      ids((s) => s === mid),
    );
    assert.equal((await all(`created=${mid}`)).length, 2);
    // Percent-encoded brackets are the same parameter.
    assert.deepEqual(
      await all(`created%5Bgte%5D=${mid}&created%5Blt%5D=${hi}`),
      ids((s) => s >= mid && s < hi),
    );
    // A filter and a cursor together: the page after the cursor within the range.
    const inRange = ids((s) => s >= mid && s < hi);
    assert.deepEqual(await all(`created[gte]=${mid}&created[lt]=${hi}&starting_after=${inRange[9]}`), inRange.slice(10));
    for (const bad of ['created[gte]=soon', 'created[between]=1', 'created=-5']) {
      const e = assertErrorShape(await list(`?${bad}`), 400, bad);
      assert.match(String(e.param), /^created/, bad);
    }
  });

  test('expand[] of a field the object does not offer is 400 naming it, in the query and in a body, before anything is written', async () => {
    // An account offers no expandable field (docs/interface.md): the family's "This property cannot be expanded (…)."
    const r = await list(`?limit=3&expand[]=data.settings`);
    const e = assertErrorShape(r, 400, 'list');
    assert.equal(e.message, 'This property cannot be expanded (data.settings).');
    assert.equal(e.param, 'expand[0]');
    assert.equal(e.code, undefined, 'the family publishes no code for it');
    const one = assertErrorShape(await gw.generic('GET', `/v1/accounts/${expected[0]}?expand[0]=business_profile`, pkey), 400, 'retrieve');
    assert.equal(one.message, 'This property cannot be expanded (business_profile).');
    const upd = await gw.generic('POST', `/v1/accounts/${expected[0]}`, pkey, { expand: ['x'], metadata: { e: '1' } });
    assert.equal(assertErrorShape(upd, 400, 'update').param, 'expand[0]');
    const after = await gw.generic('GET', `/v1/accounts/${expected[0]}`, pkey);
    assert.equal(after.json().metadata.e, undefined, 'the refused update changed nothing');
  });
});

describe('Idempotency-Key on generic POSTs (docs/contract.md §4)', () => {
  const countByMarker = async (marker: string) =>
    (await gw.runtime.store.db.selectFrom('connected_accounts').select('id').where('metadata', 'like', `%${marker}%`).execute()).length;

  test('the same key and body replay the first answer (Idempotent-Replayed: true) and create one account', async () => {
    const body = { country: 'DE', metadata: { marker: 'idem-replay-1' } };
    const first = await gw.generic('POST', '/v1/accounts', key, body, { headers: { 'idempotency-key': 'conv-replay-1' } });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const again = await gw.generic('POST', '/v1/accounts', key, body, { headers: { 'idempotency-key': 'conv-replay-1' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body, first.body, 'the first answer, byte for byte');
    // The same parameters as JSON are the same request.
    const json = await gw.generic('POST', '/v1/accounts', key, body, { json: true, headers: { 'idempotency-key': 'conv-replay-1' } });
    assert.equal(json.json().id, first.json().id);
    assert.equal(await countByMarker('idem-replay-1'), 1);
  });

  test('the same key with a changed body, or on another path, is 400 idempotency_error (as the family documents it) and writes nothing', async () => {
    const first = await gw.generic('POST', '/v1/accounts', key, { metadata: { marker: 'idem-409-1' } }, { headers: { 'idempotency-key': 'conv-409-1' } });
    assert.equal(first.statusCode, 200, first.body);
    const changed = await gw.generic(
      'POST',
      '/v1/accounts',
      key,
      { metadata: { marker: 'idem-409-1', more: 'x' } },
      { headers: { 'idempotency-key': 'conv-409-1' } },
    );
    const e = assertErrorShape(changed, 400, 'changed body');
    assert.equal(e.type, 'idempotency_error');
    const elsewhere = await gw.generic(
      'POST',
      `/v1/accounts/${first.json().id}`,
      key,
      { metadata: { marker: 'idem-409-1' } },
      { headers: { 'idempotency-key': 'conv-409-1' } },
    );
    assert.equal(assertErrorShape(elsewhere, 400, 'another path').type, 'idempotency_error');
    assert.equal(await countByMarker('idem-409-1'), 1);
    assert.deepEqual((await gw.generic('GET', `/v1/accounts/${first.json().id}`, key)).json().metadata, { marker: 'idem-409-1' }, 'the update did not run');
  });

  test('while the first request under a key still runs, the same request is 409 idempotency_key_in_use (invalid_request_error) and writes nothing', async () => {
    // The first request held: its claim as the idempotency plugin writes it (src/idempotency/plugin.ts), within its lease.
    const body = { metadata: { marker: 'idem-inuse-1' } };
    const scope = `${gw.merchant.merchant_id}:${gw.merchant.account_id}`;
    const now = gw.clock.now;
    await gw.runtime.store.transaction((tx) =>
      tx
        .insertInto('idempotency_keys')
        .values({
          id: `idr_held_${now}`,
          scope,
          idem_key: 'conv-inuse-1',
          request_hash: gw.runtime.keyring.fingerprint(`POST /v1/accounts\n${JSON.stringify(body)}`),
          status: 'started',
          response_status: 0,
          response_type: '',
          response_body: '',
          locked_until: now + IDEMPOTENCY_LEASE_MS,
          created_at: now,
          expires_at: now + 86_400_000,
        })
        .execute(),
    );
    const started = Date.now();
    const second = await gw.generic('POST', '/v1/accounts', key, body, { json: true, headers: { 'idempotency-key': 'conv-inuse-1' } });
    const e = assertErrorShape(second, 409, 'key in use');
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.code, 'idempotency_key_in_use');
    assert.ok(Date.now() - started >= IDEMPOTENCY_WAIT_MS - 100, 'it waited for the first request’s answer first');
    assert.equal(await countByMarker('idem-inuse-1'), 0, 'nothing written');
    // Once the held request's lease lapses (it never answered), a retry runs it, once.
    gw.clock.advance(IDEMPOTENCY_LEASE_MS + 1_000);
    const retry = await gw.generic('POST', '/v1/accounts', key, body, { json: true, headers: { 'idempotency-key': 'conv-inuse-1' } });
    assert.equal(retry.statusCode, 200, retry.body);
    assert.equal(await countByMarker('idem-inuse-1'), 1);
  });

  test('a refused request stores nothing under its key: the corrected retry with the same key runs', async () => {
    const bad = await gw.generic(
      'POST',
      '/v1/accounts',
      key,
      { colour: 'red', metadata: { marker: 'idem-fix-1' } },
      { headers: { 'idempotency-key': 'conv-fix-1' } },
    );
    assert.equal(assertErrorShape(bad, 400, 'unknown parameter').param, 'colour');
    const fixed = await gw.generic('POST', '/v1/accounts', key, { metadata: { marker: 'idem-fix-1' } }, { headers: { 'idempotency-key': 'conv-fix-1' } });
    assert.equal(fixed.statusCode, 200, fixed.body);
    assert.equal(await countByMarker('idem-fix-1'), 1);
  });

  test('keys are scoped per platform account: another account’s same key is its own request', async () => {
    const other = await gw.newMerchant({ name: 'idem scope' });
    const okey = await gw.apiKey(other);
    const mine = await gw.generic('POST', '/v1/accounts', key, { metadata: { marker: 'idem-scope-1' } }, { headers: { 'idempotency-key': 'conv-scope-1' } });
    const theirs = await gw.generic('POST', '/v1/accounts', okey, { metadata: { marker: 'idem-scope-1' } }, { headers: { 'idempotency-key': 'conv-scope-1' } });
    assert.equal(theirs.statusCode, 200, theirs.body);
    assert.notEqual(theirs.json().id, mine.json().id);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal(await countByMarker('idem-scope-1'), 2);
  });

  test('an Idempotency-Key that is not 1 to 255 printable characters is refused naming it', async () => {
    for (const bad of ['k'.repeat(256), 'a b']) {
      const e = assertErrorShape(await gw.generic('POST', '/v1/accounts', key, {}, { headers: { 'idempotency-key': bad } }), 400, `key ${bad.slice(0, 10)}`);
      assert.equal(e.param, 'Idempotency-Key');
    }
  });

  test('the same key on another object’s path is refused (docs/contract.md §4: "another body (or path)"; 400 idempotency_error, §24), and that object is left alone', async () => {
    const a = (await gw.generic('POST', '/v1/accounts', key, {})).json().id as string;
    const b = (await gw.generic('POST', '/v1/accounts', key, {})).json().id as string;
    const body = { metadata: { marker: 'idem-path-1' } };
    assert.equal((await gw.generic('POST', `/v1/accounts/${a}`, key, body, { headers: { 'idempotency-key': 'conv-path-1' } })).statusCode, 200);
    const other = await gw.generic('POST', `/v1/accounts/${b}`, key, body, { headers: { 'idempotency-key': 'conv-path-1' } });
    assert.equal(other.statusCode, 400, `answered ${other.statusCode} for ${other.json().id ?? other.body}`);
    assert.equal(other.json().error.type, 'idempotency_error');
    assert.deepEqual((await gw.generic('GET', `/v1/accounts/${b}`, key)).json().metadata, {});
  });

  test('a replayed answer carries a Request-Id header like every other answer', async () => {
    const body = { metadata: { marker: 'idem-rid-1' } };
    await gw.generic('POST', '/v1/accounts', key, body, { headers: { 'idempotency-key': 'conv-rid-1' } });
    const again = await gw.generic('POST', '/v1/accounts', key, body, { headers: { 'idempotency-key': 'conv-rid-1' } });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.ok(again.headers['request-id'], 'request-id');
  });
});

describe('the per-key rate limit (token bucket)', () => {
  test('past the bucket, the next quick request with one key is 429 with Retry-After; another key of the same account has its own bucket; the bucket refills', async () => {
    // One request a second (a burst of one): every step below but the wait takes well under a
    // second even on a loaded machine, where a bucket of 5 refilled (one token per 200 ms)
    // between the 5th and the 6th request. The burst and refill arithmetic: src/apikeys/rate-limit.test.ts.
    const small = await testGateway({ settings: { api_rate_limit: 1 } });
    try {
      const k1 = await small.apiKey();
      const k2 = await small.apiKey();
      assert.equal((await small.generic('GET', '/v1/accounts?limit=1', k1)).statusCode, 200);
      const limited = await small.generic('GET', '/v1/accounts?limit=1', k1);
      const e = assertErrorShape(limited, 429, '2nd request');
      assert.equal(e.code, 'rate_limit');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1, `Retry-After ${limited.headers['retry-after']}`);
      // A POST past the limit is refused before it runs: nothing is created.
      const post = await small.generic('POST', '/v1/accounts', k1, { metadata: { marker: 'limited' } });
      assert.equal(post.statusCode, 429);
      assert.equal((await small.runtime.store.db.selectFrom('connected_accounts').select('id').execute()).length, 0);
      // The other key of the same account is not slowed down by the first one.
      assert.equal((await small.generic('GET', '/v1/accounts?limit=1', k2)).statusCode, 200);
      // A bad key is 401, not 429, and spends nobody's tokens.
      assert.equal((await small.generic('GET', '/v1/accounts', `sk_test_${'Z'.repeat(48)}`)).statusCode, 401);
      await sleep(retry * 1000 + 50);
      assert.equal((await small.generic('GET', '/v1/accounts?limit=1', k1)).statusCode, 200, 'after Retry-After the key works again');
    } finally {
      await small.close();
    }
  });
});

describe('Request-Id, unknown URLs and hostile input', () => {
  test('every answer carries a Request-Id header: created, listed, refused, not found, unauthenticated', async () => {
    const answers = [
      await gw.generic('POST', '/v1/accounts', key, {}),
      await gw.generic('GET', '/v1/accounts', key),
      await gw.generic('POST', '/v1/accounts', key, { colour: 'red' }),
      await gw.generic('GET', '/v1/accounts/acct_nope0000', key),
      await gw.generic('GET', '/v1/accounts', 'sk_test_nope'),
      await gw.generic('GET', '/v1/accounts/x/y', key),
    ];
    const ids = answers.map((r) => r.headers['request-id']);
    for (const [i, id] of ids.entries()) assert.match(String(id), /^[A-Za-z0-9._:-]{8,128}$/, `answer ${i}`);
    assert.equal(new Set(ids).size, ids.length, 'one per request');
  });

  test('an unknown generic URL or method answers 404 in the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/v1/accounts/x/y'],
      ['POST', '/v1/accounts/acct_x/reject/now'],
      ['DELETE', '/v1/accounts'],
      ['GET', '/v1/transfers/tr_x/reversals/trr_x/extra'],
      ['GET', '/v1/payments/pay_x/capture/x'],
    ] as const) {
      const e = assertErrorShape(await gw.generic(method, url, key), 404, `${method} ${url}`);
      assert.match(String(e.message), /Unrecognized request URL/);
    }
    const put = await gw.app.inject({ method: 'PUT', url: '/v1/accounts', headers: { authorization: `Bearer ${key}` } });
    assert.equal(put.statusCode, 404);
    assert.equal(JSON.parse(put.body).error.type, 'invalid_request_error');
  });

  test('an unknown generic URL checks the key before the body: a bad key and a bad body answer 401', async () => {
    // `%2e%2e` reaches no route (the fuzz found it, seed 484546731): the 404 handler parsed the
    // body first and told an unknown caller its body was wrong.
    const deep = `metadata[k]${'[a]'.repeat(40)}=x`;
    for (const url of ['/v1/transfers/tr_x/reversals/%2e%2e', '/v1/accounts/x/y', '/v1/payments/pay_x/capture/x']) {
      for (const [contentType, payload] of [
        ['application/x-www-form-urlencoded', deep],
        ['application/json', '{"a":'],
      ] as const) {
        const r = await gw.app.inject({ method: 'POST', url, payload, headers: { authorization: 'Bearer sk_test_nope', 'content-type': contentType } });
        const res: TestResponse = { statusCode: r.statusCode, headers: r.headers as Record<string, string>, body: r.body, json: () => JSON.parse(r.body) };
        assertErrorShape(res, 401, `${url} ${contentType}`);
      }
      // With the key, the same request is told the body is wrong (400) or the path is unknown (404), never a 5xx.
      const ok = await gw.app.inject({
        method: 'POST',
        url,
        payload: deep,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.ok([400, 404].includes(ok.statusCode), `${url}: ${ok.statusCode} ${ok.body.slice(0, 200)}`);
    }
  });

  /** A raw POST to /v1/accounts with the key: never a 5xx, and a refusal in the error shape that created nothing. */
  const raw = async (payload: string | Buffer, contentType: string, status: number) => {
    const before = (await gw.runtime.store.db.selectFrom('connected_accounts').select('id').execute()).length;
    const r = await gw.app.inject({
      method: 'POST',
      url: '/v1/accounts',
      payload,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    });
    const res: TestResponse = { statusCode: r.statusCode, headers: r.headers as Record<string, string>, body: r.body, json: () => JSON.parse(r.body) };
    const e = assertErrorShape(res, status, `${contentType} ${String(payload).slice(0, 40)}`);
    const afterCount = (await gw.runtime.store.db.selectFrom('connected_accounts').select('id').execute()).length;
    assert.equal(afterCount, before, 'nothing created');
    return e;
  };

  test('malformed JSON, a non-object JSON body, invalid UTF-8: 400 in the error shape', async () => {
    await raw('{"country":', 'application/json', 400);
    await raw('{"country":"US",}', 'application/json', 400);
    await raw('[]', 'application/json', 400);
    await raw('"text"', 'application/json', 400);
    await raw(Buffer.from([0x63, 0x3d, 0xff, 0xfe, 0x80]), 'application/x-www-form-urlencoded', 400);
  });

  test('a body past the limit: 413 in the error shape', async () => {
    const e = await raw(`metadata[k]=${'v'.repeat(gw.settings.body_limit_bytes + 10)}`, 'application/x-www-form-urlencoded', 413);
    assert.equal(e.type, 'invalid_request_error');
  });

  test('hostile forms: deep brackets, a flood of fields, arrays where objects go, repeated scalars: 400 in the error shape', async () => {
    await raw(`metadata${'[a]'.repeat(1000)}=1`, 'application/x-www-form-urlencoded', 400);
    await raw(`business_profile${'[x]'.repeat(9)}=1`, 'application/x-www-form-urlencoded', 400);
    await raw(Array.from({ length: 6000 }, (_, i) => `metadata[k${i}]=1`).join('&'), 'application/x-www-form-urlencoded', 400);
    const arr = await raw('metadata[a][0]=1', 'application/x-www-form-urlencoded', 400);
    assert.equal(arr.param, 'metadata');
    const twice = await raw('country=US&country=GB', 'application/x-www-form-urlencoded', 400);
    assert.equal(twice.param, 'country');
    const deepJson = `${'{"business_profile":'.repeat(5000)}1${'}'.repeat(5000)}`;
    await raw(deepJson, 'application/json', 400);
  });

  test('hostile query strings on a list: deep brackets, a flood of parameters, arrays for scalars: 400 naming the parameter', async () => {
    const q = async (query: string) => assertErrorShape(await gw.generic('GET', `/v1/accounts?${query}`, key), 400, query.slice(0, 60));
    assert.equal((await q(`created${'[a]'.repeat(50)}=1`)).param?.toString().startsWith('created'), true);
    await q(Array.from({ length: 500 }, (_, i) => `x${i}=1`).join('&'));
    assert.equal((await q('starting_after[]=acct_x')).param, 'starting_after');
    assert.equal((await q('limit=1&limit=2')).param, 'limit');
    assert.equal((await q('colour=red')).param, 'colour');
  });

  test('a NUL character in a path id or a query parameter is refused (4xx in the error shape), never a 500', async () => {
    for (const url of ['/v1/accounts/%00', '/v1/accounts/acct_x%00', '/v1/accounts?starting_after=acct_%00', '/v1/accounts?ending_before=%00']) {
      const r = await gw.generic('GET', url, key);
      assert.ok(r.statusCode === 400 || r.statusCode === 404, `${url}: ${r.statusCode} ${r.body}`);
      assertErrorShape(r, r.statusCode, url);
    }
    const del = await gw.generic('DELETE', '/v1/accounts/acct_%00', key);
    assert.ok(del.statusCode === 400 || del.statusCode === 404, `DELETE: ${del.statusCode}`);
  });

  test('a path parameter past the router’s length limit, or a malformed URL, on a generic path is refused in the error shape', async () => {
    assertErrorShape(await gw.generic('GET', `/v1/accounts/acct_${'a'.repeat(200)}`, key), 400, 'long id');
    assertErrorShape(await gw.generic('GET', '/v1/accounts/%E0%A4%A', key), 400, 'malformed percent-encoding');
  });

  test('a generic path that matches no route, refused by a hook (a malformed Idempotency-Key), is answered in the error shape, the key checked first as on every route', async () => {
    const send = (authorization: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/v1/transfers/tr_x/reversals/%2e%2e',
        headers: { authorization, 'idempotency-key': 'été', 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'metadata%5Bk%5D=1',
      });
    for (const [authorization, status] of [
      ['Bearer sk_test_nope', 401],
      [`Bearer ${key}`, 400],
    ] as const) {
      const r = await send(authorization);
      assertErrorShape(
        { statusCode: r.statusCode, headers: r.headers as Record<string, string>, body: r.body, json: () => r.json() },
        status,
        `malformed Idempotency-Key on an unknown path, ${authorization.slice(0, 14)}`,
      );
      assert.ok(r.headers['request-id']);
    }
  });
});
