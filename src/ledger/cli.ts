// Operator commands of the ledger: verify the books, show balances, set pricing (settlement: src/settlement).
import { command, need, out, UsageError } from '../command/registry.js';
import { formatAmount } from '../money/currency.js';
import { type AccountBalance, accountBalances, formatBalance } from './balances.js';
import { describePrice, listPricing, setPricing } from './pricing.js';
import { verifyLedger } from './verify.js';

export const ledgerVerifyCommand = command({
  name: 'ledger verify',
  args: '[--json]',
  options: { json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const report = await verifyLedger((await runtime()).store.db);
    if (values.json) out(JSON.stringify(report));
    else {
      out(
        `${report.postings} postings, ${report.entries} entries, ${report.payments} payments, ${report.disputes} disputes, ${report.batches} settlement batches, ${report.payouts} payouts, ${report.transfers} transfers checked`,
      );
      for (const p of report.problems) out(`PROBLEM ${p}`);
      out(report.ok ? 'ledger OK' : 'ledger NOT OK');
    }
    if (!report.ok) process.exitCode = 1;
  },
});

/** What each column of `balance` holds (src/ledger/README.md, chart of accounts). */
export const BALANCE_LEGEND: ReadonlyArray<readonly [column: string, meaning: string]> = [
  ['pending', "captured, net of fees, waiting for its day's settlement batch to become available (the account's delay, default T+1: `settlement delay`)"],
  ['available', "settled: the merchant's money; refunds are paid from it"],
  ['held', "authorised on shoppers' cards and not captured yet; not the merchant's money yet"],
  ['refunds_in_flight', 'refunds sent to a processor that has not answered yet'],
  ['fees', 'fees charged on captures and payouts so far; refunds do not give them back'],
  ['payouts_reserved', 'taken from available for payouts not paid yet (SCHEDULED, PROCESSING); back to available if one fails or is cancelled'],
];

/** The note on a row whose available figure is below zero: why, and what covers it. */
export function negativeAvailableNote(b: AccountBalance): string | null {
  if (b.available_minor >= 0) return null;
  const owed = formatAmount(-b.available_minor, b.currency);
  const cover =
    b.pending_minor >= -b.available_minor
      ? 'the pending money covers it when it settles'
      : `pending ${formatAmount(b.pending_minor, b.currency)} will not cover all of it`;
  // Two things take from available before captured money settles into it (§22: a dispute's amount and fee leave when it opens).
  return `below zero: refunds and disputes are taken from available while captured money is still pending settlement; the account owes ${owed} ${b.currency} (${cover}); payouts fail INSUFFICIENT_FUNDS until it is covered`;
}

function table(rows: string[][]): string[] {
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  // Text columns to the left, amounts to the right.
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  '));
}

export const balanceCommand = command({
  name: 'balance',
  args: '--account ID [--json]',
  details: BALANCE_LEGEND.map(([column, meaning]) => `${column.padEnd(18)} ${meaning}`),
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const balances = await accountBalances((await runtime()).store.db, need(values.account, '--account'));
    if (values.json) return out(JSON.stringify(balances.map(formatBalance)));
    if (balances.length === 0) return out('no money has moved on this account yet');
    const header = ['currency', ...BALANCE_LEGEND.map(([column]) => column)];
    const rows = balances.map((b) => {
      const f = formatBalance(b);
      return [f.currency, f.pending, f.available, f.held, f.refunds_in_flight, f.fees, f.payouts_reserved] as string[];
    });
    const lines = table([header, ...rows]);
    out(lines[0]);
    balances.forEach((b, i) => {
      const note = negativeAvailableNote(b);
      out(note ? `${lines[i + 1]}   <- ${note}` : lines[i + 1]);
    });
    out();
    for (const [column, meaning] of BALANCE_LEGEND) out(`${column.padEnd(18)} ${meaning}`);
  },
});

export const pricingSetCommand = command({
  name: 'pricing set',
  args: '--account ID --currency USD --percent 2.9 --fixed 0.30',
  options: { account: { type: 'string' }, currency: { type: 'string' }, percent: { type: 'string' }, fixed: { type: 'string' } },
  async run({ values, runtime }) {
    const input = {
      account_id: need(values.account, '--account'),
      currency: need(values.currency, '--currency'),
      percent: need(values.percent, '--percent'),
      fixed: need(values.fixed, '--fixed'),
    };
    const r = await runtime();
    let p: Awaited<ReturnType<typeof setPricing>>;
    try {
      p = await setPricing(r.store, input, Date.now());
    } catch (e) {
      // setPricing refuses values the operator typed (a bad percentage or currency).
      throw new UsageError((e as Error).message);
    }
    out(`pricing for account ${p.account_id}: ${describePrice(p)}`);
  },
});

export const pricingShowCommand = command({
  name: 'pricing show',
  args: '--account ID',
  options: { account: { type: 'string' } },
  async run({ values, runtime }) {
    const prices = await listPricing((await runtime()).store, need(values.account, '--account'));
    if (prices.length === 0) out('no pricing: captures carry no fee');
    for (const p of prices) out(describePrice(p));
  },
});
