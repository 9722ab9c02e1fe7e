// Signing in and out (docs/contract.md §19):
//   GET/POST /portal/setup/:token     the one-time set-password link the operator's CLI prints
//   GET/POST /portal/signin           merchant number, e-mail and password (rate-limited per IP and per e-mail)
//   GET/POST /portal/signin/code      the second factor: a TOTP code or a recovery code
//   GET      /portal/totp             enrolment: a page only; POST /portal/totp/start makes the secret, POST /portal/totp confirms
//                                     (required for every user of a merchant with a live account)
//   GET/POST /portal/password         a signed-in user changes their own password; their other sessions end
//   POST     /portal/signout          this session; /portal/signout-everywhere: every session of the user
//   POST     /portal/account          which account (and mode) the pages show
//   GET      /portal/profile          the user's own page
// A new session is made at each step of sign-in (the id is rotated), and the audit log gets
// every attempt, good or bad. Wrong passwords and wrong codes count towards one lock, kept on
// the user row (ten lock the user for 30 minutes).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { TokenBuckets } from '../apikeys/rate-limit.js';
import { field, hidden, html, type SafeHtml, sendRedirect } from '../pages/index.js';
import { audit } from './audit.js';
import { clientIp, ctx, formSecrets, type PortalDeps, PortalError, sendPortalPage, withNotice } from './context.js';
import { clearSessionCookie, preSignInCsrf, setSessionCookie } from './plugin.js';
import type { PortalUserRow } from './tables.js';
import { totpUri } from './totp.js';
import { LOCKOUT_MS, PortalUserError } from './users.js';

const LOCKED = `Too many wrong passwords or codes: this user is locked for ${Math.round(LOCKOUT_MS / 60_000)} minutes. Wait, or ask your administrator to reset it.`;
/** The one answer to every refused sign-in: it does not tell which of the three was wrong. */
const WRONG = 'Wrong merchant number, e-mail or password.';

const str = (max: number) => Type.String({ maxLength: max });
const SignInBody = Type.Object({ csrf: str(100), merchant_id: str(64), email: str(320), password: str(1000) }, { additionalProperties: false });
const PasswordBody = Type.Object(
  { csrf: str(100), form_token: Type.Optional(str(255)), current: str(1000), password: str(1000), confirm: str(1000) },
  { additionalProperties: false },
);
const SetupBody = Type.Object({ csrf: str(100), password: str(1000), confirm: str(1000) }, { additionalProperties: false });
const CodeBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)), code: str(40) }, { additionalProperties: false });
const PlainBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)) }, { additionalProperties: false });
const AccountBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)), account_id: str(40) }, { additionalProperties: false });

/**
 * Sign-in attempts: per IP 30 at once then 30 a minute; per e-mail 15 at once then 5 a minute.
 * Per process, so only a brake: the lock on the user row is what stops guessing.
 */
const perIp = new TokenBuckets(30 / 60, 30);
const perEmail = new TokenBuckets(5 / 60, 15);

function publicPage(request: FastifyRequest, reply: FastifyReply, title: string, body: SafeHtml, status?: number): FastifyReply {
  return sendPortalPage(request, reply, { title, body, status });
}

export function registerSignIn(scope: FastifyInstance, deps: PortalDeps): void {
  const pub = { config: { portal: 'public' as const }, schema: { hide: true } };

  scope.get('/', pub, async (request, reply) => sendRedirect(reply, request.portal ? '/portal/dashboard' : '/portal/signin'));

  // ---- the set-password link
  const setupForm = (request: FastifyRequest, reply: FastifyReply, user: PortalUserRow, token: string, error?: string) =>
    publicPage(
      request,
      reply,
      'Set your password',
      html`<p>For <strong id="setup-email">${user.email}</strong>. At least 12 characters; not a common password.</p>
<form method="post" action="/portal/setup/${token}">${hidden('csrf', preSignInCsrf(deps, request, reply))}
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, maxlength: 256, error })}
${field({ name: 'confirm', label: 'New password again', type: 'password', autocomplete: 'new-password', required: true, maxlength: 256 })}
<p class="actions"><button type="submit" class="primary" id="set-password">Set password</button></p></form>`,
      error ? 400 : 200,
    );
  scope.get<{ Params: { token: string } }>('/setup/:token', pub, async (request, reply) => {
    const user = await deps.users.bySetupToken(request.params.token, deps.now());
    if (!user) throw new PortalError(404, 'This link is not valid any more (used, expired or replaced). Ask your administrator for a new one.');
    return setupForm(request, reply, user, request.params.token);
  });
  scope.post<{ Params: { token: string }; Body: { password: string; confirm: string } }>(
    '/setup/:token',
    { ...pub, schema: { hide: true, body: SetupBody } },
    async (request, reply) => {
      const token = request.params.token;
      const user = await deps.users.bySetupToken(token, deps.now());
      if (!user) throw new PortalError(404, 'This link is not valid any more (used, expired or replaced). Ask your administrator for a new one.');
      if (request.body.password !== request.body.confirm) return setupForm(request, reply, user, token, 'The two passwords differ.');
      try {
        await deps.users.setPassword(token, request.body.password, deps.now());
      } catch (e) {
        if (e instanceof PortalUserError) return setupForm(request, reply, user, token, e.message);
        throw e;
      }
      await audit(
        deps.store,
        {
          merchant_id: user.merchant_id,
          user_id: user.user_id,
          email: user.email,
          action: 'user.password_set',
          target: user.user_id,
          outcome: 'ok',
          ip: clientIp(request),
        },
        deps.now(),
      );
      return sendRedirect(reply, withNotice('/portal/signin', 'password_set'));
    },
  );

  // ---- e-mail and password
  const signInForm = (request: FastifyRequest, reply: FastifyReply, error?: string, status = 200, merchant_id = '', email = '') =>
    publicPage(
      request,
      reply,
      'Sign in',
      html`<form method="post" action="/portal/signin">${hidden('csrf', preSignInCsrf(deps, request, reply))}
${error && html`<p class="error" id="signin-error" role="alert">${error}</p>`}
${field({ name: 'merchant_id', label: 'Merchant number', autocomplete: 'organization', required: true, maxlength: 64, value: merchant_id })}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'username', required: true, maxlength: 320, value: email })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true, maxlength: 256 })}
<p class="actions"><button type="submit" class="primary" id="signin">Sign in</button></p></form>`,
      status,
    );
  scope.get('/signin', pub, async (request, reply) => {
    if (request.portal) return sendRedirect(reply, '/portal/dashboard');
    return signInForm(request, reply);
  });
  scope.post<{ Body: { merchant_id: string; email: string; password: string } }>(
    '/signin',
    { ...pub, schema: { hide: true, body: SignInBody } },
    async (request, reply) => {
      const now = deps.now();
      const ip = clientIp(request);
      const merchant_id = request.body.merchant_id.trim();
      const email = request.body.email.trim().toLowerCase();
      const limited = [perIp.take(`ip:${ip}`, now), perEmail.take(`email:${merchant_id}:${email}`, now)].find((d) => !d.allowed);
      const base = { merchant_id: '', user_id: '', email, action: 'signin', target: email, ip };
      if (limited) {
        await audit(deps.store, { ...base, outcome: 'refused', detail: 'rate limited' }, now);
        reply.header('retry-after', String(limited.retry_after_s));
        return signInForm(request, reply, `Too many sign-in attempts; wait ${limited.retry_after_s} seconds and try again.`, 429, merchant_id, email);
      }
      const r = await deps.users.signIn(merchant_id, email, request.body.password, now);
      if (r.kind !== 'ok') {
        // A known user's failures go to their merchant's audit log (the page a merchant reads).
        const who = r.user ? { merchant_id: r.user.merchant_id, user_id: r.user.user_id } : {};
        const detail =
          r.kind === 'locked'
            ? 'locked'
            : r.kind === 'disabled'
              ? 'user disabled'
              : r.now_locked
                ? 'wrong password; now locked'
                : r.user
                  ? Number(r.user.locked_until) > now
                    ? 'wrong password while locked'
                    : 'wrong password'
                  : 'wrong merchant number, e-mail or password';
        await audit(deps.store, { ...base, ...who, outcome: 'refused', detail }, now);
        // Only whoever knows the password learns of the lock; every other refusal reads the same.
        if (r.kind === 'locked') return signInForm(request, reply, LOCKED, 423, merchant_id, email);
        return signInForm(request, reply, WRONG, 401, merchant_id, email);
      }
      const user = r.user;
      const second = user.totp_enrolled_at !== null;
      const mustEnrol = !second && (await deps.users.totpRequired(user));
      const first = await deps.store.db
        .selectFrom('accounts')
        .select('account_id')
        .where('merchant_id', '=', user.merchant_id)
        .orderBy('account_id')
        .executeTakeFirst();
      const stage = second ? 'password' : mustEnrol ? 'enrol' : 'full';
      const { token } = await deps.sessions.create(
        { user_id: user.user_id, merchant_id: user.merchant_id, stage, account_id: first?.account_id ?? '', ip },
        now,
      );
      setSessionCookie(request, reply, token);
      await audit(
        deps.store,
        {
          ...base,
          merchant_id: user.merchant_id,
          user_id: user.user_id,
          outcome: 'ok',
          detail: stage === 'full' ? 'signed in' : stage === 'password' ? 'password; second factor next' : 'password; must enrol TOTP',
        },
        now,
      );
      return sendRedirect(reply, stage === 'password' ? '/portal/signin/code' : stage === 'enrol' ? '/portal/totp' : '/portal/dashboard');
    },
  );

  // ---- the second factor
  const second = { config: { portal: 'second' as const }, schema: { hide: true } };
  const codeForm = (request: FastifyRequest, reply: FastifyReply, error?: string) =>
    publicPage(
      request,
      reply,
      'Two-step sign-in',
      html`<form method="post" action="/portal/signin/code">${formSecrets(request)}
${error && html`<p class="error" id="code-error" role="alert">${error}</p>`}
${field({ name: 'code', label: 'The 6-digit code from your authenticator app, or a recovery code', autocomplete: 'one-time-code', inputmode: 'text', required: true, maxlength: 40 })}
<p class="actions"><button type="submit" class="primary" id="verify">Verify</button></p></form>`,
      error ? 401 : 200,
    );
  scope.get('/signin/code', second, async (request, reply) => {
    if (request.portal) return sendRedirect(reply, '/portal/dashboard');
    if (request.portalPending?.session.stage !== 'password') return sendRedirect(reply, '/portal/totp');
    return codeForm(request, reply);
  });
  scope.post<{ Body: { code: string } }>('/signin/code', { ...second, schema: { hide: true, body: CodeBody } }, async (request, reply) => {
    const pending = request.portalPending;
    if (pending?.session.stage !== 'password') return sendRedirect(reply, '/portal/signin');
    const now = deps.now();
    const { user } = pending;
    const base = {
      merchant_id: user.merchant_id,
      user_id: user.user_id,
      email: user.email,
      action: 'signin.second_factor',
      target: user.user_id,
      ip: clientIp(request),
    };
    const limited = perEmail.take(`code:${user.user_id}`, now);
    if (!limited.allowed) {
      reply.header('retry-after', String(limited.retry_after_s));
      throw new PortalError(429, `Too many attempts; wait ${limited.retry_after_s} seconds.`, '/portal/signin/code');
    }
    const r = await deps.users.secondFactor(user, request.body.code, now);
    if (r.kind === 'locked') {
      // The lock the passwords use: this half-signed-in session ends, and the password alone does not lift it.
      await audit(deps.store, { ...base, outcome: 'refused', detail: Number(user.locked_until) > now ? 'locked' : 'wrong code; now locked' }, now);
      await deps.sessions.end(pending.token);
      clearSessionCookie(request, reply);
      return publicPage(request, reply, 'Locked', html`<p class="error" id="code-error" role="alert">${LOCKED}</p>`, 423);
    }
    if (r.kind === 'bad') {
      await audit(deps.store, { ...base, outcome: 'refused', detail: 'wrong code' }, now);
      return codeForm(request, reply, 'That code is not right (or was used already).');
    }
    const used = r.used;
    const { token } = await deps.sessions.create({ ...pending.session, stage: 'full' }, now, pending.token);
    setSessionCookie(request, reply, token);
    await audit(deps.store, { ...base, outcome: 'ok', detail: used === 'recovery' ? 'recovery code used' : 'TOTP' }, now);
    return sendRedirect(reply, '/portal/dashboard');
  });

  // ---- TOTP enrolment: after the password when required, or from the profile. The GET
  // writes nothing (issue 29: a page load, a prefetch or a cross-site link must not replace
  // a secret being enrolled); POST /portal/totp/start makes the secret, POST /portal/totp confirms.
  const enrolPage = (request: FastifyRequest, reply: FastifyReply, user: PortalUserRow, error?: string) => {
    const secret = deps.users.pendingTotp(user);
    if (!secret) {
      return publicPage(
        request,
        reply,
        'Turn on two-step sign-in',
        html`<p>You will add a key to an authenticator app on your phone, then enter the 6-digit code it shows.</p>
<form method="post" action="/portal/totp/start">${formSecrets(request)}
<p class="actions"><button type="submit" class="primary" id="start-totp">Show the key</button></p></form>`,
      );
    }
    return publicPage(
      request,
      reply,
      'Turn on two-step sign-in',
      html`<p>Add this key to an authenticator app (type it in, or open the link on the phone), then enter the 6-digit code it shows.</p>
<p class="code" id="totp-secret">${secret}</p>
<p><a href="${totpUri(secret, user.email)}" id="totp-uri">Open in an authenticator app</a></p>
<form method="post" action="/portal/totp">${formSecrets(request)}
${field({ name: 'code', label: '6-digit code', autocomplete: 'one-time-code', inputmode: 'numeric', required: true, maxlength: 10, error })}
<p class="actions"><button type="submit" class="primary" id="enrol">Turn on</button></p></form>`,
      error ? 400 : 200,
    );
  };
  const enrolling = (request: FastifyRequest) =>
    request.portal?.user ?? (request.portalPending?.session.stage === 'enrol' ? request.portalPending.user : undefined);
  scope.get('/totp', second, async (request, reply) => {
    const user = request.portal?.user ?? request.portalPending?.user;
    if (!user) return sendRedirect(reply, '/portal/signin');
    if (user.totp_enrolled_at !== null) return sendRedirect(reply, request.portal ? '/portal/profile' : '/portal/signin/code');
    return enrolPage(request, reply, user);
  });
  scope.post('/totp/start', { ...second, schema: { hide: true, body: PlainBody } }, async (request, reply) => {
    const user = enrolling(request);
    if (!user) return sendRedirect(reply, '/portal/signin');
    // A key shown already stays (a second click or a reload of the form shows the same one).
    if (user.totp_enrolled_at === null && !deps.users.pendingTotp(user)) await deps.users.beginTotp(user.user_id, deps.now());
    return sendRedirect(reply, '/portal/totp');
  });
  scope.post<{ Body: { code: string } }>('/totp', { ...second, schema: { hide: true, body: CodeBody } }, async (request, reply) => {
    const pending = request.portalPending;
    const user = enrolling(request);
    if (!user) return sendRedirect(reply, '/portal/signin');
    const now = deps.now();
    const codes = await deps.users.confirmTotp(user, request.body.code, now);
    const base = {
      merchant_id: user.merchant_id,
      user_id: user.user_id,
      email: user.email,
      action: 'user.totp_enrol',
      target: user.user_id,
      ip: clientIp(request),
    };
    if (!codes) {
      await audit(deps.store, { ...base, outcome: 'refused', detail: 'wrong code' }, now);
      return enrolPage(
        request,
        reply,
        (await deps.users.byId(user.user_id)) ?? user,
        'That code is not right; check the key and the phone’s clock, and try the next code.',
      );
    }
    await audit(deps.store, { ...base, outcome: 'ok' }, now);
    if (pending) {
      const { token } = await deps.sessions.create({ ...pending.session, stage: 'full' }, now, pending.token);
      setSessionCookie(request, reply, token);
    }
    // Shown once, on this answer: never stored in clear, never sent again.
    return publicPage(
      request,
      reply,
      'Your recovery codes',
      html`<p>Each code signs you in once if you lose your phone. Keep them somewhere safe: they are not shown again.</p>
<ul id="recovery-codes" class="code">${codes.map((c) => html`<li>${c}</li>`)}</ul>
<p class="actions"><a class="button primary" href="/portal/dashboard" id="continue">Continue</a></p>`,
    );
  });

  // ---- signing out
  scope.post('/signout', { ...second, schema: { hide: true, body: PlainBody } }, async (request, reply) => {
    const s = request.portal ?? request.portalPending;
    if (s) await deps.sessions.end(s.token);
    clearSessionCookie(request, reply);
    return sendRedirect(reply, '/portal/signin');
  });
  scope.post('/signout-everywhere', { config: { portal: 'read' }, schema: { hide: true, body: PlainBody } }, async (request, reply) => {
    const c = ctx(request);
    const n = await deps.sessions.endAll(c.user.user_id);
    await audit(
      deps.store,
      {
        merchant_id: c.user.merchant_id,
        user_id: c.user.user_id,
        email: c.user.email,
        action: 'user.signout_everywhere',
        target: c.user.user_id,
        outcome: 'ok',
        detail: `${n} sessions`,
        ip: clientIp(request),
      },
      deps.now(),
    );
    clearSessionCookie(request, reply);
    return sendRedirect(reply, '/portal/signin');
  });

  // ---- which account (test or live) the pages show
  scope.post<{ Body: { account_id: string } }>(
    '/account',
    { config: { portal: 'read' }, schema: { hide: true, body: AccountBody } },
    async (request, reply) => {
      const c = ctx(request);
      const account = c.accounts.find((a) => a.account_id === request.body.account_id);
      if (!account) throw new PortalError(404, 'There is no such account for this merchant.');
      await deps.sessions.setAccount(c.token, account.account_id);
      const back = request.headers.referer;
      return sendRedirect(
        reply,
        typeof back === 'string' && /^\/portal\/[a-z]*$/.test(new URL(back, 'http://x').pathname) ? new URL(back, 'http://x').pathname : '/portal/dashboard',
      );
    },
  );

  // ---- a signed-in user's own password (issue 29): current + new; every other session ends
  const passwordForm = (request: FastifyRequest, reply: FastifyReply, errors: { current?: string; password?: string } = {}, status = 200) =>
    sendPortalPage(request, reply, {
      title: 'Change your password',
      nav: 'profile',
      status,
      body: html`<p>At least 12 characters; not a common password. Your other sessions end; this one stays.</p>
<form method="post" action="/portal/password" id="change-password">${formSecrets(request)}
${field({ name: 'current', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true, maxlength: 256, error: errors.current })}
${field({ name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, maxlength: 256, error: errors.password })}
${field({ name: 'confirm', label: 'New password again', type: 'password', autocomplete: 'new-password', required: true, maxlength: 256 })}
<p class="actions"><button type="submit" class="primary" id="change-password-submit">Change password</button></p></form>`,
    });
  scope.get('/password', { config: { portal: 'read' }, schema: { hide: true } }, async (request, reply) => passwordForm(request, reply));
  scope.post<{ Body: { current: string; password: string; confirm: string } }>(
    '/password',
    { config: { portal: 'read' }, schema: { hide: true, body: PasswordBody } },
    async (request, reply) => {
      const c = ctx(request);
      const now = deps.now();
      const base = {
        merchant_id: c.user.merchant_id,
        user_id: c.user.user_id,
        email: c.user.email,
        action: 'user.password_change',
        target: c.user.user_id,
        ip: clientIp(request),
      };
      if (request.body.password !== request.body.confirm) return passwordForm(request, reply, { password: 'The two new passwords differ.' }, 400);
      const r = await deps.users.changePassword(c.user, request.body.current, request.body.password, now);
      if (r.kind === 'locked') {
        // Locked by this or earlier failures: no more guesses here, and none at sign-in, for 30 minutes.
        await audit(deps.store, { ...base, outcome: 'refused', detail: 'locked' }, now);
        throw new PortalError(423, LOCKED, '/portal/profile');
      }
      if (r.kind !== 'ok') {
        await audit(deps.store, { ...base, outcome: 'refused', detail: r.kind === 'weak' ? r.problem : 'wrong current password' }, now);
        return passwordForm(
          request,
          reply,
          r.kind === 'weak' ? { password: `${r.problem[0]?.toUpperCase()}${r.problem.slice(1)}.` } : { current: 'That is not your current password.' },
          400,
        );
      }
      const ended = await deps.sessions.endOthers(c.user.user_id, c.token);
      await audit(deps.store, { ...base, outcome: 'ok', detail: `${ended} other sessions ended` }, now);
      return sendRedirect(reply, withNotice('/portal/profile', 'password_changed'));
    },
  );

  // ---- the user's own page
  scope.get('/profile', { config: { portal: 'read' }, schema: { hide: true } }, async (request, reply) => {
    const c = ctx(request);
    const left = await deps.users.recoveryCodesLeft(c.user.user_id);
    return sendPortalPage(request, reply, {
      title: 'Your profile',
      nav: 'profile',
      body: html`<dl><dt>E-mail</dt><dd>${c.user.email}</dd><dt>Role</dt><dd id="role">${c.user.role}</dd>
<dt>Two-step sign-in</dt><dd id="totp-status">${c.user.totp_enrolled_at !== null ? `on (${left} recovery codes left)` : 'off'}</dd></dl>
${c.user.totp_enrolled_at === null && html`<p><a class="button" href="/portal/totp" id="enrol-link">Turn on two-step sign-in</a></p>`}
<p><a class="button" href="/portal/password" id="password-link">Change your password</a></p>
<form method="post" action="/portal/signout-everywhere">${formSecrets(request)}<p class="actions"><button type="submit" id="signout-everywhere">Sign out everywhere</button></p></form>`,
    });
  });
}
