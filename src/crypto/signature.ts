// `encryption_data`, decisions §2: lowercase hex HMAC-SHA256 over a canonical string.
import { createHmac, timingSafeEqual } from 'node:crypto';

type Pair = [path: string, value: string];

function leafText(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value;
  // Shortest round-trip decimal form is JavaScript's own Number#toString.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  return null;
}

/**
 * Keys the ordered walk cannot place: `.`, `[` and `]` make paths ambiguous (so does an
 * empty key), and from U+D800 up UTF-16 code-unit order is not UTF-8 byte order.
 */
const AWKWARD_KEY = /[.[\]\uD800-\uFFFF]/;

class AwkwardKey extends Error {}

/** Element order of an array of `n`: by the text `${i}]` ("10]" sorts before "1]"). */
const elementOrders = new Map<number, number[]>();
function elementOrder(n: number): number[] {
  let order = elementOrders.get(n);
  if (!order) {
    order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (`${a}]` < `${b}]` ? -1 : 1));
    if (n <= 10_000) elementOrders.set(n, order);
  }
  return order;
}

/** What follows a child's key in every path below it: nothing (a leaf), `.` or `[`. */
function joint(value: unknown): string {
  return value !== null && typeof value === 'object' ? (Array.isArray(value) ? '[' : '.') : '';
}

/**
 * Emits `path=value` pairs already in canonical order, without sorting the pairs: all
 * paths below one key (or one array element) start with the same text (the key and its
 * joint), so they form one block, and blocks order like those texts. This holds while
 * no key is empty or contains `.`, `[`, `]` or a code unit from U+D800 up; otherwise it throws
 * AwkwardKey and the caller sorts the pairs instead.
 */
function walkOrdered(value: unknown, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'object') {
    const text = leafText(value);
    if (text !== null) out.push(`${path}=${text}`);
    return;
  }
  if (Array.isArray(value)) {
    for (const i of elementOrder(value.length)) walkOrdered(value[i], `${path}[${i}]`, out);
    return;
  }
  const obj = value as Record<string, unknown>;
  // Each key with its joint; the engine's own string sort (no comparator) orders them.
  const blocks = Object.keys(obj);
  for (let i = 0; i < blocks.length; i++) {
    const k = blocks[i] as string;
    if (k === '' || AWKWARD_KEY.test(k)) throw new AwkwardKey();
    blocks[i] = `${k}${joint(obj[k])}`;
  }
  blocks.sort();
  for (const block of blocks) {
    // Keys hold no `.` or `[`, so a trailing one is the joint.
    const last = block.charCodeAt(block.length - 1);
    const k = last === 0x2e || last === 0x5b ? block.slice(0, -1) : block;
    walkOrdered(obj[k], path === '' ? k : `${path}.${k}`, out);
  }
}

function collect(value: unknown, path: string, out: Pair[]): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'object') {
    const text = leafText(value);
    if (text !== null) out.push([path, text]);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      collect(item, `${path}[${i}]`, out);
    });
    return;
  }
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) collect(child, path === '' ? key : `${path}.${key}`, out);
}

/** The definition itself: every pair, sorted by the UTF-8 bytes of its path. */
function canonicalBySort(body: Record<string, unknown>): string {
  const pairs: Pair[] = [];
  for (const [key, child] of Object.entries(body)) if (key !== 'encryption_data') collect(child, key, pairs);
  const keyed = pairs.map((p) => [Buffer.from(p[0], 'utf8'), p] as const);
  keyed.sort((x, y) => Buffer.compare(x[0], y[0]));
  return keyed.map(([, [p, v]]) => `${p}=${v}`).join('&');
}

/**
 * The canonical string of a body: every field but the top-level `encryption_data`, as
 * `path=value` pairs sorted by the UTF-8 bytes of the path, joined with `&`. A query
 * answer holds thousands of pairs; sorting them all cost ~2 ms a request (issue 6), so
 * the pairs are emitted in order (walkOrdered) and only awkward keys take the sort.
 */
export function canonicalString(body: Record<string, unknown>): string {
  const top: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (key !== 'encryption_data') top[key] = body[key];
  const out: string[] = [];
  try {
    walkOrdered(top, '', out);
  } catch (e) {
    if (e instanceof AwkwardKey) return canonicalBySort(body);
    throw e;
  }
  return out.join('&');
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
