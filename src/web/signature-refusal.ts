// What a refused signature says (issue 9). On a test account the 0401 explains itself: the
// account is another merchant's test account, is not an account of this merchant, or the
// signature differs, and then the
// answer carries the canonical string the gateway computed (card data masked) so the
// merchant sees at once which field differs. Anything that would confirm live data
// answers the same plain sentence, so the refusal is no oracle for live accounts. The
// right signature itself is never returned: that would sign any body for anyone.
import { canonicalString } from '../crypto/signature.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { Deps } from './context.js';
import { ApiError } from './errors.js';

const PLAIN = 'encryption_data does not verify for this merchant_id and account_id (check both ids and the secret key)';
/** Longest canonical string echoed; bodies may be up to 1 MiB. */
export const CANONICAL_ECHO_MAX = 16 * 1024;
/**
 * Field names whose whole value (nested objects and lists included) is never echoed: card
 * numbers and codes under any spelling, 3-D Secure cryptograms, tokens and secrets. The
 * signature is checked before unknown fields are refused, so any name may arrive here.
 */
const SENSITIVE_KEY = /card|pan$|^number$|cvv|cvc|csc|security_code|cavv|xid|token|secret|password|api_?key|^key$/i;
/** A run of 12 to 19 digits: masked wherever it stands when it passes the Luhn check. */
const DIGIT_RUN = /\d{12,19}/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** BIN + last four of a card-number-shaped run (at most 10 digits of it shown), stars for the rest. */
function maskRun(run: string): string {
  return run.length >= 16 ? `${run.slice(0, 6)}${'*'.repeat(run.length - 10)}${run.slice(-4)}` : `${'*'.repeat(run.length - 4)}${run.slice(-4)}`;
}

/** A value under a sensitive name: card-number-shaped text keeps BIN + last four, anything else only stars. */
function maskWhole(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskWhole);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskWhole(v)]));
  if (typeof value !== 'string' && typeof value !== 'number') return value;
  const text = String(value);
  return /^\d{12,19}$/.test(text) ? maskRun(text) : '*'.repeat(Math.min(text.length, 8));
}

function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = SENSITIVE_KEY.test(k) ? maskWhole(v) : masked(v);
    return out;
  }
  if (typeof value === 'string') return value.replace(DIGIT_RUN, (run) => (luhn(run) ? maskRun(run) : run));
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
  // Diagnose only for the merchant's own test account, or a merchant that exists and has
  // test accounts only: then nothing said can confirm a live merchant, a live account or who
  // owns one. Everything else gets one sentence and one error_field, whatever the reason.
  const modes = creds?.account.mode === 'test' ? ['test'] : await deps.merchants.merchantModes(merchant_id);
  if (modes === null || modes.length === 0 || modes.some((m) => m !== 'test')) return new ApiError('0401', PLAIN, 'encryption_data');
  if (creds) {
    return new ApiError(
      '0401',
      'encryption_data differs from the signature of this body under the account’s secret key: compare canonical_string (the string the gateway signed; card data masked) with yours',
      'encryption_data',
      { canonical_string: maskedCanonicalString(body) },
    );
  }
  const owner = await deps.merchants.accountOwner(account_id);
  if (owner && owner.mode === 'test') {
    return new ApiError('0401', `account_id ${account_id} belongs to another merchant, not to merchant_id ${merchant_id}`, 'account_id');
  }
  // Missing, or another merchant's live account: the same words, so live ids cannot be listed.
  return new ApiError('0401', `account_id ${account_id} is not an account of merchant_id ${merchant_id}`, 'account_id');
}
