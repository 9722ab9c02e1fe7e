// The operator's subscription and clock commands (issue 11 items 5 and 6), on both engines:
// `clock advance` runs an account's deductions in order, `subscriptions list|show|cancel`
// read and cancel through the same domain code as the API, and refusals are in words.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { directPayment, readXml, TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';

const JAN_31 = Date.UTC(2027, 0, 31, 10, 30, 0);

let gw: TestGateway;
before(async () => {
  gw = await testGateway({ start_ms: JAN_31 });
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

async function subscribe(contract_name: string, card = '4242424242424242') {
  const body = directPayment(gw.merchant, { card, amount: '9.99', currency: 'EUR', subscription: { contract_name, interval: 'month' } });
  const x = readXml(await gw.post('/v1/authorise', body));
  assert.ok(x.recurring_id, JSON.stringify(x));
  return { recurring_id: x.recurring_id as string, order_no: body.order_no as string };
}

const ok = async (...args: string[]) => {
  const r = await runCli(...args);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
};

test('clock advance runs the deductions; subscriptions list, show and cancel', async () => {
  const account = gw.merchant.account_id;
  const a = await subscribe('gold');
  const b = await subscribe('silver', '4000000000000341');

  const moved = await ok('clock', 'advance', '--account', account, '--to', '2027-04-01');
  assert.match(moved, /→ 2027-04-01T00:00:00\.000Z; 6 job\(s\) run at 5 moment/);
  assert.match(await ok('clock', 'show', '--account', account), /2027-04-01T00:00:00\.000Z \(moved ahead/);

  const list = JSON.parse(await ok('subscriptions', 'list', '--account', account, '--json')) as Array<Record<string, unknown>>;
  const byId = new Map(list.map((s) => [s.recurring_id, s]));
  assert.deepEqual([byId.get(a.recurring_id)?.status, byId.get(a.recurring_id)?.charged], ['Active', 2]);
  assert.deepEqual([byId.get(b.recurring_id)?.status, byId.get(b.recurring_id)?.charged], ['Inactived', 0]);
  assert.match(await ok('subscriptions', 'list', '--account', account, '--status', 'Inactived'), new RegExp(`${b.recurring_id}  Inactived  silver`));
  // The first payment counts among the charges paid (issue 36 item 10: it read "charged 2" here).
  assert.match(await ok('subscriptions', 'list', '--account', account, '--status', 'Active'), new RegExp(`${a.recurring_id}  Active +gold .* paid 3  next `));
  assert.equal(byId.get(a.recurring_id)?.charges_paid, 3);

  const shown = JSON.parse(await ok('subscriptions', 'show', '--account', account, a.recurring_id, '--json')) as Record<string, any>;
  assert.deepEqual(
    shown.deductions.map((d: Record<string, string>) => [d.order_no, d.payment_status, d.amount]),
    [
      [`${a.order_no}-R1`, '3000', '9.99'],
      [`${a.order_no}-R2`, '3000', '9.99'],
    ],
  );
  assert.equal(shown.next_deduction, '2027-04-30 10:30:00');
  assert.deepEqual(
    shown.jobs.map((j: Record<string, string>) => [j.status, j.due]),
    [['due', '2027-04-30T10:30:00.000Z']],
  );
  const text = await ok('subscriptions', 'show', '--account', account, b.recurring_id);
  assert.match(text, /end_reason +payment failed: 1002:Card declined \(retried 3 times\)/);
  assert.ok(!text.includes('4000000000000341'), 'no card number');

  assert.match(await ok('subscriptions', 'cancel', '--account', account, a.recurring_id), /cancelled \(Inactived\)/);
  assert.match(await ok('subscriptions', 'cancel', '--account', account, a.recurring_id), /had ended already \(Inactived\)/);
  await ok('clock', 'advance', '--account', account, '--by', '60d');
  const after = JSON.parse(await ok('subscriptions', 'show', '--account', account, a.recurring_id, '--json')) as Record<string, any>;
  assert.equal(after.deductions.length, 2, 'nothing charged after the cancel');
  assert.equal(after.end_reason, 'cancelled by the operator');
});

test('refusals: a live account, a date that is not one, both --to and --by, an unknown subscription', async () => {
  const live = await gw.newMerchant({ mode: 'live' });
  const r1 = await runCli('clock', 'advance', '--account', live.account_id, '--by', '1d');
  assert.equal(r1.code, 1);
  assert.match(r1.stderr, /live account: live accounts use real time/);
  const r2 = await runCli('clock', 'advance', '--account', gw.merchant.account_id, '--to', '2027-02-30');
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, /--to "2027-02-30" is not a date/);
  const r3 = await runCli('clock', 'advance', '--account', gw.merchant.account_id, '--to', '2028-01-01', '--by', '1d');
  assert.equal(r3.code, 2);
  assert.match(r3.stderr, /give one of --to/);
  const r4 = await runCli('clock', 'advance', '--account', gw.merchant.account_id, '--by', '-3d');
  assert.equal(r4.code, 2);
  const r5 = await runCli('subscriptions', 'cancel', '--account', gw.merchant.account_id, 'rec_nope');
  assert.equal(r5.code, 1);
  assert.match(r5.stderr, /no subscription "rec_nope"/);
  const r6 = await runCli('subscriptions', 'list', '--account', gw.merchant.account_id, '--status', 'Paused');
  assert.equal(r6.code, 2);
});
