// Settlement and reconciliation in the portal (issue 35 items 2 and 3; docs/contract.md §19, §23):
// a payment's day closes into a batch (the clock a minute past midnight, runSettlement) that the
// list shows with its sums and links to; the batch's page lists its line with the amounts; its
// CSV downloads as an attachment, never cached, a formula-looking order number quoted for
// spreadsheets; the list pages 50 a page newest first and refuses a filter it cannot read with
// a message (400); another merchant's batch and run are 404; a viewer reads settlement but is
// refused reconciliation; a run of `reconcile` over a small Adyen report is listed with its
// counts, flagged, and its page shows the mismatch. Both engines.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SettlementBatchRow } from '../db/tables/settlement.js';
import { setPricing } from '../ledger/pricing.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { DAY_MS, dayOf, runSettlement } from '../settlement/batches.js';
import { reconcileFile } from '../settlement/reconcile/reconcile.js';
import { CSV_COLUMNS } from '../settlement/report.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { type Paid, pay } from '../test/lifecycle.js';
import { type PortalAgent, signedInUser } from './testing.js';

const FORMULA = '=SUM(1+1)';

let gw: TestGateway;
let shop: CreatedMerchant;
let other: CreatedMerchant;
let paid: Paid;
let day = '';
let batch: SettlementBatchRow;
let foreignBatch: SettlementBatchRow;
let run_id = '';
let owner: PortalAgent;
let viewer: PortalAgent;
let otherOwner: PortalAgent;

const db = () => gw.runtime.store.db;
const batchOf = (account_id: string) => db().selectFrom('settlement_batches').selectAll().where('account_id', '=', account_id).executeTakeFirstOrThrow();
/** The `<tr>` of the page whose attribute `attr` is `value`. */
const rowOf = (page: string, attr: string, value: string) => new RegExp(`<tr ${attr}="${value}"[^>]*>[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
/** The text of a labelled cell (`data-label`) of a row, tags removed. */
const cellOf = (row: string, label: string) =>
  (new RegExp(`data-label="${label.replace(/[()]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</td>`).exec(row)?.[1] ?? '').replace(/<[^>]+>/g, '').trim();

/** A Settlement details report as Adyen documents it (the columns reconcile reads), CET times. */
const ADYEN_HEADER =
  'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number,Reserved4,Reserved5,Reserved6,Reserved7,Reserved8,Reserved9,Reserved10';
function adyenLine(o: {
  type: string;
  psp?: string;
  ref?: string;
  mod?: string;
  debit?: string;
  credit?: string;
  net?: string;
  fee?: string;
  at: number;
}): string {
  const cet = new Date(o.at + 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
  const gross = o.type === 'Fee' ? '' : 'EUR';
  return ['ShopCo', 'ShopECOM', o.psp ?? '', o.ref ?? '', 'visa', cet, 'CET', o.type, o.mod ?? '', gross, o.debit ?? '', o.credit ?? '', '1', 'EUR']
    .concat([o.debit ?? '', o.net ?? '', o.fee ?? '', '', '', '', 'visa', '', '7', '', '', '', '', '', '', ''])
    .join(',');
}

before(async () => {
  gw = await testGateway();
  shop = await gw.newMerchant({ name: 'Settled Shop' });
  other = await gw.newMerchant({ name: 'Another Shop' });
  await setPricing(gw.runtime.store, { account_id: shop.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
  paid = await pay(gw, { merchant: shop, amount: '10.00', order_no: FORMULA });
  await pay(gw, { merchant: other, amount: '5.00' });
  day = dayOf(gw.clock.now);
  // A minute past the next 00:00 UTC: the day closes into its batches (T+1: available at once).
  gw.clock.advance(DAY_MS - (gw.clock.now % DAY_MS) + 60_000);
  await runSettlement(gw.runtime.store, gw.clock.now);
  batch = await batchOf(shop.account_id);
  foreignBatch = await batchOf(other.account_id);
  // A run of reconcile over a two-line Adyen report: a settled payment Tollgate does not know, and an invoiced fee.
  const file = path.join(fs.mkdtempSync(path.join(gw.dir, 'reports-')), 'settlement_detail_report_batch_7.csv');
  const at = gw.clock.now - 3_600_000;
  const rows = [
    ADYEN_HEADER,
    adyenLine({ type: 'Settled', psp: '9913000000000001', ref: 'NOT-OURS-1', mod: '9913000000000001', credit: '5.00', net: '4.90', fee: '0.10', at }),
    adyenLine({ type: 'Fee', mod: 'Transaction Fees', debit: '12.00', at }),
  ];
  fs.writeFileSync(file, `${rows.join('\r\n')}\r\n`);
  run_id = (await reconcileFile(gw.runtime.store, { account_id: shop.account_id, connector: 'adyen', file, now: () => gw.clock.now })).run_id;
  // Signed in after the clock moved (a session idle for a day has ended).
  owner = (await signedInUser(gw, { role: 'owner', merchant_id: shop.merchant_id })).agent;
  viewer = (await signedInUser(gw, { role: 'viewer', merchant_id: shop.merchant_id })).agent;
  otherOwner = (await signedInUser(gw, { role: 'owner', merchant_id: other.merchant_id })).agent;
});
after(async () => gw.close());

describe('the settlement list', () => {
  test('the batch a payment made: day, currency, status in words, lines, gross, fee, net, available at; linked to its page', async () => {
    const page = await owner.get('/portal/settlement');
    assert.equal(page.status, 200, page.body.slice(0, 500));
    assert.match(page.body, /<a href="\/portal\/settlement" aria-current="page">Settlement<\/a>/);
    const row = rowOf(page.body, 'data-batch-id', batch.batch_id);
    assert.ok(row, 'the batch is listed');
    assert.deepEqual(
      ['Day (UTC)', 'Currency', 'Status', 'Lines', 'Gross', 'Fee', 'Net', 'Available at (UTC)'].map((l) => cellOf(row, l)),
      [day, 'USD', 'available', '1', '10.00', '0.59', '9.41', new Date(Number(batch.available_at)).toISOString().slice(0, 16).replace('T', ' ')],
    );
    assert.match(row, new RegExp(`href="/portal/settlement/${batch.batch_id}"`));
    assert.doesNotMatch(page.body, new RegExp(foreignBatch.batch_id), 'another merchant’s batch is not listed');
  });

  test('a month or a range of days narrows the list', async () => {
    const shown = async (query: string) => {
      const page = await owner.get(`/portal/settlement?${query}`);
      assert.equal(page.status, 200, `${query}: ${page.body.slice(0, 500)}`);
      return page.body.includes(`data-batch-id="${batch.batch_id}"`);
    };
    assert.equal(await shown(`month=${day.slice(0, 7)}`), true);
    assert.equal(await shown(`from=${day}&to=${day}`), true);
    assert.equal(await shown(`to=${day}`), true);
    assert.equal(await shown(`from=${dayOf(Date.parse(day) + DAY_MS)}`), false);
    assert.equal(await shown(`month=${dayOf(Date.parse(day) - 40 * DAY_MS).slice(0, 7)}`), false);
  });

  test('a filter it cannot read: the page with the form and a message naming the field, 400, never a 500', async () => {
    const cases: Array<[string, RegExp]> = [
      ['month=2026-13', /Month: give it as YYYY-MM/],
      ['month=November', /Month: give it as YYYY-MM/],
      ['from=2026-02-30', /From: give a day as YYYY-MM-DD/],
      ['to=yesterday', /To: give a day as YYYY-MM-DD/],
      ['from=2026-11-02&to=2026-11-01', /To: is before From/],
      ['month=2026-11&from=2026-11-01', /a month or a range of days/],
      ['after=2026-11-01.usd', /Page link \(after\): not one this page made/],
      ['after=%27%20OR%201%3D1', /Page link \(after\)/],
    ];
    for (const [query, message] of cases) {
      const page = await owner.get(`/portal/settlement?${query}`);
      assert.equal(page.status, 400, query);
      assert.match(page.body, /id="filter-error" role="alert"/, query);
      assert.match(page.body, message, query);
      assert.match(page.body, /<form method="get" action="\/portal\/settlement" id="filters"/, query);
    }
    const long = await owner.get(`/portal/settlement?from=${'9'.repeat(200)}`);
    assert.equal(long.status, 400, 'too long for the schema: the portal’s 400 page');
  });

  test('50 a page, newest day first (currencies A–Z within a day); the next page continues where the first ended', async () => {
    const many = await gw.newMerchant({ name: 'Many Days' });
    const start = Date.UTC(2025, 0, 1);
    const rows: SettlementBatchRow[] = [];
    for (let i = 0; i < 52; i++) {
      for (const currency of i === 50 ? ['EUR', 'USD'] : ['USD']) {
        const d = dayOf(start + i * DAY_MS);
        rows.push({
          batch_id: `stl_page_${String(i).padStart(3, '0')}_${currency}`,
          account_id: many.account_id,
          currency,
          day: d,
          closes_at: start + (i + 1) * DAY_MS,
          lines: 1,
          gross_minor: 100 + i,
          fee_minor: 0,
          net_minor: 100 + i,
          pending_minor: 0,
          delay_days: 1,
          payable_minor: 100 + i,
          paid_minor: 0,
          available_at: start + (i + 1) * DAY_MS,
          status: 'available',
          settled_at: start + (i + 1) * DAY_MS,
          created_at: start + (i + 1) * DAY_MS,
        });
      }
    }
    // Rows only (no postings): the list reads the batches' own sums.
    await gw.runtime.store.transaction((tx) => tx.insertInto('settlement_batches').values(rows).execute());
    const agent = (await signedInUser(gw, { role: 'viewer', merchant_id: many.merchant_id })).agent;
    const ids = (body: string) => [...body.matchAll(/data-batch-id="([^"]+)"/g)].map((m) => m[1]);
    const first = await agent.get('/portal/settlement');
    const newestFirst = [...rows].sort((a, b) => (a.day === b.day ? a.currency.localeCompare(b.currency) : b.day.localeCompare(a.day)));
    const expected = newestFirst.map((r) => r.batch_id);
    assert.deepEqual(ids(first.body), expected.slice(0, 50));
    assert.equal(ids(first.body)[1], 'stl_page_050_EUR', 'day 50: EUR before USD');
    const next = /href="([^"]+)" id="next-page"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next, 'a link to the next page');
    const second = await agent.get(next);
    assert.equal(second.status, 200, second.body.slice(0, 500));
    assert.deepEqual(ids(second.body), expected.slice(50));
    assert.doesNotMatch(second.body, /id="next-page"/);
    const filtered = await agent.get('/portal/settlement?month=2025-02');
    const february = newestFirst.filter((r) => r.day.startsWith('2025-02-')).map((r) => r.batch_id);
    assert.equal(february.length, 22, 'days 31 to 51, two currencies on one');
    assert.deepEqual(ids(filtered.body), february);
  });
});

describe('a batch', () => {
  test('its summary, its line (kind in words, transaction linked, order no, gross, fee, net) and the download link', async () => {
    const page = await owner.get(`/portal/settlement/${batch.batch_id}`);
    assert.equal(page.status, 200, page.body.slice(0, 500));
    assert.match(page.body, /id="net">9\.41 USD</);
    assert.match(page.body, /id="fee">0\.59 USD</);
    assert.match(page.body, /id="status">available</);
    const row = rowOf(page.body, 'data-transaction-id', paid.transaction_id);
    assert.ok(row, 'the payment’s line');
    assert.deepEqual(
      ['Kind', 'Transaction', 'Order no', 'Gross', 'Fee', 'Net'].map((l) => cellOf(row, l)),
      ['capture', paid.transaction_id, FORMULA, '10.00', '0.59', '9.41'],
    );
    assert.match(row, new RegExp(`<a href="/portal/transactions/${paid.transaction_id}">`));
    assert.match(page.body, new RegExp(`<a class="button" href="/portal/settlement/${batch.batch_id}\\.csv" id="download-csv" download>`));
  });

  test('the CSV: an attachment, never cached; the report’s header and the line; a formula-looking order number quoted', async () => {
    const csv = await viewer.get(`/portal/settlement/${batch.batch_id}.csv`);
    assert.equal(csv.status, 200, csv.body.slice(0, 500));
    assert.match(csv.headers['content-type'] ?? '', /^text\/csv/);
    assert.match(csv.headers['content-disposition'] ?? '', new RegExp(`^attachment; filename="settlement-${shop.account_id}-${day}-USD\\.csv"$`));
    assert.equal(csv.headers['cache-control'], 'no-store');
    const lines = csv.body.trim().split('\r\n');
    assert.equal(lines[0], CSV_COLUMNS.join(','));
    assert.equal(lines.length, 2, csv.body);
    const cells = Object.fromEntries(CSV_COLUMNS.map((k, i) => [k, (lines[1] ?? '').split(',')[i]]));
    assert.deepEqual(
      [cells.batch_id, cells.batch_day, cells.currency, cells.kind, cells.transaction_id, cells.order_no],
      [batch.batch_id, day, 'USD', 'capture', paid.transaction_id, `'${FORMULA}`],
    );
    assert.deepEqual([cells.gross, cells.fee, cells.net, cells.gross_minor, cells.fee_minor, cells.net_minor], ['10.00', '0.59', '9.41', '1000', '59', '941']);
  });

  test('another merchant’s batch is 404, page and CSV; an unknown id too', async () => {
    for (const url of [`/portal/settlement/${foreignBatch.batch_id}`, `/portal/settlement/${foreignBatch.batch_id}.csv`, '/portal/settlement/stl_nothing']) {
      const r = await owner.get(url);
      assert.equal(r.status, 404, url);
      assert.doesNotMatch(r.body, /id="summary"|id="lines-table"|batch_id,/, url);
      assert.doesNotMatch(r.headers['content-type'] ?? '', /csv/, url);
    }
    const theirs = await otherOwner.get(`/portal/settlement/${foreignBatch.batch_id}.csv`);
    assert.equal(theirs.status, 200, 'their own batch downloads');
  });
});

describe('reconciliation', () => {
  test('a viewer sees Settlement but not Reconciliation in the navigation, and is refused its pages (403)', async () => {
    const list = await viewer.get('/portal/settlement');
    assert.equal(list.status, 200);
    assert.match(list.body, /href="\/portal\/settlement"/);
    assert.doesNotMatch(list.body, /href="\/portal\/reconciliation"/);
    for (const url of ['/portal/reconciliation', `/portal/reconciliation/${run_id}`]) {
      const r = await viewer.get(url);
      assert.equal(r.status, 403, url);
      assert.match(r.body, /Your role \(viewer\) cannot see or do this/);
      assert.doesNotMatch(r.body, /NOT-OURS-1/);
    }
    const operator = (await signedInUser(gw, { role: 'operator', merchant_id: shop.merchant_id })).agent;
    assert.equal((await operator.get('/portal/reconciliation')).status, 403, 'an operator (the role) is refused too');
    const admin = (await signedInUser(gw, { role: 'admin', merchant_id: shop.merchant_id })).agent;
    assert.equal((await admin.get('/portal/reconciliation')).status, 200, 'an admin reads it');
  });

  test('a run is listed newest first with its counts, its mismatches flagged; its page shows the mismatch', async () => {
    const list = await owner.get('/portal/reconciliation');
    assert.equal(list.status, 200, list.body.slice(0, 500));
    assert.match(list.body, /<a href="\/portal\/reconciliation" aria-current="page">Reconciliation<\/a>/);
    const row = rowOf(list.body, 'data-run-id', run_id);
    assert.ok(row, 'the run is listed');
    assert.match(row, /data-mismatches="1"/);
    assert.deepEqual(
      ['Processor', 'File', 'Lines', 'Mismatches', 'Matched', 'Missing here', 'Missing at processor', 'Amount differs', 'Fee differs', 'Not applicable'].map(
        (l) => cellOf(row, l),
      ),
      ['adyen', 'settlement_detail_report_batch_7.csv', '2', '1 mismatch', '0', '1', '0', '0', '0', '1'],
    );
    assert.match(row, /data-label="Missing here" class="num missing-here"><strong class="error">1<\/strong>/, 'the mismatch count highlighted');
    assert.match(list.body, /id="flagged-count">1 with mismatches/);

    const page = await owner.get(`/portal/reconciliation/${run_id}`);
    assert.equal(page.status, 200, page.body.slice(0, 500));
    assert.match(page.body, /id="file-name">settlement_detail_report_batch_7\.csv</);
    const item = rowOf(page.body, 'data-seq', '1');
    assert.deepEqual(
      ['Kind', 'Movement', 'Line', 'Reference', 'Transaction', 'Amount here', 'Amount at processor', 'Fee here', 'Fee at processor'].map((l) =>
        cellOf(item, l),
      ),
      ['missing here', 'capture', '2', '9913000000000001', 'NOT-OURS-1', '—', '5.00 EUR', '—', '0.10 EUR'],
    );
    assert.doesNotMatch(item, /href="\/portal\/transactions\/NOT-OURS-1"/, 'a payment Tollgate does not have is not linked');
    assert.match(cellOf(item, 'Why'), /NOT-OURS-1: no such movement/);
  });

  test('another merchant’s run is 404', async () => {
    const r = await otherOwner.get(`/portal/reconciliation/${run_id}`);
    assert.equal(r.status, 404);
    assert.doesNotMatch(r.body, /NOT-OURS-1|settlement_detail_report/);
    assert.doesNotMatch((await otherOwner.get('/portal/reconciliation')).body, new RegExp(run_id));
  });
});
