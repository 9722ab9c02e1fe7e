// Operator commands of the risk capability (decisions §10, §13).
import { parseArgs } from 'node:util';
import { commands, UsageError } from '../cli/registry.js';
import { addToBlocklist, listBlocklist, parseBlocklistType, removeFromBlocklist, setThresholds, thresholdsFor } from './settings.js';

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function opts(args: string[]) {
  try {
    return parseArgs({
      args,
      options: { account: { type: 'string' }, type: { type: 'string' }, review: { type: 'string' }, reject: { type: 'string' }, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function need(v: string | undefined, name: string): string {
  if (!v) throw new UsageError(`${name} is required`);
  return v;
}

function usage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

commands.set('blocklist add', {
  usage: 'blocklist add --account ID --type card|email|ip|bin VALUE   (card numbers are stored only as a keyed fingerprint)',
  async run(args, rt) {
    const { values, positionals } = opts(args);
    const account = need(values.account, '--account');
    const type = usage(() => parseBlocklistType(values.type));
    const value = need(positionals[0], 'VALUE');
    const r = await rt();
    const stored = await addToBlocklist(r.store, r.keyring, account, type, value, Date.now());
    out(`blocked ${type} ${type === 'card' ? `fingerprint ${stored}` : stored}`);
  },
});

commands.set('blocklist remove', {
  usage: 'blocklist remove --account ID --type card|email|ip|bin VALUE',
  async run(args, rt) {
    const { values, positionals } = opts(args);
    const account = need(values.account, '--account');
    const type = usage(() => parseBlocklistType(values.type));
    const r = await rt();
    const removed = await removeFromBlocklist(r.store, r.keyring, account, type, need(positionals[0], 'VALUE'));
    out(removed ? `removed ${type}` : `${type} was not on the blocklist`);
  },
});

commands.set('blocklist list', {
  usage: 'blocklist list --account ID [--type card|email|ip|bin] [--json]',
  async run(args, rt) {
    const { values } = opts(args);
    const account = need(values.account, '--account');
    const type = values.type ? usage(() => parseBlocklistType(values.type)) : undefined;
    const rows = await listBlocklist((await rt()).store, account, type);
    if (values.json) return out(JSON.stringify(rows.map((r) => ({ type: r.type, value: r.value, created_at: new Date(Number(r.created_at)).toISOString() }))));
    for (const r of rows) out(`${r.type}\t${r.value}\t${new Date(Number(r.created_at)).toISOString()}`);
  },
});

commands.set('risk thresholds', {
  usage: 'risk thresholds --account ID [--review N --reject N]   (scores 0–100; without values prints the current ones)',
  async run(args, rt) {
    const { values } = opts(args);
    const account = need(values.account, '--account');
    const r = await rt();
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
