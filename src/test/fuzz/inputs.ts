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
  // The canonical string's separators (docs/contract.md §2 as amended): escaped, never a field boundary.
  '&',
  '=',
  '%',
  'a&open3d=1',
  '%26open3d%3D1',
  '100% cotton',
  'https://shop.example/n?a=1&b=2',
];

/** Values that hold the canonical string's separators, for every signed field (issue 29). */
export const SEPARATED = ['&', '=', '%', '&x=1', 'a=b', '%26', '%3D', '%25', '100% cotton', 'x&capture_method=manual', '&open3d=1&'];

/** A leaf of a body: where it sits and its path as the canonical string names it (unescaped). */
export interface Leaf {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  path: string;
}

/** Every string or number leaf of a body but `encryption_data`, in the canonical string's order. */
export function leavesOf(body: Record<string, unknown>): Leaf[] {
  const out: Leaf[] = [];
  const walk = (holder: Record<string, unknown> | unknown[], key: string | number, path: string): void => {
    const v = (holder as Record<string | number, unknown>)[key];
    if (v === null || v === undefined || v === '') return;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v, i, `${path}[${i}]`);
    else if (typeof v === 'object') for (const k of Object.keys(v)) walk(v as Record<string, unknown>, k, `${path}.${k}`);
    else if (typeof v === 'string' || typeof v === 'number') out.push({ holder, key, path });
  };
  for (const k of Object.keys(body)) if (k !== 'encryption_data') walk(body, k, k);
  const esc = (t: string) => Buffer.from(t.replace(/[%&=]/g, encodeURIComponent), 'utf8');
  return out.sort((a, b) => Buffer.compare(esc(a.path), esc(b.path)));
}
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

// ---------- the `subscription` object (docs/contract.md §16) ----------
const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Hostile `subscription` objects for POST /v1/authorise and /v1/checkout: each field mostly
 * valid (so whole objects often pass and the subscription is created, or the session opened
 * with it), else a near miss for that field (interval_count 0, 366, "1e3"; dates like
 * 2027-02-30 or year 9999; amounts with the wrong precision; cycles past their bounds), a
 * wrong type, a nested object or array, or any hostile value; sometimes absent; sometimes
 * extra keys. One object in eight is no object at all (a string, a number, an array of
 * subscriptions, the object as JSON text, a deep nesting). `today_ms` is the gateway's
 * clock, for dates that are valid relative to the first payment; `prefix` starts the contract
 * names it makes (one per endpoint, so one endpoint's names are not taken by the other's).
 */
export function subscriptionArb(today_ms: number, prefix = 'fzs'): fc.Arbitrary<unknown> {
  const day = (offset: number) => isoDay(today_ms + offset * DAY_MS);
  const badDates: unknown[] = [
    '2027-02-30',
    '2027-02-29',
    '2028-02-29',
    '2100-02-29',
    '2027-04-31',
    '2027-13-01',
    '2027-00-10',
    '0000-00-00',
    '0000-01-01',
    '1970-01-01',
    '9999-12-31',
    '+275760-09-13',
    '275760-09-14',
    '2027-1-1',
    '2027/01/01',
    '20270101',
    '2027-01-01T00:00:00Z',
    ' 2027-01-01',
    '2027-01-01\u0000',
    '２０２７-０１-０１',
    '2027-01-01'.repeat(4),
    day(0),
    day(-1),
    day(-400),
    '',
    20270101,
    ['2027-01-01'],
    { date: '2027-01-01' },
  ];
  const badCycles: unknown[] = [-1, 1001, 1000, 1.5, -0, 2 ** 53, 1e308, '3', '0', '1e3', '12abc', '', true, null, [3], { n: 3 }];
  /** Near misses and wrong types per field; any field may also get any hostile value. */
  const BAD: Record<string, unknown[]> = {
    contract_name: ['', '   ', 'x'.repeat(129), 'x'.repeat(70_000), '\u0000', 'gold\u0000', 'gold', 'seed-plan-1'],
    interval: ['DAY', 'Day', ' day', 'days', 'monthly', 'fortnight', '', 'day\u0000', 0, ['day'], { interval: 'day' }],
    interval_count: [
      0,
      366,
      365,
      1000,
      -1,
      1.5,
      1e308,
      Number.MAX_SAFE_INTEGER + 2,
      '0',
      '366',
      '1e3',
      '001',
      '-1',
      ' 1',
      '1.0',
      '0x1',
      '１',
      '999',
      '1000',
      '',
      true,
      null,
      [1],
      { n: 1 },
    ],
    billing_cycle: badCycles,
    promotion_cycle: [...badCycles, 13, 999],
    contract_amount: [
      '10.001',
      '10.0',
      '10',
      '1200',
      '1e3',
      '-5.00',
      '0.00',
      '0',
      '.5',
      '0.001',
      '99999999999999999999.99',
      '9999999999999999.99',
      '10,00',
      '１０.００',
      '',
      10,
      10.5,
      null,
      ['10.00'],
      { amount: '10.00' },
    ],
    contract_start: badDates,
    contract_end: badDates,
    contract: ['x'.repeat(65), 'x'.repeat(70_000), 1, ['c']],
    price_id: ['x'.repeat(65), '<script>', 0, { id: 1 }],
  };
  const FIELDS = Object.keys(BAD);
  // A plan the gateway accepts: consistent cycles, a start after today, an end after the start.
  const valid = fc
    .record({
      contract_name: fc.oneof(
        { weight: 8, arbitrary: fc.nat({ max: 1_000_000 }).map((i) => `${prefix}-${i}`) },
        { weight: 1, arbitrary: fc.constantFrom('é'.repeat(128), 'x'.repeat(128)) },
      ),
      interval: fc.constantFrom('day', 'week', 'month', 'year'),
      interval_count: fc.option(fc.constantFrom('1', '2', '12', '365'), { nil: undefined, freq: 4 }),
      billing_cycle: fc.option(fc.constantFrom(0, 1, 2, 3, 12, 1000), { nil: undefined, freq: 4 }),
      promotion: fc.option(fc.nat({ max: 3 }), { nil: undefined, freq: 3 }),
      contract_amount: fc.option(fc.constantFrom('10.00', '12.50', '0.01', '99999.99'), { nil: undefined, freq: 3 }),
      start: fc.option(fc.integer({ min: 1, max: 800 }), { nil: undefined, freq: 2 }),
      end: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined, freq: 2 }),
      contract: fc.option(fc.constantFrom('c', 'gold plan', ''), { nil: undefined, freq: 2 }),
      price_id: fc.option(fc.constantFrom('price_1', ''), { nil: undefined, freq: 2 }),
    })
    .map(({ promotion, start, end, ...f }) => {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(f)) if (v !== undefined) o[k] = v;
      if (promotion !== undefined) o.promotion_cycle = f.billing_cycle ? Math.min(promotion, f.billing_cycle) : promotion;
      if (start !== undefined) o.contract_start = day(start);
      if (end !== undefined) o.contract_end = day((start ?? 0) + end);
      return o;
    });
  // Then 0 to 3 of its fields spoiled (a near miss, a hostile value, or removed), and maybe extra keys.
  const spoil = fc.record({
    field: fc.constantFrom(...FIELDS),
    how: fc.oneof(
      { weight: 6, arbitrary: fc.constant('near') },
      { weight: 3, arbitrary: fc.constant('hostile') },
      { weight: 1, arbitrary: fc.constant('delete') },
    ),
    pick: fc.nat(),
    value: hostileValue,
  });
  const object = fc
    .record({
      base: valid,
      spoils: fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 4, arbitrary: fc.array(spoil, { minLength: 1, maxLength: 1 }) },
        { weight: 2, arbitrary: fc.array(spoil, { minLength: 2, maxLength: 3 }) },
      ),
      // Rarely: extra keys (prototype names, brackets, dots, unknown names).
      extras: fc.oneof(
        { weight: 7, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.array(fc.record({ name: mutation.map((mu) => mu.name), value: hostileValue }), { minLength: 1, maxLength: 2 }) },
      ),
    })
    .map(({ base, spoils, extras }) => {
      const o = base;
      for (const sp of spoils) {
        if (sp.how === 'delete') delete o[sp.field];
        else if (sp.how === 'hostile') o[sp.field] = sp.value;
        else {
          const bad = BAD[sp.field] as unknown[];
          o[sp.field] = bad[sp.pick % bad.length];
        }
      }
      for (const x of extras ?? []) setField(o, x.name, x.value);
      return o;
    });
  return fc.oneof(
    { weight: 7, arbitrary: object },
    {
      weight: 1,
      arbitrary: fc.oneof(
        hostileValue,
        fc.array(object, { minLength: 2, maxLength: 3 }),
        object.map((o) => ({ subscription: o })),
        object.map((o) => JSON.stringify(o)),
        fc.integer({ min: 20, max: 400 }).map(nestObject),
        fc.constantFrom<unknown>({}, [], '', 'day', 0, true, null),
      ),
    },
  );
}
