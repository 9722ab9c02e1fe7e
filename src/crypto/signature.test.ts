// docs/contract.md §2: the published test vectors, and the rules behind them.
// Runs on one engine: the signature's rules and vectors are pure functions; no database is opened.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { asXmlReadBack, canonicalString, escapeCanonical, sign, verify, withoutAbsent } from './signature.js';

const SECRET = '0123456789abcdef0123456789abcdef';

const VECTORS = [
  {
    body: '{"merchant_id":"10001","account_id":"20001","order_no":"ORD-1001","currency":"USD","amount":"10.00","note":"","card":"4242424242424242","checkout_time":1763596800,"cart_items":[{"basic_item_data":{"name":"Tee","quantity":"1","price":{"amount_usd":10.5,"amount_local_currency":10.5,"currency":"USD"}}}],"encryption_data":"ignored"}',
    canonical:
      'account_id=20001&amount=10.00&card=4242424242424242&cart_items[0].basic_item_data.name=Tee&cart_items[0].basic_item_data.price.amount_local_currency=10.5&cart_items[0].basic_item_data.price.amount_usd=10.5&cart_items[0].basic_item_data.price.currency=USD&cart_items[0].basic_item_data.quantity=1&checkout_time=1763596800&currency=USD&merchant_id=10001&order_no=ORD-1001',
    signature: 'b824c592e22aeae2413b1a8e0aa03b985105333d2e901c2dc8d6a886b15a4ba2',
  },
  {
    body: '{"merchant_id":"10001","account_id":"20001","capture_orders":[{"transaction_id":"T1","order_no":"A","currency":"USD","amount":"10.00"},{"transaction_id":"T2","order_no":"B","currency":"JPY","amount":"1200"}]}',
    canonical:
      'account_id=20001&capture_orders[0].amount=10.00&capture_orders[0].currency=USD&capture_orders[0].order_no=A&capture_orders[0].transaction_id=T1&capture_orders[1].amount=1200&capture_orders[1].currency=JPY&capture_orders[1].order_no=B&capture_orders[1].transaction_id=T2&merchant_id=10001',
    signature: '78918cfb5ae4b1520522a462e5b7d4375a2de3c8b26234a52bd30d691244fc7a',
  },
  {
    // Amended in wave 3: `%`, `&` and `=` escaped; `[]` and `{}` absent like "".
    body: '{"merchant_id":"10001","account_id":"20001","order_no":"ORD-1002","currency":"USD","amount":"25.00","notify_url":"https://shop.example/notify?a=1&b=2","note":"100% cotton","open3d":"1","items":[],"shipping":{}}',
    canonical:
      'account_id=20001&amount=25.00&currency=USD&merchant_id=10001&note=100%25 cotton&notify_url=https://shop.example/notify?a%3D1%26b%3D2&open3d=1&order_no=ORD-1002',
    signature: '93f24ea59f7ad4a250e52eae138c08badee6afcd9f4ed96fdc92441487033fb2',
  },
];

describe('encryption_data (docs/contract.md §2)', () => {
  VECTORS.forEach((v, i) => {
    test(`test vector ${i + 1}: canonical string and signature`, () => {
      const body = JSON.parse(v.body) as Record<string, unknown>;
      assert.equal(canonicalString(body), v.canonical);
      assert.equal(sign(body, SECRET), v.signature);
      assert.equal(verify(body, v.signature, [SECRET]), true);
      assert.equal(verify(body, v.signature.toUpperCase(), [SECRET]), true);
    });
  });

  test('a changed field, a wrong key or a malformed signature fails', () => {
    const body = JSON.parse(VECTORS[1]!.body) as Record<string, unknown>;
    assert.equal(verify({ ...body, merchant_id: '10002' }, VECTORS[1]!.signature, [SECRET]), false);
    assert.equal(verify(body, VECTORS[1]!.signature, ['another-secret']), false);
    assert.equal(verify(body, 'xyz', [SECRET]), false);
    assert.equal(verify(body, undefined, [SECRET]), false);
  });

  test('any of several keys verifies (rotation)', () => {
    const body = JSON.parse(VECTORS[1]!.body) as Record<string, unknown>;
    assert.equal(verify(body, VECTORS[1]!.signature, ['new-secret', SECRET]), true);
  });

  test('nulls and empty strings are left out; booleans and numbers are spelled plainly', () => {
    assert.equal(canonicalString({ b: null, a: '', c: true, d: false, e: 0.1, f: 1e21, g: [] }), 'c=true&d=false&e=0.1&f=1e+21');
  });

  test('pairs sort by UTF-8 bytes of the path', () => {
    // "Z" (0x5A) sorts before "a" (0x61); "é" (0xC3 0xA9) after "z".
    assert.equal(canonicalString({ a: '1', Z: '2', é: '3', z: '4' }), 'Z=2&a=1&z=4&é=3');
  });

  test('paths beyond U+D7FF still sort by UTF-8 bytes, not UTF-16 code units', () => {
    // U+E000 is EE 80 80 in UTF-8, U+1F600 is F0 9F 98 80: U+E000 first (UTF-16 says otherwise).
    assert.equal(canonicalString({ '\u{1F600}': '1', '\uE000': '2', a: '3' }), 'a=3&\uE000=2&\u{1F600}=1');
  });

  test('the fast sort agrees with a byte-order sort for any keys', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom('v')), (body) => {
        const expected = Object.keys(body)
          .filter((k) => k !== 'encryption_data')
          .sort((x, y) => Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8')))
          .map((k) => `${k}=v`)
          .join('&');
        assert.equal(canonicalString(body), expected);
      }),
      { numRuns: 500 },
    );
  });

  test('the ordered walk agrees with sorting every pair by UTF-8 bytes, for any nesting', () => {
    // The definition (docs/contract.md §2), written out plainly: flatten, sort by path bytes, join.
    const reference = (body: Record<string, unknown>): string => {
      const pairs: Array<[string, string]> = [];
      const esc = (t: string) => t.replaceAll('%', '%25').replaceAll('&', '%26').replaceAll('=', '%3D');
      const walk = (v: unknown, path: string): void => {
        if (v === null || v === undefined) return;
        if (typeof v === 'string') {
          if (v !== '') pairs.push([path, esc(v)]);
        } else if (typeof v === 'number') {
          if (Number.isFinite(v)) pairs.push([path, String(v)]);
        } else if (typeof v === 'boolean') pairs.push([path, String(v)]);
        else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v[i], `${path}[${i}]`);
        else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${esc(k)}` : esc(k));
      };
      for (const [k, v] of Object.entries(body)) if (k !== 'encryption_data') walk(v, esc(k));
      pairs.sort((x, y) => Buffer.compare(Buffer.from(x[0], 'utf8'), Buffer.from(y[0], 'utf8')));
      return pairs.map(([p, v]) => `${p}=${v}`).join('&');
    };
    const plain = ['a', 'b', 'a-', 'a_', 'ab', 'A', '0', '1', '10', 'é', 'z', ''];
    // Plain keys take the ordered walk; awkward ones (`.`, `[`, `]`, U+E000, escaped `%&=`) the sort.
    for (const keys of [plain, [...plain, '\uE000', 'a.b', 'a[', ']'], [...plain, 'a=', 'a&b', '%', '%2', 'a%3D']]) {
      const key = fc.constantFrom(...keys);
      const leaf = fc.oneof(fc.constantFrom('', 'v', 'x=y&z'), fc.integer(), fc.boolean(), fc.constant(null));
      const { tree } = fc.letrec((tie) => ({
        tree: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          leaf,
          fc.array(tie('tree'), { maxLength: 12 }),
          fc.dictionary(key, tie('tree'), { maxKeys: 6 }),
        ),
      }));
      fc.assert(
        fc.property(fc.dictionary(key, tree, { maxKeys: 8 }), (body) => {
          const expected = reference(body as Record<string, unknown>);
          // Twice: the second walk meets shapes (keys and their kinds) the first one learned.
          assert.equal(canonicalString(body as Record<string, unknown>), expected);
          assert.equal(canonicalString(body as Record<string, unknown>), expected);
        }),
        { numRuns: 1000 },
      );
    }
  });

  test('the same keys order by what their values are: a leaf, an object or a list', () => {
    // `a` sorts before `a-`, but `a.x` and `a[0]` after it: a learned order of keys must not
    // be reused for the same keys holding other kinds of value.
    for (let round = 0; round < 2; round++) {
      assert.equal(canonicalString({ a: 'v', 'a-': 'w' }), 'a=v&a-=w');
      assert.equal(canonicalString({ a: { x: 'v' }, 'a-': 'w' }), 'a-=w&a.x=v');
      assert.equal(canonicalString({ a: ['v'], 'a-': 'w' }), 'a-=w&a[0]=v');
      assert.equal(canonicalString({ top: { a: 'v', 'a-': 'w' }, z: { a: { x: 'v' }, 'a-': 'w' } }), 'top.a=v&top.a-=w&z.a-=w&z.a.x=v');
    }
  });

  test('XML answers sign one-element lists as members', () => {
    const read = asXmlReadBack({ risk_reasons: [{ name: 'r1', status: 'ACCEPT' }], x: 1 }) as Record<string, unknown>;
    assert.equal(canonicalString(read), 'risk_reasons.name=r1&risk_reasons.status=ACCEPT&x=1');
    const two = asXmlReadBack({ risk_reasons: [{ name: 'r1' }, { name: 'r2' }] }) as Record<string, unknown>;
    assert.equal(canonicalString(two), 'risk_reasons[0].name=r1&risk_reasons[1].name=r2');
  });

  test('%, & and = are escaped in paths and values, nothing else', () => {
    assert.equal(escapeCanonical('a%b&c=d e+f/?#'), 'a%25b%26c%3Dd e+f/?#');
    assert.equal(escapeCanonical('%26'), '%2526');
    assert.equal(canonicalString({ 'k=1&j': 'v', a: '1&b=2' }), 'a=1%26b%3D2&k%3D1%26j=v');
    // A value holding `&k=v` no longer signs like a separate field k (the review's forgery).
    assert.notEqual(canonicalString({ notify_url: 'https://s/n&open3d=1' }), canonicalString({ notify_url: 'https://s/n', open3d: '1' }));
  });

  test('an empty string, null, {} and [] are absent: withoutAbsent removes them at every depth and signs the same', () => {
    const body = { a: '', b: null, c: {}, d: [], e: { f: '', g: [{}, ''] }, h: ['', 'x', {}, ''], i: 'v', j: 0, k: false };
    assert.deepEqual(withoutAbsent(body), { h: [null, 'x'], i: 'v', j: 0, k: false });
    assert.equal(canonicalString(withoutAbsent(body)), canonicalString(body));
    const proto = withoutAbsent(JSON.parse('{"__proto__":{"x":"1"}}') as Record<string, unknown>);
    assert.equal(Object.getPrototypeOf(proto), Object.prototype, 'an own __proto__ key stays a member');
    assert.deepEqual(Object.keys(proto), ['__proto__']);
  });

  // Field names a signed body can hold: any text but `.`, `[`, `]` (every schema refuses
  // other keys), with the separators the escaping is for. Values from a small alphabet so
  // that different bodies often come close to one another.
  const KEYS = ['a', 'b', 'ab', 'a&b', 'a=', '=b', '%', '%26', 'b=1', '&'];
  const VALUES = ['', '1', 'x', '&', '=', '%', '1&b=1', 'x&a=1', '%26', '%3D', 'a=1&b', 'p%', 1, true];
  const { body: bodyArb } = fc.letrec((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(...VALUES, null),
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...KEYS), tie('tree'), { maxKeys: 3 }),
    ),
    body: fc.dictionary(fc.constantFrom(...KEYS), tie('tree'), { maxKeys: 4 }),
  }));
  /** A body as the gateway acts on it: absent values gone, each leaf as its text on the wire. */
  const meaning = (body: Record<string, unknown>): unknown =>
    JSON.parse(JSON.stringify(withoutAbsent(body), (_k, v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v)));

  test('property: two bodies that differ in any field’s presence or value never share a canonical string', () => {
    // Pairs of small bodies over few keys and values, so that near misses are common.
    const small = fc.dictionary(
      fc.constantFrom('a', 'b', 'a&b', 'b=1'),
      fc.oneof(fc.constantFrom(...VALUES), fc.array(fc.constantFrom('', 'x', '&b=1'), { maxLength: 3 })),
      { maxKeys: 3 },
    );
    for (const arb of [small, bodyArb]) {
      fc.assert(
        fc.property(arb, arb, (a, b) => {
          if (canonicalString(a) === canonicalString(b))
            assert.ok(isDeepStrictEqual(meaning(a), meaning(b)), `${JSON.stringify(a)} and ${JSON.stringify(b)} share a canonical string`);
        }),
        { numRuns: 20_000 },
      );
    }
  });

  test('property: folding one field into its neighbour’s value or name never keeps the signature (the review’s attack)', () => {
    const flat = fc.dictionary(
      fc.constantFrom(...KEYS, 'notify_url', 'open3d', 'cancel_url', 'capture_method'),
      fc.constantFrom('1', 'x', 'a&b', 'https://s/n?q=1'),
      {
        minKeys: 2,
        maxKeys: 5,
      },
    );
    fc.assert(
      fc.property(flat, fc.nat(), fc.boolean(), (a, pick, intoName) => {
        const keys = Object.keys(a).sort((x, y) => Buffer.compare(Buffer.from(escapeCanonical(x)), Buffer.from(escapeCanonical(y))));
        const i = pick % (keys.length - 1);
        const [k1, k2] = [keys[i] as string, keys[i + 1] as string];
        const b: Record<string, unknown> = { ...a };
        delete b[k2];
        if (intoName) {
          // {k1: v1, k2: v2} → {"k1=v1&k2": v2}
          delete b[k1];
          b[`${k1}=${a[k1]}&${k2}`] = a[k2];
        } else b[k1] = `${a[k1]}&${k2}=${a[k2]}`; // → {k1: "v1&k2=v2"}
        assert.notEqual(canonicalString(b), canonicalString(a));
      }),
      { numRuns: 5000 },
    );
  });

  test('property: the canonical string reads back as exactly the body’s fields and values', () => {
    const decode = (t: string) => t.replaceAll('%3D', '=').replaceAll('%26', '&').replaceAll('%25', '%');
    fc.assert(
      fc.property(bodyArb, (body) => {
        const text = canonicalString(body);
        const read = text === '' ? [] : text.split('&').map((pair) => pair.split('=').map(decode));
        // Every pair splits into exactly a path and a value: no separator survives unescaped.
        for (const p of read) assert.equal(p.length, 2, text);
        const fields: string[][] = [];
        const walk = (v: unknown, path: string): void => {
          if (v === null || v === undefined || v === '') return;
          if (Array.isArray(v))
            v.forEach((x, i) => {
              walk(x, `${path}[${i}]`);
            });
          else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
          else fields.push([path, String(v)]);
        };
        walk(body, '');
        const order = (x: string[], y: string[]) => ((x[0] as string) < (y[0] as string) ? -1 : (x[0] as string) > (y[0] as string) ? 1 : 0);
        assert.deepEqual([...read].sort(order), fields.sort(order));
        // And those pairs alone rebuild the body as the gateway acts on it: one meaning per string.
        const rebuilt: Record<string, unknown> = {};
        for (const [path, value] of read) {
          const steps = (path as string).match(/[^.[\]]+|\[\d+\]/g) as string[];
          let at: Record<string, unknown> | unknown[] = rebuilt;
          steps.forEach((step, i) => {
            const key = step.startsWith('[') ? Number(step.slice(1, -1)) : step;
            const last = i === steps.length - 1;
            const holder = at as Record<string | number, unknown>;
            if (last) holder[key] = value;
            else {
              holder[key] ??= (steps[i + 1] as string).startsWith('[') ? [] : {};
              at = holder[key] as Record<string, unknown>;
            }
          });
        }
        const holes = (v: unknown): unknown =>
          Array.isArray(v)
            ? Array.from(v, (x) => (x === undefined ? null : holes(x)))
            : v !== null && typeof v === 'object'
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, holes(x)]))
              : v;
        assert.deepEqual(holes(rebuilt), meaning(body) ?? {});
      }),
      { numRuns: 5000 },
    );
  });
});
