// A signed-in user's own pages (docs/contract.md §19; issue 29):
//   GET      /portal/profile              the user's own page
//   GET/POST /portal/password             change their own password (current + new); their other sessions end
//   POST     /portal/signout-everywhere   every session of the user
//   POST     /portal/account              which account (and mode) the pages show
// Every role may (access `read`); the audit log gets each change.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { field, html, sendRedirect } from '../pages/index.js';
import { audit } from './audit.js';
import { clientIp, ctx, formSecrets, type PortalDeps, PortalError, type PortalRoute, sendPortalPage, withNotice } from './context.js';
import { clearSessionCookie } from './plugin.js';
import { LOCKED, PlainBody } from './signin.js';

const str = (max: number) => Type.String({ maxLength: max });
const PasswordBody = Type.Object(
  { csrf: str(100), form_token: Type.Optional(str(255)), current: str(1000), password: str(1000), confirm: str(1000) },
  { additionalProperties: false },
);
const AccountBody = Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)), account_id: str(40) }, { additionalProperties: false });

export const PROFILE_ROUTES: readonly PortalRoute[] = [
  { method: 'POST', url: '/signout-everywhere', access: 'read', body: PlainBody, handler: signOutEverywhere },
  { method: 'POST', url: '/account', access: 'read', body: AccountBody, handler: switchAccount },
  { method: 'GET', url: '/password', access: 'read', handler: passwordPage },
  { method: 'POST', url: '/password', access: 'read', body: PasswordBody, handler: changePassword },
  { method: 'GET', url: '/profile', access: 'read', handler: profilePage },
];

async function signOutEverywhere(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
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
}

// ---- which account (test or live) the pages show
async function switchAccount(deps: PortalDeps, request: FastifyRequest<{ Body: Static<typeof AccountBody> }>, reply: FastifyReply) {
  const c = ctx(request);
  const account = c.accounts.find((a) => a.account_id === request.body.account_id);
  if (!account) throw new PortalError(404, 'There is no such account for this merchant.');
  await deps.sessions.setAccount(c.token, account.account_id);
  const back = request.headers.referer;
  return sendRedirect(
    reply,
    typeof back === 'string' && /^\/portal\/[a-z]*$/.test(new URL(back, 'http://x').pathname) ? new URL(back, 'http://x').pathname : '/portal/dashboard',
  );
}

// ---- a signed-in user's own password (issue 29): current + new; every other session ends
function passwordForm(request: FastifyRequest, reply: FastifyReply, errors: { current?: string; password?: string } = {}, status = 200) {
  return sendPortalPage(request, reply, {
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
}

async function passwordPage(_deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  return passwordForm(request, reply);
}

async function changePassword(deps: PortalDeps, request: FastifyRequest<{ Body: Static<typeof PasswordBody> }>, reply: FastifyReply) {
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
}

// ---- the user's own page
async function profilePage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
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
}
