// What every portal route shares (docs/contract.md §19): the signed-in user and the account shown,
// the role a route needs, the CSRF token and form token every form carries, the page frame
// (navigation, account and mode switch), and `portalAction`, the one way a form changes
// something: role check, once per form token (the shared idempotency store), audit line.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { newId } from '../crypto/ids.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { runOnce } from '../idempotency/plugin.js';
import { attrs, hidden, html, type SafeHtml, sendPage, sendRedirect } from '../pages/index.js';
import type { Deps } from '../web/context.js';
import { audit } from './audit.js';
import type { PortalSessions } from './sessions.js';
import type { PortalRole, PortalSessionRow, PortalUserRow } from './tables.js';
import type { PortalUsers } from './users.js';

/**
 * A path id's shape (printable ASCII, as the gateway's ids are), checked by the route's
 * schema before any query or audit write: PostgreSQL's text cannot hold a NUL (500).
 */
export const PathId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7E]{1,64}$' });

export interface PortalDeps extends Deps {
  users: PortalUsers;
  sessions: PortalSessions;
}

/** What a route needs: `public` (no session), `second` (password given, second factor or enrolment to come), or a capability. */
export type PortalAccess = 'public' | 'second' | Capability;
/** read: every role; operate: capture, cancel, refund, review, cancel subscriptions; manage: settings, payouts; users: the user list; processors: the account's processors and their credentials (owners, docs/contract.md §21). */
export type Capability = 'read' | 'operate' | 'manage' | 'users' | 'processors';

const CAN: Readonly<Record<Capability, readonly PortalRole[]>> = {
  read: ['owner', 'admin', 'operator', 'viewer'],
  operate: ['owner', 'admin', 'operator'],
  manage: ['owner', 'admin'],
  users: ['owner'],
  processors: ['owner'],
};

export function can(role: PortalRole, what: Capability): boolean {
  return CAN[what].includes(role);
}

export interface PortalContext {
  user: PortalUserRow;
  session: PortalSessionRow;
  /** The cookie's value (to rotate or end the session). */
  token: string;
  /** The account the pages show; every query is scoped by it (and so by merchant and mode). */
  account: AccountRow;
  /** The merchant's accounts, for the switch. */
  accounts: AccountRow[];
  merchant_name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    portal?: PortalContext;
    /** The session of a signed-in user who still owes the second factor (access `second`). */
    portalPending?: { user: PortalUserRow; session: PortalSessionRow; token: string };
  }
  interface FastifyContextConfig {
    /** A portal route's access (src/portal/context.ts). */
    portal?: PortalAccess;
  }
}

/**
 * One portal route as data: the page files export lists of these and routes.ts registers
 * them, so the URL → handler map is one list to read. `url` is under `/portal`; the route is
 * hidden from the OpenAPI document; `access` becomes `config.portal`, read by plugin.ts's hooks.
 */
export interface PortalRoute {
  method: 'GET' | 'POST';
  url: string;
  access: PortalAccess;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** A form that may carry files (multipart/form-data, multipart.ts): the route's body limit in bytes. Other routes take urlencoded forms only. */
  upload?: number;
  /** A named function of the page's file; method syntax so that it may narrow the request's params, query and body. */
  handler(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

/** A refusal shown as a page: 400 bad form, 403 not allowed, 404 not found (also another merchant's id), 409 … */
export class PortalError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Where the page's link goes back to. */
    readonly back?: string,
  ) {
    super(message);
  }
}

export function notFound(): PortalError {
  return new PortalError(404, 'There is no such page or record for this account.');
}

/** The signed-in context; routes of access other than `public`/`second` always have one. */
export function ctx(request: FastifyRequest): PortalContext {
  if (!request.portal) throw new PortalError(401, 'Please sign in.');
  return request.portal;
}

export function requireCapability(request: FastifyRequest, what: Capability): PortalContext {
  const c = ctx(request);
  if (!can(c.user.role, what)) throw new PortalError(403, `Your role (${c.user.role}) cannot do this.`);
  return c;
}

/** The hidden inputs every form of a signed-in page carries: the CSRF token and a fresh form token (the idempotency key of its submission). */
export function formSecrets(request: FastifyRequest): SafeHtml {
  const csrf = request.portal?.session.csrf_token ?? request.portalPending?.session.csrf_token ?? '';
  return html`${hidden('csrf', csrf)}${hidden('form_token', newId('portal_form_token'))}`;
}

export type NavKey =
  | 'dashboard'
  | 'transactions'
  | 'disputes'
  | 'subscriptions'
  | 'payouts'
  | 'settlement'
  | 'reconciliation'
  | 'settings'
  | 'processors'
  | 'users'
  | 'audit'
  | 'profile';

const NAV: ReadonlyArray<{ key: NavKey; href: string; label: string; need: Capability }> = [
  { key: 'dashboard', href: '/portal/dashboard', label: 'Dashboard', need: 'read' },
  { key: 'transactions', href: '/portal/transactions', label: 'Transactions', need: 'read' },
  { key: 'disputes', href: '/portal/disputes', label: 'Disputes', need: 'read' },
  { key: 'subscriptions', href: '/portal/subscriptions', label: 'Subscriptions', need: 'read' },
  { key: 'payouts', href: '/portal/payouts', label: 'Payouts', need: 'read' },
  { key: 'settlement', href: '/portal/settlement', label: 'Settlement', need: 'read' },
  { key: 'reconciliation', href: '/portal/reconciliation', label: 'Reconciliation', need: 'manage' },
  { key: 'settings', href: '/portal/settings', label: 'Settings', need: 'manage' },
  { key: 'processors', href: '/portal/processors', label: 'Processors', need: 'processors' },
  { key: 'users', href: '/portal/users', label: 'Users', need: 'users' },
  { key: 'audit', href: '/portal/audit', label: 'Audit log', need: 'manage' },
];

export interface PortalPage {
  title: string;
  body: SafeHtml;
  nav?: NavKey;
  status?: number;
  /** A line above the body; by default the `?done=` notice of the URL. */
  notice?: string;
}

/** A signed-in page: the bar (merchant, account and mode switch, navigation, user, sign out) and the body. */
export function sendPortalPage(request: FastifyRequest, reply: FastifyReply, p: PortalPage): FastifyReply {
  const c = request.portal;
  const bar = c
    ? html`<header class="bar">
<strong id="merchant-name">${c.merchant_name}</strong>
<form method="post" action="/portal/account" id="account-switch">${formSecrets(request)}
<label for="f-account" class="visually-hidden">Account</label>
<select id="f-account" name="account_id">${c.accounts.map(
        (a) => html`<option ${attrs({ value: a.account_id, selected: a.account_id === c.account.account_id })}>${a.account_id} (${a.mode})</option>`,
      )}</select><button type="submit">Show</button></form>
<span class="mode mode-${c.account.mode}" id="mode">${c.account.mode === 'test' ? 'Test data' : 'Live data'}</span>
<nav aria-label="Portal">${NAV.filter((n) => can(c.user.role, n.need)).map(
        (n) => html`<a ${attrs({ href: n.href, 'aria-current': n.key === p.nav ? 'page' : undefined })}>${n.label}</a>`,
      )}</nav>
<span><a ${attrs({ href: '/portal/profile', id: 'user-email', 'aria-current': p.nav === 'profile' ? 'page' : undefined })}>${c.user.email}</a> (${c.user.role})</span>
<form method="post" action="/portal/signout">${formSecrets(request)}<button type="submit" class="quiet" id="signout">Sign out</button></form>
</header>`
    : '';
  const notice = p.notice ?? noticeOf(request);
  return sendPage(reply, {
    lang: 'en',
    title: `${p.title} · Tollgate`,
    wide: true,
    status: p.status,
    frameAncestors: [],
    body: html`${bar}<main><h1>${p.title}</h1>${notice && html`<p class="notice" role="status" id="notice">${notice}</p>`}${p.body}</main>`,
  });
}

/** A message page (refusals, errors) in the portal's frame, with a link back. */
export function sendPortalMessage(request: FastifyRequest, reply: FastifyReply, status: number, title: string, text: string, back?: string): FastifyReply {
  const link = back ?? (request.portal ? '/portal/dashboard' : '/portal/signin');
  return sendPortalPage(request, reply, {
    title,
    status,
    body: html`<p id="message">${text}</p><p><a href="${link}" id="back">Back</a></p>`,
  });
}

/** What a confirmation page asks: the question, what follows, the form to send again (with `confirm=yes`), and the way back. */
export interface Confirmation {
  title: string;
  nav: NavKey;
  question: string;
  consequence: string;
  /** Where the form posts: the action asked about. */
  action: string;
  /** The fields of the first form, sent again as they were typed. */
  fields?: SafeHtml;
  /** The button's id and words (`confirm-refund`, `Yes, refund`). */
  id: string;
  label: string;
  back: string;
}

/**
 * The confirmation of an action that cannot be undone (issue 36 item 4: cancel and refund took
 * one click): a page whose form sends the same fields with `confirm=yes` and a fresh form
 * token. No script, so it works as every form does; nothing is changed until it is sent.
 */
export function sendConfirmPage(request: FastifyRequest, reply: FastifyReply, q: Confirmation): FastifyReply {
  return sendPortalPage(request, reply, {
    title: q.title,
    nav: q.nav,
    body: html`<p id="confirm-question">${q.question}</p><p class="note">${q.consequence}</p>
<form method="post" action="${q.action}" id="confirm-form">${formSecrets(request)}${hidden('confirm', 'yes')}${q.fields ?? ''}
<p class="actions"><button type="submit" class="primary" ${attrs({ id: q.id })}>${q.label}</button><a class="button" href="${q.back}" id="back">No, go back</a></p></form>`,
  });
}

export function clientIp(request: FastifyRequest): string {
  return request.ip;
}

export interface ActionSpec {
  /** e.g. `payment.refund`; the audit log's action. */
  action: string;
  /** e.g. the transaction id (read again after `run`, which may set the id of what it made). */
  target: string;
  need: Capability;
  /**
   * Does the work through the domain functions; returns where to go next (303), or throws
   * PortalError for a refusal. A secret shown once (a new signing key, an API key, a
   * set-password link) is returned as `show`: the first answer is that page (200), never
   * stored; a repeated submission gets the redirect to `location` instead.
   */
  run: () => Promise<string | { location: string; show: PortalPage }>;
  /** A few words for the audit line (never a secret or card number). */
  detail?: string;
}

/**
 * Every change a portal form makes goes through here: the role is checked, the work runs
 * at most once per form token (a double submission gets the first answer), and the audit
 * log gets a line for success, refusal and failure alike.
 */
export async function portalAction(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, spec: ActionSpec): Promise<FastifyReply> {
  const c = ctx(request);
  const base = {
    merchant_id: c.user.merchant_id,
    user_id: c.user.user_id,
    email: c.user.email,
    action: spec.action,
    target: spec.target,
    ip: clientIp(request),
  };
  if (!can(c.user.role, spec.need)) {
    await audit(deps.store, { ...base, outcome: 'refused', detail: `role ${c.user.role}` }, deps.now());
    throw new PortalError(403, `Your role (${c.user.role}) cannot do this.`);
  }
  const body = (request.body ?? {}) as Record<string, unknown>;
  const form_token = typeof body.form_token === 'string' ? body.form_token : '';
  if (!form_token) throw new PortalError(400, 'The form is missing its form_token; reload the page and try again.');
  const { csrf: _csrf, ...fields } = body;
  const what = `${request.method} ${request.url.split('?')[0]}\n${JSON.stringify(fields)}`;
  try {
    let show: PortalPage | undefined;
    const { answer, replayed } = await runOnce(deps, `portal:${c.user.user_id}`, form_token, what, async () => {
      const done = await spec.run();
      if (typeof done !== 'string') show = done.show;
      return { status: 303, type: 'text/plain', body: typeof done === 'string' ? done : done.location };
    });
    // Read after the work: `run` may name what it made (a new record's id) in `target` and `detail`.
    if (!replayed) await audit(deps.store, { ...base, target: spec.target, outcome: 'ok', detail: spec.detail }, deps.now());
    if (show && !replayed) return sendPortalPage(request, reply, show);
    return sendRedirect(reply, answer.body);
  } catch (e) {
    if (e instanceof PortalError)
      await audit(deps.store, { ...base, outcome: 'refused', detail: `${spec.detail ? `${spec.detail}: ` : ''}${e.message}` }, deps.now());
    throw e;
  }
}

/**
 * `?done=<key>` on the page an action redirects to: the notice it shows. Only keys of this
 * table are shown (never text from the URL, which anyone can write into a link).
 */
export const NOTICES = {
  password_set: 'Your password is set. Sign in with it.',
  captured: 'Captured.',
  cancelled: 'Cancelled.',
  refunded: 'Refund made.',
  capture_pending: 'The capture was sent; the processor has not confirmed it yet.',
  cancel_pending: 'The cancel was sent; the processor has not confirmed it yet.',
  refund_pending: 'The refund was sent; the processor has not confirmed it yet.',
  review_accepted: 'Accepted: the payment goes ahead.',
  review_rejected: 'Rejected: the payment was cancelled.',
  notification_replayed: 'The notification will be sent again.',
  subscription_cancelled: 'The subscription is cancelled.',
  evidence_added: 'The evidence was added; submit it before the due date.',
  evidence_submitted: 'The evidence was submitted: the dispute is under review until the processor decides.',
  dispute_accepted: 'The dispute was accepted: it is closed as lost.',
  payout_created: 'Payout created.',
  payout_failed: 'The payout was created but failed: its reason is in the list.',
  saved: 'Saved.',
  key_rotated: 'The signing key was rotated.',
  apikey_revoked: 'The API key was revoked.',
  keys_retired: 'The previous signing keys were retired: they no longer verify.',
  apikey_created: 'The API key was created.',
  notification_secret_rotated: 'The notification secret was rotated.',
  ip_added: 'The address was added to the allow-list.',
  blocklist_added: 'Added to the blocklist.',
  frame_origin_added: 'The frame origin was added.',
  processor_set: 'The processor was saved; payments use it from now on.',
  processor_removed: 'The processor was removed.',
  removed: 'Removed.',
  user_disabled: 'The user was disabled; their sessions ended.',
  user_enabled: 'The user was enabled.',
  user_reset: 'The user was reset; their sessions ended.',
  user_created: 'User created.',
  user_updated: 'User updated.',
  totp_enrolled: 'Two-step sign-in is on.',
  password_changed: 'Your password was changed; your other sessions were signed out.',
  signed_out_everywhere: 'Every other session was signed out.',
} as const;
export type NoticeKey = keyof typeof NOTICES;

export function withNotice(path: string, notice: NoticeKey): string {
  return `${path}${path.includes('?') ? '&' : '?'}done=${notice}`;
}

function noticeOf(request: FastifyRequest): string | undefined {
  const done = (request.query as Record<string, unknown> | undefined)?.done;
  return typeof done === 'string' && Object.hasOwn(NOTICES, done) ? NOTICES[done as NoticeKey] : undefined;
}
