// `encryption_data`, decisions §2: lowercase hex HMAC-SHA256 over a canonical string.
import { createHmac, timingSafeEqual } from 'node:crypto';

type Pair = [path: string, value: string];

function flatten(value: unknown, path: string, out: Pair[]): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string') {
    if (value !== '') out.push([path, value]);
    return;
  }
  if (typeof value === 'number') {
    // Shortest round-trip decimal form is JavaScript's own Number#toString.
    if (Number.isFinite(value)) out.push([path, String(value)]);
    return;
  }
  if (typeof value === 'boolean') {
    out.push([path, value ? 'true' : 'false']);
    return;
  }
  if (typeof value === 'bigint') {
    out.push([path, value.toString()]);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      flatten(item, `${path}[${i}]`, out);
    });
    return;
  }
  if (typeof value === 'object') {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      flatten(child, path === '' ? key : `${path}.${key}`, out);
    }
  }
}

// UTF-16 code-unit order equals UTF-8 byte order unless a string holds a surrogate or a
// code point from U+E000 up; only then are the paths compared as UTF-8 bytes.
const NEEDS_BYTE_ORDER = /[\uD800-\uFFFF]/;

function byCodeUnits(x: Pair, y: Pair): number {
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0;
}

function sortPairs(pairs: Pair[]): void {
  if (!pairs.some((p) => NEEDS_BYTE_ORDER.test(p[0]))) {
    pairs.sort(byCodeUnits);
    return;
  }
  const keyed = pairs.map((p) => [Buffer.from(p[0], 'utf8'), p] as const);
  keyed.sort((x, y) => Buffer.compare(x[0], y[0]));
  keyed.forEach((k, i) => {
    pairs[i] = k[1];
  });
}

/** The canonical string of a body: every field but the top-level `encryption_data`. */
export function canonicalString(body: Record<string, unknown>): string {
  const pairs: Pair[] = [];
  for (const [key, child] of Object.entries(body)) {
    if (key === 'encryption_data') continue;
    flatten(child, key, pairs);
  }
  sortPairs(pairs);
  return pairs.map(([p, v]) => `${p}=${v}`).join('&');
}

export function sign(body: Record<string, unknown>, secret: string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(canonicalString(body), 'utf8').digest('hex');
}

/** Constant-time check of a presented signature against any of the account's secrets. */
export function verify(body: Record<string, unknown>, presented: unknown, secrets: readonly string[]): boolean {
  if (typeof presented !== 'string' || !/^[0-9a-fA-F]{64}$/.test(presented)) return false;
  const given = Buffer.from(presented.toLowerCase(), 'hex');
  const canonical = canonicalString(body);
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(canonical, 'utf8').digest();
    // Check every key so timing does not reveal which one matched.
    if (timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

/**
 * An XML answer is signed as the merchant reads it back (decisions §2): an element that
 * occurs once is a member, one that occurs several times is an array. So one-element
 * arrays sign like plain members.
 */
export function asXmlReadBack(value: unknown): unknown {
  if (Array.isArray(value)) {
    if (value.length === 1) return asXmlReadBack(value[0]);
    return value.map(asXmlReadBack);
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = asXmlReadBack(v);
    return out;
  }
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : String(value);
}
