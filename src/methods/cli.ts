// Operator commands of the payment-methods capability: switch alternative methods per
// account (docs/contract.md §13, §15). main.ts refuses an unknown --account before these run.

import { CommandError, command, type Input, need, out, UsageError } from '../command/registry.js';
import { APM_METHODS } from './catalogue.js';
import { enabledByDefault, methodSettings, setMethodsEnabled, UnknownMethodError } from './enablement.js';

const NAMES = APM_METHODS.map((m) => m.payment_method).join(', ');

const DETAILS = [
  `METHOD is one of the catalogue: ${NAMES}.`,
  'Without a choice, a test account offers every method and a live account none. Cards always apply.',
];

async function switchMethods(input: Input<{ account: { type: 'string' } }>, enabled: boolean): Promise<void> {
  const account = need(input.values.account, '--account');
  if (input.positionals.length === 0) throw new UsageError(`name at least one METHOD (${NAMES})`);
  const rt = await input.runtime();
  try {
    await setMethodsEnabled(rt.store, account, input.positionals, enabled, Date.now());
  } catch (e) {
    if (e instanceof UnknownMethodError) throw new UsageError(e.message);
    throw e;
  }
  for (const name of input.positionals) out(`${enabled ? 'enabled' : 'disabled'} ${name} for account ${account}`);
}

export const methodsEnableCommand = command({
  name: 'methods enable',
  args: '--account ID METHOD...',
  details: DETAILS,
  options: { account: { type: 'string' } },
  positionals: true,
  run: (input) => switchMethods(input, true),
});

export const methodsDisableCommand = command({
  name: 'methods disable',
  args: '--account ID METHOD...',
  details: DETAILS,
  options: { account: { type: 'string' } },
  positionals: true,
  run: (input) => switchMethods(input, false),
});

export const methodsListCommand = command({
  name: 'methods list',
  args: '--account ID [METHOD...] [--json]',
  details: DETAILS,
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account_id = need(values.account, '--account');
    for (const name of positionals) if (!APM_METHODS.some((m) => m.payment_method === name)) throw new UsageError(new UnknownMethodError(name).message);
    const rt = await runtime();
    const row = await rt.store.db.selectFrom('accounts').select(['account_id', 'mode']).where('account_id', '=', account_id).executeTakeFirst();
    if (!row) throw new CommandError(`no account "${account_id}"`); // main.ts refuses an unknown one first; kept for type narrowing
    const settings = (await methodSettings(rt.store.db, row)).filter((s) => positionals.length === 0 || positionals.includes(s.method.payment_method));
    const shown = settings.map((s) => ({
      payment_method: s.method.payment_method,
      enabled: s.enabled,
      source: s.source,
      currencies: [...s.method.currencies],
      countries: [...s.method.countries],
    }));
    if (values.json) return out(JSON.stringify(shown));
    for (const s of shown) {
      out(
        `${s.payment_method}\t${s.enabled ? 'on' : 'off'}\t${s.source === 'default' ? `(default for a ${row.mode} account)` : '(set)'}\t${s.currencies.join(',')}\t${s.countries.join(',')}`,
      );
    }
    if (!enabledByDefault(row.mode) && settings.every((s) => s.source === 'default'))
      out(`a live account offers none until: npx tollgate methods enable --account ${account_id} METHOD`);
  },
});
