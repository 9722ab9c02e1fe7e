// Who calls the generic interface (docs/contract.md §12, §18, §24; issues 13, 33): `Authorization:
// Bearer sk_test_…|sk_live_…`, or Basic with the key as the user name (`curl -u sk_test_…:`),
// checked before the body is read; then the key's token bucket.
// The caller's account (and with it its mode) scopes every query of the request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TokenBuckets } from '../apikeys/rate-limit.js';
import type { KeyCaller } from '../apikeys/service.js';
import type { Deps } from '../web/context.js';
import { readsBack, requireAllowedIp } from '../web/ip-allow.js';
import { setRequestTime } from '../web/request-time.js';
import { answersAreStrings } from '../web/route-schema.js';
import { GenericError, refuseUnexpandable } from './wire.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The generic interface's caller: set by `genericHooks` before anything else runs. */
    apiKey?: KeyCaller;
  }
}

/** The bracket-notation name of the first string holding a NUL, or null. */
function nulAt(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object' || depth > 8) return null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k.includes('\u0000')) return path || 'query';
    const found = nulAt(v, path ? `${path}[${k}]` : k, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** A presented key as an error may show it: its mode prefix and last four characters. */
function redacted(presented: string): string {
  const m = /^(sk_(?:test|live)_)/.exec(presented);
  return m ? `${m[1]}…${presented.slice(-4)}` : '(not an sk_test_ or sk_live_ key)';
}

/** 401 as the platform family answers it: `invalid_request_error` without a code (its published codes have none for a bad key). */
export function unauthenticated(message: string): GenericError {
  return new GenericError(401, { type: 'invalid_request_error', message });
}

/**
 * The key an `Authorization` header presents: `Bearer <key>`, or `Basic base64(<key>:)` (the
 * key as the user name, the password empty or ignored, as the platform family's own API reads
 * `curl -u`). Null when the scheme is neither; '' when Basic carries no user name.
 */
export function presentedKey(header: string): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1] as string;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!basic) return null;
  const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? decoded : decoded.slice(0, colon);
}

/** An `Authorization` header of a scheme the generic interface reads (docs/contract.md §24: such a request under /v1 is answered in its shape). */
export function carriesApiKey(header: string | undefined): boolean {
  return header !== undefined && /^(Bearer|Basic)\s/i.test(header);
}

/** The caller of a generic request (set by the hooks; a route without them has none). */
export function callerOf(request: FastifyRequest): KeyCaller {
  const caller = request.apiKey;
  if (!caller) throw new Error('a generic route ran without genericHooks');
  return caller;
}

/** The caller of `Authorization: Bearer <key>` (or Basic), or a 401 saying what is wrong (never the key). */
export async function bearerCaller(deps: Deps, header: string | undefined): Promise<KeyCaller> {
  if (!header) throw unauthenticated('You did not provide an API key. Send it in the Authorization header: "Authorization: Bearer sk_test_…".');
  const presented = presentedKey(header);
  if (presented === null)
    throw unauthenticated('The Authorization header must be "Bearer <API key>" or Basic with the API key as the user name; other schemes are not accepted.');
  if (presented === '') throw unauthenticated('You did not provide an API key: Basic authorization takes the API key as the user name ("sk_test_…:").');
  const caller = await deps.apiKeys.authenticate(presented);
  if (!caller) throw unauthenticated(`Invalid API Key provided: ${redacted(presented)}`);
  return caller;
}

/** One set of buckets per app (per `Deps`), shared by every generic route. */
const bucketsOf = new WeakMap<Deps, TokenBuckets>();

/** Route options of every generic route: the answer style, the hooks, string answers. */
/** The routes where a platform reads one of its connected accounts' own things with `Stripe-Account`: its balance, the account, its events. */
export const STRIPE_ACCOUNT_ROUTES: ReadonlySet<string> = new Set(['GET /v1/balance', 'GET /v1/account', 'GET /v1/events', 'GET /v1/events/:id']);

export function genericRouteOptions(deps: Deps) {
  let buckets = bucketsOf.get(deps);
  if (!buckets) {
    buckets = new TokenBuckets(deps.settings.api_rate_limit);
    bucketsOf.set(deps, buckets);
  }
  const bucket = buckets;
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await bearerCaller(deps, request.headers.authorization);
    const decision = bucket.take(caller.key_id, Date.now());
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retry_after_s));
      throw new GenericError(429, {
        type: 'invalid_request_error',
        code: 'rate_limit',
        message: `Too many requests with this key: at most ${deps.settings.api_rate_limit} per second. Retry after ${decision.retry_after_s} s.`,
      });
    }
    // The connected-account header is honoured where a platform reads for a connected account
    // (its balance, its account, its events); elsewhere it would silently act on the platform's own objects
    // (a transfer paid from the platform). Connected accounts hold a balance fed by transfers and
    // take no payments of their own, so nothing is created on one (docs/contract.md §24).
    if (request.headers['stripe-account'] !== undefined && !STRIPE_ACCOUNT_ROUTES.has(`${request.method} ${request.routeOptions.url}`)) {
      throw new GenericError(400, {
        type: 'invalid_request_error',
        code: 'parameter_unknown',
        param: 'Stripe-Account',
        message: `The Stripe-Account header is honoured on ${[...STRIPE_ACCOUNT_ROUTES].join(', ')} only: connected accounts take no payments of their own; act on one through /v1/accounts/:id and /v1/transfers.`,
      });
    }
    request.apiKey = caller;
    request.account = caller.creds; // idempotency keys are scoped by it (src/idempotency)
    // Reading data back needs a registered address, as on the acquiring retrievals (docs/contract.md §3; issue 29).
    if (readsBack(request)) requireAllowedIp(caller.creds, request.ip);
    // A test account with a moved clock is answered as of the clock (docs/contract.md §16).
    await setRequestTime(deps, request, caller.creds.account);
  };
  const preValidation = async (request: FastifyRequest) => {
    // docs/contract.md §12: form or JSON; the acquiring interface's XML is not a shape of this one.
    if (request.bodyFormat === 'xml')
      throw new GenericError(400, {
        type: 'invalid_request_error',
        message: 'Send the parameters form-encoded or as JSON, not XML.',
      });
    // A POST without a body (the official client sends none when there are no parameters) has no parameters.
    if ((request.body === undefined || request.body === null) && request.method !== 'GET') request.body = {};
    // An `expand[]` path the route's object does not offer is refused before anything is written (docs/contract.md §24).
    refuseUnexpandable(request);
    // Text columns cannot hold NUL (PostgreSQL refuses it): no id or filter holds one.
    const at = nulAt(request.params, '') ?? nulAt(request.query, '');
    if (at !== null)
      throw new GenericError(400, {
        type: 'invalid_request_error',
        message: `Invalid ${at || 'path'}: it holds a NUL character.`,
        ...(at ? { param: at } : {}),
      });
  };
  // Every answer carries the request's id, replays and router refusals included.
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('request-id', request.id);
    return payload;
  };
  return { config: { answer: 'generic' as const }, onRequest, preValidation, onSend, ...answersAreStrings };
}
