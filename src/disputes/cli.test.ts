// `npx tollgate pricing dispute` and `disputes list` (docs/contract.md §22; issue 34 item 4) through
// the CLI on the test gateway's database, on both engines: the fee the command sets is the fee a
// sandbox dispute then takes; the list is by due date, and disputes that ask for a response
// within the window are flagged (--due-within lists only those); `clock advance` moves the
// sandbox's disputes (opened after capture, decided after a submit, lost past the deadline).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createScheduler } from '../cli/background.js';
import { runCli, useDatabase } from '../cli/testing.js';
import { sandboxDisputeDelayMs } from '../processors/sandbox/disputes.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { pay } from '../test/lifecycle.js';

let gw: TestGateway;
let scheduler: Scheduler;
before(async () => {
  // The CLI reads the real time: the gateway's clock starts there.
  gw = await testGateway({ start_ms: Date.now() });
  scheduler = createScheduler(gw.runtime);
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => gw.close());

async function disputed(card: string): Promise<string> {
  const p = await pay(gw, { card, amount: '40.00' });
  gw.clock.advance(6_000);
  await scheduler.runDue(gw.runtime.deps.now());
  const d = await gw.runtime.store.db.selectFrom('disputes').select('dispute_id').where('transaction_id', '=', p.transaction_id).executeTakeFirstOrThrow();
  return d.dispute_id;
}

test('pricing dispute sets the fee a dispute then takes; disputes list flags those due within the window', async () => {
  const account = gw.merchant.account_id;
  const set = await runCli('pricing', 'dispute', '--account', account, '--currency', 'USD', '--fee', '15.00');
  assert.equal(set.code, 0, set.stderr);
  assert.match(set.stdout, /dispute fee for account \d+: 15\.00 USD per dispute/);
  assert.equal((await runCli('pricing', 'dispute', '--account', account, '--currency', 'USD', '--fee', '15')).code, 2, 'the currency’s digits');
  assert.equal((await runCli('pricing', 'dispute', '--account', account, '--currency', 'XYZ', '--fee', '1.00')).code, 2, 'a known currency');
  assert.equal((await runCli('pricing', 'dispute', '--account', account, '--currency', 'USD')).code, 2, '--fee is required');
  assert.equal((await runCli('pricing', 'dispute', '--account', '999999999', '--currency', 'USD', '--fee', '1.00')).code, 1, 'an unknown account');

  const soon = await disputed('4000000000000259');
  const later = await disputed('4000000000001976');
  const closed = await disputed('4000000000002685');
  const db = gw.runtime.store.db;
  const fee = await db.selectFrom('disputes').select('fee_minor').where('dispute_id', '=', soon).executeTakeFirstOrThrow();
  assert.equal(Number(fee.fee_minor), 1500, 'the fee set by the command');
  // One due in 2 days, one in 7 (the default), one closed.
  await gw.runtime.store.transaction(async (tx) => {
    await tx
      .updateTable('disputes')
      .set({ evidence_due_by: Date.now() + 2 * 86_400_000 })
      .where('dispute_id', '=', soon)
      .execute();
    await tx
      .updateTable('disputes')
      .set({ status: 'accepted', evidence_due_by: Date.now() - 86_400_000 })
      .where('dispute_id', '=', closed)
      .execute();
  });

  const all = await runCli('disputes', 'list', '--account', account);
  assert.equal(all.code, 0, all.stderr);
  const lines = all.stdout.trim().split('\n');
  assert.deepEqual(
    lines.slice(0, 3).map((l) => l.split(/\s+/)[0]),
    [closed, soon, later],
    'soonest due first',
  );
  assert.match(lines[1] as string, /needs_response .*chargeback .*fraudulent .*40\.00 USD {2}fee 15\.00 .*\(in 1d 23h\) {2}DUE SOON$/);
  assert.doesNotMatch(lines[0] as string, /DUE SOON/, 'a closed dispute is not flagged');
  assert.doesNotMatch(lines[2] as string, /DUE SOON/, 'due in 7 days');
  assert.match(all.stdout, /1 dispute asks for a response within 3d/);

  const due = await runCli('disputes', 'list', '--account', account, '--due-within', '3d', '--json');
  assert.equal(due.code, 0, due.stderr);
  const records = JSON.parse(due.stdout);
  assert.deepEqual(
    records.map((r: { dispute_id: string; due_soon: boolean }) => [r.dispute_id, r.due_soon]),
    [[soon, true]],
  );
  assert.equal(records[0].status, 'needs_response');
  assert.equal(records[0].fee, '15.00');

  const week = await runCli('disputes', 'list', '--account', account, '--due-within', '8d');
  assert.deepEqual(
    week.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('dp_'))
      .map((l) => l.split(/\s+/)[0]),
    [soon, later],
  );
  const byStatus = await runCli('disputes', 'list', '--account', account, '--status', 'warning_needs_response', '--json');
  assert.deepEqual(
    JSON.parse(byStatus.stdout).map((r: { dispute_id: string }) => r.dispute_id),
    [later],
  );
  assert.equal((await runCli('disputes', 'list', '--account', account, '--status', 'open')).code, 2);
  assert.equal((await runCli('disputes', 'list', '--account', account, '--due-within', 'soon')).code, 2);
  const other = await gw.newMerchant();
  const none = await runCli('disputes', 'list', '--account', other.account_id, '--due-within', '3d');
  assert.equal(none.code, 0);
  assert.match(none.stdout, /no dispute asks for a response within 3d/);
});

// Issue 34 review, item 6 (§22: test clocks move the sandbox's disputes; docs/disputes.md "Testing with the sandbox").
test('`clock advance` moves sandbox disputes: it opens them after capture, decides submitted evidence, and loses one left unanswered past its deadline', async () => {
  const m = await gw.newMerchant({ name: 'Clocked disputes' });
  const db = gw.runtime.store.db;
  const statusOf = async (tid: string) => (await db.selectFrom('disputes').select('status').where('transaction_id', '=', tid).executeTakeFirst())?.status;
  const advance = async (...how: string[]) => {
    const r = await runCli('clock', 'advance', '--account', m.account_id, ...how);
    assert.equal(r.code, 0, r.stderr);
  };
  const defended = await pay(gw, { card: '4000000000000259', amount: '40.00', merchant: m });
  const ignored = await pay(gw, { card: '4000000000002685', amount: '40.00', merchant: m });
  assert.equal(await statusOf(defended.transaction_id), undefined, 'not before the delay');
  // The real time does not move here: only the account's clock, past the sandbox's delay (default 5 s).
  const opened_at = gw.clock.now + sandboxDisputeDelayMs() + 5_000;
  await advance('--to', new Date(opened_at).toISOString());
  assert.equal(await statusOf(defended.transaction_id), 'needs_response');
  assert.equal(await statusOf(ignored.transaction_id), 'needs_response');
  const d = await db.selectFrom('disputes').selectAll().where('transaction_id', '=', defended.transaction_id).executeTakeFirstOrThrow();
  assert.equal(Number(d.created_at), gw.clock.now + sandboxDisputeDelayMs(), 'opened as of its own time on the clock: the delay after the capture');

  const given = await gw.post(
    '/v1/disputeEvidence',
    {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      dispute_id: d.dispute_id,
      uncategorized_text: 'Delivered and signed for. winning_evidence',
      submit: '1',
    },
    { merchant: m },
  );
  assert.equal(given.statusCode, 200, given.body);
  assert.equal(await statusOf(defended.transaction_id), 'under_review');
  await advance('--to', new Date(opened_at + sandboxDisputeDelayMs() + 5_000).toISOString());
  assert.equal(await statusOf(defended.transaction_id), 'won', 'decided by the clock, a few seconds after the submit');
  assert.equal(await statusOf(ignored.transaction_id), 'needs_response');
  // docs/disputes.md: evidence is due in 7 days; `clock advance --by 8d` gets past it.
  await advance('--by', '8d');
  assert.equal(await statusOf(ignored.transaction_id), 'lost');
  assert.equal(await statusOf(defended.transaction_id), 'won');
});
