// `encryption_data`, docs/contract.md §2: lowercase hex HMAC-SHA256 over a canonical string.
import { createHmac, timingSafeEqual } from 'node:crypto';

type Pair = [path: string, value: string];

const SEPARATORS = /[%&=]/;
const SEPARATOR_ESCAPES: Record<string, string> = { '%': '%25', '&': '%26', '=': '%3D' };

/**
 * docs/contract.md §2 (amended in wave 3): `%`, `&` and `=` are percent-encoded in every path and
 * value, so a value holding `&k=v` can no longer sign like a separate field `k`. Nothing
 * else is encoded: a body without those characters signs as before.
 */
export function escapeCanonical(text: string): string {
  return SEPARATORS.test(text) ? text.replace(/[%&=]/g, (c) => SEPARATOR_ESCAPES[c] as string) : text;
}

function leafText(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : escapeCanonical(value);
  // Shortest round-trip decimal form is JavaScript's own Number#toString.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  return null;
}

/**
 * Keys the ordered walk cannot place: `.`, `[` and `]` make paths ambiguous (so does an
 * empty key), from U+D800 up UTF-16 code-unit order is not UTF-8 byte order, and `%`, `&`
 * and `=` are escaped, which changes how the key sorts.
 */
const AWKWARD_KEY = /[.[\]%&=\uD800-\uFFFF]/;

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

/** 0 a leaf, 1 an object, 2 an array: what a child's joint depends on. */
function kind(value: unknown): number {
  return value !== null && typeof value === 'object' ? (Array.isArray(value) ? 2 : 1) : 0;
}

/**
 * An object's keys (in property order) with each child's kind, and the order in which the
 * walk visits them. Answers repeat a few shapes many times over (an order record per
 * queried id), so an object whose keys and kinds match a known shape skips the key checks
 * and the sort. Shapes are learned only from keys that passed the checks, at most
 * MAX_SHAPES of them (request bodies are signed too: a hostile body cannot grow this).
 */
interface Shape {
  keys: string[];
  kinds: number[];
  order: number[];
}
const MAX_SHAPES = 256;
const shapes = new Map<string, Shape[]>();
let shapeCount = 0;

function knownShape(obj: Record<string, unknown>, keys: string[]): Shape | undefined {
  const candidates = shapes.get(keys[0] as string);
  if (!candidates) return undefined;
  outer: for (const shape of candidates) {
    if (shape.keys.length !== keys.length) continue;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      if (shape.keys[i] !== k || shape.kinds[i] !== kind(obj[k])) continue outer;
    }
    return shape;
  }
  return undefined;
}

function learnShape(obj: Record<string, unknown>, keys: string[]): Shape {
  const kinds = keys.map((k) => kind(obj[k]));
  // Each key with its joint, ordered by UTF-16 code units (keys from U+D800 up never get here).
  const blocks = keys.map((k, i) => [`${k}${joint(obj[k])}`, i] as const);
  blocks.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const shape = { keys, kinds, order: blocks.map((b) => b[1]) };
  if (shapeCount < MAX_SHAPES) {
    const first = keys[0] as string;
    const list = shapes.get(first);
    if (list) list.push(shape);
    else shapes.set(first, [shape]);
    shapeCount++;
  }
  return shape;
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
  const keys = Object.keys(obj);
  if (keys.length === 0) return;
  let shape = knownShape(obj, keys);
  if (!shape) {
    for (const k of keys) if (k === '' || AWKWARD_KEY.test(k)) throw new AwkwardKey();
    shape = learnShape(obj, keys);
  }
  const prefix = path === '' ? '' : `${path}.`;
  for (const i of shape.order) {
    const k = keys[i] as string;
    walkOrdered(obj[k], prefix + k, out);
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
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const k = escapeCanonical(key);
    collect(child, path === '' ? k : `${path}.${k}`, out);
  }
}

/** The definition itself: every pair, sorted by the UTF-8 bytes of its escaped path. */
function canonicalBySort(body: Record<string, unknown>): string {
  const pairs: Pair[] = [];
  for (const [key, child] of Object.entries(body)) if (key !== 'encryption_data') collect(child, escapeCanonical(key), pairs);
  const keyed = pairs.map((p) => [Buffer.from(p[0], 'utf8'), p] as const);
  keyed.sort((x, y) => Buffer.compare(x[0], y[0]));
  return keyed.map(([, [p, v]]) => `${p}=${v}`).join('&');
}

/**
 * The canonical string of a body: every field but the top-level `encryption_data`, as
 * `path=value` pairs (`%`, `&`, `=` escaped) sorted by the UTF-8 bytes of the path, joined
 * with `&`. A query
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
 * An XML answer is signed as the merchant reads it back (docs/contract.md §2): an element that
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

/**
 * docs/contract.md §2: an empty string, `null`, `{}` and `[]` count as absent for every purpose,
 * because the canonical string leaves them out (a shopper carrying a signed form could add
 * them freely). Returns the body as the gateway acts on it: such values removed at every
 * depth, an object or array left with nothing present removed too. Array elements keep
 * their positions (the canonical string names them by index): an absent element between
 * present ones stays as `null` (which validation then refuses), absent ones at the end go. Numbers the canonical string
 * cannot spell (non-finite) are kept so that validation refuses them. The result signs
 * exactly as the input does.
 */
export function withoutAbsent(body: Record<string, unknown>): Record<string, unknown> {
  return (present(body) as Record<string, unknown> | undefined) ?? {};
}

function present(value: unknown): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  if (typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = value.map((item) => present(item) ?? null);
    // Trailing absent elements are not in the canonical string at all: drop them.
    let end = out.length;
    while (end > 0 && out[end - 1] === null) end--;
    return end === 0 ? undefined : end === out.length ? out : out.slice(0, end);
  }
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const p = present((value as Record<string, unknown>)[key]);
    if (p === undefined) continue;
    out ??= {};
    // A JSON body may hold an own "__proto__" key: keep it a plain member (the schema refuses it).
    if (key === '__proto__') Object.defineProperty(out, key, { value: p, enumerable: true, writable: true, configurable: true });
    else out[key] = p;
  }
  return out;
}
