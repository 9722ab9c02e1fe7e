// Operator commands of the risk capability (docs/contract.md §10, §13).
import { asUsage, command, need, out, UsageError } from '../command/registry.js';
import { addToBlocklist, listBlocklist, parseBlocklistType, removeFromBlocklist, setThresholds, thresholdsFor } from './settings.js';

const TYPE = { type: { type: 'string' } } as const;

export const blocklistAddCommand = command({
  name: 'blocklist add',
  args: '--account ID --type card|email|ip|bin VALUE',
  options: { account: { type: 'string' }, ...TYPE },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    const type = asUsage(() => parseBlocklistType(values.type));
    const value = need(positionals[0], 'VALUE');
    const r = await runtime();
    const stored = await addToBlocklist(r.store, r.keyring, account, type, value, Date.now());
    out(`blocked ${type} ${type === 'card' ? `fingerprint ${stored}` : stored}`);
  },
});

export const blocklistRemoveCommand = command({
  name: 'blocklist remove',
  args: '--account ID --type card|email|ip|bin VALUE',
  options: { account: { type: 'string' }, ...TYPE },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    const type = asUsage(() => parseBlocklistType(values.type));
    const value = need(positionals[0], 'VALUE');
    const r = await runtime();
    const removed = await removeFromBlocklist(r.store, r.keyring, account, type, value);
    out(removed ? `removed ${type}` : `${type} was not on the blocklist`);
  },
});

export const blocklistListCommand = command({
  name: 'blocklist list',
  args: '--account ID [--type card|email|ip|bin] [--json]',
  options: { account: { type: 'string' }, ...TYPE, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account = need(values.account, '--account');
    const type = values.type ? asUsage(() => parseBlocklistType(values.type)) : undefined;
    const rows = await listBlocklist((await runtime()).store, account, type);
    if (values.json) return out(JSON.stringify(rows.map((r) => ({ type: r.type, value: r.value, created_at: new Date(Number(r.created_at)).toISOString() }))));
    for (const r of rows) out(`${r.type}\t${r.value}\t${new Date(Number(r.created_at)).toISOString()}`);
  },
});

export const riskThresholdsCommand = command({
  name: 'risk thresholds',
  args: '--account ID [--review N --reject N]',
  details: ['Without --review and --reject it prints the current ones.'],
  options: { account: { type: 'string' }, review: { type: 'string' }, reject: { type: 'string' } },
  async run({ values, runtime }) {
    const account = need(values.account, '--account');
    const r = await runtime();
    if (values.review !== undefined || values.reject !== undefined) {
      const review = Number(need(values.review, '--review'));
      const reject = Number(need(values.reject, '--reject'));
      try {
        await setThresholds(r.store, account, { review, reject }, Date.now());
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
    }
    const t = await thresholdsFor(r.store.db, account);
    out(`account ${account}: REVIEW from ${t.review}, REJECT from ${t.reject}`);
  },
});
