// Portal users of the merchant (docs/contract.md §19; issue 14), for owners only (access `users`):
//   GET  /portal/users                      e-mail, role, status (locked too), two-step sign-in
//   POST /portal/users                      create: the one-time set-password link is shown once
//   POST /portal/users/:user_id/role        change the role
//   POST /portal/users/:user_id/disable     the user cannot sign in; their sessions end
//   POST /portal/users/:user_id/enable
//   POST /portal/users/:user_id/reset       new set-password link (shown once); optionally removes TOTP
// The same PortalUsers calls as `npx tollgate user …` (src/portal/cli.ts). An owner cannot
// disable, demote or reset themselves, and a merchant keeps at least one active owner: a
// change that would leave none (two owners demoting each other at once) is undone and refused.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { attrs, field, html, type SafeHtml } from '../pages/index.js';
import {
  ctx,
  formSecrets,
  type NoticeKey,
  PathId,
  type PortalDeps,
  PortalError,
  type PortalRoute,
  portalAction,
  sendPortalPage,
  withNotice,
} from './context.js';
import { cell } from './format.js';
import { PORTAL_ROLES, type PortalRole, type PortalUserRow } from './tables.js';
import { PortalUserError, SETUP_LINK_MS } from './users.js';

const USERS = '/portal/users';
/** Text fields: bounded, and without control characters (PostgreSQL refuses NUL in text). */
const str = (max: number) => Type.String({ maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const base = { csrf: str(100), form_token: Type.Optional(str(255)) };
const CreateBody = Type.Object({ ...base, email: str(320), role: str(20) }, { additionalProperties: false });
const RoleBody = Type.Object({ ...base, role: str(20) }, { additionalProperties: false });
const ResetBody = Type.Object({ ...base, totp: Type.Optional(str(10)) }, { additionalProperties: false });
const PlainBody = Type.Object(base, { additionalProperties: false });

type UserParams = { Params: { user_id: string } };
const UserIdParams = Type.Object({ user_id: PathId });

function statusOf(u: PortalUserRow, now_ms: number): string {
  if (u.status === 'disabled') return 'disabled';
  if (Number(u.locked_until) > now_ms) return 'locked';
  return u.status === 'invited' ? 'invited (no password yet)' : 'active';
}

function role(text: string): PortalRole {
  if (!PORTAL_ROLES.includes(text as PortalRole)) throw new PortalError(400, `The role must be one of ${PORTAL_ROLES.join(', ')}.`, USERS);
  return text as PortalRole;
}

export const USERS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/users', access: 'users', handler: usersPage },
  { method: 'POST', url: '/users', access: 'users', body: CreateBody, handler: createUser },
  // A user route's path id is checked by the schema first (a NUL reached the audit write: 500 on PostgreSQL).
  { method: 'POST', url: '/users/:user_id/role', access: 'users', body: RoleBody, params: UserIdParams, handler: changeRole },
  { method: 'POST', url: '/users/:user_id/disable', access: 'users', body: PlainBody, params: UserIdParams, handler: disableUser },
  { method: 'POST', url: '/users/:user_id/enable', access: 'users', body: PlainBody, params: UserIdParams, handler: enableUser },
  { method: 'POST', url: '/users/:user_id/reset', access: 'users', body: ResetBody, params: UserIdParams, handler: resetUser },
];

/** A user of the signed-in owner's merchant; any other id (another merchant's too) is not found. */
async function target(deps: PortalDeps, request: FastifyRequest<UserParams>): Promise<PortalUserRow> {
  const id = request.params.user_id;
  const u = /^usr_[0-9A-Za-z]{1,40}$/.test(id) ? await deps.users.byId(id) : undefined;
  if (!u || u.merchant_id !== ctx(request).user.merchant_id) throw new PortalError(404, 'There is no such user.', USERS);
  return u;
}

function notSelf(request: FastifyRequest, u: PortalUserRow, what: string): void {
  if (u.user_id === ctx(request).user.user_id)
    throw new PortalError(409, `You cannot ${what} yourself; another owner can (a merchant keeps at least one active owner).`, USERS);
}

async function activeOwners(deps: PortalDeps, merchant_id: string): Promise<number> {
  return (await deps.users.list(merchant_id)).filter((u) => u.role === 'owner' && u.status === 'active').length;
}

/**
 * Runs a change to an owner; if it left the merchant without an active owner (another
 * owner changed at the same moment), `undo` puts it back and the change is refused.
 */
async function keepingAnOwner(deps: PortalDeps, u: PortalUserRow, change: () => Promise<void>, undo: () => Promise<void>): Promise<void> {
  if (u.role === 'owner' && u.status === 'active' && (await activeOwners(deps, u.merchant_id)) <= 1)
    throw new PortalError(409, 'The merchant must keep at least one active owner.', USERS);
  await change();
  if (u.role === 'owner' && (await activeOwners(deps, u.merchant_id)) === 0) {
    await undo();
    throw new PortalError(409, 'The merchant must keep at least one active owner.', USERS);
  }
}

const linkOf = (deps: PortalDeps, token: string) => `${deps.settings.public_url}/portal/setup/${token}`;

/** The page that shows a new set-password link, once. */
function linkPage(deps: PortalDeps, title: string, u: { email: string }, token: string, extra: SafeHtml | string = '') {
  return {
    title,
    nav: 'users' as const,
    body: html`<p>Send this link to <strong id="link-email">${u.email}</strong> to set a password. It works once, for ${SETUP_LINK_MS / 3600_000} hours, and is shown only now.</p>
<p class="code" id="setup-link">${linkOf(deps, token)}</p>${extra}
<p class="actions"><a class="button primary" href="/portal/users" id="continue">Back to users</a></p>`,
  };
}

async function usersPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const c = ctx(request);
  const users = await deps.users.list(c.user.merchant_id);
  const now = deps.now();
  return sendPortalPage(request, reply, {
    title: 'Users',
    nav: 'users',
    body: html`<div class="scroll"><table id="users" class="stack"><thead><tr><th>E-mail</th><th>Role</th><th>Status</th><th>Two-step sign-in</th><th>Change</th></tr></thead><tbody>${users.map(
      (u) =>
        html`<tr ${attrs({ id: `user-${u.user_id}` })}>${cell('E-mail', u.email, 'wrap')}${cell('Role', u.role, 'role')}${cell('Status', statusOf(u, now), 'status')}${cell(
          'Two-step sign-in',
          u.totp_enrolled_at !== null ? 'on' : 'off',
          'totp',
        )}${cell('Change', u.user_id === c.user.user_id ? 'you (another owner can change your user)' : userForms(request, u))}</tr>`,
    )}</tbody></table></div>
<h2>New user</h2>
<form method="post" action="/portal/users" id="create-user">${formSecrets(request)}
${field({ name: 'email', label: 'E-mail', type: 'email', required: true, maxlength: 320, autocomplete: 'off' })}
<label for="f-role">Role</label><select id="f-role" name="role">${PORTAL_ROLES.map((r) => html`<option ${attrs({ value: r, selected: r === 'viewer' })}>${r}</option>`)}</select>
<p>Owner: everything, users too. Admin: everything but users. Operator: capture, cancel, refund, review, cancel subscriptions. Viewer: read only.</p>
<p class="actions"><button type="submit" class="primary" id="create">Create user</button></p></form>`,
  });
}

async function createUser(deps: PortalDeps, request: FastifyRequest<{ Body: Static<typeof CreateBody> }>, reply: FastifyReply) {
  const c = ctx(request);
  const email = request.body.email;
  return portalAction(deps, request, reply, {
    action: 'user.create',
    target: email.trim().toLowerCase(),
    need: 'users',
    detail: `role ${request.body.role}`,
    run: async () => {
      const r = role(request.body.role);
      let made: Awaited<ReturnType<typeof deps.users.create>>;
      try {
        made = await deps.users.create({ merchant_id: c.user.merchant_id, email, role: r }, deps.now());
      } catch (e) {
        if (e instanceof PortalUserError) throw new PortalError(400, `${e.message}.`, USERS);
        throw e;
      }
      return { location: withNotice(USERS, 'user_created'), show: linkPage(deps, 'User created', made.user, made.token) };
    },
  });
}

async function changeRole(deps: PortalDeps, request: FastifyRequest<UserParams & { Body: Static<typeof RoleBody> }>, reply: FastifyReply) {
  return portalAction(deps, request, reply, {
    action: 'user.role',
    target: request.params.user_id,
    need: 'users',
    detail: `to ${request.body.role}`,
    run: async () => {
      const r = role(request.body.role);
      const u = await target(deps, request);
      notSelf(request, u, 'change the role of');
      if (u.role === r) return withNotice(USERS, 'user_updated');
      const change = () => deps.users.setRole(u.user_id, r, deps.now());
      if (r === 'owner') await change();
      else await keepingAnOwner(deps, u, change, () => deps.users.setRole(u.user_id, 'owner', deps.now()));
      return withNotice(USERS, 'user_updated');
    },
  });
}

async function disableUser(deps: PortalDeps, request: FastifyRequest<UserParams>, reply: FastifyReply) {
  return switchUser(deps, request, reply, true);
}

async function enableUser(deps: PortalDeps, request: FastifyRequest<UserParams>, reply: FastifyReply) {
  return switchUser(deps, request, reply, false);
}

function switchUser(deps: PortalDeps, request: FastifyRequest<UserParams>, reply: FastifyReply, disabled: boolean) {
  return portalAction(deps, request, reply, {
    action: disabled ? 'user.disable' : 'user.enable',
    target: request.params.user_id,
    need: 'users',
    run: async () => {
      const u = await target(deps, request);
      notSelf(request, u, disabled ? 'disable' : 'enable');
      const set = async (to: boolean) => {
        if (!(await deps.users.setDisabled(u.user_id, to, deps.now())))
          throw new PortalError(409, `${u.email} is ${to ? 'disabled already' : 'not disabled'}.`, USERS);
      };
      if (disabled)
        await keepingAnOwner(
          deps,
          u,
          () => set(true),
          () => set(false),
        );
      else await set(false);
      return withNotice(USERS, (disabled ? 'user_disabled' : 'user_enabled') satisfies NoticeKey);
    },
  });
}

async function resetUser(deps: PortalDeps, request: FastifyRequest<UserParams & { Body: Static<typeof ResetBody> }>, reply: FastifyReply) {
  const totp = request.body.totp === 'yes';
  return portalAction(deps, request, reply, {
    action: 'user.reset',
    target: request.params.user_id,
    need: 'users',
    detail: totp ? 'password and two-step sign-in' : 'password',
    run: async () => {
      const u = await target(deps, request);
      notSelf(request, u, 'reset');
      // A reset cannot be undone (the password is gone): the owner check comes first only.
      if (u.role === 'owner' && u.status === 'active' && (await activeOwners(deps, u.merchant_id)) <= 1)
        throw new PortalError(409, 'The merchant must keep at least one active owner.', USERS);
      const token = await deps.users.reset(u.user_id, { totp }, deps.now());
      return {
        location: withNotice(USERS, 'user_reset'),
        show: linkPage(
          deps,
          'User reset',
          u,
          token,
          html`<p id="reset-done">The password was cleared${totp ? ' and two-step sign-in removed' : ''}; every session of the user ended.</p>`,
        ),
      };
    },
  });
}

function userForms(request: FastifyRequest, u: PortalUserRow): SafeHtml {
  const path = (what: string) => `${USERS}/${u.user_id}/${what}`;
  return html`<form method="post" ${attrs({ action: path('role'), class: 'inline' })}>${formSecrets(request)}
<label ${attrs({ for: `f-role-${u.user_id}`, class: 'visually-hidden' })}>Role of ${u.email}</label><select ${attrs({ id: `f-role-${u.user_id}`, name: 'role' })}>${PORTAL_ROLES.map(
    (r) => html`<option ${attrs({ value: r, selected: r === u.role })}>${r}</option>`,
  )}</select><button ${attrs({ type: 'submit', id: `role-${u.user_id}`, 'aria-label': `Change the role of ${u.email}` })}>Change role</button></form>
<form method="post" ${attrs({ action: path(u.status === 'disabled' ? 'enable' : 'disable'), class: 'inline' })}>${formSecrets(request)}<button ${attrs({
    type: 'submit',
    id: `${u.status === 'disabled' ? 'enable' : 'disable'}-${u.user_id}`,
    'aria-label': `${u.status === 'disabled' ? 'Enable' : 'Disable'} ${u.email}`,
  })}>${u.status === 'disabled' ? 'Enable' : 'Disable'}</button></form>
<form method="post" ${attrs({ action: path('reset'), class: 'inline' })}>${formSecrets(request)}<label><input ${attrs({ type: 'checkbox', name: 'totp', value: 'yes', id: `f-totp-${u.user_id}` })}> also remove two-step sign-in</label><button ${attrs(
    {
      type: 'submit',
      id: `reset-${u.user_id}`,
      'aria-label': `Reset the password of ${u.email}`,
    },
  )}>Reset password</button></form>`;
}
