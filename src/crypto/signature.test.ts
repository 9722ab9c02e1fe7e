// decisions §2: the published test vectors, and the rules behind them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { asXmlReadBack, canonicalString, sign, verify } from './signature.js';

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
];

describe('encryption_data (decisions §2)', () => {
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
    // The definition (decisions §2), written out plainly: flatten, sort by path bytes, join.
    const reference = (body: Record<string, unknown>): string => {
      const pairs: Array<[string, string]> = [];
      const walk = (v: unknown, path: string): void => {
        if (v === null || v === undefined) return;
        if (typeof v === 'string') {
          if (v !== '') pairs.push([path, v]);
        } else if (typeof v === 'number') {
          if (Number.isFinite(v)) pairs.push([path, String(v)]);
        } else if (typeof v === 'boolean') pairs.push([path, String(v)]);
        else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) walk(v[i], `${path}[${i}]`);
        else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
      };
      for (const [k, v] of Object.entries(body)) if (k !== 'encryption_data') walk(v, k);
      pairs.sort((x, y) => Buffer.compare(Buffer.from(x[0], 'utf8'), Buffer.from(y[0], 'utf8')));
      return pairs.map(([p, v]) => `${p}=${v}`).join('&');
    };
    const plain = ['a', 'b', 'a-', 'a_', 'ab', 'A', '0', '1', '10', 'é', 'z', ''];
    // Plain keys take the ordered walk; awkward ones (`.`, `[`, `]`, U+E000) the sort.
    for (const keys of [plain, [...plain, '\uE000', 'a.b', 'a[', ']']]) {
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
});
