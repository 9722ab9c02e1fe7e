// Portal passwords (docs/contract.md §19; PCI DSS 8.3.6): at least 12 characters, not a common
// password, hashed with Argon2id (OWASP's parameters: 19 MiB, 2 passes, 1 lane) by
// @node-rs/argon2, which ships prebuilt binaries. The common list is the 49,000 most
// common passwords bundled by @zxcvbn-ts/language-common; a password is refused when it
// is one of them, or one of them with digits or symbols around it ("password1234!"), or
// one repeated, or it holds the user's e-mail name.
import { createRequire } from 'node:module';
import { hash, verify } from '@node-rs/argon2';

export const MIN_PASSWORD_LENGTH = 12;
/** Argon2 work grows with length; a bound keeps one sign-in from costing a second of CPU. */
export const MAX_PASSWORD_LENGTH = 256;

let common: Set<string> | null = null;
function commonPasswords(): Set<string> {
  if (!common) {
    // The package's main export is CommonJS with a JSON dictionary.
    const require = createRequire(import.meta.url);
    const pkg = require('@zxcvbn-ts/language-common') as { dictionary: Record<string, string[]> };
    common = new Set((pkg.dictionary['passwords-common'] ?? []).map((p) => p.toLowerCase()));
    if (common.size < 10_000) throw new Error('the bundled common-password list is missing');
  }
  return common;
}

/** Why the password cannot be used, or null when it can. */
export function passwordProblem(password: string, email = ''): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `the password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `the password must have at most ${MAX_PASSWORD_LENGTH} characters`;
  const lower = password.toLowerCase();
  const list = commonPasswords();
  const core = lower.replace(/^[^a-z]+|[^a-z]+$/g, '');
  const repeated = /^(.+?)\1+$/.exec(lower)?.[1];
  if (list.has(lower) || (core.length >= 4 && list.has(core)) || (repeated !== undefined && list.has(repeated))) {
    return 'this password is one of the most common passwords; choose another';
  }
  if (new Set(lower).size < 5) return 'the password repeats too few characters; choose another';
  const name = email.toLowerCase().split('@')[0] ?? '';
  if (name.length >= 4 && lower.includes(name)) return 'the password must not contain your e-mail address';
  return null;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: 2 /* Argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** A hash to verify against when the user does not exist, so timing does not tell which e-mails are users. */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword('tollgate decoy password that no one uses');
  return decoy;
}
