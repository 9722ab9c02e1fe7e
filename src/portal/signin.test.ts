// Portal sign-in (docs/contract.md §19; issue 14 item 1): set-password link, password policy,
// lockout, TOTP with recovery codes, session cookie flags and rotation, CSRF, timeouts,
// sign out (everywhere), and the audit lines of each.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import QRCode from 'qrcode';
import { type TestGateway, testGateway } from '../test/harness.js';
import { passwordProblem } from './passwords.js';
import { ABSOLUTE_MS, IDLE_MS } from './sessions.js';
import { enrolmentPage, formFields, PortalAgent, signedInUser, TEST_PASSWORD } from './testing.js';
import { totpCode, totpUri } from './totp.js';
import { PortalUsers } from './users.js';

/** The modules an SVG path of `M x y h w v1 h-w z` runs covers, as "x,y". */
function darkModules(d: string): Set<string> {
  const out = new Set<string>();
  for (const m of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)) for (let i = 0; i < Number(m[3]); i++) out.add(`${Number(m[1]) + i},${m[2]}`);
  return out;
}

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

    const signin = await agent.submit('/portal/signin', '/portal/signin', {
      merchant_id: gw.merchant.merchant_id,
      email: 'First@Example.com',
      password: TEST_PASSWORD,
    });
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
        { ...formFields(form.body, '/portal/signin'), merchant_id: https.merchant.merchant_id, email: 'tls@example.com', password: TEST_PASSWORD },
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
      const r = await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email, password: `wrong-password-${i}-xyz` });
      assert.equal(r.status, 401);
    }
    const tenth = await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email, password: 'wrong-password-last' });
    assert.equal(tenth.status, 401, 'a wrong password reads the same, locked or not');
    const right = await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email, password: TEST_PASSWORD });
    assert.equal(right.status, 423, 'locked even with the right password');
    assert.match(right.body, /locked/);
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
        { ...formFields(page.body, '/portal/signin'), merchant_id: proxied.merchant.merchant_id, email: 'nobody@example.com', password: 'not-a-real-password' },
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
    await other.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email: c.email, password: TEST_PASSWORD });
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
    const first = await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email, password: TEST_PASSWORD });
    assert.equal(first.location, '/portal/signin/code');
    assert.equal((await agent.get('/portal/dashboard')).status, 303, 'not signed in before the code');
    gw.clock.advance(30_000);
    const code = totpCode(totp_secret, gw.runtime.deps.now());
    const ok = await agent.submit('/portal/signin/code', '/portal/signin/code', { code });
    assert.equal(ok.status, 303, ok.body);
    assert.equal(ok.location, '/portal/dashboard');

    const again = new PortalAgent(gw);
    await again.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email, password: TEST_PASSWORD });
    const replay = await again.submit('/portal/signin/code', '/portal/signin/code', { code });
    assert.equal(replay.status, 401, 'a code is good once');
  });

  test('owners and admins of a merchant with a live account must enrol before anything else', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    const u = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
    const { token } = await u.create({ merchant_id: live.merchant_id, email: 'live-owner@example.com', role: 'owner' }, gw.runtime.deps.now());
    const agent = new PortalAgent(gw);
    await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD });
    const r = await agent.submit('/portal/signin', '/portal/signin', {
      merchant_id: live.merchant_id,
      email: 'live-owner@example.com',
      password: TEST_PASSWORD,
    });
    assert.equal(r.location, '/portal/totp');
    assert.equal((await agent.get('/portal/dashboard')).status, 303, 'no page before enrolment');
    const page = await enrolmentPage(agent);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)?.[1] ?? '';
    // The QR code: inline SVG whose dark modules are exactly those of the otpauth:// URI of this key and user.
    const svg = /<svg [^>]*id="totp-qr"[\s\S]*?<\/svg>/.exec(page.body)?.[0] ?? '';
    assert.match(svg, /role="img" aria-label="QR code of the two-step sign-in key"/);
    assert.doesNotMatch(page.body, /<script|<img/, 'no script and nothing loaded');
    const drawn = darkModules(/ d="([^"]*)"/.exec(svg)?.[1] ?? '');
    const { modules } = QRCode.create(totpUri(secret, 'live-owner@example.com'), { errorCorrectionLevel: 'M' });
    const expected = new Set<string>();
    for (let y = 0; y < modules.size; y++) for (let x = 0; x < modules.size; x++) if (modules.get(y, x)) expected.add(`${x + 4},${y + 4}`);
    assert.ok(expected.size > 100);
    assert.deepEqual([...drawn].sort(), [...expected].sort());
    const codes = await agent.request('POST', '/portal/totp', { ...formFields(page.body, '/portal/totp'), code: totpCode(secret, gw.runtime.deps.now()) });
    assert.equal(codes.status, 200);
    const recovery = [...codes.body.matchAll(/<li>([a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4})<\/li>/g)].map((m) => m[1] ?? '');
    assert.equal(recovery.length, 10);
    assert.equal((await agent.get('/portal/profile')).status, 200, 'signed in after enrolment');

    const next = new PortalAgent(gw);
    await next.submit('/portal/signin', '/portal/signin', { merchant_id: live.merchant_id, email: 'live-owner@example.com', password: TEST_PASSWORD });
    const byRecovery = await next.submit('/portal/signin/code', '/portal/signin/code', { code: (recovery[0] ?? '').toUpperCase() });
    assert.equal(byRecovery.status, 303);
    const third = new PortalAgent(gw);
    await third.submit('/portal/signin', '/portal/signin', { merchant_id: live.merchant_id, email: 'live-owner@example.com', password: TEST_PASSWORD });
    assert.equal((await third.submit('/portal/signin/code', '/portal/signin/code', { code: recovery[0] ?? '' })).status, 401, 'a recovery code is good once');
  });
});

// Issue 29 item 4: each finding of the review, one test that fails without its fix.
describe('issue 29: sign-in hardening', () => {
  const errorOf = (body: string) => /id="signin-error"[^>]*>([^<]*)</.exec(body)?.[1] ?? '';
  const signIn = (agent: PortalAgent, merchant_id: string, email: string, password: string) =>
    agent.submit('/portal/signin', '/portal/signin', { merchant_id, email, password });

  test('an e-mail is unique per merchant: another merchant’s owner can add the same address and never learns it is in use', async () => {
    const shared = `shared-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const a = await signedInUser(gw, { role: 'viewer', email: shared });
    const b = await gw.newMerchant();
    const ownerB = await signedInUser(gw, { role: 'owner', merchant_id: b.merchant_id });
    const made = await ownerB.agent.submit('/portal/users', '/portal/users', { email: shared.toUpperCase(), role: 'viewer' });
    assert.equal(made.status, 200, `a new user at B: ${made.body.slice(0, 400)}`);
    assert.match(made.body, /\/portal\/setup\//);
    const twice = await ownerB.agent.submit('/portal/users', '/portal/users', { email: shared, role: 'viewer' });
    assert.equal(twice.status, 400, 'but not twice at one merchant');
    assert.match(twice.body, /this merchant has a user with the e-mail/);
    // Each user signs in at their own merchant only; A's password does nothing at B.
    assert.equal((await signIn(new PortalAgent(gw), b.merchant_id, shared, TEST_PASSWORD)).status, 401);
    assert.equal((await signIn(new PortalAgent(gw), a.merchant_id, shared, TEST_PASSWORD)).location, '/portal/dashboard');
  });

  test('every refusal reads the same: wrong merchant, unknown address, wrong password, and a wrong password while locked', async () => {
    const u = await signedInUser(gw, { role: 'viewer' });
    const other = await gw.newMerchant();
    const agent = new PortalAgent(gw, '10.0.0.31');
    const answers = [
      await signIn(agent, other.merchant_id, u.email, TEST_PASSWORD),
      await signIn(agent, '99999999', u.email, TEST_PASSWORD),
      await signIn(agent, u.merchant_id, `nobody-${u.email}`, TEST_PASSWORD),
      await signIn(agent, u.merchant_id, u.email, 'wrong-password-one'),
    ];
    for (let i = 0; i < 9; i++) await signIn(agent, u.merchant_id, u.email, `wrong-password-${i}`);
    const row = await users.byId(u.user_id);
    assert.ok(Number(row?.locked_until) > gw.runtime.deps.now(), 'locked by now');
    answers.push(await signIn(agent, u.merchant_id, u.email, 'wrong-password-again'));
    assert.deepEqual(
      answers.map((r) => [r.status, errorOf(r.body)]),
      answers.map(() => [401, 'Wrong merchant number, e-mail or password.']),
    );
    const right = await signIn(agent, u.merchant_id, u.email, TEST_PASSWORD);
    assert.equal(right.status, 423, 'only the right password learns of the lock');
  });

  test('wrong second-factor codes count towards the persisted lock, even spread out and with the password given again each time', async () => {
    const { email, merchant_id, user_id, totp_secret } = await signedInUser(gw, { role: 'admin', totp: true });
    assert.ok(totp_secret);
    const wrong = (code: string) => (code === '000000' ? '111111' : '000000');
    let last: Awaited<ReturnType<PortalAgent['submit']>> | undefined;
    for (let i = 0; i < 10; i++) {
      // A minute apart: the per-process bucket (5 a minute) never refuses, so only the lock can stop this.
      gw.clock.advance(61_000);
      const agent = new PortalAgent(gw, `10.0.1.${i}`);
      const first = await signIn(agent, merchant_id, email, TEST_PASSWORD);
      assert.equal(first.location, '/portal/signin/code', `attempt ${i}: ${first.status}`);
      last = await agent.submit('/portal/signin/code', '/portal/signin/code', { code: wrong(totpCode(totp_secret, gw.runtime.deps.now())) });
      if (i < 9) assert.equal(last.status, 401, `attempt ${i}`);
    }
    assert.equal(last?.status, 423, 'the tenth wrong code locks');
    assert.match(last?.body ?? '', /locked for 30 minutes/);
    // The lock is on the user row: what another process (or this one after a restart) reads.
    const row = await new PortalUsers(gw.runtime.store, gw.runtime.keyring).byId(user_id);
    assert.ok(Number(row?.locked_until) > gw.runtime.deps.now());
    gw.clock.advance(61_000);
    const agent = new PortalAgent(gw, '10.0.2.1');
    assert.equal((await signIn(agent, merchant_id, email, TEST_PASSWORD)).status, 423, 'the right password does not lift it');
    const log = (await audits(email)).filter((a) => a.action === 'signin.second_factor' && a.outcome === 'refused');
    assert.equal(log.length, 10);
    assert.equal(log.at(-1)?.detail, 'wrong code; now locked');
  });

  test('a right code clears the count; a cookie-less cross-site POST gets no Set-Cookie that would end the session', async () => {
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const value = agent.jar.get('tollgate_portal');
    assert.ok(value);
    const stranger = new PortalAgent(gw);
    for (const url of ['/portal/signout', '/portal/signout-everywhere', '/portal/password', '/portal/totp/start']) {
      const r = await stranger.request(
        'POST',
        url,
        { csrf: 'x', form_token: 'y'.repeat(20) },
        { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      );
      assert.ok([401, 403].includes(r.status), `${url}: ${r.status}`);
      assert.doesNotMatch(r.headers['set-cookie'] ?? '', /tollgate_portal=/, `${url} must not clear the session cookie`);
    }
    assert.equal((await agent.get('/portal/profile')).status, 200, 'still signed in');
  });

  test('GET /portal/totp writes nothing; enrolment starts with a POST carrying the CSRF token', async () => {
    const { agent, user_id } = await signedInUser(gw, { role: 'viewer' });
    const before = await users.byId(user_id);
    const auditBefore = await gw.runtime.store.db.selectFrom('portal_audit').select('audit_id').execute();
    for (let i = 0; i < 2; i++) {
      const page = await agent.get('/portal/totp');
      assert.equal(page.status, 200);
      assert.doesNotMatch(page.body, /id="totp-secret"/);
      assert.ok(formFields(page.body, '/portal/totp/start').csrf);
    }
    assert.deepEqual(await users.byId(user_id), before, 'the user row is unchanged: no secret stored');
    assert.equal((await gw.runtime.store.db.selectFrom('portal_audit').select('audit_id').execute()).length, auditBefore.length);
    const forged = await agent.request('POST', '/portal/totp/start', { form_token: 'z'.repeat(20) });
    assert.equal(forged.status, 403, 'no CSRF token, no enrolment');
    assert.equal((await users.byId(user_id))?.totp_secret_enc, null);
    const page = await enrolmentPage(agent);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)?.[1] ?? '';
    assert.ok(secret.length >= 16);
    assert.equal((await agent.get('/portal/totp')).body.includes(secret), true, 'the same key until confirmed');
    const done = await agent.request('POST', '/portal/totp', { ...formFields(page.body, '/portal/totp'), code: totpCode(secret, gw.runtime.deps.now()) });
    assert.equal(done.status, 200);
    assert.notEqual((await users.byId(user_id))?.totp_enrolled_at, null);
  });

  test('a signed-in user changes their own password: current one required, same policy, other sessions end, this one stays, audited', async () => {
    const u = await signedInUser(gw, { role: 'operator' });
    const elsewhere = new PortalAgent(gw);
    assert.equal((await signIn(elsewhere, u.merchant_id, u.email, TEST_PASSWORD)).location, '/portal/dashboard');
    assert.match((await u.agent.get('/portal/profile')).body, /href="\/portal\/password"/);
    const NEW = 'copper-meadow-sextant-77';
    const wrong = await u.agent.submit('/portal/password', '/portal/password', { current: 'not-my-password', password: NEW, confirm: NEW });
    assert.equal(wrong.status, 400);
    assert.match(wrong.body, /not your current password/);
    assert.equal((await users.byId(u.user_id))?.failed_logins, 1, 'a wrong current password counts towards the lock');
    const weak = await u.agent.submit('/portal/password', '/portal/password', { current: TEST_PASSWORD, password: 'password1234', confirm: 'password1234' });
    assert.equal(weak.status, 400);
    assert.match(weak.body, /most common passwords/);
    const noCsrf = await u.agent.request('POST', '/portal/password', { current: TEST_PASSWORD, password: NEW, confirm: NEW });
    assert.equal(noCsrf.status, 403);
    const ok = await u.agent.submit('/portal/password', '/portal/password', { current: TEST_PASSWORD, password: NEW, confirm: NEW });
    assert.equal(ok.status, 303, ok.body.slice(0, 400));
    assert.equal(ok.location, '/portal/profile?done=password_changed');
    assert.equal((await u.agent.get('/portal/profile')).status, 200, 'this session stays');
    assert.equal((await elsewhere.get('/portal/profile')).status, 303, 'the other session ended');
    assert.equal((await signIn(new PortalAgent(gw), u.merchant_id, u.email, TEST_PASSWORD)).status, 401, 'the old password is gone');
    assert.equal((await signIn(new PortalAgent(gw), u.merchant_id, u.email, NEW)).location, '/portal/dashboard');
    // (One clock tick for all three: the order of their ids is not the order of the attempts.)
    const log = (await audits(u.email)).filter((a) => a.action === 'user.password_change').map((a) => `${a.outcome}:${a.detail}`);
    assert.deepEqual(log.sort(), [
      'ok:1 other sessions ended',
      'refused:this password is one of the most common passwords; choose another',
      'refused:wrong current password',
    ]);
  });

  test('every user of a merchant with a live account must enrol, operators and viewers too', async () => {
    const live = await gw.newMerchant({ mode: 'live' });
    for (const role of ['operator', 'viewer']) {
      const { token } = await users.create({ merchant_id: live.merchant_id, email: `live-${role}@example.com`, role }, gw.runtime.deps.now());
      const agent = new PortalAgent(gw);
      await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD });
      const r = await signIn(agent, live.merchant_id, `live-${role}@example.com`, TEST_PASSWORD);
      assert.equal(r.location, '/portal/totp', role);
      assert.equal((await agent.get('/portal/dashboard')).status, 303, `${role}: no page before enrolment`);
    }
  });
});
