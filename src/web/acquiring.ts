// Shared plumbing of the signed acquiring interface (docs/contract.md §1–§3): every endpoint
// reads its body in any of the three shapes, checks `encryption_data` against the
// account's keys before anything else, and signs the answers that carry a signature.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { asXmlReadBack, sign, verify, withoutAbsent } from '../crypto/signature.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { BodyFormat } from './body.js';
import type { Deps } from './context.js';
import { ApiError } from './errors.js';
import { setRequestTime } from './request-time.js';
import { signatureRefusal } from './signature-refusal.js';
import { toXml } from './xml.js';

declare module 'fastify' {
  interface FastifyRequest {
    bodyFormat?: BodyFormat;
    account?: AccountCredentials;
  }
  interface FastifyContextConfig {
    /** `generic`: the Bearer-key interface (src/generic), its own error shape. */
    answer?: 'xml' | 'json' | 'html' | 'generic';
    signed?: boolean;
    /**
     * The route answers an HTML page (the hosted checkout's loading page): an Idempotency-Key
     * repeat runs the handler again (it is idempotent by order_no) instead of replaying the
     * stored body, so the page gets its own nonce and headers.
     */
    page?: boolean;
    /** Health probes and metrics: never shed, never counted as load (issue 17). */
    probe?: boolean;
    /** @fastify/under-pressure's per-route handler: probes answer even under pressure. */
    pressureHandler?: () => undefined;
  }
}

const ID = /^\d{1,20}$/;

/** Wraps single values in arrays where the schema wants an array (XML reads them singly). */
export function coerceArrays(value: unknown, schema: TSchema | undefined): unknown {
  if (!schema || value === null || value === undefined) return value;
  const s = schema as { type?: string; items?: TSchema; properties?: Record<string, TSchema> };
  if (s.type === 'array') {
    if (value === '') return [];
    const arr = Array.isArray(value) ? value : [value];
    return arr.map((v) => coerceArrays(v, s.items));
  }
  if (s.type === 'object' && s.properties && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const [k, sub] of Object.entries(s.properties)) {
      if (k in obj) obj[k] = coerceArrays(obj[k], sub);
    }
    return obj;
  }
  if (s.type === 'object' && value === '') return {};
  return value;
}

export async function authenticate(deps: Deps, request: FastifyRequest): Promise<AccountCredentials> {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError('0400', 'the body must be an object of fields');
  }
  const b = body as Record<string, unknown>;
  for (const field of ['merchant_id', 'account_id'] as const) {
    if (b[field] === undefined || b[field] === '') throw new ApiError('0400', `${field} is required`, field);
    if (typeof b[field] !== 'string' || !ID.test(b[field] as string)) {
      throw new ApiError('0400', `${field} must be a string of 1 to 20 digits`, field);
    }
  }
  if (b.encryption_data === undefined || b.encryption_data === '') throw new ApiError('0401', 'encryption_data is required', 'encryption_data');
  const merchant_id = b.merchant_id as string;
  const account_id = b.account_id as string;
  let creds = await deps.merchants.credentials(merchant_id, account_id);
  if (creds && verify(b, b.encryption_data, creds.secrets)) return creds;
  // A key rotated a moment ago in another process: look once more, uncached.
  creds = await deps.merchants.credentials(merchant_id, account_id, true);
  if (creds && verify(b, b.encryption_data, creds.secrets)) return creds;
  throw await signatureRefusal(deps, b, merchant_id, account_id, creds);
}

/** Registers the signature check for a route; its body schema is then validated. */
export function acquiringHooks(deps: Deps, bodySchema: TSchema | undefined) {
  return {
    preValidation: async (request: FastifyRequest) => {
      request.account = await authenticate(deps, request);
      // A test account with a moved clock is answered as of the clock (docs/contract.md §16).
      await setRequestTime(deps, request, request.account.account);
      // What was signed is what is acted on: values the canonical string leaves out are absent.
      request.body = withoutAbsent(request.body as Record<string, unknown>);
      if (request.bodyFormat === 'xml' || request.bodyFormat === 'form') {
        request.body = coerceArrays(request.body, bodySchema);
      }
    },
  };
}

/** Sends a signed answer as JSON or as XML root `respon`, per the route's config. */
export function sendSigned(request: FastifyRequest, reply: FastifyReply, record: Record<string, unknown>, status = 200): FastifyReply {
  const creds = request.account;
  if (!creds) throw new Error('sendSigned needs an authenticated request');
  const answer = request.routeOptions.config.answer ?? 'json';
  if (answer === 'xml') {
    const signature = sign(asXmlReadBack(record) as Record<string, unknown>, creds.signing_secret);
    return reply
      .code(status)
      .type('application/xml; charset=utf-8')
      .send(toXml('respon', { ...record, encryption_data: signature }));
  }
  const signature = sign(record, creds.signing_secret);
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ ...record, encryption_data: signature }));
}
