// Signing in and out (docs/contract.md §19):
//   GET      /portal/                     to the dashboard when signed in, else to the sign-in page
//   GET/POST /portal/setup/:token         the one-time set-password link the operator's CLI prints
//   GET/POST /portal/signin               merchant number, e-mail and password (rate-limited per IP and per e-mail)
//   GET/POST /portal/signin/code          the second factor: a TOTP code or a recovery code
//   GET      /portal/totp                 enrolment: a page only; POST /portal/totp/start makes the secret, POST /portal/totp confirms
//                                         (required for every user of a merchant with a live account)
//   POST     /portal/signout              this session
// A signed-in user's own pages (password, profile, sign out everywhere, account switch) are in
// profile.ts. A new session is made at each step of sign-in (the id is rotated), and the audit
// log gets every attempt, good or bad. Wrong passwords and wrong codes count towards one lock,
// kept on the user row (ten lock the user for 30 minutes).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { TokenBuckets } from '../apikeys/rate-limit.js';
import { field, hidden, html, type SafeHtml, sendRedirect } from '../pages/index.js';
import { audit } from './audit.js';
import { clientIp, formSecrets, type PortalDeps, PortalError, type PortalRoute, sendPortalPage, withNotice } from './context.js';
import { clearSessionCookie, preSignInCsrf, setSessionCookie } from './plugin.js';
import { qrSvg } from './qr.js';
import type { PortalUserRow } from './tables.js';
import { totpUri } from './totp.js';
import { LOCKOUT_MS, PortalUserError, type SignIn } from './users.js';

export const LOCKED = `Too many wrong passwords or codes: this user is locked for ${Math.round(LOCKOUT_MS / 60_000)} minutes. Wait, or ask your administrator to reset it.`;
/** The one answer to every refused sign-in: it does not tell which of the three was wrong. */
const WRONG = 'Wrong merchant number, e-mail or password.';

const str = (max: number) => Type.String({ maxLength: max });
const SignInBody = Type.Object({ csrf: str(100), merchant_id: str(64), email: str(320), password: str(1000) }, { additionalProperties: false });
const SetupBody = Type.Object({ csrf: str(100), password: str(1000), confirm: str(1000) }, { additionalProperties: false });
const CodeBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)), code: str(40) }, { additionalProperties: false });
export const PlainBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)) }, { additionalProperties: false });

type SetupRequest = FastifyRequest<{ Params: { token: string }; Body: Static<typeof SetupBody> }>;
type SignInRequest = FastifyRequest<{ Body: Static<typeof SignInBody> }>;
type CodeRequest = FastifyRequest<{ Body: Static<typeof CodeBody> }>;

/**
 * Sign-in attempts: per IP 30 at once then 30 a minute; per e-mail 15 at once then 5 a minute.
 * Per process, so only a brake: the lock on the user row is what stops guessing.
 */
const perIp = new TokenBuckets(30 / 60, 30);
const perEmail = new TokenBuckets(5 / 60, 15);

/** Sign-in (access `public`: no session needed) and the steps after the password (`second`). */
export const SIGNIN_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/', access: 'public', handler: home },
  { method: 'GET', url: '/setup/:token', access: 'public', handler: setupPage },
  { method: 'POST', url: '/setup/:token', access: 'public', body: SetupBody, handler: setPassword },
  { method: 'GET', url: '/signin', access: 'public', handler: signInPage },
  { method: 'POST', url: '/signin', access: 'public', body: SignInBody, handler: signIn },
  { method: 'GET', url: '/signin/code', access: 'second', handler: codePage },
  { method: 'POST', url: '/signin/code', access: 'second', body: CodeBody, handler: secondFactor },
  { method: 'GET', url: '/totp', access: 'second', handler: totpPage },
  { method: 'POST', url: '/totp/start', access: 'second', body: PlainBody, handler: startTotp },
  { method: 'POST', url: '/totp', access: 'second', body: CodeBody, handler: confirmTotp },
  { method: 'POST', url: '/signout', access: 'second', body: PlainBody, handler: signOut },
];

function publicPage(request: FastifyRequest, reply: FastifyReply, title: string, body: SafeHtml, status?: number): FastifyReply {
  return sendPortalPage(request, reply, { title, body, status });
}

async function home(_deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  return sendRedirect(reply, request.portal ? '/portal/dashboard' : '/portal/signin');
}

// ---- the set-password link

function setupForm(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, user: PortalUserRow, token: string, error?: string) {
  return publicPage(
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
}

async function setupPage(deps: PortalDeps, request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) {
  const user = await deps.users.bySetupToken(request.params.token, deps.now());
  if (!user) throw new PortalError(404, 'This link is not valid any more (used, expired or replaced). Ask your administrator for a new one.');
  return setupForm(deps, request, reply, user, request.params.token);
}

async function setPassword(deps: PortalDeps, request: SetupRequest, reply: FastifyReply) {
  const token = request.params.token;
  const user = await deps.users.bySetupToken(token, deps.now());
  if (!user) throw new PortalError(404, 'This link is not valid any more (used, expired or replaced). Ask your administrator for a new one.');
  if (request.body.password !== request.body.confirm) return setupForm(deps, request, reply, user, token, 'The two passwords differ.');
  try {
    await deps.users.setPassword(token, request.body.password, deps.now());
  } catch (e) {
    if (e instanceof PortalUserError) return setupForm(deps, request, reply, user, token, e.message);
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
}

// ---- e-mail and password

function signInForm(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, error?: string, status = 200, merchant_id = '', email = '') {
  return publicPage(
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
}

async function signInPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  if (request.portal) return sendRedirect(reply, '/portal/dashboard');
  return signInForm(deps, request, reply);
}

/** The audit line's words for a refused password: the user's lock state is told only to the log. */
function refusalDetail(r: Exclude<SignIn, { kind: 'ok' }>, now: number): string {
  return r.kind === 'locked'
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
}

async function signIn(deps: PortalDeps, request: SignInRequest, reply: FastifyReply) {
  const now = deps.now();
  const ip = clientIp(request);
  const merchant_id = request.body.merchant_id.trim();
  const email = request.body.email.trim().toLowerCase();
  const limited = [perIp.take(`ip:${ip}`, now), perEmail.take(`email:${merchant_id}:${email}`, now)].find((d) => !d.allowed);
  const base = { merchant_id: '', user_id: '', email, action: 'signin', target: email, ip };
  if (limited) {
    await audit(deps.store, { ...base, outcome: 'refused', detail: 'rate limited' }, now);
    reply.header('retry-after', String(limited.retry_after_s));
    return signInForm(deps, request, reply, `Too many sign-in attempts; wait ${limited.retry_after_s} seconds and try again.`, 429, merchant_id, email);
  }
  const r = await deps.users.signIn(merchant_id, email, request.body.password, now);
  if (r.kind !== 'ok') {
    // A known user's failures go to their merchant's audit log (the page a merchant reads).
    const who = r.user ? { merchant_id: r.user.merchant_id, user_id: r.user.user_id } : {};
    await audit(deps.store, { ...base, ...who, outcome: 'refused', detail: refusalDetail(r, now) }, now);
    // Only whoever knows the password learns of the lock; every other refusal reads the same.
    if (r.kind === 'locked') return signInForm(deps, request, reply, LOCKED, 423, merchant_id, email);
    return signInForm(deps, request, reply, WRONG, 401, merchant_id, email);
  }
  const stage = await startSession(deps, request, reply, r.user, ip, now);
  await audit(
    deps.store,
    {
      ...base,
      merchant_id: r.user.merchant_id,
      user_id: r.user.user_id,
      outcome: 'ok',
      detail: stage === 'full' ? 'signed in' : stage === 'password' ? 'password; second factor next' : 'password; must enrol TOTP',
    },
    now,
  );
  return sendRedirect(reply, stage === 'password' ? '/portal/signin/code' : stage === 'enrol' ? '/portal/totp' : '/portal/dashboard');
}

/** The session a right password opens: full, or owing the second factor, or owing its enrolment. */
async function startSession(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, user: PortalUserRow, ip: string, now: number) {
  const second = user.totp_enrolled_at !== null;
  const mustEnrol = !second && (await deps.users.totpRequired(user));
  const first = await deps.store.db
    .selectFrom('accounts')
    .select('account_id')
    .where('merchant_id', '=', user.merchant_id)
    .orderBy('account_id')
    .executeTakeFirst();
  const stage = second ? 'password' : mustEnrol ? 'enrol' : 'full';
  const { token } = await deps.sessions.create({ user_id: user.user_id, merchant_id: user.merchant_id, stage, account_id: first?.account_id ?? '', ip }, now);
  setSessionCookie(request, reply, token);
  return stage;
}

// ---- the second factor

function codeForm(request: FastifyRequest, reply: FastifyReply, error?: string) {
  return publicPage(
    request,
    reply,
    'Two-step sign-in',
    html`<form method="post" action="/portal/signin/code">${formSecrets(request)}
${error && html`<p class="error" id="code-error" role="alert">${error}</p>`}
${field({ name: 'code', label: 'The 6-digit code from your authenticator app, or a recovery code', autocomplete: 'one-time-code', inputmode: 'text', required: true, maxlength: 40 })}
<p class="actions"><button type="submit" class="primary" id="verify">Verify</button></p></form>`,
    error ? 401 : 200,
  );
}

async function codePage(_deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  if (request.portal) return sendRedirect(reply, '/portal/dashboard');
  if (request.portalPending?.session.stage !== 'password') return sendRedirect(reply, '/portal/totp');
  return codeForm(request, reply);
}

async function secondFactor(deps: PortalDeps, request: CodeRequest, reply: FastifyReply) {
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
}

// ---- TOTP enrolment: after the password when required, or from the profile. The GET
// writes nothing (issue 29: a page load, a prefetch or a cross-site link must not replace
// a secret being enrolled); POST /portal/totp/start makes the secret, POST /portal/totp confirms.

function enrolPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, user: PortalUserRow, error?: string) {
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
    html`<p>Scan this code with an authenticator app (or type the key in, or open the link on the phone), then enter the 6-digit code it shows.</p>
<p>${qrSvg(totpUri(secret, user.email), 'QR code of the two-step sign-in key', 'totp-qr')}</p>
<p class="code" id="totp-secret">${secret}</p>
<p><a href="${totpUri(secret, user.email)}" id="totp-uri">Open in an authenticator app</a></p>
<form method="post" action="/portal/totp">${formSecrets(request)}
${field({ name: 'code', label: '6-digit code', autocomplete: 'one-time-code', inputmode: 'numeric', required: true, maxlength: 10, error })}
<p class="actions"><button type="submit" class="primary" id="enrol">Turn on</button></p></form>`,
    error ? 400 : 200,
  );
}

function enrolling(request: FastifyRequest) {
  return request.portal?.user ?? (request.portalPending?.session.stage === 'enrol' ? request.portalPending.user : undefined);
}

async function totpPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const user = request.portal?.user ?? request.portalPending?.user;
  if (!user) return sendRedirect(reply, '/portal/signin');
  if (user.totp_enrolled_at !== null) return sendRedirect(reply, request.portal ? '/portal/profile' : '/portal/signin/code');
  return enrolPage(deps, request, reply, user);
}

async function startTotp(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const user = enrolling(request);
  if (!user) return sendRedirect(reply, '/portal/signin');
  // A key shown already stays (a second click or a reload of the form shows the same one).
  if (user.totp_enrolled_at === null && !deps.users.pendingTotp(user)) await deps.users.beginTotp(user.user_id, deps.now());
  return sendRedirect(reply, '/portal/totp');
}

async function confirmTotp(deps: PortalDeps, request: CodeRequest, reply: FastifyReply) {
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
      deps,
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
}

// ---- signing out (this session; every session of the user: profile.ts)

async function signOut(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const s = request.portal ?? request.portalPending;
  if (s) await deps.sessions.end(s.token);
  clearSessionCookie(request, reply);
  return sendRedirect(reply, '/portal/signin');
}
