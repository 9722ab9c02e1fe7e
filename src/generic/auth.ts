// Who calls the generic interface (docs/contract.md §12, §18; issue 13): `Authorization: Bearer
// sk_test_…|sk_live_…` only, checked before the body is read; then the key's token bucket.
// The caller's account (and with it its mode) scopes every query of the request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TokenBuckets } from '../apikeys/rate-limit.js';
import type { KeyCaller } from '../apikeys/service.js';
import type { Deps } from '../web/context.js';
import { readsBack, requireAllowedIp } from '../web/ip-allow.js';
import { setRequestTime } from '../web/request-time.js';
import { answersAreStrings } from '../web/route-schema.js';
import { GenericError } from './wire.js';

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

export function unauthenticated(message: string): GenericError {
  return new GenericError(401, { type: 'invalid_request_error', code: 'api_key_invalid', message });
}

/** The caller of a generic request (set by the hooks; a route without them has none). */
export function callerOf(request: FastifyRequest): KeyCaller {
  const caller = request.apiKey;
  if (!caller) throw new Error('a generic route ran without genericHooks');
  return caller;
}

/** The caller of `Authorization: Bearer <key>`, or a 401 saying what is wrong (never the key). */
export async function bearerCaller(deps: Deps, header: string | undefined): Promise<KeyCaller> {
  if (!header) throw unauthenticated('You did not provide an API key. Send it in the Authorization header: "Authorization: Bearer sk_test_…".');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('The Authorization header must be "Bearer <API key>"; other schemes are not accepted.');
  const presented = m[1] as string;
  const caller = await deps.apiKeys.authenticate(presented);
  if (!caller) throw unauthenticated(`Invalid API Key provided: ${redacted(presented)}`);
  return caller;
}

/** One set of buckets per app (per `Deps`), shared by every generic route. */
const bucketsOf = new WeakMap<Deps, TokenBuckets>();

/** Route options of every generic route: the answer style, the hooks, string answers. */
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
    // The connected-account header is honoured on GET /v1/balance only; elsewhere it would
    // silently act on the platform's own objects (a transfer paid from the platform).
    if (request.headers['stripe-account'] !== undefined && request.routeOptions.url !== '/v1/balance') {
      throw new GenericError(400, {
        type: 'invalid_request_error',
        code: 'parameter_unknown',
        param: 'Stripe-Account',
        message: 'The Stripe-Account header is only honoured on GET /v1/balance; act on a connected account through its own routes.',
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
        code: 'parameter_invalid',
        message: 'Send the parameters form-encoded or as JSON, not XML.',
      });
    // A POST without a body (the official client sends none when there are no parameters) has no parameters.
    if ((request.body === undefined || request.body === null) && request.method !== 'GET') request.body = {};
    // Text columns cannot hold NUL (PostgreSQL refuses it): no id or filter holds one.
    const at = nulAt(request.params, '') ?? nulAt(request.query, '');
    if (at !== null)
      throw new GenericError(400, {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
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
