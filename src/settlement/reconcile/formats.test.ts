// Reading report cells and lines (issue 35 item 3), without a database: amounts made into minor
// units by the currency's exponent and nothing else, times with their zone, the header found by
// name, and each processor's line types read as the movement Tollgate has for them (or none).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ADYEN_TYPES, adyenFormat } from './adyen.js';
import { amountCell, indexColumns, ReportError, timeCell } from './columns.js';
import type { ReportLine, TrackedLine } from './format.js';
import { BATCH_LINES, decodeBatch, encodeBatch, type FileFacts, MAX_RECORD_BYTES, parseReport } from './parse.js';
import { readReport } from './reader.js';
import { stripeFormat } from './stripe.js';

describe('amountCell: a decimal in the currency’s unit as minor units, never through a float', () => {
  const cases: Array<[text: string, currency: string, expected: number | null | 'refused']> = [
    ['10.00', 'EUR', 1000],
    ['10.5', 'EUR', 1050],
    ['10', 'EUR', 1000],
    ['-0.30', 'USD', -30],
    ['0.1', 'USD', 10],
    ['1200', 'JPY', 1200],
    ['1200.00', 'JPY', 1200],
    ['1.500', 'KWD', 1500],
    ['1000.00', 'ISK', 1000],
    ['15000', 'IDR', 1500000],
    ['', 'EUR', null],
    ['10.001', 'EUR', 'refused'],
    ['1200.5', 'JPY', 'refused'],
    ['1,000.00', 'EUR', 'refused'],
    ['10,00', 'EUR', 'refused'],
    ['1e3', 'EUR', 'refused'],
    ['€10', 'EUR', 'refused'],
    ['9999999999999999.99', 'EUR', 'refused'],
    // 0.1 + 0.2 is not 0.3 in floating point; here it is digits.
    ['0.29', 'EUR', 29],
    ['1234567890.12', 'EUR', 123456789012],
  ];
  for (const [text, currency, expected] of cases) {
    test(`${JSON.stringify(text)} ${currency} → ${expected}`, () => {
      if (expected === 'refused')
        assert.throws(
          () => amountCell(text, currency, 'Gross Credit (GC)', 7),
          (e: unknown) => e instanceof ReportError && e.line === 7 && /^line 7: Gross Credit \(GC\)/.test(e.message),
        );
      else assert.equal(amountCell(text, currency, 'x', 1), expected);
    });
  }
});

describe('timeCell: a report time in its zone, as UTC ms and the end of its precision', () => {
  test('to the second in CET and CEST; to the minute in UTC', () => {
    assert.deepEqual(timeCell('2026-05-01 10:00:00', 'CET', 'Creation Date', 2), { at_ms: Date.UTC(2026, 4, 1, 9), end_ms: Date.UTC(2026, 4, 1, 9) + 999 });
    assert.deepEqual(timeCell('2026-07-01 10:00:00', 'CEST', 'Creation Date', 2).at_ms, Date.UTC(2026, 6, 1, 8));
    assert.deepEqual(timeCell('2026-05-01 10:00', 'UTC', 'Created (UTC)', 2), { at_ms: Date.UTC(2026, 4, 1, 10), end_ms: Date.UTC(2026, 4, 1, 10) + 59_999 });
    assert.equal(timeCell('2026-05-01T10:00:00Z', 'utc', 'x', 2).at_ms, Date.UTC(2026, 4, 1, 10));
    assert.equal(timeCell('2026-05-01 10:00:00 +0000', 'UTC', 'x', 2).at_ms, Date.UTC(2026, 4, 1, 10));
    assert.equal(timeCell('2026-05-01 10:00:00', 'PST', 'x', 2).at_ms, Date.UTC(2026, 4, 1, 18));
  });
  test('refused, naming the line: another layout, an impossible date, a zone not in the table', () => {
    for (const [text, zone, why] of [
      ['01/05/2026 10:00', 'UTC', /is not a time written YYYY-MM-DD/],
      ['2026-02-30 10:00:00', 'UTC', /is not a real time/],
      ['2026-05-01 24:00:00', 'UTC', /is not a real time/],
      ['2026-05-01 10:00:00', 'IST', /time zone "IST" is not one Tollgate knows/],
    ] as const) {
      assert.throws(
        () => timeCell(text, zone, 'Creation Date', 12),
        (e: unknown) => e instanceof ReportError && e.line === 12 && why.test(e.message),
        text,
      );
    }
  });
});

describe('indexColumns: by name, in any order, extra columns ignored', () => {
  test('found by name whatever the case or surrounding spaces; absent optional columns are -1', () => {
    const at = indexColumns(['Extra', ' currency ', 'ID', 'type', 'source', 'AMOUNT', 'fee', 'Created (UTC)'], stripeFormat.columns, stripeFormat.title);
    assert.deepEqual([at.id, at.currency, at.type, at.amount, at.payment_intent, at.tx_meta], [2, 1, 3, 5, -1, -1]);
  });
  test('a missing required column, or one named twice, is refused on line 1 naming it', () => {
    assert.throws(
      () => indexColumns(['id', 'Type', 'Source', 'Amount', 'Fee', 'Created (UTC)'], stripeFormat.columns, stripeFormat.title),
      /^Error: line 1: not Stripe's balance transactions .*: the header row lacks the column "Currency"$/,
    );
    assert.throws(() => indexColumns(['id', 'id'], stripeFormat.columns, 't'), /line 1: the column "id" appears twice/);
  });
});

const ADYEN_HEADER = [
  'Company Account',
  'Merchant Account',
  'Psp Reference',
  'Merchant Reference',
  'Payment Method',
  'Creation Date',
  'TimeZone',
  'Type',
  'Modification Reference',
  'Gross Currency',
  'Gross Debit (GC)',
  'Gross Credit (GC)',
  'Exchange Rate',
  'Net Currency',
  'Net Debit (NC)',
  'Net Credit (NC)',
  'Commission (NC)',
  'Markup (NC)',
  'Scheme Fees (NC)',
  'Interchange (NC)',
  'Payment Method Variant',
  'Modification Merchant Reference',
  'Batch Number',
];
const adyenAt = indexColumns(ADYEN_HEADER, adyenFormat.columns, adyenFormat.title);
function adyenRow(o: Record<string, string>): string[] {
  return ADYEN_HEADER.map((h) => o[h] ?? '');
}

describe('Adyen settlement details lines', () => {
  const base = {
    'Psp Reference': '8815000000000001',
    'Merchant Reference': 'TX1',
    'Creation Date': '2026-05-01 10:00:00',
    TimeZone: 'CET',
    'Gross Currency': 'EUR',
    'Net Currency': 'EUR',
  };
  test('Settled is a capture by our transaction id: the gross credit, the four fee columns summed', () => {
    const l = adyenFormat.read(
      adyenRow({
        ...base,
        Type: 'Settled',
        'Modification Reference': '8825000000000001',
        'Gross Credit (GC)': '10.00',
        'Commission (NC)': '0.12',
        'Markup (NC)': '0.05',
        'Scheme Fees (NC)': '0.02',
        'Interchange (NC)': '0.20',
      }),
      adyenAt,
      5,
    ) as TrackedLine;
    assert.deepEqual(
      [l.line, l.movement, l.transaction_id, l.refund_id, l.refs, l.reference, l.amount_minor, l.currency, l.fee_minor, l.at_ms, l.ordinal],
      [5, 'capture', 'TX1', '', ['8815000000000001'], '8825000000000001', 1000, 'EUR', 39, Date.UTC(2026, 4, 1, 9), 1],
    );
  });
  test('Refunded is a refund by the Modification Merchant Reference (our refund id): the gross debit', () => {
    const l = adyenFormat.read(
      adyenRow({ ...base, Type: 'Refunded', 'Modification Reference': 'RF01', 'Modification Merchant Reference': 'TX1-01', 'Gross Debit (GC)': '4.00' }),
      adyenAt,
      6,
    ) as TrackedLine;
    assert.deepEqual([l.movement, l.transaction_id, l.refund_id, l.refs, l.amount_minor, l.fee_minor], ['refund', 'TX1', 'TX1-01', ['RF01'], 400, 0]);
  });
  test('chargebacks: the first and the second are the payment’s first and second dispute; a reversal is a win', () => {
    const kinds = ['Chargeback', 'SecondChargeback', 'ChargebackReversed', 'RefundedReversed'].map((Type) => {
      const l = adyenFormat.read(adyenRow({ ...base, Type, 'Gross Debit (GC)': '10.00' }), adyenAt, 2) as TrackedLine;
      return [Type, l.movement, l.ordinal];
    });
    assert.deepEqual(kinds, [
      ['Chargeback', 'dispute', 1],
      ['SecondChargeback', 'dispute', 2],
      ['ChargebackReversed', 'dispute_won', 1],
      ['RefundedReversed', 'refund_reversal', 1],
    ]);
  });
  test('a fee in another net currency is not compared; types Tollgate does not track are not applicable', () => {
    const l = adyenFormat.read(
      adyenRow({ ...base, Type: 'Settled', 'Gross Credit (GC)': '10.00', 'Net Currency': 'USD', 'Commission (NC)': '0.30' }),
      adyenAt,
      2,
    ) as TrackedLine;
    assert.equal(l.fee_minor, null);
    for (const Type of ['Fee', 'MerchantPayout', 'InvoiceDeduction', 'DepositCorrection', 'Balancetransfer', 'MiscCosts', 'PaymentCost']) {
      assert.equal(adyenFormat.read(adyenRow({ Type }), adyenAt, 3).movement, null, Type);
      assert.equal(ADYEN_TYPES[Type], undefined);
    }
  });
  test('a tracked line without an amount, with an empty Type, or in an unknown currency is refused naming the line', () => {
    assert.throws(
      () => adyenFormat.read(adyenRow({ ...base, Type: 'Settled' }), adyenAt, 9),
      /^Error: line 9: a Settled line has neither Gross Debit \(GC\) nor Gross Credit \(GC\)$/,
    );
    assert.throws(() => adyenFormat.read(adyenRow({ ...base }), adyenAt, 10), /line 10: the Type cell is empty/);
    assert.throws(
      () => adyenFormat.read(adyenRow({ ...base, Type: 'Settled', 'Gross Currency': 'EURO', 'Gross Credit (GC)': '1.00' }), adyenAt, 11),
      /line 11: Gross Currency "EURO" is not an ISO 4217 currency/,
    );
  });
});

const STRIPE_EXPORT = [
  'id',
  'Type',
  'Source',
  'Amount',
  'Fee',
  'Net',
  'Currency',
  'Created (UTC)',
  'Available On (UTC)',
  'Description',
  'Customer Facing Amount',
  'Customer Facing Currency',
  'transaction_id (metadata)',
];
const stripeAt = indexColumns(STRIPE_EXPORT, stripeFormat.columns, stripeFormat.title);
const stripeRow = (cells: string[]) => cells;

describe('Stripe balance transaction lines', () => {
  test('the Dashboard export: a charge by its transaction_id metadata; the fee in the settlement currency', () => {
    const l = stripeFormat.read(
      stripeRow(['txn_1', 'charge', 'ch_1', '10.00', '0.59', '9.41', 'eur', '2026-05-01 10:00', '2026-05-03 00:00', 'x', '', '', 'TX1']),
      stripeAt,
      2,
    ) as TrackedLine;
    assert.deepEqual(
      [l.movement, l.transaction_id, l.refs, l.reference, l.amount_minor, l.currency, l.fee_minor, l.at_ms, l.end_ms - l.at_ms],
      ['capture', 'TX1', ['ch_1'], 'ch_1', 1000, 'EUR', 59, Date.UTC(2026, 4, 1, 10), 59_999],
    );
  });
  test('converted by Stripe: the movement in the shopper’s currency, the settlement-currency fee not compared', () => {
    const l = stripeFormat.read(
      stripeRow(['txn_2', 'charge', 'ch_2', '11.73', '0.64', '11.09', 'usd', '2026-05-01 10:00', '', '', '10.00', 'eur', '']),
      stripeAt,
      3,
    ) as TrackedLine;
    assert.deepEqual([l.amount_minor, l.currency, l.fee_minor], [1000, 'EUR', null]);
  });
  test('refunds, disputes (an adjustment of a du_ source: out opens, back is won) and types not tracked', () => {
    const read = (type: string, source: string, amount: string) =>
      stripeFormat.read(stripeRow(['txn', type, source, amount, '0.00', amount, 'eur', '2026-05-01 10:00', '', '', '', '', '']), stripeAt, 4);
    assert.deepEqual(
      [
        read('refund', 're_1', '-4.00'),
        read('adjustment', 'du_1', '-10.00'),
        read('adjustment', 'du_1', '10.00'),
        read('adjustment', 'adj_1', '-1.00'),
        read('payout', 'po_1', '-90.00'),
        read('stripe_fee', '', '-2.00'),
      ].map((l) => [l.movement, 'amount_minor' in l ? l.amount_minor : null, 'refs' in l ? l.refs : null]),
      [
        ['refund', 400, ['re_1']],
        ['dispute', 1000, ['du_1']],
        ['dispute_won', 1000, ['du_1']],
        [null, null, null],
        [null, null, null],
        [null, null, null],
      ],
    );
  });
  test('an itemised balance report (Reports API) reads the same, its metadata columns and PaymentIntent included', () => {
    const header = [
      'balance_transaction_id',
      'created_utc',
      'currency',
      'gross',
      'fee',
      'net',
      'reporting_category',
      'source_id',
      'payment_intent_id',
      'payment_metadata[transaction_id]',
      'refund_metadata[refund_id]',
    ];
    const at = indexColumns(header, stripeFormat.columns, stripeFormat.title);
    const l = stripeFormat.read(
      ['txn_3', '2026-05-01 10:00:00', 'eur', '-4.00', '0.00', '-4.00', 'refund', 're_3', 'pi_3', 'TX3', 'TX3-01'],
      at,
      2,
    ) as TrackedLine;
    assert.deepEqual(
      [l.movement, l.transaction_id, l.refund_id, l.refs, l.amount_minor, l.end_ms - l.at_ms],
      ['refund', 'TX3', 'TX3-01', ['re_3', 'pi_3'], 400, 999],
    );
  });
});

describe('parseReport and readReport: lines counted as the file has them, batches, the file’s hash', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-parse-'));
  const header = 'id,Type,Source,Amount,Fee,Currency,Created (UTC),Description';
  const charge = (n: number, description = 'x') => `txn_${n},charge,ch_${n},10.00,0.59,usd,2026-05-01 10:00,${description}`;
  const file = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  async function all(f: string, read: 'parse' | 'thread' = 'parse'): Promise<{ lines: ReportLine[]; facts: FileFacts }> {
    const facts: FileFacts = { bytes: 0, sha256: '', lines: 0 };
    const lines: ReportLine[] = [];
    const batches = read === 'parse' ? parseReport(f, stripeFormat, facts) : readReport(f, 'stripe', facts);
    for await (const b of batches) {
      assert.ok(b.length <= BATCH_LINES);
      lines.push(...b);
    }
    return { lines, facts };
  }

  test('a quoted cell over three lines, blank lines, CRLF: each line named where it is; a bad value after them too', async () => {
    const text = [header, charge(1, '"two\nlines"'), '', charge(2, '"a\r\nb\r\nc"'), charge(3), ''].join('\r\n');
    const { lines, facts } = await all(file('lines.csv', text));
    assert.deepEqual(
      lines.map((l) => l.line),
      [3, 7, 8],
    );
    assert.deepEqual([facts.lines, facts.bytes], [3, Buffer.byteLength(text)]);
    assert.equal(facts.sha256, (await import('node:crypto')).createHash('sha256').update(text).digest('hex'));
    const bad = [header, charge(1, '"two\nlines"'), '', charge(2).replace('10.00', '10.0.0')].join('\n');
    await assert.rejects(all(file('bad.csv', bad)), /^Error: line 5: Amount "10.0.0" is not an amount in USD/);
  });

  test('1,201 lines come in batches of 500 through the reader’s thread, in order, the same as parsed here', async () => {
    const text = `${[header, ...Array.from({ length: 1201 }, (_, i) => charge(i + 1))].join('\n')}\n`;
    const f = file('many.csv', text);
    const here = await all(f);
    const there = await all(f, 'thread');
    assert.equal(there.lines.length, 1201);
    assert.deepEqual(there.lines, here.lines);
    assert.deepEqual(there.facts, here.facts);
    assert.deepEqual(decodeBatch(encodeBatch(here.lines)), here.lines, 'a batch crosses threads unchanged');
  });

  test('refused on the reader’s thread as here, naming the line: a row too long, a quote never closed, an empty file', async () => {
    const huge = [header, charge(1), charge(2, `"${'x'.repeat(MAX_RECORD_BYTES + 10)}"`)].join('\n');
    await assert.rejects(all(file('huge.csv', huge), 'thread'), (e: unknown) => e instanceof ReportError && e.line === 3 && /Max Record Size/.test(e.message));
    await assert.rejects(
      all(file('open.csv', `${header}\n${charge(1)}\n${charge(2, '"never closed')}\n`), 'thread'),
      /^Error: line 3: the file is not well-formed CSV: Quote Not Closed/,
    );
    await assert.rejects(all(file('empty.csv', ''), 'thread'), /^Error: line 1: the file is empty/);
    await assert.rejects(all(path.join(dir, 'absent.csv'), 'thread'), /ENOENT/);
  });
});
