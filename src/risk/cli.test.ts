// The operator's risk commands (decisions §13) run through the real CLI entry point
// against the test gateway's database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { main } from '../cli/main.js';
import { directPayment, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { authorise, statusOfRule } from '../threeds/testing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  process.env.DATABASE_URL = gw.database_url;
  process.env.TOLLGATE_MASTER_KEY = TEST_MASTER_KEY;
  process.env.TOLLGATE_LOG_LEVEL = 'silent';
});
after(async () => {
  await gw.close();
});

async function cli(...args: string[]): Promise<{ code: number; out: string }> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  // The CLI prints strings; the test runner's own reports (buffers) pass through.
  process.stdout.write = ((c: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof c !== 'string') return (write as (...a: unknown[]) => boolean)(c, ...rest);
    chunks.push(c);
    return true;
  }) as typeof process.stdout.write;
  const err = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((c: string) => {
    chunks.push(String(c));
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await main(args), out: chunks.join('') };
  } finally {
    process.stdout.write = write;
    process.stderr.write = err;
  }
}

test('blocklist add/list/remove: a card is listed only by fingerprint and blocks payments while listed', async () => {
  const account = gw.merchant.account_id;
  const added = await cli('blocklist', 'add', '--account', account, '--type', 'card', '5555555555554444');
  assert.equal(added.code, 0, added.out);
  const listed = await cli('blocklist', 'list', '--account', account, '--json');
  assert.ok(!listed.out.includes('5555555555554444'), 'the card number is never printed or stored');
  assert.equal(JSON.parse(listed.out).length, 1);
  const x = await authorise(gw, directPayment(gw.merchant, { card: '5555555555554444' }));
  assert.equal(statusOfRule(x, 'blocklist'), 'REJECT');
  assert.equal((await cli('blocklist', 'remove', '--account', account, '--type', 'card', '5555555555554444')).code, 0);
  assert.equal(JSON.parse((await cli('blocklist', 'list', '--account', account, '--json')).out).length, 0);
});

test('risk thresholds: set, shown, and refused when inconsistent', async () => {
  const account = gw.merchant.account_id;
  const set = await cli('risk', 'thresholds', '--account', account, '--review', '40', '--reject', '70');
  assert.equal(set.code, 0, set.out);
  assert.match(set.out, /REVIEW from 40, REJECT from 70/);
  const bad = await cli('risk', 'thresholds', '--account', account, '--review', '90', '--reject', '70');
  assert.equal(bad.code, 2);
  assert.match(bad.out, /--review must not be above --reject/);
  assert.equal((await cli('blocklist', 'add', '--account', account, '--type', 'phone', 'x')).code, 2);
});
