// The IP allow-list guards every endpoint that reads data back (docs/contract.md §3; issue 29):
// the acquiring interface's retrievals (`/v1/retrievalTrans`, `/v1/retrievalRefund`,
// `/v1/retrievalPayout`, and the later dispute and settlement retrievals) and every GET of
// the generic interface. A caller whose IP is not in the account's registered list (CIDR
// ranges; forwarded-for headers count only from configured proxies) gets HTTP 403
// `0403:IP not allowed` (the generic interface says it in its own error shape).
//
// The check runs in preValidation, right after the caller is authenticated: before the
// body schema and, above all, before an Idempotency-Key replay (src/idempotency, a
// preHandler), so a stored answer is never handed to an address the list does not hold.
import type { FastifyRequest } from 'fastify';
import { type AccountCredentials, ipAllowed } from '../merchants/service.js';
import { ApiError } from './errors.js';

/** Throws `0403:IP not allowed` unless `ip` is in the account's allow-list. */
export function requireAllowedIp(creds: AccountCredentials, ip: string): void {
  if (!ipAllowed(ip, creds.allowed_ips)) throw new ApiError('0403', `calls from ${ip} are not registered for this account`);
}

/** The refusal as a retrieval's OpenAPI answers list it. */
export const IP_REFUSAL = { 403: '`0403:IP not allowed`: the caller’s IP address is not registered for the account.' } as const;

/** The authenticated caller of a request (acquiring: the signature's account; generic: the key's). */
function callerAccount(request: FastifyRequest): AccountCredentials {
  const creds = request.account;
  if (!creds) throw new Error('the IP allow-list needs an authenticated request');
  return creds;
}

type PreValidation = (request: FastifyRequest) => Promise<void>;

/**
 * A read-back endpoint of the acquiring interface: its hooks (`acquiringHooks`) with the
 * allow-list checked once the signature names the account. Every retrieval uses this.
 */
export function withIpAllowList<H extends { preValidation: PreValidation }>(hooks: H): H {
  return {
    ...hooks,
    preValidation: async (request: FastifyRequest) => {
      await hooks.preValidation(request);
      requireAllowedIp(callerAccount(request), request.ip);
    },
  };
}

/** The generic interface reads data back with GET (and HEAD, its shadow): those are guarded. */
export function readsBack(request: FastifyRequest): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}
