// Hostile inputs every fuzz target draws from (issue 6, issue 10 item 6): injection
// strings, boundary amounts and dates, wrong types, huge and deeply nested values, body
// mutations, malformed raw payloads and content types, and hostile ids for the page routes.
// Shared by fuzz.ts (the acquiring endpoints, the 3-D Secure page) and shopper.ts (the hosted
// checkout and the APM issuer pages).
import fc from 'fast-check';
import { encodeBody, signBody } from '../../client/index.js';

export const INJECTIONS = [
  "' OR '1'='1",
  "'; DROP TABLE payments; --",
  '" OR ""="',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, meant literally
  '${7*7}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\uD800',
  '\uDFFF\uD800',
  '\r\nX-Injected: 1',
  '%00%0d%0a',
  '__proto__',
  'constructor',
  'prototype',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x10',
  '4242424242424242',
  '١٢٣',
  'Ǆ̀͂',
  '🙂'.repeat(50),
];
const AMOUNTS = [
  '0.00',
  '0',
  '-1.00',
  '0.001',
  '0.01',
  '9999999999999999.99',
  '99999999999999999999.99',
  '1e3',
  '1,00',
  '10.0',
  '10.000',
  ' 10.00',
  '１０.００',
  '+10.00',
  '.5',
  '5.',
  '00000000000000000001.00',
];
const DATES = [
  '00000000000000',
  '99991231235959',
  '20250229120000',
  '20240229235959',
  '20251301000000',
  '2025-01-01',
  '19700101000000',
  '20251231236060',
  '-1',
  '2025010100000',
  '202501010000000',
];

function nestObject(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}
function nestArray(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...AMOUNTS) },
  { weight: 2, arbitrary: fc.constantFrom(...DATES) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(-0),
      fc.constant(1e308),
      fc.constant(Number.MAX_SAFE_INTEGER + 2),
    ),
  },
  { weight: 2, arbitrary: fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxKeys: 4 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 70_000 }).map((n) => 'A'.repeat(n)) },
  // Rare: past the 1 MiB body limit (413 path).
  { weight: 1, arbitrary: fc.constantFrom(600_000, 1_100_000, 1_500_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 600 }).map(nestObject) },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 600 }).map(nestArray) },
);

export type Mutation = { op: 'delete' | 'set' | 'extra' | 'set_nested'; which: number; value: unknown; name: string };
export const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('delete', 'set', 'set', 'extra', 'set_nested'),
  which: fc.nat(),
  value: hostileValue,
  name: fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'encryption_data', 'merchant_id', 'unknown_field', 'a.b', 'x[0]', ''),
    fc.string({ maxLength: 12 }),
  ),
}) as fc.Arbitrary<Mutation>;

export function mutate(body: Record<string, unknown>, muts: Mutation[]): Record<string, unknown> {
  const b = structuredClone(body);
  for (const mu of muts) {
    const keys = Object.keys(b);
    const key = keys[mu.which % Math.max(1, keys.length)] as string;
    if (mu.op === 'delete') delete b[key];
    else if (mu.op === 'set') b[key] = mu.value;
    else if (mu.op === 'extra') Object.defineProperty(b, mu.name, { value: mu.value, enumerable: true, writable: true, configurable: true });
    else {
      // Inside the first array item or nested object of the body, when there is one.
      const holder = Object.values(b).find((v) => v !== null && typeof v === 'object') as Record<string, unknown> | unknown[] | undefined;
      const inner = Array.isArray(holder) ? holder[0] : holder;
      if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
        const ik = Object.keys(inner);
        (inner as Record<string, unknown>)[ik[mu.which % Math.max(1, ik.length)] ?? mu.name] = mu.value;
      } else b[key] = mu.value;
    }
  }
  return b;
}

/** Deeper nesting than the signer's recursion allows is sent with a made-up signature. */
export function signOrGarbage(body: Record<string, unknown>, secret: string, format: 'json' | 'form' | 'xml'): string {
  try {
    return signBody(body, secret, format).encryption_data;
  } catch {
    return '0'.repeat(64);
  }
}

// ---------- raw payloads ----------
const billionLaughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><request><merchant_id>&lol3;</merchant_id></request>`;
export const RAW: Array<string | Buffer> = [
  '',
  '   ',
  '{',
  '{"merchant_id":',
  '{"merchant_id":"1",}',
  '[1,2',
  '[]',
  'null',
  '"string"',
  '123',
  '{"a":"\\u12"}',
  '{"__proto__":{"polluted":1},"merchant_id":"1","account_id":"1","encryption_data":"00"}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`,
  billionLaughs,
  '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><r><merchant_id>&xxe;</merchant_id></r>',
  '<?xml version="1.0"?><!DOCTYPE r SYSTEM "http://169.254.169.254/latest/meta-data/"><r/>',
  '<r><merchant_id>1</merchant_id>',
  '<r><merchant_id>1</merchant_id><merchant_id>2</merchant_id><account_id><x>1</x></account_id></r>',
  '<r><![CDATA[<merchant_id>1</merchant_id>]]></r>',
  '<?xml version="1.0"?>',
  '<r attr="1" attr="2"/>',
  `${'<a>'.repeat(10_000)}x${'</a>'.repeat(10_000)}`,
  '<r>&#0;&#x110000;&#xD800;&amp;&unknown;</r>',
  'a[b][c][d][e][f][g][h][i][j][k]=1',
  'a[999999999]=1',
  '&&&',
  '=',
  '==&==',
  'merchant_id=%E0%A4%A&account_id=%',
  'merchant_id[__proto__][x]=1',
  Array.from({ length: 6000 }, (_, i) => `p${i}=1`).join('&'),
  `a=${'b'.repeat(1_200_000)}`,
  Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]),
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
  Buffer.from([0x3c, 0x72, 0x3e, 0xed, 0xa0, 0x80, 0x3c, 0x2f, 0x72, 0x3e]),
  Buffer.from([0x80, 0x81, 0x82, 0xc0, 0xaf]),
  Buffer.alloc(2048, 0),
];
export const CONTENT_TYPES = [
  'application/json',
  'application/xml',
  'text/xml',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  '',
];

/** Sends a body in the format asked; a lone surrogate cannot be URL-encoded, so that body goes as JSON. */
export function encodeLoose(body: Record<string, unknown>, format: 'json' | 'form' | 'xml'): { payload: string; contentType: string } {
  try {
    return encodeBody(body, format);
  } catch {
    return encodeBody(body, 'json');
  }
}

/** Defines a field whatever its name (`__proto__` included) as an own enumerable property. */
export function setField(body: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(body, name, { value, enumerable: true, writable: true, configurable: true });
}

// ---------- a case ----------
export interface Case {
  method: 'GET' | 'POST';
  path: string;
  payload?: string | Buffer;
  contentType: string;
  headers?: Record<string, string>;
}

export function describeCase(c: Case): string {
  if (c.payload === undefined) return `${c.method} ${c.path.length > 300 ? `${c.path.slice(0, 300)}… (${c.path.length} chars)` : c.path}`;
  const p = typeof c.payload === 'string' ? c.payload : `<bytes ${c.payload.toString('hex').slice(0, 60)}>`;
  return `${c.method} ${c.path} [${c.contentType}] ${p.length > 300 ? `${p.slice(0, 300)}… (${p.length} chars)` : p}`;
}

// ---------- ids of page routes ----------
const encodeOrGarbage = (s: string): string => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80'; // a lone surrogate as (invalid) UTF-8 bytes
  }
};

/**
 * Ids for a page route (`/threeds/:id`, `/pay/:id`, `/issuer/:id`): real ones (drawn when
 * the case is generated, so a pool that grows during the run is seen), near misses of them
 * (one character short or long, other case, a NUL, a query), injections, binary, overlong
 * ids past the route's 64-character limit, and malformed percent-encodings.
 */
export function pageIdArb(real: fc.Arbitrary<string>, idLength: number, query: string, others: fc.Arbitrary<string>[] = []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: real.map(encodeURIComponent) },
    { weight: 1, arbitrary: real.map((id) => id.slice(0, idLength - 1)) },
    { weight: 1, arbitrary: real.map((id) => `${id}A`) },
    { weight: 1, arbitrary: real.map((id) => id.toLowerCase()) },
    { weight: 1, arbitrary: real.map((id) => `${id}%00`) },
    { weight: 1, arbitrary: real.map((id) => `${id}?${query}`) },
    { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS).map(encodeOrGarbage) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 80 }).map((s) => encodeURIComponent(s.replace(/[\uD800-\uDFFF]/g, '?'))) },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 9_000 }).map((n) => 'A'.repeat(n)) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%',
        '%zz',
        '%E0%A4%A',
        '%ff%fe',
        '%c0%af',
        '..%2f..%2fetc%2fpasswd',
        '%2e%2e',
        'a%2Fb',
        '%0d%0aX-Injected:%201',
        ';jsessionid=1',
        '__proto__',
        'constructor',
        `${'A'.repeat(idLength)}#frag`,
      ),
    },
    ...others.map((arbitrary) => ({ weight: 1, arbitrary })),
  );
}
