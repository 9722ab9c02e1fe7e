// Portal settings and users (docs/contract.md §19; issue 14): every setting round-trips through the
// same domain code as the operator CLI and takes effect on the API; a new secret is shown
// once (a repeated submission of the same form neither shows nor makes another); nothing
// stored is shown in clear; roles and merchants are kept apart; every action is audited.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { CreatedMerchant } from '../merchants/service.js';
import { frameOriginsOf } from '../pages/index.js';
import { listBlocklist, thresholdsFor } from '../risk/settings.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { formFields, PortalAgent, signedInUser, TEST_PASSWORD } from './testing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(() => gw.close());
// (The test clock stands still, so audit lines of one millisecond are read ordered by outcome.)
// Sign-ins are rate-limited per IP on the gateway's clock: give each test a fresh allowance.
beforeEach(() => gw.clock.advance(61_000));

const SETTINGS = '/portal/settings';
const secretOn = (body: string) => /id="new-secret">([^<]+)</.exec(body)?.[1];
const linkOn = (body: string) => /id="setup-link">([^<]+)</.exec(body)?.[1];
const audits = (merchant_id: string, action: string) =>
  gw.runtime.store.db
    .selectFrom('portal_audit')
    .selectAll()
    .where('merchant_id', '=', merchant_id)
    .where('action', '=', action)
    .orderBy('outcome')
    .orderBy('audit_id')
    .execute();

/** A merchant of its own (so rotating its keys touches no other test) with a signed-in owner. */
async function ownerOfNewMerchant(role = 'owner') {
  const m = await gw.newMerchant();
  const u = await signedInUser(gw, { role, merchant_id: m.merchant_id });
  return { m, ...u };
}

/** A signed /v1/retrievalTrans call (the API that checks the IP allow-list). */
function query(m: CreatedMerchant, remoteAddress = '127.0.0.1', secret_key = m.secret_key) {
  return gw.post(
    '/v1/retrievalTrans',
    { merchant_id: m.merchant_id, account_id: m.account_id, order_nos: 'NONE-1' },
    { merchant: { ...m, secret_key }, format: 'form', remoteAddress },
  );
}

describe('settings: who may open them, and what they show', () => {
  test('owners and admins open the settings; operators and viewers get 403; no stored secret is shown in clear', async () => {
    const { m, agent } = await ownerOfNewMerchant('admin');
    const page = await agent.get(SETTINGS);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, new RegExp(`id="settings-account">${m.account_id}<`));
    assert.ok(!page.body.includes(m.secret_key), 'the signing key is not shown');
    assert.ok(page.body.includes(`…${m.secret_key.slice(-4)}`), 'its last four are');
    assert.ok(!page.body.includes(m.webhook_secret), 'the notification secret is not shown');
    for (const role of ['operator', 'viewer']) {
      const u = await signedInUser(gw, { role, merchant_id: m.merchant_id });
      assert.equal((await u.agent.get(SETTINGS)).status, 403, role);
      const post = await u.agent.request('POST', `${SETTINGS}/signing-key/rotate`, { ...formFields(page.body, `${SETTINGS}/signing-key/rotate`) });
      assert.equal(post.status, 403, `${role} cannot post either`);
    }
  });
});

describe('signing key', () => {
  test('rotate: the new secret is shown once and signs; a second submission of the same form shows nothing and rotates nothing; retire ends the old key', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const page = await agent.get(SETTINGS);
    const fields = formFields(page.body, `${SETTINGS}/signing-key/rotate`);
    const first = await agent.request('POST', `${SETTINGS}/signing-key/rotate`, fields);
    assert.equal(first.status, 200, first.body);
    const secret = secretOn(first.body) ?? '';
    assert.match(secret, /^[0-9a-f]{48}$/);
    assert.notEqual(secret, m.secret_key);

    const again = await agent.request('POST', `${SETTINGS}/signing-key/rotate`, fields);
    assert.equal(again.status, 303);
    assert.equal(again.location, `${SETTINGS}?done=key_rotated`);
    assert.equal(secretOn(again.body), undefined, 'not shown again');
    const reused = await agent.request('POST', `${SETTINGS}/notification-secret/rotate`, fields);
    assert.equal(reused.status, 409, 'a form token used for another form is refused as a page');
    assert.match(reused.body, /reload the page/);
    const keys = await gw.runtime.store.db.selectFrom('account_keys').selectAll().where('account_id', '=', m.account_id).execute();
    assert.deepEqual(keys.map((k) => k.status).sort(), ['active', 'retiring'], 'rotated once');
    assert.ok(
      keys.every((k) => !k.secret_enc.includes(secret)),
      'never stored in clear',
    );

    assert.equal((await query(m, '127.0.0.1', secret)).statusCode, 200, 'the new key signs');
    assert.equal((await query(m)).statusCode, 200, 'the old one still verifies until retired');
    const after = await agent.get(SETTINGS);
    assert.ok(!after.body.includes(secret));
    assert.ok(after.body.includes(`…${secret.slice(-4)}`));

    const retire = await agent.submit(SETTINGS, `${SETTINGS}/signing-key/retire`);
    assert.equal(retire.status, 303);
    assert.equal((await query(m)).statusCode, 401, 'the old key is retired');
    assert.equal((await query(m, '127.0.0.1', secret)).statusCode, 200);
    const fresh = formFields((await agent.get(SETTINGS)).body, `${SETTINGS}/api-keys`);
    const nothing = await agent.request('POST', `${SETTINGS}/signing-key/retire`, fresh);
    assert.equal(nothing.status, 409, 'nothing left to retire');

    const log = await audits(m.merchant_id, 'settings.signing_key.rotate');
    assert.deepEqual(
      log.map((a) => [a.outcome, a.target]),
      [['ok', m.account_id]],
    );
    assert.ok(log.every((a) => !a.detail.includes(secret)));
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.signing_key.retire')).map((a) => a.outcome),
      ['ok', 'refused'],
    );
  });
});

describe('API keys', () => {
  test('created in the portal (shown once) it works as Bearer on /v1/balance; revoked it gets 401; another merchant’s key id is 404', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const page = await agent.get(SETTINGS);
    const fields = { ...formFields(page.body, `${SETTINGS}/api-keys`), label: 'Shop <server>' };
    const made = await agent.request('POST', `${SETTINGS}/api-keys`, fields);
    assert.equal(made.status, 200, made.body);
    const key = secretOn(made.body) ?? '';
    assert.match(key, /^sk_test_[A-Za-z0-9]{48}$/);
    const again = await agent.request('POST', `${SETTINGS}/api-keys`, fields);
    assert.equal(again.status, 303, 'a double submission makes no second key');
    assert.equal((await gw.runtime.apiKeys.list(m.account_id)).length, 1);

    assert.equal((await gw.generic('GET', '/v1/balance', key)).statusCode, 200);
    const nul = await agent.submit(SETTINGS, `${SETTINGS}/api-keys`, { label: 'a\u0000b' });
    assert.equal(nul.status, 400, 'no control characters (PostgreSQL refuses NUL)');
    const listed = await agent.get(SETTINGS);
    assert.ok(!listed.body.includes(key), 'the secret is not listed');
    assert.ok(listed.body.includes(`sk_test_…${key.slice(-4)}`));
    assert.ok(listed.body.includes('Shop &lt;server&gt;'), 'the label, escaped');
    const [row] = await gw.runtime.apiKeys.list(m.account_id);
    assert.ok(row);

    const other = await gw.newMerchant();
    const theirs = await gw.runtime.apiKeys.create(other.account_id, 'theirs');
    const foreign = await agent.request('POST', `${SETTINGS}/api-keys/${theirs.key_id}/revoke`, formFields(listed.body, `${SETTINGS}/api-keys`));
    assert.equal(foreign.status, 404);
    assert.equal((await gw.generic('GET', '/v1/balance', theirs.secret)).statusCode, 200, 'their key still works');

    const revoke = await agent.submit(SETTINGS, `${SETTINGS}/api-keys/${row.key_id}/revoke`);
    assert.equal(revoke.status, 303);
    assert.equal(revoke.location, `${SETTINGS}?done=apikey_revoked`);
    assert.equal((await gw.generic('GET', '/v1/balance', key)).statusCode, 401);
    assert.match((await agent.get(SETTINGS)).body, /revoked/);

    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.apikey.create')).map((a) => a.outcome),
      ['ok'],
    );
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.apikey.revoke')).map((a) => [a.outcome, a.target]),
      [
        ['ok', row.key_id],
        ['refused', theirs.key_id],
      ],
    );
  });
});

describe('IP allow-list', () => {
  test('an added range lets its addresses query; others are refused as the API does; removed, it stops; invalid input is a 400 naming it', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    assert.equal((await query(m, '203.0.113.9')).statusCode, 403, 'not yet allowed');
    const add = await agent.submit(SETTINGS, `${SETTINGS}/ips/add`, { cidr: '203.0.113.0/24' });
    assert.equal(add.status, 303, add.body);
    assert.equal(add.location, `${SETTINGS}?done=ip_added`);
    assert.deepEqual(await gw.runtime.merchants.listIps(m.account_id), ['127.0.0.1/32', '203.0.113.0/24']);
    assert.match((await agent.get(add.location)).body, /id="notice">The address was added/);
    assert.equal((await query(m, '203.0.113.9')).statusCode, 200);
    const refused = await query(m, '198.51.100.7');
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().return_message, '0403:IP not allowed');

    const bad = await agent.submit(SETTINGS, `${SETTINGS}/ips/add`, { cidr: '300.1.2.3/8' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /&quot;300\.1\.2\.3\/8&quot; is not an IP address or CIDR range/);

    const remove = await agent.submit(SETTINGS, `${SETTINGS}/ips/remove`, { cidr: '203.0.113.0/24' });
    assert.equal(remove.status, 303);
    assert.equal((await query(m, '203.0.113.9')).statusCode, 403);
    assert.deepEqual(await gw.runtime.merchants.listIps(m.account_id), ['127.0.0.1/32']);
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.ip.add')).map((a) => [a.outcome, a.detail]),
      [
        ['ok', '203.0.113.0/24'],
        ['refused', '300.1.2.3/8: "300.1.2.3/8" is not an IP address or CIDR range'],
      ],
    );
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.ip.remove')).map((a) => a.outcome),
      ['ok'],
    );
  });
});

describe('notification secret', () => {
  test('rotated in the portal, shown once, and the one notifications are signed with', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const page = await agent.get(SETTINGS);
    assert.ok(page.body.includes(`…${m.webhook_secret.slice(-4)}`));
    const fields = formFields(page.body, `${SETTINGS}/notification-secret/rotate`);
    const first = await agent.request('POST', `${SETTINGS}/notification-secret/rotate`, fields);
    assert.equal(first.status, 200);
    const secret = secretOn(first.body) ?? '';
    assert.match(secret, /^whsec_/);
    const creds = await gw.runtime.merchants.credentials(m.merchant_id, m.account_id, true);
    assert.equal(creds?.webhook_secret, secret);
    const again = await agent.request('POST', `${SETTINGS}/notification-secret/rotate`, fields);
    assert.equal(again.status, 303);
    assert.equal((await gw.runtime.merchants.credentials(m.merchant_id, m.account_id, true))?.webhook_secret, secret, 'not rotated again');
    assert.ok(!(await agent.get(SETTINGS)).body.includes(secret));
    assert.equal((await audits(m.merchant_id, 'settings.notification_secret.rotate')).length, 1);
  });
});

describe('risk', () => {
  test('thresholds and blocklists are shown and edited; cards only by fingerprint; bad values are a 400 naming the problem', async () => {
    const { m, agent } = await ownerOfNewMerchant('admin');
    const set = await agent.submit(SETTINGS, `${SETTINGS}/risk/thresholds`, { review: '30', reject: '70' });
    assert.equal(set.status, 303, set.body);
    assert.deepEqual(await thresholdsFor(gw.runtime.store.db, m.account_id), { review: 30, reject: 70 });
    const page = await agent.get(SETTINGS);
    assert.match(page.body, /name="review"[^>]*value="30"/);
    const upside = await agent.submit(SETTINGS, `${SETTINGS}/risk/thresholds`, { review: '90', reject: '10' });
    assert.equal(upside.status, 400);
    assert.match(upside.body, /review must not be above reject/);

    assert.equal((await agent.submit(SETTINGS, `${SETTINGS}/blocklist/add`, { type: 'email', value: 'Fraud@Example.com' })).status, 303);
    assert.equal((await agent.submit(SETTINGS, `${SETTINGS}/blocklist/add`, { type: 'card', value: '4111111111111111' })).status, 303);
    const badBin = await agent.submit(SETTINGS, `${SETTINGS}/blocklist/add`, { type: 'bin', value: '12' });
    assert.equal(badBin.status, 400);
    assert.match(badBin.body, /a BIN is 6 to 8 digits/);
    const badType = await agent.submit(SETTINGS, `${SETTINGS}/blocklist/add`, { type: 'phone', value: '12' });
    assert.equal(badType.status, 400);
    const listed = await agent.get(SETTINGS);
    assert.match(listed.body, /fraud@example\.com/);
    assert.match(listed.body, /fingerprint [0-9a-zA-Z_-]{12}/);
    assert.ok(!listed.body.includes('4111111111111111'), 'never the card number');
    assert.deepEqual((await listBlocklist(gw.runtime.store, m.account_id)).map((b) => b.type).sort(), ['card', 'email']);

    // The email row has its own remove button (its hidden fields); the card is removed by its number.
    const unblock = await agent.submit(SETTINGS, `${SETTINGS}/blocklist/remove`);
    assert.equal(unblock.status, 303, unblock.body);
    assert.equal((await agent.submit(SETTINGS, `${SETTINGS}/blocklist/remove`, { type: 'card', value: '4111111111111111' })).status, 303);
    assert.deepEqual(await listBlocklist(gw.runtime.store, m.account_id), []);
    const log = await audits(m.merchant_id, 'settings.blocklist.add');
    assert.deepEqual(
      log.map((a) => a.outcome),
      ['ok', 'ok', 'refused', 'refused'],
    );
    assert.ok(log.every((a) => !a.detail.includes('4111111111111111')));
    assert.ok(log.some((a) => a.detail.startsWith('card fingerprint ')));
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.risk.thresholds')).map((a) => a.outcome),
      ['ok', 'refused'],
    );
  });
});

describe('checkout frame origins', () => {
  test('added and removed through the FrameOrigins of the checkout; an invalid origin is a 400 naming why', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const add = await agent.submit(SETTINGS, `${SETTINGS}/frame-origins/add`, { origin: 'https://Shop.Example:443' });
    assert.equal(add.status, 303, add.body);
    assert.deepEqual(await frameOriginsOf(gw.runtime.store).list(m.account_id), ['https://shop.example']);
    assert.match((await agent.get(SETTINGS)).body, /https:\/\/shop\.example/);
    const bad = await agent.submit(SETTINGS, `${SETTINGS}/frame-origins/add`, { origin: 'http://shop.example' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /http is allowed for localhost only/);
    assert.equal((await agent.submit(SETTINGS, `${SETTINGS}/frame-origins/remove`)).status, 303);
    assert.deepEqual(await frameOriginsOf(gw.runtime.store).list(m.account_id), []);
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.frame_origin.add')).map((a) => a.outcome),
      ['ok', 'refused'],
    );
    assert.deepEqual(
      (await audits(m.merchant_id, 'settings.frame_origin.remove')).map((a) => a.outcome),
      ['ok'],
    );
  });

  test('a wildcard over a public suffix is a 400 naming the rule; one stored before the rule is shown as ignored and removed', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    for (const origin of ['https://*.co.uk', 'https://*.github.io']) {
      const refused = await agent.submit(SETTINGS, `${SETTINGS}/frame-origins/add`, { origin });
      assert.equal(refused.status, 400, origin);
      assert.match(refused.body, /a wildcard may not cover a public suffix/);
    }
    assert.deepEqual(await frameOriginsOf(gw.runtime.store).list(m.account_id), []);
    await gw.runtime.store.transaction((tx) =>
      tx.insertInto('account_frame_origins').values({ account_id: m.account_id, origin: 'https://*.co.uk', created_at: 0 }).execute(),
    );
    frameOriginsOf(gw.runtime.store).invalidate();
    assert.match((await agent.get(SETTINGS)).body, /https:\/\/\*\.co\.uk<\/span> <em class="ignored">ignored: co\.uk is a public suffix; remove it<\/em>/);
    assert.equal((await agent.submit(SETTINGS, `${SETTINGS}/frame-origins/remove`)).status, 303);
    assert.deepEqual(await frameOriginsOf(gw.runtime.store).list(m.account_id), []);
  });

  test('settings are those of the account shown: a live account’s keys are sk_live_', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const { agent } = await signedInUser(gw, { role: 'owner', merchant_id: live.merchant_id });
    const made = await agent.submit(SETTINGS, `${SETTINGS}/api-keys`, { label: '' });
    assert.match(secretOn(made.body) ?? '', /^sk_live_/);
    assert.equal((await gw.runtime.apiKeys.list(live.account_id)).length, 1);
  });
});

describe('users', () => {
  test('the owner creates an operator (link shown once), who sets a password and cannot open settings or users', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const page = await agent.get('/portal/users');
    assert.equal(page.status, 200);
    const fields = { ...formFields(page.body, '/portal/users'), email: 'Op@Example.com', role: 'operator' };
    const made = await agent.request('POST', '/portal/users', fields);
    assert.equal(made.status, 200, made.body);
    const link = linkOn(made.body) ?? '';
    assert.ok(link.startsWith(`${gw.settings.public_url}/portal/setup/`), link);
    const again = await agent.request('POST', '/portal/users', fields);
    assert.equal(again.status, 303, 'a double submission makes no second user or link');
    assert.equal(linkOn(again.body), undefined);

    const path = new URL(link).pathname;
    const op = new PortalAgent(gw);
    assert.equal((await op.submit(path, path, { password: TEST_PASSWORD, confirm: TEST_PASSWORD })).status, 303);
    assert.equal(
      (await op.submit('/portal/signin', '/portal/signin', { merchant_id: m.merchant_id, email: 'op@example.com', password: TEST_PASSWORD })).status,
      303,
    );
    assert.equal((await op.get('/portal/dashboard')).status !== 303, true, 'signed in');
    assert.equal((await op.get(SETTINGS)).status, 403);
    assert.equal((await op.get('/portal/users')).status, 403);

    const list = await agent.get('/portal/users');
    assert.match(
      list.body,
      /op@example\.com<\/td><td data-label="Role" class="role">operator<\/td><td data-label="Status" class="status">active<\/td><td data-label="Two-step sign-in" class="totp">off/,
    );
    assert.ok(!list.body.includes(path.split('/').pop() ?? 'x'), 'the link is not listed');
    const created = await audits(m.merchant_id, 'user.create');
    assert.deepEqual(
      created.map((a) => [a.outcome, a.target]),
      [['ok', 'op@example.com']],
    );
    assert.ok(created.every((a) => !a.detail.includes(path)));
    const dup = await agent.submit('/portal/users', '/portal/users', { email: 'op@example.com', role: 'viewer' });
    assert.equal(dup.status, 400, 'the e-mail is taken');
    const badRole = await agent.submit('/portal/users', '/portal/users', { email: 'root@example.com', role: 'root' });
    assert.equal(badRole.status, 400);
    assert.match(badRole.body, /The role must be one of owner, admin, operator, viewer/);
    assert.deepEqual(
      (await audits(m.merchant_id, 'user.create')).map((a) => a.outcome),
      ['ok', 'refused', 'refused'],
    );
  });

  test('an admin cannot open the users page', async () => {
    const { agent } = await signedInUser(gw, { role: 'admin' });
    assert.equal((await agent.get('/portal/users')).status, 403);
    assert.ok((await agent.get(SETTINGS)).status === 200);
  });

  test('an owner cannot demote, disable or reset themselves', async () => {
    const { m, agent, user_id } = await ownerOfNewMerchant();
    const page = await agent.get('/portal/users');
    assert.ok(!page.body.includes(`/portal/users/${user_id}/role`), 'no form for oneself');
    const secrets = () => formFields(page.body, '/portal/users');
    for (const [what, fields] of [
      ['role', { role: 'admin' }],
      ['disable', {}],
      ['reset', {}],
    ] as const) {
      const r = await agent.request('POST', `/portal/users/${user_id}/${what}`, { ...secrets(), ...fields });
      assert.equal(r.status, 409, `${what}: ${r.body.slice(0, 300)}`);
      assert.match(r.body, /You cannot/);
    }
    const me = await gw.runtime.store.db.selectFrom('portal_users').selectAll().where('user_id', '=', user_id).executeTakeFirstOrThrow();
    assert.equal(me.role, 'owner');
    assert.equal(me.status, 'active');
    assert.equal((await agent.get('/portal/users')).status, 200, 'still signed in');
    assert.deepEqual(
      (await audits(m.merchant_id, 'user.role')).map((a) => a.outcome),
      ['refused'],
    );
  });

  test('role change, disable (sessions end), enable, reset (new link; optionally without TOTP); each audited', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const op = await signedInUser(gw, { role: 'operator', merchant_id: m.merchant_id, totp: true });
    const base = `/portal/users/${op.user_id}`;
    assert.equal((await agent.submit('/portal/users', `${base}/role`, { role: 'viewer' })).status, 303);
    const row = () => gw.runtime.store.db.selectFrom('portal_users').selectAll().where('user_id', '=', op.user_id).executeTakeFirstOrThrow();
    assert.equal((await row()).role, 'viewer');

    assert.equal((await op.agent.get('/portal/profile')).status, 200);
    const disable = await agent.submit('/portal/users', `${base}/disable`);
    assert.equal(disable.location, '/portal/users?done=user_disabled');
    assert.equal((await op.agent.get('/portal/profile')).status, 303, 'the session ended');
    assert.match((await agent.get('/portal/users')).body, /<td data-label="Status" class="status">disabled<\/td>/);
    assert.equal((await agent.submit('/portal/users', `${base}/enable`)).status, 303);
    assert.equal((await row()).status, 'active');

    const reset = await agent.submit('/portal/users', `${base}/reset`, { totp: 'yes' });
    assert.equal(reset.status, 200, reset.body);
    const link = linkOn(reset.body) ?? '';
    const after = await row();
    assert.equal(after.status, 'invited');
    assert.equal(after.totp_enrolled_at, null, 'two-step sign-in removed');
    const again = new PortalAgent(gw);
    const path = new URL(link).pathname;
    assert.equal((await again.submit(path, path, { password: `${TEST_PASSWORD}-new`, confirm: `${TEST_PASSWORD}-new` })).status, 303);
    assert.equal(
      (await again.submit('/portal/signin', '/portal/signin', { merchant_id: m.merchant_id, email: op.email, password: `${TEST_PASSWORD}-new` })).location,
      '/portal/dashboard',
    );

    for (const action of ['user.role', 'user.disable', 'user.enable', 'user.reset'])
      assert.deepEqual(
        (await audits(m.merchant_id, action)).map((a) => [a.outcome, a.target]),
        [['ok', op.user_id]],
        action,
      );
  });

  test('a locked user shows as locked', async () => {
    const { m, agent } = await ownerOfNewMerchant();
    const v = await signedInUser(gw, { role: 'viewer', merchant_id: m.merchant_id });
    const stranger = new PortalAgent(gw, '10.1.2.3');
    for (let i = 0; i < 10; i++)
      await stranger.submit('/portal/signin', '/portal/signin', { merchant_id: m.merchant_id, email: v.email, password: `not-the-password-${i}` });
    assert.match(
      (await agent.get('/portal/users')).body,
      new RegExp(`${v.email.replace('.', '\\.')}</td><td data-label="Role" class="role">viewer</td><td data-label="Status" class="status">locked`),
    );
  });

  test('another merchant’s user id in a URL is 404 and changes nothing', async () => {
    const { agent } = await ownerOfNewMerchant();
    const other = await ownerOfNewMerchant();
    const theirs = await signedInUser(gw, { role: 'operator', merchant_id: other.m.merchant_id });
    const page = await agent.get('/portal/users');
    for (const [what, fields] of [
      ['role', { role: 'viewer' }],
      ['disable', {}],
      ['enable', {}],
      ['reset', {}],
    ] as const) {
      const r = await agent.request('POST', `/portal/users/${theirs.user_id}/${what}`, { ...formFields(page.body, '/portal/users'), ...fields });
      assert.equal(r.status, 404, what);
    }
    const row = await gw.runtime.store.db.selectFrom('portal_users').selectAll().where('user_id', '=', theirs.user_id).executeTakeFirstOrThrow();
    assert.equal(row.role, 'operator');
    assert.equal(row.status, 'active');
    assert.equal((await theirs.agent.get('/portal/profile')).status, 200);
  });

  test('a user id or API key id with a NUL or control character is refused by the route, never a 500 (PostgreSQL text cannot hold NUL)', async () => {
    const { agent } = await ownerOfNewMerchant();
    const users = await agent.get('/portal/users');
    for (const bad of ['%00', 'usr_%01x', '%20']) {
      for (const [what, fields] of [
        ['role', { role: 'viewer' }],
        ['disable', {}],
        ['enable', {}],
        ['reset', {}],
      ] as const) {
        const r = await agent.request('POST', `/portal/users/${bad}/${what}`, { ...formFields(users.body, '/portal/users'), ...fields });
        assert.ok(r.status === 400 || r.status === 404, `${what} ${bad}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
      }
      const settings = await agent.get(SETTINGS);
      const r = await agent.request('POST', `${SETTINGS}/api-keys/${bad}/revoke`, formFields(settings.body, `${SETTINGS}/api-keys`));
      assert.ok(r.status === 400 || r.status === 404, `revoke ${bad}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
    }
  });

  test('two owners demoting each other at once: the merchant keeps an active owner', async () => {
    const { m, agent: a, user_id: aId } = await ownerOfNewMerchant();
    const { agent: b, user_id: bId } = await signedInUser(gw, { role: 'owner', merchant_id: m.merchant_id });
    const pa = await a.get('/portal/users');
    const pb = await b.get('/portal/users');
    const [ra, rb] = await Promise.all([
      a.request('POST', `/portal/users/${bId}/role`, { ...formFields(pa.body, `/portal/users/${bId}/role`), role: 'admin' }),
      b.request('POST', `/portal/users/${aId}/role`, { ...formFields(pb.body, `/portal/users/${aId}/role`), role: 'admin' }),
    ]);
    const owners = (await gw.runtime.store.db.selectFrom('portal_users').selectAll().where('merchant_id', '=', m.merchant_id).execute()).filter(
      (u) => u.role === 'owner' && u.status === 'active',
    );
    assert.ok(owners.length >= 1, `statuses ${ra.status} ${rb.status}`);
  });
});
