// Reconciliation with Adyen end to end (issue 35 item 3), on both engines: a live merchant on the
// Adyen mock pays, is captured and refunds through the gateway; its fees come from the
// account's pricing. A Settlement details report written as Adyen documents it is reconciled by
// `npx tollgate reconcile`: each category once (matched, missing here, missing at the processor,
// amount differs, fee differs, not applicable), the run and its mismatches kept, one warn line,
// the gauge. A report that agrees is all matched and sets the gauge to 0. Malformed files (a bad
// amount on line 7, a missing column, a truncated quoted field, a short row, Stripe's export
// given as Adyen's, an empty file) are refused naming the line, exit 1, and keep nothing.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, useDatabase } from '../../cli/testing.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { Metrics } from '../../ops/metrics.js';
import { type AdyenMock, startAdyenMock } from '../../processors/adyen/mock.js';
import { setProcessor } from '../../processors/config.js';
import { directPayment, readXml, TEST_MASTER_KEY, type TestGateway, testGateway } from '../../test/harness.js';
import { captureBatch, item, type Paid, refundBatch } from '../../test/lifecycle.js';
import { reconcileFile } from './reconcile.js';
import { lastRunMismatches, readRun } from './runs.js';

const API_KEY = 'AQE_recon_key_0001';
const HMAC_KEY = 'B1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F90';
const MERCHANT = 'TollgateReconECOM';

let gw: TestGateway;
let mock: AdyenMock;
let live: CreatedMerchant;

before(async () => {
  gw = await testGateway({ start_ms: Date.now(), settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  mock = await startAdyenMock({ api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
  live = await gw.newMerchant({ mode: 'live', name: 'Reconciled on Adyen' });
  const { processor_id } = await setProcessor(
    gw.runtime.store,
    gw.runtime.keyring,
    {
      account_id: live.account_id,
      connector: 'adyen',
      base_url: mock.url,
      credentials: [`api_key=${API_KEY}`, `merchant_account=${MERCHANT}`, `hmac_key=${HMAC_KEY}`],
    },
    Date.now(),
  );
  mock.webhook_url = `http://127.0.0.1:${port}/hooks/adyen/${processor_id}`;
  await gw.runtime.deps.processors.reload();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await mock?.close();
  await gw?.close();
});

let serial = 0;
/** A Luhn-valid Visa number of its own per payment (a live account's velocity rules count cards). */
function freshCard(): string {
  const body = `4000${String(Date.now() % 1e6).padStart(6, '0')}${String(++serial).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

async function pay(amount: string, manual = false): Promise<Paid> {
  const body = directPayment(live, { card: freshCard(), currency: 'EUR', amount, ...(manual ? { capture_method: 'manual' } : {}) });
  const x = readXml(await gw.post('/v1/authorise', body, { merchant: live }));
  assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
  return { transaction_id: x.transaction_id, order_no: body.order_no as string, currency: 'EUR', amount };
}

const db = () => gw.runtime.store.db;
/** What the ledger charged as fees on a payment (minor units). */
async function feeOf(transaction_id: string): Promise<number> {
  const rows = await db()
    .selectFrom('ledger_entries')
    .select('amount_minor')
    .where('transaction_id', '=', transaction_id)
    .where('ledger_account', '=', 'fees')
    .execute();
  return rows.reduce((s, r) => s + Number(r.amount_minor), 0);
}
const pspOf = (transaction_id: string) => [...mock.payments.values()].find((p) => p.reference === transaction_id)?.psp ?? '';
const decimal = (minor: number) => (minor / 100).toFixed(2);

const HEADER =
  'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number,Reserved4,Reserved5,Reserved6,Reserved7,Reserved8,Reserved9,Reserved10';

/** One line of the report; `at` in UTC ms, written in CET as the company account's zone. */
function line(o: {
  type: string;
  psp?: string;
  ref?: string;
  mod?: string;
  mmr?: string;
  debit?: string;
  credit?: string;
  fee?: string;
  at: number;
  currency?: string;
}): string {
  const cet = new Date(o.at + 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
  const c = o.currency ?? 'EUR';
  const net = o.credit ? decimal(Math.round(Number(o.credit) * 100) - Math.round(Number(o.fee ?? '0') * 100)) : '';
  return [
    'TollgateCo',
    MERCHANT,
    o.psp ?? '',
    o.ref ?? '',
    'visa',
    cet,
    'CET',
    o.type,
    o.mod ?? '',
    o.type === 'Fee' || o.type === 'MerchantPayout' ? '' : c,
    o.debit ?? '',
    o.credit ?? '',
    '1',
    c,
    o.debit ?? '',
    net,
    o.fee ?? '',
    '',
    '',
    '',
    'visa',
    o.mmr ?? '',
    '7',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
  ].join(',');
}

const dir = () => fs.mkdtempSync(path.join(gw.dir, 'reports-'));
function write(name: string, rows: string[]): string {
  const file = path.join(dir(), name);
  fs.writeFileSync(file, `${rows.join('\r\n')}\r\n`);
  return file;
}
const runs = async () => (await db().selectFrom('reconciliation_runs').select('run_id').execute()).length;
const gauge = async () => {
  const m = new Metrics(false);
  m.watchReconciliation(() => lastRunMismatches(db()));
  return m.registry.getSingleMetricAsString('tollgate_reconciliation_mismatches');
};

interface World {
  p1: Paid;
  p2: Paid;
  p3: Paid;
  p4: Paid;
  p5: Paid;
  refund_id: string;
  at: number;
  fees: Record<string, number>;
}
let world: World;

/** Four automatic payments and a manual one, captured and refunded 4.00, each confirmed by Adyen's notifications. */
async function makeWorld(): Promise<World> {
  const set = await runCli('pricing', 'set', '--account', live.account_id, '--currency', 'EUR', '--percent', '2.9', '--fixed', '0.30');
  assert.equal(set.code, 0, set.stderr);
  const [p1, p2, p3, p4] = [await pay('10.00'), await pay('20.00'), await pay('30.00'), await pay('40.00')];
  const p5 = await pay('50.00', true);
  assert.equal((await captureBatch(gw, [item(p5 as Paid)], live)).capture_orders[0].capture_status, '2');
  await mock.deliver();
  const refund = (await refundBatch(gw, [{ ...item(p5 as Paid), refund_amount: '4.00', refund_reason: 'reconcile' }], live)).refund_orders[0];
  await mock.deliver();
  const settled = await db().selectFrom('ledger_postings').select('reason').where('ref', '=', refund.refund_reference_id).execute();
  assert.deepEqual(settled.map((r) => r.reason).sort(), ['refund_pending', 'refund_settled'], 'the refund confirmed by its REFUND notification');
  const capture = await db()
    .selectFrom('ledger_postings')
    .select('created_at')
    .where('transaction_id', '=', (p1 as Paid).transaction_id)
    .where('reason', '=', 'capture')
    .executeTakeFirstOrThrow();
  const fees: Record<string, number> = {};
  for (const p of [p1, p2, p3, p4, p5] as Paid[]) fees[p.transaction_id] = await feeOf(p.transaction_id);
  assert.equal(fees[(p1 as Paid).transaction_id], 59, '2.9% of 10.00 + 0.30');
  return { p1, p2, p3, p4, p5, refund_id: refund.refund_reference_id, at: Number(capture.created_at), fees } as World;
}

/** The Settled line of a payment as Adyen would report it, with the fee Tollgate charged. */
const settled = (p: Paid, o: { credit?: string; fee?: string } = {}) =>
  line({
    type: 'Settled',
    psp: pspOf(p.transaction_id),
    ref: p.transaction_id,
    mod: pspOf(p.transaction_id),
    mmr: p.transaction_id,
    credit: o.credit ?? p.amount,
    fee: o.fee ?? decimal(world.fees[p.transaction_id] as number),
    at: world.at,
  });

describe('reconcile --connector adyen', () => {
  before(async () => {
    world = await makeWorld();
  });

  test('a report with every category: counted, kept with its mismatches, one warn line, the gauge', async () => {
    const { p1, p2, p3, p5, refund_id, at } = world;
    const file = write('settlement_detail_report_batch_7.csv', [
      HEADER,
      settled(p1), // 2 matched
      settled(p2, { credit: '21.00' }), // 3 amount differs
      settled(p3, { fee: '0.50' }), // 4 fee differs
      settled(p5), // 5 matched
      line({ type: 'Refunded', psp: pspOf(p5.transaction_id), ref: p5.transaction_id, mod: 'RFND000000000001', mmr: refund_id, debit: '4.00', at }), // 6 matched
      line({ type: 'Settled', psp: '9913000000000001', ref: 'NOT-OURS-1', credit: '5.00', fee: '0.10', at }), // 7 missing here
      settled(p1), // 8 missing here: reported twice
      line({ type: 'Fee', mod: 'Transaction Fees May 2026', debit: '12.00', at }), // 9 not applicable
      line({ type: 'MerchantPayout', mod: 'TX12345 batch 7', debit: '90.00', at }), // 10 not applicable
    ]);
    process.env.TOLLGATE_LOG_LEVEL = 'warn';
    process.env.TOLLGATE_LOG_FORMAT = 'json';
    const r = await runCli('reconcile', '--account', live.account_id, '--connector', 'adyen', '--file', file, '--json');
    process.env.TOLLGATE_LOG_LEVEL = 'silent';
    assert.equal(r.code, 0, r.stderr);
    const run = JSON.parse(r.stdout);
    const counts = ['lines', 'matched', 'missing_here', 'missing_at_processor', 'amount_differs', 'fee_differs', 'not_applicable', 'mismatches'].map(
      (k) => run[k],
    );
    assert.deepEqual(counts, [9, 3, 2, 1, 1, 1, 2, 5]);
    assert.equal(run.file_name, 'settlement_detail_report_batch_7.csv');
    assert.equal(run.file_sha256, (await import('node:crypto')).createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
    assert.deepEqual([run.from_ms, run.to_ms], [Math.floor(at / 1000) * 1000, Math.floor(at / 1000) * 1000 + 999]);

    const warn = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('reconciliation of account'));
    assert.equal(warn.length, 1, r.stderr);
    const logged = JSON.parse(warn[0] as string);
    assert.equal(logged.level, 40, 'warn');
    assert.deepEqual(
      [logged.account_id, logged.connector, logged.run_id, logged.mismatches, logged.missing_at_processor],
      [live.account_id, 'adyen', run.run_id, 5, 1],
    );
    assert.match(logged.msg, new RegExp(`account ${live.account_id} with adyen: 5 mismatches .*1 missing at the processor.*run ${run.run_id}`));

    const show = await runCli('reconcile', 'show', '--run', run.run_id, '--json');
    assert.equal(show.code, 0, show.stderr);
    const items = JSON.parse(show.stdout).items as Array<Record<string, unknown>>;
    const seen = items.map((i) => [
      i.kind,
      i.line_no,
      i.movement,
      i.transaction_id,
      i.ours_amount_minor,
      i.theirs_amount_minor,
      i.ours_fee_minor,
      i.theirs_fee_minor,
    ]);
    assert.deepEqual(seen, [
      ['amount_differs', 3, 'capture', p2.transaction_id, 2000, 2100, world.fees[p2.transaction_id], world.fees[p2.transaction_id]],
      ['fee_differs', 4, 'capture', p3.transaction_id, 3000, 3000, world.fees[p3.transaction_id], 50],
      ['missing_here', 7, 'capture', 'NOT-OURS-1', null, 500, null, 10],
      ['missing_here', 8, 'capture', p1.transaction_id, null, 1000, null, world.fees[p1.transaction_id]],
      ['missing_at_processor', null, 'capture', world.p4.transaction_id, 4000, null, null, null],
    ]);
    assert.match(String(items[3]?.detail), /an earlier line of the file reports the same movement/);
    const text = await runCli('reconcile', 'show', '--run', run.run_id);
    assert.match(text.stdout, /missing at processor\s+1 /);
    assert.match(text.stdout, /line 7 .*NOT-OURS-1/);
    assert.match(await gauge(), new RegExp(`tollgate_reconciliation_mismatches\\{account_id="${live.account_id}",connector="adyen"\\} 5`));
  });

  test('a report that agrees with the ledger: all matched, the gauge back to 0, no warn line', async () => {
    const { p1, p2, p3, p4, p5, refund_id, at } = world;
    const file = write('batch_8.csv', [
      HEADER,
      ...[p1, p2, p3, p4, p5].map((p) => settled(p)),
      line({ type: 'Refunded', psp: pspOf(p5.transaction_id), ref: p5.transaction_id, mod: 'RFND000000000001', mmr: refund_id, debit: '4.00', at }),
    ]);
    process.env.TOLLGATE_LOG_LEVEL = 'warn';
    const r = await runCli('reconcile', '--account', live.account_id, '--connector', 'adyen', '--file', file);
    process.env.TOLLGATE_LOG_LEVEL = 'silent';
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /matched\s+6 /);
    assert.match(r.stdout, /: no mismatches/);
    assert.doesNotMatch(r.stderr, /reconciliation of account/);
    assert.match(await gauge(), /connector="adyen"\} 0/);
    const list = await runCli('reconcile', 'list', '--account', live.account_id);
    assert.equal(list.stdout.trim().split('\n').length, 2);
    assert.match(list.stdout.split('\n')[0] as string, /batch_8\.csv {2}6 lines {2}6 matched {2}0 mismatches/);
  });

  test('mismatches past the cap are counted, not kept, and the run says so; the warn sink is called once', async () => {
    const { p1, p2, p3 } = world;
    const file = write('capped.csv', [HEADER, settled(p1, { credit: '1.00' }), settled(p2, { credit: '1.00' }), settled(p3, { credit: '1.00' })]);
    const warned: Array<[Record<string, unknown>, string]> = [];
    const run = await reconcileFile(gw.runtime.store, {
      account_id: live.account_id,
      connector: 'adyen',
      file,
      max_items: 2,
      warn: (f, m) => warned.push([f, m]),
    });
    // 3 amounts differ; p4 and p5 (and the refund) are in the file's dates but not in it.
    assert.deepEqual([run.amount_differs, run.missing_at_processor, run.mismatches, run.items_kept, run.items_dropped], [3, 3, 6, 2, 4]);
    const kept = await readRun(db(), run.run_id, 100);
    assert.deepEqual(
      kept?.items.map((i) => [i.seq, i.kind, i.line_no]),
      [
        [1, 'amount_differs', 2],
        [2, 'amount_differs', 3],
      ],
    );
    assert.equal(warned.length, 1);
    assert.deepEqual(warned[0]?.[0], {
      run_id: run.run_id,
      account_id: live.account_id,
      connector: 'adyen',
      mismatches: 6,
      missing_here: 0,
      missing_at_processor: 3,
      amount_differs: 3,
      fee_differs: 0,
      file_name: 'capped.csv',
    });
    const text = await runCli('reconcile', 'show', '--run', run.run_id);
    assert.match(text.stdout, /6 mismatches \(the first 2 kept, 4 more counted only\)/);
  });

  test('malformed, truncated or wrong-format files: the line named, exit 1, nothing kept', async () => {
    const good = settled(world.p1);
    const kept = await runs();
    const badAmount = [HEADER, good, good, good, good, good, settled(world.p2, { credit: '20.001' })];
    const stripe = [
      'id,Type,Source,Amount,Fee,Net,Currency,Created (UTC),Available On (UTC),Description',
      'txn_1,charge,ch_1,10.00,0.59,9.41,eur,2026-05-01 10:00,2026-05-03 00:00,x',
    ];
    const cases: Array<[string, string, RegExp]> = [
      ['bad-amount.csv', `${badAmount.join('\n')}\n`, /line 7: Gross Credit \(GC\) "20.001" is not an amount in EUR/],
      [
        'no-currency.csv',
        `${HEADER.replace('Gross Currency,', '')}\n`,
        /line 1: not an Adyen settlement details report: the header row lacks the column "Gross Currency"/,
      ],
      ['truncated.csv', `${HEADER}\n${good}\n${good.replace(',visa,', ',"visa')}`, /line 3: the file is not well-formed CSV: Quote Not Closed/],
      [
        'short-row.csv',
        `${HEADER}\n${good}\n${good.split(',').slice(0, 12).join(',')}\n`,
        /line 3: the file is not well-formed CSV: a row of 12 cells where the header row has 30/,
      ],
      [
        'stripe.csv',
        `${stripe.join('\n')}\n`,
        /line 1: not an Adyen settlement details report: the header row lacks the columns "Psp Reference", "Merchant Reference", "Creation Date"/,
      ],
      ['empty.csv', '', /line 1: the file is empty/],
      ['bad-zone.csv', `${HEADER}\n${good.replace(',CET,', ',IST,')}\n`, /line 2: time zone "IST" is not one Tollgate knows/],
    ];
    for (const [name, text, expected] of cases) {
      const file = path.join(dir(), name);
      fs.writeFileSync(file, text);
      const r = await runCli('reconcile', '--account', live.account_id, '--connector', 'adyen', '--file', file);
      assert.equal(r.code, 1, `${name}: ${r.stdout}`);
      assert.match(r.stderr, expected, name);
      assert.match(r.stderr, /nothing was kept/, name);
      assert.equal(r.stdout, '', name);
    }
    assert.equal(await runs(), kept, 'no run was written');
    const missing = await runCli('reconcile', '--account', live.account_id, '--connector', 'adyen', '--file', path.join(gw.dir, 'nope.csv'));
    assert.deepEqual([missing.code, missing.stderr.trim()], [1, `error: no file "${path.join(gw.dir, 'nope.csv')}"`]);
    assert.equal((await runCli('reconcile', '--account', live.account_id, '--connector', 'paypal', '--file', 'x')).code, 2);
  });
});
