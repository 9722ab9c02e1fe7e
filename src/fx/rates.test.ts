// The FX rate table (issue 12 item 2), on both engines: the dated snapshot out of the box, an
// operator's rate wins (either way round), and `tollgate fx set|list` with their refusals.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { formatRate, paymentFor } from './convert.js';
import { rateFor } from './rates.js';
import { SNAPSHOT_DATE } from './snapshot.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const rate = async (b: string, q: string) => {
  const r = await rateFor(gw.runtime.store.db, b, q);
  return r && { rate: formatRate(r.rate), source: r.source };
};

test('out of the box: the snapshot crossed through USD; the same currency is 1; an unknown pair is none', async () => {
  assert.deepEqual(await rate('USD', 'EUR'), { rate: '0.865', source: `snapshot ${SNAPSHOT_DATE}` });
  assert.deepEqual(await rate('EUR', 'USD'), { rate: '1.1560693641', source: `snapshot ${SNAPSHOT_DATE}` });
  assert.deepEqual(await rate('GBP', 'GBP'), { rate: '1.0', source: 'same currency' });
  assert.equal(await rate('USD', 'XAF'), null);
});

test('fx set wins, either way round, and a later set of the inverse replaces it', async () => {
  const set = await runCli('fx', 'set', 'EUR', 'USD', '1.0842');
  assert.equal(set.code, 0, set.stderr);
  assert.equal(set.stdout, '1 EUR = 1.0842 USD\n');
  assert.deepEqual(await rate('EUR', 'USD'), { rate: '1.0842', source: 'operator' });
  assert.deepEqual(await rate('USD', 'EUR'), { rate: '0.9223390518', source: 'operator (inverse)' });
  // 100.00 EUR at the operator's rate is 108.42 USD.
  const r = await rateFor(gw.runtime.store.db, 'EUR', 'USD');
  assert.equal(paymentFor(10_000, r?.rate as bigint, 'EUR', 'USD').payment_minor, 10_842);
  assert.equal((await runCli('fx', 'set', 'USD', 'EUR', '0.93')).code, 0);
  assert.deepEqual(await rate('USD', 'EUR'), { rate: '0.93', source: 'operator' });
  const list = await runCli('fx', 'list');
  assert.match(list.stdout, /^1 USD = 0\.93 EUR {2}\(set /m);
  assert.ok(!list.stdout.includes('1 EUR = 1.0842'), 'the inverse row went');
  assert.equal((await runCli('fx', 'list', 'USD', 'JPY')).stdout, `1 USD = 154.0 JPY (snapshot ${SNAPSHOT_DATE})\n`);
});

test('refusals in words, exit 2', async () => {
  for (const [args, words] of [
    [['fx', 'set', 'EUR', 'USD'], /give BASE QUOTE RATE/],
    [['fx', 'set', 'EUR', 'ZZZ', '1.1'], /"ZZZ" is not a supported ISO 4217 currency code/],
    [['fx', 'set', 'EUR', 'EUR', '1'], /must differ/],
    [['fx', 'set', 'EUR', 'USD', '0'], /must be a positive decimal/],
    [['fx', 'set', 'EUR', 'USD', '1.00000000001'], /at most 10 decimal places/],
  ] as const) {
    const r = await runCli(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, words, args.join(' '));
  }
  const none = await runCli('fx', 'list', 'USD', 'XAF');
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no rate for USD\/XAF/);
});
