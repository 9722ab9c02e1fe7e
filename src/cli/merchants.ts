// Operator commands for merchants and their accounts: create, list, keys, webhook secrets,
// IP allow-lists (docs/contract.md §2, §3, §13).
import { command, need, out, UsageError } from '../command/registry.js';

export const merchantCreateCommand = command({
  name: 'merchant create',
  args: '--name NAME [--mode test|live] [--allow-ip CIDR]... [--capture-method automatic|manual] [--json]',
  details: ['--json prints one JSON object (merchant_id, account_id, mode, secret_key, webhook_secret, allowed_ips).'],
  options: {
    name: { type: 'string' },
    mode: { type: 'string' },
    'allow-ip': { type: 'string', multiple: true },
    'capture-method': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, runtime }) {
    const mode = values.mode ?? 'test';
    if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
    const cm = values['capture-method'] ?? 'automatic';
    if (cm !== 'automatic' && cm !== 'manual') throw new UsageError('--capture-method must be automatic or manual');
    const name = need(values.name, '--name');
    const m = await (await runtime()).merchants.createMerchant({ name, mode, allow_ips: values['allow-ip'] ?? [], capture_method: cm });
    if (values.json) return out(JSON.stringify(m));
    out(
      `merchant_id     ${m.merchant_id}\naccount_id      ${m.account_id}\nmode            ${m.mode}\nsecret_key      ${m.secret_key}\nwebhook_secret  ${m.webhook_secret}\nallowed_ips     ${m.allowed_ips.join(', ') || '(none)'}`,
    );
    out('The secrets are shown once; store them now.');
  },
});

export const merchantListCommand = command({
  name: 'merchant list',
  args: '[--json]',
  options: { json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const rows = await (await runtime()).merchants.listMerchants();
    if (values.json) return out(JSON.stringify(rows));
    for (const r of rows) out(`${r.merchant_id}\t${r.account_id}\t${r.mode}\t${r.name}`);
    if (rows.length === 0) out('no merchants yet: npx tollgate merchant create --name NAME');
  },
});

export const keyRotateCommand = command({
  name: 'key rotate',
  args: '--account ID [--json]',
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account = need(values.account, '--account');
    const secret = await (await runtime()).merchants.rotateKey(account);
    if (values.json) return out(JSON.stringify({ account_id: account, secret_key: secret }));
    out(`secret_key ${secret}\nThe previous key is still accepted until: npx tollgate key retire --account ${account}`);
  },
});

export const keyRetireCommand = command({
  name: 'key retire',
  args: '--account ID',
  options: { account: { type: 'string' } },
  async run({ values, runtime }) {
    const n = await (await runtime()).merchants.retireKeys(need(values.account, '--account'));
    out(`retired ${n} key(s)`);
  },
});

export const webhookSecretRotateCommand = command({
  name: 'webhook-secret rotate',
  args: '--account ID',
  options: { account: { type: 'string' } },
  async run({ values, runtime }) {
    out(`webhook_secret ${await (await runtime()).merchants.rotateWebhookSecret(need(values.account, '--account'))}`);
  },
});

export const ipAddCommand = command({
  name: 'ip add',
  args: '--account ID CIDR...',
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    if (positionals.length === 0) throw new UsageError('give at least one CIDR');
    const r = await runtime();
    for (const p of positionals) out(`added ${await r.merchants.addIp(account, p)}`);
  },
});

export const ipRemoveCommand = command({
  name: 'ip remove',
  args: '--account ID CIDR...',
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    if (positionals.length === 0) throw new UsageError('give at least one CIDR');
    const r = await runtime();
    for (const p of positionals) out(`${(await r.merchants.removeIp(account, p)) ? 'removed' : 'not listed'} ${p}`);
  },
});

export const ipListCommand = command({
  name: 'ip list',
  args: '--account ID',
  options: { account: { type: 'string' } },
  async run({ values, runtime }) {
    for (const c of await (await runtime()).merchants.listIps(need(values.account, '--account'))) out(c);
  },
});
