// Daily settlement batches (docs/contract.md §23; issue 35 item 1): a day's balance movements
// close into one batch at 00:00 UTC with gross, fee and net per line; its pending part becomes
// available after the account's delay (T+1 by default: at the close); a movement written late
// lands in the next batch; two builders make one batch; `ledger verify` checks the batches;
// the CLI sets the delay and reports a batch as text, JSON and CSV (cells safe for
// spreadsheets). Both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { accountBalances, formatBalance } from '../ledger/balances.js';
import { post } from '../ledger/postings.js';
import { setPricing } from '../ledger/pricing.js';
import { verifyLedger } from '../ledger/verify.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { item, pay, refundBatch } from '../test/lifecycle.js';
import { closeBatches, DAY_MS, dayOf, runSettlement, setDelayDays } from './batches.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => gw.close());

const db = () => gw.runtime.store.db;
const balance = async (account_id: string) => (await accountBalances(db(), account_id)).map(formatBalance)[0];
const batchesOf = (account_id: string) => db().selectFrom('settlement_batches').selectAll().where('account_id', '=', account_id).orderBy('day').execute();
/** Moves the clock to a minute past the next 00:00 UTC. */
const nextDay = () => gw.clock.advance(DAY_MS - (gw.clock.now % DAY_MS) + 60_000);
const verified = async () => assert.deepEqual((await verifyLedger(db())).problems, []);

describe('settlement batches', () => {
  test('a day closes into one batch (a capture with its fee as one line, a refund); T+1: available at the close; nothing twice', async () => {
    const m = await gw.newMerchant();
    await setPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
    const p = await pay(gw, { merchant: m, amount: '10.00' });
    await refundBatch(gw, [item(p, { refund_amount: '1.00' })], m);
    const day = dayOf(gw.clock.now);
    assert.deepEqual((await runSettlement(gw.runtime.store, gw.clock.now, m.account_id)).closed, 0, 'the day has not ended');
    nextDay();
    const r = await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    assert.deepEqual(r, { closed: 1, settled: 2 }, 'one batch; its capture and fee entries moved');
    const [b] = await batchesOf(m.account_id);
    assert.deepEqual(
      [b?.day, b?.status, Number(b?.lines), Number(b?.gross_minor), Number(b?.fee_minor), Number(b?.net_minor), Number(b?.pending_minor)],
      [day, 'available', 2, 900, 59, 841, 941],
    );
    assert.equal((await balance(m.account_id))?.available, '8.41');
    assert.equal((await balance(m.account_id))?.pending, '0.00');
    assert.deepEqual(await runSettlement(gw.runtime.store, gw.clock.now, m.account_id), { closed: 0, settled: 0 });
    await verified();
  });

  test('a delay of 2 days: the batch closes at midnight and stays pending until the second day', async () => {
    const m = await gw.newMerchant();
    await setDelayDays(gw.runtime.store, m.account_id, 2, gw.clock.now);
    await pay(gw, { merchant: m, amount: '5.00' });
    nextDay();
    assert.deepEqual(await runSettlement(gw.runtime.store, gw.clock.now, m.account_id), { closed: 1, settled: 0 });
    assert.equal((await batchesOf(m.account_id))[0]?.status, 'pending');
    assert.equal((await balance(m.account_id))?.pending, '5.00');
    await verified();
    nextDay();
    assert.deepEqual(await runSettlement(gw.runtime.store, gw.clock.now, m.account_id), { closed: 0, settled: 1 });
    assert.equal((await balance(m.account_id))?.available, '5.00');
    await verified();
  });

  test('a movement written after its day closed lands in the next batch; two builders at once make one batch', async () => {
    const m = await gw.newMerchant();
    await pay(gw, { merchant: m, amount: '3.00' });
    const late_at = gw.clock.now;
    nextDay();
    await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    // A transaction that began before midnight commits now.
    await gw.runtime.store.transaction((tx) =>
      post(
        tx,
        {
          account_id: m.account_id,
          currency: 'USD',
          reason: 'top_up',
          entries: [
            { ledger_account: 'processor_clearing', amount_minor: -200 },
            { ledger_account: 'merchant_available', amount_minor: 200 },
          ],
        },
        late_at,
      ),
    );
    await pay(gw, { merchant: m, amount: '1.00' });
    nextDay();
    const [a, b] = await Promise.all([closeBatches(gw.runtime.store, gw.clock.now, m.account_id), closeBatches(gw.runtime.store, gw.clock.now, m.account_id)]);
    assert.equal((a?.length ?? 0) + (b?.length ?? 0), 1, 'one of the two closed it');
    const batches = await batchesOf(m.account_id);
    assert.equal(batches.length, 2);
    assert.deepEqual(
      batches.map((x) => Number(x.net_minor)),
      [300, 300],
      'the late top-up (2.00) is in the second batch with its day’s 1.00',
    );
    await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    await verified();
  });

  test('ledger verify finds a batch whose sums are not its postings’', async () => {
    const m = await gw.newMerchant();
    await pay(gw, { merchant: m, amount: '2.00' });
    nextDay();
    await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    const [b] = await batchesOf(m.account_id);
    await gw.runtime.store.transaction((tx) =>
      tx
        .updateTable('settlement_batches')
        .set({ net_minor: 1 })
        .where('batch_id', '=', b?.batch_id ?? '')
        .execute(),
    );
    const problems = (await verifyLedger(db())).problems.join('\n');
    assert.match(problems, new RegExp(`settlement batch ${b?.batch_id}: holds`));
    assert.match(problems, /the batches of .* net /);
    await gw.runtime.store.transaction((tx) =>
      tx
        .updateTable('settlement_batches')
        .set({ net_minor: 200 })
        .where('batch_id', '=', b?.batch_id ?? '')
        .execute(),
    );
    await verified();
  });
});

describe('settlement CLI', () => {
  test('settlement delay refuses what is not 0–30 days, and sets it', async () => {
    const m = await gw.newMerchant();
    for (const bad of ['-1', '31', '1.5', 'x']) {
      const r = await runCli('settlement', 'delay', '--account', m.account_id, `--days=${bad}`);
      assert.notEqual(r.code, 0, bad);
      assert.match(r.stderr, /--days must be a whole number from 0 to 30/);
    }
    const ok = await runCli('settlement', 'delay', '--account', m.account_id, '--days', '3');
    assert.equal(ok.code, 0, ok.stderr);
    const row = await db().selectFrom('settlement_delays').selectAll().where('account_id', '=', m.account_id).executeTakeFirst();
    assert.equal(row?.days, 3);
  });

  test('settlement report: text, JSON and CSV of a day; a formula in an order number is neutralised', async () => {
    const m = await gw.newMerchant();
    await pay(gw, { merchant: m, amount: '7.50', order_no: '=HYPERLINK("x")' });
    const day = dayOf(gw.clock.now);
    nextDay();
    await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    const json = await runCli('settlement', 'report', '--account', m.account_id, '--date', day, '--format', 'json');
    assert.equal(json.code, 0, json.stderr);
    const [b] = JSON.parse(json.stdout);
    assert.deepEqual([b.day, b.net, b.net_minor, b.items.length, b.items[0].kind, b.items[0].net], [day, '7.50', 750, 1, 'capture', '7.50']);
    const csv = await runCli('settlement', 'report', '--account', m.account_id, '--date', day, '--format', 'csv');
    const [head, row] = csv.stdout.split('\r\n');
    assert.equal(
      head,
      'batch_id,batch_day,currency,batch_status,available_at,kind,transaction_id,order_no,reference,created_at,gross,fee,net,gross_minor,fee_minor,net_minor',
    );
    assert.match(row ?? '', /,capture,[^,]+,"'=HYPERLINK\(""x""\)",,[^,]+,7\.50,0\.00,7\.50,750,0,750$/);
    const text = await runCli('settlement', 'report', '--account', m.account_id, '--date', day);
    assert.match(text.stdout, /net 7\.50 USD/);
    const bad = await runCli('settlement', 'report', '--account', m.account_id, '--date', '2026-02-30');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--date must be a UTC day as YYYY-MM-DD/);
  });
});

describe('POST /v1/retrievalSettlement', () => {
  test('signed JSON with the lines, CSV in the signed answer, a bad day named, another account sees nothing of it', async () => {
    const m = await gw.newMerchant();
    await pay(gw, { merchant: m, amount: '4.00' });
    const day = dayOf(gw.clock.now);
    nextDay();
    await runSettlement(gw.runtime.store, gw.clock.now, m.account_id);
    const compact = day.replaceAll('-', '');
    const ids = { merchant_id: m.merchant_id, account_id: m.account_id };
    const json = await gw.post('/v1/retrievalSettlement', { ...ids, start_date: compact, end_date: compact }, { merchant: m });
    assert.equal(json.statusCode, 200, json.body);
    const a = json.json();
    assert.equal(a.format, 'json');
    assert.deepEqual(
      [a.batches.length, a.batches[0].day, a.batches[0].net, a.batches[0].items[0].kind, a.batches[0].items[0].gross_minor],
      [1, day, '4.00', 'capture', 400],
    );
    assert.match(a.encryption_data, /^[0-9a-f]{64}$/);
    const csv = await gw.post('/v1/retrievalSettlement', { ...ids, start_date: compact, end_date: compact, format: 'csv' }, { merchant: m });
    const lines = String(csv.json().csv).trim().split('\r\n');
    assert.equal(lines.length, 2, 'the header and one line');
    assert.match(lines[1] ?? '', /,capture,.*,4\.00,0\.00,4\.00,400,0,400$/);
    const bad = await gw.post('/v1/retrievalSettlement', { ...ids, start_date: compact, end_date: '20260231' }, { merchant: m });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error_field, 'end_date');
    const other = await gw.post('/v1/retrievalSettlement', {
      merchant_id: gw.merchant.merchant_id,
      account_id: gw.merchant.account_id,
      start_date: compact,
      end_date: compact,
    });
    assert.equal(other.json().batches.filter((b: { batch_id: string }) => b.batch_id === a.batches[0].batch_id).length, 0);
  });
});
