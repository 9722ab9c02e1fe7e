// Frame origins per account (docs/contract.md §14): what an origin may be, the stored list on both
// engines, and the operator commands `frame-origin add|remove|list`, whose changes reach
// the frame-ancestors of the account's pages.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { directPayment, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { authorise, pathOf } from '../threeds/testing.js';
import { frameOriginsOf, MAX_FRAME_ORIGINS, normaliseFrameOrigin } from './frame-origins.js';

describe('what a frame origin may be', () => {
  const accepted: Array<[string, string]> = [
    ['https://shop.example', 'https://shop.example'],
    ['https://shop.example/', 'https://shop.example'],
    ['  HTTPS://Shop.Example  ', 'https://shop.example'],
    ['https://shop.example:443', 'https://shop.example'],
    ['https://shop.example:8443', 'https://shop.example:8443'],
    ['https://*.shop.example', 'https://*.shop.example'],
    ['https://*.shop.example:8443', 'https://*.shop.example:8443'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['https://203.0.113.7', 'https://203.0.113.7'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://shop.localhost:8080', 'http://shop.localhost:8080'],
    ['http://127.0.0.1:5173', 'http://127.0.0.1:5173'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    // A wildcard under a public suffix names one registrant's subdomains (issue 29).
    ['https://*.shop.co.uk', 'https://*.shop.co.uk'],
    ['https://*.mine.github.io', 'https://*.mine.github.io'],
  ];
  for (const [given, stored] of accepted) {
    test(`${JSON.stringify(given)} is stored as ${stored}`, () => {
      assert.equal(normaliseFrameOrigin(given), stored);
    });
  }

  const refused: Array<[string, RegExp]> = [
    ['', /1 to 255 characters/],
    ['shop.example', /scheme and host only/],
    ['https://shop.example/checkout', /scheme and host only/],
    ['https://shop.example?x=1', /scheme and host only/],
    ['https://shop.example#top', /scheme and host only/],
    ['https://user:pw@shop.example', /scheme and host only/],
    ['ftp://shop.example', /scheme and host only/],
    ["'self'", /scheme and host only/],
    ['*', /scheme and host only/],
    ['https://*', /only wildcard is a leading/],
    ['https://*.com', /wildcard needs at least two labels/],
    // A wildcard over a public suffix (the Public Suffix List, ICANN and private sections; issue 29).
    ['https://*.co.uk', /a wildcard may not cover a public suffix: co\.uk is on the Public Suffix List/],
    ['https://*.CO.UK:8443', /co\.uk is on the Public Suffix List/],
    ['https://*.com.au', /com\.au is on the Public Suffix List/],
    ['https://*.github.io', /github\.io is on the Public Suffix List/],
    ['https://*.herokuapp.com', /herokuapp\.com is on the Public Suffix List/],
    ['https://*.s3.amazonaws.com', /s3\.amazonaws\.com is on the Public Suffix List/],
    ['https://*.anything.ck', /anything\.ck is on the Public Suffix List/], // under the list's wildcard rule *.ck
    ['https://shop.*.example', /only wildcard is a leading/],
    ['https://*.*.shop.example', /only wildcard is a leading/],
    ['https://shop.example:*', /only wildcard is a leading/],
    ['https://*.203.0.113.7', /host or port is not valid/],
    ['https://*.[::1]', /host or port is not valid/],
    ['https://shop.example:99999', /host or port is not valid/],
    ['https://shop_example.com', /not a valid name/],
    ['https://shop.example.', /not a valid name/],
    ["https://shop.example;script-src 'unsafe-inline'", /scheme and host only/],
    ['https://shop.example https://evil.example', /scheme and host only/],
    ['http://shop.example', /http is allowed for localhost only/],
    ['http://10.0.0.5:3000', /http is allowed for localhost only/],
    [`https://${'a'.repeat(250)}.example`, /1 to 255 characters/],
  ];
  for (const [given, why] of refused) {
    test(`${JSON.stringify(given.slice(0, 60))} is refused`, () => {
      assert.throws(() => normaliseFrameOrigin(given), why);
    });
  }
});

describe('stored per account', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await testGateway();
    useDatabase(gw.database_url, TEST_MASTER_KEY);
  });
  after(async () => {
    await gw.close();
  });

  /** frame-ancestors of a real page of the account: its 3-D Secure challenge page. */
  async function framingOf(merchant = gw.merchant): Promise<{ ancestors: string; xfo: string | undefined }> {
    const x = await authorise(gw, directPayment(merchant, { card: '4000000000003220' }), merchant);
    const r = await gw.app.inject({ url: pathOf(x.threeds_url) });
    assert.equal(r.statusCode, 200);
    const ancestors = /frame-ancestors ([^;]+)/.exec(r.headers['content-security-policy'] as string)?.[1] as string;
    return { ancestors, xfo: r.headers['x-frame-options'] as string | undefined };
  }

  test('service: add normalises and is idempotent, list is per account, remove says whether it was listed', async () => {
    const a = await gw.newMerchant();
    const b = await gw.newMerchant();
    const frames = frameOriginsOf(gw.runtime.store);
    assert.deepEqual(await frames.list(a.account_id), []);
    assert.equal(await frames.add(a.account_id, 'HTTPS://Shop.Example/'), 'https://shop.example');
    assert.equal(await frames.add(a.account_id, 'https://shop.example'), 'https://shop.example');
    await frames.add(a.account_id, 'http://localhost:3000');
    assert.deepEqual(await frames.list(a.account_id), ['http://localhost:3000', 'https://shop.example']);
    assert.deepEqual(await frames.list(b.account_id), [], 'another account sees none of them');
    assert.equal(await frames.remove(a.account_id, 'https://shop.example/'), true);
    assert.equal(await frames.remove(a.account_id, 'https://shop.example'), false);
    assert.deepEqual(await frames.list(a.account_id), ['http://localhost:3000']);
    await assert.rejects(frames.add('999999', 'https://shop.example'), /account 999999 does not exist/);
  });

  test(`at most ${MAX_FRAME_ORIGINS} per account`, async () => {
    const m = await gw.newMerchant();
    const frames = frameOriginsOf(gw.runtime.store);
    for (let i = 0; i < MAX_FRAME_ORIGINS; i++) await frames.add(m.account_id, `https://s${i}.shop.example`);
    await assert.rejects(frames.add(m.account_id, 'https://one-more.example'), /already has 20 frame origins/);
    assert.equal(await frames.add(m.account_id, 'https://s0.shop.example'), 'https://s0.shop.example', 'a listed one is still fine');
    assert.equal((await frames.list(m.account_id)).length, MAX_FRAME_ORIGINS);
  });

  test('a wildcard over a public suffix stored before the rule: ignored when framing, listed as such, removable', async () => {
    const m = await gw.newMerchant();
    const account = m.account_id;
    const frames = frameOriginsOf(gw.runtime.store);
    await gw.runtime.store.transaction((tx) =>
      tx
        .insertInto('account_frame_origins')
        .values(['https://*.co.uk', 'https://*.github.io'].map((origin) => ({ account_id: account, origin, created_at: 0 })))
        .execute(),
    );
    frames.invalidate();
    assert.deepEqual(await framingOf(m), { ancestors: "'none'", xfo: 'DENY' }, 'no one frames the page through them');
    await frames.add(account, 'https://shop.example');
    assert.deepEqual(await framingOf(m), { ancestors: 'https://shop.example', xfo: undefined }, 'the valid origin still does');

    const listed = await runCli('frame-origin', 'list', '--account', account);
    assert.equal(
      listed.stdout,
      'https://*.co.uk  (ignored when framing: co.uk is a public suffix; remove it)\n' +
        'https://*.github.io  (ignored when framing: github.io is a public suffix; remove it)\n' +
        'https://shop.example\n',
    );
    const again = await runCli('frame-origin', 'add', '--account', account, 'https://*.co.uk');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: "https:\/\/\*\.co\.uk" is not a frame origin: a wildcard may not cover a public suffix/);

    const removed = await runCli('frame-origin', 'remove', '--account', account, 'HTTPS://*.CO.UK/');
    assert.deepEqual([removed.code, removed.stdout, removed.stderr], [0, 'removed HTTPS://*.CO.UK/\n', '']);
    assert.equal(await frames.remove(account, 'https://*.github.io'), true, 'the service removes one too');
    assert.deepEqual(await frames.list(account), ['https://shop.example']);
  });

  test('the list is cached briefly; a change made here is seen at once', async () => {
    const m = await gw.newMerchant();
    const frames = frameOriginsOf(gw.runtime.store);
    assert.deepEqual(await frames.list(m.account_id), []);
    // Written behind the service's back (as another process would): the cached list stands.
    await gw.runtime.store.transaction((tx) =>
      tx.insertInto('account_frame_origins').values({ account_id: m.account_id, origin: 'https://other.example', created_at: 0 }).execute(),
    );
    assert.deepEqual(await frames.list(m.account_id), []);
    frames.invalidate();
    assert.deepEqual(await frames.list(m.account_id), ['https://other.example']);
  });

  test('CLI: add, list, remove; the account’s pages follow; bad origins and unknown accounts are refused', async () => {
    const m = await gw.newMerchant();
    const account = m.account_id;
    assert.deepEqual(await framingOf(m), { ancestors: "'none'", xfo: 'DENY' });

    const added = await runCli('frame-origin', 'add', '--account', account, 'https://Shop.Example/', 'http://localhost:3000');
    assert.deepEqual([added.code, added.stdout, added.stderr], [0, 'added https://shop.example\nadded http://localhost:3000\n', '']);
    const listed = await runCli('frame-origin', 'list', '--account', account);
    assert.equal(listed.stdout, 'http://localhost:3000\nhttps://shop.example\n');
    assert.deepEqual(JSON.parse((await runCli('frame-origin', 'list', '--account', account, '--json')).stdout), [
      'http://localhost:3000',
      'https://shop.example',
    ]);

    // The CLI is another process in production; the gateway sees its change within the cache TTL.
    frameOriginsOf(gw.runtime.store).invalidate();
    assert.deepEqual(await framingOf(m), { ancestors: 'http://localhost:3000 https://shop.example', xfo: undefined });

    const removed = await runCli('frame-origin', 'remove', '--account', account, 'https://shop.example', 'https://never.example');
    assert.deepEqual([removed.code, removed.stdout], [0, 'removed https://shop.example\nnot listed https://never.example\n']);
    await runCli('frame-origin', 'remove', '--account', account, 'http://localhost:3000');
    const none = await runCli('frame-origin', 'list', '--account', account);
    assert.match(none.stdout, /^none: the account's pages cannot be framed/);
    frameOriginsOf(gw.runtime.store).invalidate();
    assert.deepEqual(await framingOf(m), { ancestors: "'none'", xfo: 'DENY' });

    const bad = await runCli('frame-origin', 'add', '--account', account, 'https://shop.example/path');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: "https:\/\/shop.example\/path" is not a frame origin: give the scheme and host only/);
    const insecure = await runCli('frame-origin', 'add', '--account', account, 'http://shop.example');
    assert.equal(insecure.code, 1);
    assert.match(insecure.stderr, /http is allowed for localhost only; use https/);
    assert.equal((await runCli('frame-origin', 'list', '--account', account, '--json')).stdout, '[]\n', 'nothing stored by a refusal');

    const unknown = await runCli('frame-origin', 'add', '--account', '1', 'https://shop.example');
    assert.deepEqual([unknown.code, unknown.stderr], [1, 'error: no account "1" (npx tollgate merchant list shows the accounts)\n']);
    const missing = await runCli('frame-origin', 'add', '--account', account);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /give at least one ORIGIN\nusage: npx tollgate frame-origin add --account ID ORIGIN\.\.\./);
    const help = await runCli('frame-origin', 'add', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /https:\/\/\*\.shop\.example \(any subdomain\)/);
  });
});
