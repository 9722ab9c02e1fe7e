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
  const rnd = randomChunk(16);
  for (let i = 0; i < 16; i++) out += CROCKFORD[(rnd[i] as number) % 32];
  return out;
}

// One randomBytes call per 256 ids instead of one per id (the payment hot path makes several).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let at = POOL_BYTES;

function randomChunk(n: number): Buffer {
  if (at + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    at = 0;
  }
  const out = pool.subarray(at, at + n);
  at += n;
  return out;
}

/** Random url-safe token for secrets and single-use page ids. */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}
