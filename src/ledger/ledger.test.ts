// The double-entry ledger (docs/style.md §6): balanced postings, fees, balances, settlement, the
// verification, the operator commands, and a property test over random operation
// sequences. On SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { expireDue } from '../payments/expiry.js';
import { DAY_MS, runSettlement } from '../settlement/batches.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { cancelBatch, captureBatch, item, type Paid, pay, refundBatch } from '../test/lifecycle.js';
import { accountBalances, formatBalance } from './balances.js';
import { computeFee, post, UnbalancedPosting } from './postings.js';
import { parsePercent, setPricing } from './pricing.js';
import { verifyLedger } from './verify.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

const balanceOf = async (account_id: string) => (await accountBalances(gw.runtime.store.db, account_id)).map(formatBalance);

describe('postings', () => {
  test('an unbalanced posting is refused and writes nothing', async () => {
    const before = await verifyLedger(gw.runtime.store.db);
    await assert.rejects(
      gw.runtime.store.transaction((tx) =>
        post(
          tx,
          {
            account_id: gw.merchant.account_id,
            currency: 'USD',
            reason: 'test',
            entries: [
              { ledger_account: 'merchant_available', amount_minor: 100 },
              { ledger_account: 'processor_clearing', amount_minor: -99 },
            ],
          },
          gw.clock.now,
        ),
      ),
      UnbalancedPosting,
    );
    assert.equal((await verifyLedger(gw.runtime.store.db)).postings, before.postings);
  });

  test('fees: basis points rounded half up, plus fixed, never above the amount', () => {
    const table: Array<[captured: number, bp: number, fixed: number, fee: number]> = [
      [1000, 290, 30, 59],
      [50, 290, 0, 1], // 1.45 → 1
      [50, 300, 0, 2], // 1.5 → 2
      [10, 0, 30, 10], // capped
      [1e15, 10_000, 0, 1e15], // no float overflow
      [0, 290, 30, 0],
    ];
    for (const [c, bp, fixed, fee] of table) assert.equal(computeFee(c, bp, fixed), fee, `${c} ${bp} ${fixed}`);
  });

  test('percent parsing without floats', () => {
    assert.equal(parsePercent('2.9'), 290);
    assert.equal(parsePercent('0.05'), 5);
    assert.equal(parsePercent('100'), 10_000);
    for (const bad of ['2.999', '-1', 'abc', '101']) assert.throws(() => parsePercent(bad));
  });
});

describe('balances through a payment’s life', () => {
  test('hold, partial capture with a fee, refund without the fee back, settlement', async () => {
    const m = await gw.newMerchant();
    await setPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
    const p = await pay(gw, { manual: true, amount: '20.00', merchant: m });
    assert.deepEqual(await balanceOf(m.account_id), [
      { currency: 'USD', pending: '0.00', available: '0.00', held: '20.00', refunds_in_flight: '0.00', fees: '0.00', payouts_reserved: '0.00' },
    ]);
    await captureBatch(gw, [item(p, { amount: '10.00' })], m);
    // 10.00 captured, 0.59 fee (2.9% + 0.30), 10.00 of the hold released.
    assert.deepEqual(await balanceOf(m.account_id), [
      { currency: 'USD', pending: '9.41', available: '0.00', held: '0.00', refunds_in_flight: '0.00', fees: '0.59', payouts_reserved: '0.00' },
    ]);
    await refundBatch(gw, [item(p, { refund_amount: '1.00' })], m);
    assert.deepEqual((await balanceOf(m.account_id))[0]?.available, '-1.00');
    gw.clock.advance(DAY_MS);
    assert.ok((await runSettlement(gw.runtime.store, gw.clock.now)).settled >= 2);
    assert.deepEqual(await balanceOf(m.account_id), [
      { currency: 'USD', pending: '0.00', available: '8.41', held: '0.00', refunds_in_flight: '0.00', fees: '0.59', payouts_reserved: '0.00' },
    ]);
    assert.equal((await runSettlement(gw.runtime.store, gw.clock.now)).settled, 0, 'nothing settles twice');
    assert.deepEqual((await verifyLedger(gw.runtime.store.db)).problems, []);
  });

  test('currencies are kept apart (JPY has no minor digits)', async () => {
    const m = await gw.newMerchant();
    await pay(gw, { currency: 'JPY', amount: '1200', merchant: m });
    await pay(gw, { currency: 'USD', amount: '1.00', merchant: m });
    const b = await balanceOf(m.account_id);
    assert.deepEqual(
      b.map((x) => [x.currency, x.pending]),
      [
        ['JPY', '1200'],
        ['USD', '1.00'],
      ],
    );
  });
});

describe('ledger verify', () => {
  test('finds an unbalanced posting, a balance that disagrees, and a payment the ledger does not explain', async () => {
    const g = await testGateway();
    try {
      const p = await pay(g);
      assert.ok((await verifyLedger(g.runtime.store.db)).ok);
      await g.runtime.store.transaction(async (tx) => {
        await tx
          .updateTable('ledger_entries')
          .set({ amount_minor: 999 })
          .where('transaction_id', '=', p.transaction_id)
          .where('ledger_account', '=', 'merchant_pending')
          .execute();
      });
      const report = await verifyLedger(g.runtime.store.db);
      assert.equal(report.ok, false);
      const text = report.problems.join('\n');
      assert.match(text, /posting pst_\S+ sums to/);
      assert.match(text, /currency USD sums to/);
      assert.match(text, /balance \S+\/USD\/merchant_pending is 1000 but its entries sum to 999/);
      assert.match(text, new RegExp(`payment ${p.transaction_id}: captures post 999, the payment captured 1000`));
    } finally {
      await g.close();
    }
  });
});

describe('operator commands', () => {
  test('pricing set, balance and ledger verify', async () => {
    const { main } = await import('../cli/main.js');
    const saved = { DATABASE_URL: process.env.DATABASE_URL, TOLLGATE_MASTER_KEY: process.env.TOLLGATE_MASTER_KEY };
    process.env.DATABASE_URL = gw.database_url;
    process.env.TOLLGATE_MASTER_KEY = TEST_MASTER_KEY;
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const run = async (...argv: string[]) => {
      lines.length = 0;
      process.stdout.write = ((chunk: string) => {
        lines.push(String(chunk));
        return true;
      }) as typeof process.stdout.write;
      try {
        return await main(argv);
      } finally {
        process.stdout.write = write;
      }
    };
    try {
      const m = await gw.newMerchant();
      assert.equal(await run('pricing', 'set', '--account', m.account_id, '--currency', 'USD', '--percent', '2.9', '--fixed', '0.30'), 0);
      assert.match(lines.join(''), /USD: 2\.90% \+ 0\.30/);
      await pay(gw, { merchant: m, amount: '10.00' });
      assert.equal(await run('balance', '--account', m.account_id, '--json'), 0);
      assert.deepEqual(JSON.parse(lines.join('')), [
        { currency: 'USD', pending: '9.41', available: '0.00', held: '0.00', refunds_in_flight: '0.00', fees: '0.59', payouts_reserved: '0.00' },
      ]);
      assert.equal(await run('ledger', 'verify', '--json'), 0);
      assert.equal(JSON.parse(lines.join('')).ok, true);
      assert.equal(
        await run('pricing', 'set', '--account', m.account_id, '--currency', 'USD', '--percent', '2.9', '--fixed', '0.3'),
        2,
        'a fixed amount with the wrong digits is a usage error',
      );
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('property: random operation sequences keep the books right', () => {
  type Op =
    | { op: 'authorise'; manual: boolean; cents: number }
    | { op: 'capture'; i: number; permille: number }
    | { op: 'cancel'; i: number }
    | { op: 'refund'; i: number; cents: number }
    | { op: 'expire' }
    | { op: 'settle' };
  const authoriseArb = fc.record({ op: fc.constant('authorise' as const), manual: fc.boolean(), cents: fc.integer({ min: 1, max: 5000 }) });
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    authoriseArb,
    fc.record({ op: fc.constant('capture' as const), i: fc.nat(20), permille: fc.integer({ min: 1, max: 1000 }) }),
    fc.record({ op: fc.constant('cancel' as const), i: fc.nat(20) }),
    fc.record({ op: fc.constant('refund' as const), i: fc.nat(20), cents: fc.integer({ min: 1, max: 3000 }) }),
    fc.constant({ op: 'expire' as const }),
    fc.constant({ op: 'settle' as const }),
  );
  const usd = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

  test('after every run: ledger verify passes and refunded ≤ captured ≤ amount', async () => {
    const m = await gw.newMerchant();
    await setPricing(gw.runtime.store, { account_id: m.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
    await fc.assert(
      // Every run starts with a payment, so the other operations have something to act on.
      fc.asyncProperty(fc.tuple(authoriseArb, fc.array(opArb, { maxLength: 14 })), async ([first, rest]) => {
        const ops: Op[] = [first, ...rest];
        const paid: Array<Paid & { cents: number }> = [];
        for (const o of ops) {
          const p = paid.length ? paid[((o as { i?: number }).i ?? 0) % paid.length] : undefined;
          switch (o.op) {
            case 'authorise':
              paid.push({ ...(await pay(gw, { merchant: m, manual: o.manual, amount: usd(o.cents) })), cents: o.cents });
              break;
            case 'capture':
              if (p) await captureBatch(gw, [item(p, { amount: usd(Math.max(1, Math.floor((p.cents * o.permille) / 1000))) })], m);
              break;
            case 'cancel':
              if (p) await cancelBatch(gw, [item(p)], m);
              break;
            case 'refund':
              if (p) await refundBatch(gw, [item(p, { refund_amount: usd(o.cents) })], m);
              break;
            case 'expire':
              gw.clock.advance(8 * 24 * 3600 * 1000);
              await expireDue(gw.runtime.deps, gw.clock.now);
              break;
            case 'settle':
              gw.clock.advance(DAY_MS);
              await runSettlement(gw.runtime.store, gw.clock.now);
              break;
          }
        }
        const report = await verifyLedger(gw.runtime.store.db);
        assert.deepEqual(report.problems, []);
        const rows = await gw.runtime.store.db.selectFrom('payments').selectAll().where('account_id', '=', m.account_id).execute();
        for (const r of rows) {
          assert.ok(Number(r.refunded_minor) <= Number(r.captured_minor), `refunded ≤ captured for ${r.transaction_id}`);
          assert.ok(Number(r.captured_minor) <= Number(r.amount_minor), `captured ≤ amount for ${r.transaction_id}`);
          assert.ok(Number(r.authorised_minor) <= Number(r.amount_minor));
          if (['cancelled', 'expired', 'captured', 'refunded', 'partially_refunded', 'declined'].includes(r.status))
            assert.equal(Number(r.authorised_minor), 0);
        }
      }),
      { numRuns: 12 },
    );
    const seen = await gw.runtime.store.db.selectFrom('payments').select('status').where('account_id', '=', m.account_id).execute();
    assert.ok(seen.length >= 12, 'the runs made payments');
  });
});
