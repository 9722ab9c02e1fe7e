// Portal sign-in (decisions §19; issue 14 item 1): set-password link, password policy,
// lockout, TOTP with recovery codes, session cookie flags and rotation, CSRF, timeouts,
// sign out (everywhere), and the audit lines of each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestGateway, testGateway } from '../test/harness.js';
import { passwordProblem } from './passwords.js';
import { ABSOLUTE_MS, IDLE_MS } from './sessions.js';
import { formFields, PortalAgent, signedInUser, TEST_PASSWORD } from './testing.js';
import { totpCode } from './totp.js';
import { PortalUsers } from './users.js';

let gw: TestGateway;
let users: PortalUsers;
before(async () => {
  gw = await testGateway();
  users = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
});
after(() => gw.close());

const audits = (email: string) => gw.runtime.store.db.selectFrom('portal_audit').selectAll().where('email', '=', email).orderBy('audit_id').execute();

describe('password policy', () => {
  const cases: Array<[string, string, boolean]> = [
    ['11 characters', 'abcdefghijk', false],
    ['a common password', 'qwerty123456', false],
    ['a common password with digits around it', 'password12345678', false],
    ['a common password repeated', 'dragondragondragon', false],
    ['too few distinct characters', 'aaaaaaaaaaab', false],
    ['holds the e-mail name', 'marie.curie-radium-88', false],
    ['a long passphrase', TEST_PASSWORD, true],
  ];
  for (const [what, pw, ok] of cases)
    test(`${what} → ${ok ? 'accepted' : 'refused'}`, () => assert.equal(passwordProblem(pw, 'marie.curie@example.com') === null, ok));
});

describe('the set-password link and sign-in', () => {
  test('the link sets a password once; a weak one is refused on the page; sign-in rotates the session; the cookie has the §19 flags', async () => {
    const { token } = await users.create({ merchant_id: gw.merchant.merchant_id, email: 'first@example.com', role: 'owner' }, gw.runtime.deps.now());
    const agent = new PortalAgent(gw);
    const weak = await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: 'short', confirm: 'short' });
    assert.equal(weak.status, 400);
    assert.match(weak.body, /at least 12 characters/);
    const set = await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD });
    assert.equal(set.status, 303, set.body);
    assert.equal((await agent.get(`/portal/setup/${token}`)).status, 404, 'the link works once');

    const signin = await agent.submit('/portal/signin', '/portal/signin', { email: 'First@Example.com', password: TEST_PASSWORD });
    assert.equal(signin.status, 303, signin.body);
    assert.equal(signin.location, '/portal/dashboard');
    const cookie = signin.headers['set-cookie'] ?? '';
    assert.match(cookie, /tollgate_portal=/);
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Strict/i);
    assert.doesNotMatch(cookie, /Secure/i, 'not over plain HTTP');
    const rows = await gw.runtime.store.db.selectFrom('portal_sessions').selectAll().execute();
    const value = agent.jar.get('tollgate_portal') ?? '';
    assert.ok(value.length >= 40);
    assert.ok(
      rows.every((r) => r.session_hash !== value),
      'the table holds a hash, not the cookie',
    );
    const log = await audits('first@example.com');
    assert.deepEqual(log.map((a) => `${a.action}:${a.outcome}`).sort(), ['signin:ok', 'user.password_set:ok']);
  });

  test('behind HTTPS (a trusted proxy) the cookie is __Host- and Secure', async () => {
    const https = await testGateway({ settings: { trusted_proxies: ['127.0.0.1/32'] } });
    try {
      const u = new PortalUsers(https.runtime.store, https.runtime.keyring);
      const { token } = await u.create({ merchant_id: https.merchant.merchant_id, email: 'tls@example.com', role: 'viewer' }, Date.now());
      const agent = new PortalAgent(https);
      const page = await agent.request('GET', `/portal/setup/${token}`, undefined, { 'x-forwarded-proto': 'https' });
      const set = await agent.request(
        'POST',
        `/portal/setup/${token}`,
        { ...formFields(page.body, `/portal/setup/${token}`), password: TEST_PASSWORD, confirm: TEST_PASSWORD },
        { 'x-forwarded-proto': 'https' },
      );
      assert.equal(set.status, 303, set.body);
      const form = await agent.request('GET', '/portal/signin', undefined, { 'x-forwarded-proto': 'https' });
      const r = await agent.request(
        'POST',
        '/portal/signin',
        { ...formFields(form.body, '/portal/signin'), email: 'tls@example.com', password: TEST_PASSWORD },
        { 'x-forwarded-proto': 'https' },
      );
      assert.equal(r.status, 303, r.body);
      assert.match(r.headers['set-cookie'] ?? '', /__Host-tollgate_portal=[^;]+;.*Secure/i);
      assert.match(r.headers['set-cookie'] ?? '', /Path=\//);
    } finally {
      await https.close();
    }
  });

  test('ten wrong passwords lock the user for 30 minutes, even for the right password; each attempt is audited', async () => {
    const { email } = await signedInUser(gw, { role: 'viewer' });
    const agent = new PortalAgent(gw, '10.0.0.9');
    for (let i = 0; i < 9; i++) {
      const r = await agent.submit('/portal/signin', '/portal/signin', { email, password: `wrong-password-${i}-xyz` });
      assert.equal(r.status, 401);
    }
    const tenth = await agent.submit('/portal/signin', '/portal/signin', { email, password: 'wrong-password-last' });
    assert.equal(tenth.status, 423);
    assert.match(tenth.body, /locked/);
    const right = await agent.submit('/portal/signin', '/portal/signin', { email, password: TEST_PASSWORD });
    assert.equal(right.status, 423, 'locked even with the right password');
    const log = (await audits(email)).filter((a) => a.action === 'signin' && a.outcome === 'refused');
    assert.equal(log.length, 11);
    assert.ok(log.every((a) => a.ip === '10.0.0.9'));
    assert.ok(
      log.every((a) => a.merchant_id === gw.merchant.merchant_id && a.user_id !== ''),
      'in the merchant’s own audit log',
    );
  });

  test('a form posted without its CSRF token (or with another session’s) is refused with 403 and changes nothing', async () => {
    const { agent } = await signedInUser(gw, { role: 'owner' });
    const r = await agent.request('POST', '/portal/signout-everywhere', { form_token: 'x'.repeat(20) });
    assert.equal(r.status, 403);
    assert.match(r.body, /CSRF/);
    assert.equal((await agent.get('/portal/profile')).status, 200, 'still signed in');
    const anon = new PortalAgent(gw);
    const s = await anon.request('POST', '/portal/signin', { email: 'x@example.com', password: 'whatever-password' });
    assert.equal(s.status, 403, 'the sign-in form needs its token too');
  });

  test('every portal page has the security headers: CSP with a nonce and frame-ancestors none, no referrer, nosniff, no caching', async () => {
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const anonymous = new PortalAgent(gw);
    for (const [who, url] of [
      [anonymous, '/portal/signin'],
      [agent, '/portal/profile'],
      [agent, '/portal/dashboard'],
      [agent, '/portal/no-such-page'],
      [anonymous, '/portal/setup/not-a-token'],
    ] as const) {
      const r = await who.get(url);
      assert.ok([200, 404].includes(r.status), `${url}: ${r.status}`);
      const csp = r.headers['content-security-policy'] ?? '';
      assert.match(csp, /default-src 'none'/, url);
      assert.match(csp, /style-src 'nonce-[A-Za-z0-9_-]{20,}'/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.equal(r.headers['x-frame-options'], 'DENY', url);
      assert.equal(r.headers['referrer-policy'], 'no-referrer', url);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(r.headers['cache-control'], 'no-store', url);
    }
  });

  test('behind a trusted proxy the audit log records the client address from X-Forwarded-For', async () => {
    const proxied = await testGateway({ settings: { trusted_proxies: ['127.0.0.1/32'] } });
    try {
      const agent = new PortalAgent(proxied);
      const page = await agent.request('GET', '/portal/signin', undefined, { 'x-forwarded-for': '198.51.100.7' });
      await agent.request(
        'POST',
        '/portal/signin',
        { ...formFields(page.body, '/portal/signin'), email: 'nobody@example.com', password: 'not-a-real-password' },
        { 'x-forwarded-for': '198.51.100.7' },
      );
      const rows = await proxied.runtime.store.db.selectFrom('portal_audit').selectAll().execute();
      assert.equal(rows[0]?.ip, '198.51.100.7');
    } finally {
      await proxied.close();
    }
  });

  test('a process shedding load answers portal pages 503 with Retry-After, in the portal’s frame', async () => {
    const busy = await testGateway({ settings: { max_in_flight: 0 } });
    try {
      const r = await new PortalAgent(busy).get('/portal/signin');
      assert.equal(r.status, 503, r.body.slice(0, 300));
      assert.equal(r.headers['retry-after'], '1');
      assert.match(r.headers['content-type'] ?? '', /text\/html/);
    } finally {
      await busy.close();
    }
  });

  test('a JSON or XML body is not a form: 415', async () => {
    const { agent } = await signedInUser(gw, { role: 'owner' });
    const r = await agent.request('POST', '/portal/signout', '{"csrf":"x"}', { 'content-type': 'application/json' });
    assert.equal(r.status, 415);
  });
});

describe('sessions end', () => {
  test('after 15 idle minutes, after 12 hours in all, at sign out, and everywhere', async () => {
    const { agent, user_id } = await signedInUser(gw, { role: 'viewer' });
    assert.equal((await agent.get('/portal/profile')).status, 200);
    gw.clock.advance(IDLE_MS + 1000);
    const idle = await agent.get('/portal/profile');
    assert.equal(idle.status, 303);
    assert.equal(idle.location, '/portal/signin');

    const b = await signedInUser(gw, { role: 'viewer' });
    for (let t = 0; t < ABSOLUTE_MS; t += IDLE_MS / 2) {
      gw.clock.advance(IDLE_MS / 2);
      await b.agent.get('/portal/profile');
    }
    gw.clock.advance(60_000);
    assert.equal((await b.agent.get('/portal/profile')).status, 303, 'absolute limit');

    const c = await signedInUser(gw, { role: 'viewer' });
    const other = new PortalAgent(gw);
    await other.submit('/portal/signin', '/portal/signin', { email: c.email, password: TEST_PASSWORD });
    assert.equal((await other.get('/portal/profile')).status, 200);
    const out = await c.agent.submit('/portal/profile', '/portal/signout-everywhere');
    assert.equal(out.status, 303);
    assert.equal((await other.get('/portal/profile')).status, 303, 'the other session ended too');
    assert.equal((await c.agent.get('/portal/profile')).status, 303);
    assert.ok(user_id);
  });
});

describe('two-step sign-in', () => {
  test('enrol, then sign in with a code; a code works once; a recovery code works once', async () => {
    const { email, totp_secret } = await signedInUser(gw, { role: 'admin', totp: true });
    assert.ok(totp_secret);
    const agent = new PortalAgent(gw);
    const first = await agent.submit('/portal/signin', '/portal/signin', { email, password: TEST_PASSWORD });
    assert.equal(first.location, '/portal/signin/code');
    assert.equal((await agent.get('/portal/dashboard')).status, 303, 'not signed in before the code');
    gw.clock.advance(30_000);
    const code = totpCode(totp_secret, gw.runtime.deps.now());
    const ok = await agent.submit('/portal/signin/code', '/portal/signin/code', { code });
    assert.equal(ok.status, 303, ok.body);
    assert.equal(ok.location, '/portal/dashboard');

    const again = new PortalAgent(gw);
    await again.submit('/portal/signin', '/portal/signin', { email, password: TEST_PASSWORD });
    const replay = await again.submit('/portal/signin/code', '/portal/signin/code', { code });
    assert.equal(replay.status, 401, 'a code is good once');
  });

  test('owners and admins of a merchant with a live account must enrol before anything else', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const u = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
    const { token } = await u.create({ merchant_id: live.merchant_id, email: 'live-owner@example.com', role: 'owner' }, gw.runtime.deps.now());
    const agent = new PortalAgent(gw);
    await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD });
    const r = await agent.submit('/portal/signin', '/portal/signin', { email: 'live-owner@example.com', password: TEST_PASSWORD });
    assert.equal(r.location, '/portal/totp');
    assert.equal((await agent.get('/portal/dashboard')).status, 303, 'no page before enrolment');
    const page = await agent.get('/portal/totp');
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)?.[1] ?? '';
    const codes = await agent.request('POST', '/portal/totp', { ...formFields(page.body, '/portal/totp'), code: totpCode(secret, gw.runtime.deps.now()) });
    assert.equal(codes.status, 200);
    const recovery = [...codes.body.matchAll(/<li>([a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4})<\/li>/g)].map((m) => m[1] ?? '');
    assert.equal(recovery.length, 10);
    assert.equal((await agent.get('/portal/profile')).status, 200, 'signed in after enrolment');

    const next = new PortalAgent(gw);
    await next.submit('/portal/signin', '/portal/signin', { email: 'live-owner@example.com', password: TEST_PASSWORD });
    const byRecovery = await next.submit('/portal/signin/code', '/portal/signin/code', { code: (recovery[0] ?? '').toUpperCase() });
    assert.equal(byRecovery.status, 303);
    const third = new PortalAgent(gw);
    await third.submit('/portal/signin', '/portal/signin', { email: 'live-owner@example.com', password: TEST_PASSWORD });
    assert.equal((await third.submit('/portal/signin/code', '/portal/signin/code', { code: recovery[0] ?? '' })).status, 401, 'a recovery code is good once');
  });
});
