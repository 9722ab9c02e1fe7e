// The operator's risk commands (docs/contract.md §13) run through the real CLI entry point
// against the test gateway's database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { directPayment, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { authorise, statusOfRule } from '../threeds/testing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const cli = async (...args: string[]) => {
  const r = await runCli(...args);
  return { code: r.code, out: r.stdout + r.stderr };
};

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
