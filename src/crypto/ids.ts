import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Time-ordered unguessable id (ULID layout: 48-bit ms time + 80 random bits, Crockford
 * base32). Time order keeps cursor pagination and index inserts cheap.
 */
export function timeOrderedId(now_ms: number = Date.now()): string {
  let out = '';
  let t = now_ms;
  const timeChars: string[] = [];
  for (let i = 0; i < 10; i++) {
    timeChars.push(CROCKFORD[t % 32] as string);
    t = Math.floor(t / 32);
  }
  out = timeChars.reverse().join('');
  const rnd = randomBytes(16);
  for (let i = 0; i < 16; i++) out += CROCKFORD[(rnd[i] as number) % 32];
  return out;
}

/** Random url-safe token for secrets and single-use page ids. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}
