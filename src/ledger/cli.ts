// Operator commands of the ledger: verify the books, show balances, set pricing; and the
// settlement task run inside `serve`.
import { parseArgs } from 'node:util';
import { commands, UsageError } from '../cli/registry.js';
import { backgroundTasks } from '../cli/serve.js';
import { intervalTask } from '../ops/interval-task.js';
import { accountBalances, formatBalance } from './balances.js';
import { describePrice, listPricing, setPricing } from './pricing.js';
import { settleDue, settlementDelayMs } from './settlement.js';
import { verifyLedger } from './verify.js';

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

function args<T extends Record<string, { type: 'string' | 'boolean' }>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function need(value: string | boolean | undefined, name: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${name} is required`);
  return value;
}

commands.set('ledger verify', {
  usage: 'ledger verify [--json]   (every posting and currency sums to zero; balances and payments agree with the postings)',
  async run(argv, rt) {
    const v = args(argv, { json: { type: 'boolean' } });
    const report = await verifyLedger((await rt()).store.db);
    if (v.json) out(JSON.stringify(report));
    else {
      out(`${report.postings} postings, ${report.entries} entries, ${report.payments} payments checked`);
      for (const p of report.problems) out(`PROBLEM ${p}`);
      out(report.ok ? 'ledger OK' : 'ledger NOT OK');
    }
    if (!report.ok) process.exitCode = 1;
  },
});

commands.set('balance', {
  usage: 'balance --account ID [--json]   (pending, available, held, refunds in flight, fees per currency)',
  async run(argv, rt) {
    const v = args(argv, { account: { type: 'string' }, json: { type: 'boolean' } });
    const rows = (await accountBalances((await rt()).store.db, need(v.account, '--account'))).map(formatBalance);
    if (v.json) return out(JSON.stringify(rows));
    if (rows.length === 0) return out('no money has moved on this account yet');
    out('currency  pending  available  held  refunds_in_flight  fees');
    for (const r of rows) out(`${r.currency}  ${r.pending}  ${r.available}  ${r.held}  ${r.refunds_in_flight}  ${r.fees}`);
  },
});

commands.set('pricing set', {
  usage: 'pricing set --account ID --currency USD --percent 2.9 --fixed 0.30   (fee charged at capture)',
  async run(argv, rt) {
    const v = args(argv, { account: { type: 'string' }, currency: { type: 'string' }, percent: { type: 'string' }, fixed: { type: 'string' } });
    const r = await rt();
    try {
      const p = await setPricing(
        r.store,
        {
          account_id: need(v.account, '--account'),
          currency: need(v.currency, '--currency'),
          percent: need(v.percent, '--percent'),
          fixed: need(v.fixed, '--fixed'),
        },
        Date.now(),
      );
      out(`pricing for account ${p.account_id}: ${describePrice(p)}`);
    } catch (e) {
      if (e instanceof UsageError) throw e;
      throw new UsageError((e as Error).message);
    }
  },
});

commands.set('pricing show', {
  usage: 'pricing show --account ID',
  async run(argv, rt) {
    const v = args(argv, { account: { type: 'string' } });
    const prices = await listPricing((await rt()).store, need(v.account, '--account'));
    if (prices.length === 0) out('no pricing: captures carry no fee');
    for (const p of prices) out(describePrice(p));
  },
});

backgroundTasks.push((rt) => {
  const delay = settlementDelayMs();
  return intervalTask('settlement', 60_000, () => settleDue(rt.store, rt.deps.now(), delay));
});
