// `npx tollgate balance` explains itself (issue 9): a legend for every column, and a note on
// the row whose available figure is below zero (a refund paid before the captures settled).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { DAY_MS, runSettlement } from '../settlement/batches.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { item, pay, refundBatch } from '../test/lifecycle.js';
import { setPricing } from './pricing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const LEGEND = ['pending', 'available', 'held', 'refunds_in_flight', 'fees', 'payouts_reserved'];

test('every column has its line in the legend; a negative available says why on its own row; --json is unchanged', async () => {
  const m = await gw.newMerchant();
  await setPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
  const p = await pay(gw, { merchant: m, amount: '10.00' });
  await pay(gw, { merchant: m, amount: '5.00', manual: true });
  await refundBatch(gw, [item(p, { refund_amount: '4.00' })], m);

  const r = await runCli('balance', '--account', m.account_id);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0] as string, /^currency\s+pending\s+available\s+held\s+refunds_in_flight\s+fees\s+payouts_reserved$/);
  // 10.00 captured less the 0.59 fee is pending; the 4.00 refund came out of available.
  const usd = lines[1] as string;
  assert.match(
    usd,
    /^USD\s+9\.41\s+-4\.00\s+5\.00\s+0\.00\s+0\.59\s+0\.00\s+<- below zero: refunds and disputes are taken from available while captured money is still pending settlement; the account owes 4\.00 USD \(the pending money covers it when it settles\); payouts fail INSUFFICIENT_FUNDS until it is covered$/,
  );
  for (const column of LEGEND) assert.match(r.stdout, new RegExp(`^${column}\\s+\\S`, 'm'), `legend line for ${column}`);
  assert.match(r.stdout, /^available\s+settled: the merchant's money; refunds are paid from it$/m);

  const json = await runCli('balance', '--account', m.account_id, '--json');
  // --json gains payouts_reserved (issue 12); the other fields are unchanged.
  assert.deepEqual(JSON.parse(json.stdout), [
    { currency: 'USD', pending: '9.41', available: '-4.00', held: '5.00', refunds_in_flight: '0.00', fees: '0.59', payouts_reserved: '0.00' },
  ]);

  // Once the capture settles, available is positive again and the row carries no note.
  gw.clock.advance(DAY_MS);
  await runSettlement(gw.runtime.store, gw.clock.now);
  const settled = await runCli('balance', '--account', m.account_id);
  assert.match(settled.stdout.split('\n')[1] as string, /^USD\s+0\.00\s+5\.41\s+5\.00\s+0\.00\s+0\.59\s+0\.00$/);
});

test('a full refund of a capture that carried a fee: pending will not cover all of what is owed', async () => {
  const m = await gw.newMerchant();
  await setPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
  const p = await pay(gw, { merchant: m, amount: '10.00' });
  await refundBatch(gw, [item(p, { refund_amount: '10.00' })], m);
  const r = await runCli('balance', '--account', m.account_id);
  assert.match(
    r.stdout.split('\n')[1] as string,
    /^USD\s+9\.41\s+-10\.00\s+.*the account owes 10\.00 USD \(pending 9\.41 will not cover all of it\); payouts fail INSUFFICIENT_FUNDS until it is covered$/,
  );
});

test('an account where no money has moved says so', async () => {
  const m = await gw.newMerchant();
  const r = await runCli('balance', '--account', m.account_id);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'no money has moved on this account yet\n');
});
