// The portal's Fastify scope (`/portal`, docs/contract.md §19). Every route declares its access in
// `config.portal`; the hooks here load the session (cookie → server-side row), send a
// visitor without one to the sign-in page, refuse a role that may not, and check the CSRF
// token of every POST before anything else runs. Errors become pages in the portal's frame.

import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { newId } from '../crypto/ids.js';
import { RETRY_AFTER_S, storageFault } from '../db/faults.js';
import { sendRedirect } from '../pages/index.js';
import { BodyParseError } from '../web/body.js';
import { asApiError } from '../web/outcomes.js';
import { setRequestTime } from '../web/request-time.js';
import { can, type PortalDeps, PortalError, sendPortalMessage } from './context.js';

/** `__Host-` cookies (Secure, Path=/, no Domain) when served over HTTPS; plain ones scoped to /portal otherwise. */
function secure(request: FastifyRequest): boolean {
  return request.protocol === 'https';
}
export function sessionCookie(request: FastifyRequest): string {
  return secure(request) ? '__Host-tollgate_portal' : 'tollgate_portal';
}
function preCookie(request: FastifyRequest): string {
  return secure(request) ? '__Host-tollgate_portal_pre' : 'tollgate_portal_pre';
}
export function cookieOptions(request: FastifyRequest) {
  return { path: secure(request) ? '/' : '/portal', httpOnly: true, sameSite: 'strict' as const, secure: secure(request) };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(sessionCookie(request), token, cookieOptions(request));
}
/**
 * Clears the session cookie, only when the request carried one and did not come from another
 * site (issue 29): a cross-site POST arrives without the SameSite=Strict cookie, and its answer
 * must not sign the user out of the tab where they are signed in.
 */
export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  if (request.cookies[sessionCookie(request)] === undefined) return;
  if (request.headers['sec-fetch-site'] === 'cross-site') return;
  reply.clearCookie(sessionCookie(request), cookieOptions(request));
}

/**
 * The CSRF token of a form shown before sign-in (sign-in, set password): a double-submit
 * bound to a random cookie by a keyed hash, so a page of another site can neither read nor
 * forge it (and the cookie is SameSite=Strict).
 */
export function preSignInCsrf(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply): string {
  let nonce = request.cookies[preCookie(request)];
  if (!nonce || !/^[A-Za-z0-9_-]{20,64}$/.test(nonce)) {
    nonce = newId('portal_nonce');
    reply.setCookie(preCookie(request), nonce, cookieOptions(request));
  }
  return deps.keyring.fingerprint(`portal csrf:${nonce}`);
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Every portal route as registered (method, URL, access, body and query schemas): the fuzz run reads it to reach each form. */
export interface PortalRouteInfo {
  method: string;
  url: string;
  access: string;
  body?: unknown;
  querystring?: unknown;
}
export const PORTAL_ROUTES: PortalRouteInfo[] = [];

export async function portalScope(scope: FastifyInstance, deps: PortalDeps): Promise<void> {
  await scope.register(cookie, { hook: 'onRequest' });
  scope.addHook('onRoute', recordRoute);
  scope.addHook('onRequest', async (request, reply) => requireAccess(deps, request, reply));
  // Forms only, and every one with its CSRF token: checked before validation and the handler.
  scope.addHook('preValidation', async (request) => checkForm(deps, request));
  scope.setErrorHandler(errorPage);
  scope.setNotFoundHandler(async (request, reply) => sendPortalMessage(request, reply, 404, titleOf(404), 'There is no such page or record for this account.'));
}

function recordRoute(r: RouteOptions): void {
  for (const method of [r.method].flat()) {
    if (method === 'HEAD') continue;
    if (PORTAL_ROUTES.some((x) => x.method === method && x.url === r.url)) continue;
    const schema = (r.schema ?? {}) as { body?: unknown; querystring?: unknown };
    PORTAL_ROUTES.push({ method, url: r.url, access: String(r.config?.portal ?? 'read'), body: schema.body, querystring: schema.querystring });
  }
}

/**
 * The pages that show or act on the account's payments, subscriptions and payouts: on a test
 * account with a moved clock they run at the clock's time (docs/contract.md §16), as the API
 * does (a capture window, "today" on the dashboard). Sign-in, profile, users, settings and the
 * audit page keep the real time: a user's session, second factor and keys are not the account's test data.
 */
const ACCOUNT_TIME = /^\/portal\/(?:dashboard|transactions|disputes|subscriptions|payouts)(?:$|[/.])/;

/** Loads the session, then lets the route's access through, or sends the visitor to sign in, or refuses the role. */
async function requireAccess(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const access = request.routeOptions.config?.portal ?? 'read';
  const token = request.cookies[sessionCookie(request)];
  if (token) await loadSession(deps, request, token);
  if (request.portal && ACCOUNT_TIME.test(request.routeOptions.url ?? '')) await setRequestTime(deps, request, request.portal.account);
  if (access === 'public') return;
  if (access === 'second') {
    if (request.portalPending || request.portal) return;
  } else if (request.portal) {
    if (!can(request.portal.user.role, access)) throw new PortalError(403, `Your role (${request.portal.user.role}) cannot see or do this.`);
    return;
  }
  if (request.method === 'GET') {
    sendRedirect(reply, '/portal/signin');
    return reply;
  }
  throw new PortalError(401, 'Your session has ended; sign in again.', '/portal/signin');
}

/** A POST must be a form carrying the CSRF token of its session (or, before sign-in, of its pre-sign-in cookie). */
async function checkForm(deps: PortalDeps, request: FastifyRequest): Promise<void> {
  if (request.method !== 'POST') return;
  if (request.bodyFormat !== 'form' && request.bodyFormat !== 'empty')
    throw new PortalError(415, 'The portal takes HTML forms (application/x-www-form-urlencoded) only.');
  const body = (request.body ?? {}) as Record<string, unknown>;
  const given = typeof body.csrf === 'string' ? body.csrf : '';
  const session = request.portal?.session ?? request.portalPending?.session;
  let expected: string;
  if (session) expected = session.csrf_token;
  else {
    const nonce = request.cookies[preCookie(request)];
    expected = nonce ? deps.keyring.fingerprint(`portal csrf:${nonce}`) : '';
  }
  if (!sameToken(given, expected)) {
    throw new PortalError(403, 'This form has expired or did not come from this site (missing or wrong CSRF token). Reload the page and try again.');
  }
}

/** Every refusal and failure as a page in the portal's frame, with the status it deserves. */
function errorPage(error: Error & { validation?: unknown; code?: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply) {
  const fault = storageFault(error);
  if (fault) {
    reply.header('retry-after', String(RETRY_AFTER_S[fault]));
    return sendPortalMessage(
      request,
      reply,
      503,
      'Try again in a moment',
      'The gateway cannot reach or write to its storage right now. Nothing was changed; try again in a moment.',
    );
  }
  if (error instanceof PortalError) {
    if (error.status === 401) clearSessionCookie(request, reply);
    return sendPortalMessage(request, reply, error.status, titleOf(error.status), error.message, error.back);
  }
  // The shared stores' refusals (the form token as idempotency key: malformed, or reused for another form).
  // Also the app's own refusals before the route ran: load shedding answers 503 (its
  // Retry-After is set already), and stays a 503 here.
  const api = asApiError(error);
  if (api) {
    const status = api.http >= 400 && api.http < 600 ? api.http : 400;
    const text =
      api.field === 'form_token' && status === 409
        ? 'This form was already sent with other values, or is still being processed; reload the page and try again.'
        : (api.detail ?? api.message);
    return sendPortalMessage(request, reply, status, titleOf(status), text);
  }
  if (error.validation) return sendPortalMessage(request, reply, 400, 'Please check the form', `The form was refused: ${describe(error)}.`);
  if (error instanceof BodyParseError) return sendPortalMessage(request, reply, 400, 'Please check the form', error.message);
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendPortalMessage(request, reply, 413, 'Too large', 'The form is too large.');
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return sendPortalMessage(request, reply, error.statusCode, titleOf(error.statusCode), error.message);
  }
  if (error.code === 'FST_UNDER_PRESSURE') {
    reply.header('retry-after', '1');
    return sendPortalMessage(request, reply, 503, 'Try again in a moment', 'The gateway is busy; try again in a moment.');
  }
  request.log.error({ err: { message: error.message, stack: error.stack, code: error.code } }, 'portal: unhandled error');
  return sendPortalMessage(
    request,
    reply,
    500,
    'Something went wrong',
    'The request failed; nothing you can fix. Try again, and tell your operator if it keeps failing.',
  );
}

function titleOf(status: number): string {
  return (
    (
      {
        400: 'Please check the form',
        401: 'Please sign in',
        403: 'Not allowed',
        404: 'Not found',
        409: 'Not possible now',
        413: 'Too large',
        415: 'Not a form',
        422: 'Not possible',
        423: 'Locked',
        429: 'Too many attempts',
        503: 'Try again in a moment',
      } as Record<number, string>
    )[status] ?? 'Refused'
  );
}

function describe(error: { validation?: unknown; message: string }): string {
  const v = Array.isArray(error.validation)
    ? (error.validation as Array<{ instancePath?: string; message?: string; params?: { missingProperty?: string } }>)
    : [];
  const first = v[0];
  if (!first) return error.message;
  const field = first.params?.missingProperty ?? (first.instancePath ?? '').replace(/^\//, '');
  // A pattern means nothing to the person at the form: say what it is about, not the expression.
  const message = (first.message ?? 'invalid').replace(/^must match pattern .*$/s, 'holds a character or a form that is not allowed here');
  return `${field ? `${field}: ` : ''}${message}`;
}

async function loadSession(deps: PortalDeps, request: FastifyRequest, token: string): Promise<void> {
  const session = await deps.sessions.load(token, deps.now());
  if (!session) return;
  const user = await deps.users.byId(session.user_id);
  if (user?.status !== 'active' || user.merchant_id !== session.merchant_id) return;
  if (session.stage !== 'full') {
    request.portalPending = { user, session, token };
    return;
  }
  const accounts = await deps.store.db.selectFrom('accounts').selectAll().where('merchant_id', '=', user.merchant_id).orderBy('account_id').execute();
  const account = accounts.find((a) => a.account_id === session.account_id) ?? accounts[0];
  if (!account) return;
  request.portal = { user, session, token, account, accounts, merchant_name: await deps.merchants.displayName(user.merchant_id) };
}
