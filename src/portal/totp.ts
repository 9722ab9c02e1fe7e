// The second factor (docs/contract.md §19): TOTP (RFC 6238: SHA-1, 6 digits, 30 s) by the `otpauth`
// library, a window of one step either side for clock drift, each step accepted once; and
// ten single-use recovery codes kept as keyed hashes.
import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

const ISSUER = 'Tollgate';
export const RECOVERY_CODES = 10;

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secret_b32: string, email: string): TOTP {
  return new TOTP({ issuer: ISSUER, label: email, algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret_b32) });
}

/** The otpauth:// URI an authenticator app reads (typed in or from a QR code). */
export function totpUri(secret_b32: string, email: string): string {
  return totp(secret_b32, email).toString();
}

/** The time step the code belongs to, or null when it is not valid now (±1 step). */
export function totpStep(secret_b32: string, email: string, code: string, now_ms: number): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totp(secret_b32, email).validate({ token, timestamp: now_ms, window: 1 });
  if (delta === null) return null;
  return Math.floor(now_ms / 30_000) + delta;
}

/** The code of a step (tests and the CLI's help only). */
export function totpCode(secret_b32: string, now_ms: number): string {
  return totp(secret_b32, 'x').generate({ timestamp: now_ms });
}

/** `xxxx-xxxx-xxxx` from an alphabet without look-alikes. */
export function newRecoveryCode(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  let s = '';
  for (let i = 0; i < 12; i++) s += alphabet[randomInt(alphabet.length)];
  return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8)}`;
}

export function normaliseRecoveryCode(code: string): string {
  const c = code.toLowerCase().replace(/[^a-z0-9]/g, '');
  return c.length === 12 ? `${c.slice(0, 4)}-${c.slice(4, 8)}-${c.slice(8)}` : '';
}
