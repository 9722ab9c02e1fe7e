// What a refused signature says (issue 9). On a test account the 0401 explains itself: the
// account is unknown, belongs to another merchant, or the signature differs, and then the
// answer carries the canonical string the gateway computed (card data masked) so the
// merchant sees at once which field differs. Anything that would confirm live data
// answers the same plain sentence, so the refusal is no oracle for live accounts. The
// right signature itself is never returned: that would sign any body for anyone.
import { canonicalString } from '../crypto/signature.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { Deps } from './context.js';
import { ApiError } from './errors.js';

const PLAIN = 'encryption_data does not verify for this merchant_id and account_id';
/** Longest canonical string echoed; bodies may be up to 1 MiB. */
export const CANONICAL_ECHO_MAX = 16 * 1024;
/** Values never echoed, masked in the canonical string (the same names the logs redact). */
const MASKED = new Set(['card', 'security_code', 'cvc', 'cvv', 'pan', 'number', 'password', 'secret_key', 'webhook_secret', 'token_id']);

function mask(key: string, value: unknown): unknown {
  if (typeof value !== 'string' && typeof value !== 'number') return value;
  const text = String(value);
  if (key === 'card' || key === 'pan')
    return text.length >= 12 ? `${text.slice(0, 6)}${'*'.repeat(text.length - 10)}${text.slice(-4)}` : '*'.repeat(text.length);
  return '*'.repeat(Math.min(text.length, 8));
}

function masked(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => masked(v, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = MASKED.has(k) ? mask(k, v) : masked(v, k);
    return out;
  }
  return value;
}

/** The canonical string of a body as the gateway computed it, with card data and secrets masked. */
export function maskedCanonicalString(body: Record<string, unknown>): string {
  const { encryption_data: _ignored, ...rest } = body;
  const text = canonicalString(masked(rest) as Record<string, unknown>);
  return text.length > CANONICAL_ECHO_MAX ? `${text.slice(0, CANONICAL_ECHO_MAX)}…(truncated)` : text;
}

export async function signatureRefusal(
  deps: Deps,
  body: Record<string, unknown>,
  merchant_id: string,
  account_id: string,
  creds: AccountCredentials | null,
): Promise<ApiError> {
  if (creds) {
    if (creds.account.mode !== 'test') return new ApiError('0401', PLAIN, 'encryption_data');
    return new ApiError(
      '0401',
      'encryption_data differs from the signature of this body under the account’s secret key: compare canonical_string (the string the gateway signed; card data masked) with yours',
      'encryption_data',
      { canonical_string: maskedCanonicalString(body) },
    );
  }
  const owner = await deps.merchants.accountOwner(account_id);
  if (owner) {
    if (owner.mode !== 'test') return new ApiError('0401', PLAIN, 'account_id');
    return new ApiError('0401', `account_id ${account_id} belongs to another merchant, not to merchant_id ${merchant_id}`, 'account_id');
  }
  const modes = await deps.merchants.merchantModes(merchant_id);
  if (modes === null) return new ApiError('0401', `there is no merchant_id ${merchant_id} (and no account_id ${account_id})`, 'merchant_id');
  if (modes.every((m) => m === 'test')) return new ApiError('0401', `there is no account_id ${account_id} (merchant_id ${merchant_id} exists)`, 'account_id');
  return new ApiError('0401', PLAIN, 'account_id');
}
