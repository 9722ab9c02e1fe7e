// `tollgate fx set|list` (docs/contract.md §17): the operator's rate table for payouts.
import { CommandError, command, out, UsageError } from '../command/registry.js';
import { formatRate } from './convert.js';
import { FxError, listRates, rateFor, setRate } from './rates.js';
import { PER_USD, SNAPSHOT_DATE } from './snapshot.js';

export const fxSetCommand = command({
  name: 'fx set',
  args: 'BASE QUOTE RATE',
  details: ["The pair set this way wins over its inverse and over the default snapshot; payouts apply the account's markup on top."],
  options: {},
  positionals: true,
  async run({ positionals, runtime }) {
    if (positionals.length !== 3) throw new UsageError('give BASE QUOTE RATE, e.g. EUR USD 1.0842');
    const [base, quote, rate] = positionals as [string, string, string];
    try {
      const r = await setRate((await runtime()).store, base, quote, rate, Date.now());
      out(`1 ${r.base} = ${formatRate(r.rate)} ${r.quote}`);
    } catch (e) {
      if (e instanceof FxError) throw new UsageError(e.message);
      throw e;
    }
  },
});

export const fxListCommand = command({
  name: 'fx list',
  args: '[BASE QUOTE] [--json]',
  options: { json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const db = (await runtime()).store.db;
    if (positionals.length === 2) {
      const [base, quote] = positionals as [string, string];
      const r = await rateFor(db, base, quote);
      if (!r) throw new CommandError(`no rate for ${base}/${quote}: set one with npx tollgate fx set ${base} ${quote} RATE`);
      const row = { base, quote, rate: formatRate(r.rate), source: r.source };
      return out(values.json ? JSON.stringify(row) : `1 ${base} = ${row.rate} ${quote} (${r.source})`);
    }
    if (positionals.length !== 0) throw new UsageError('give no pair, or BASE QUOTE');
    const rows = await listRates(db);
    if (values.json) return out(JSON.stringify(rows.map((r) => ({ ...r, updated_at: new Date(r.updated_at).toISOString() }))));
    if (rows.length === 0) out('no rates set by the operator');
    for (const r of rows) out(`1 ${r.base} = ${r.rate} ${r.quote}  (set ${new Date(r.updated_at).toISOString()})`);
    out(`other pairs: the default snapshot of ${SNAPSHOT_DATE} through USD (${Object.keys(PER_USD).length} currencies), not market data`);
  },
});
