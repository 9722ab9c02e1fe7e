// `npx tollgate apikey create|list|revoke` (docs/contract.md §18): generic-interface keys per account.

import { ApiKeyError } from '../apikeys/service.js';
import { CommandError, command, need, out } from '../command/registry.js';

export const apikeyCreateCommand = command({
  name: 'apikey create',
  args: '--account ID [--name LABEL] [--json]',
  details: ['Several keys can be active at once; revoke one with "apikey revoke". --json prints { key_id, account_id, livemode, secret }.'],
  options: { account: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const rt = await runtime();
    let created: Awaited<ReturnType<typeof rt.apiKeys.create>>;
    try {
      created = await rt.apiKeys.create(account_id, values.name ?? '');
    } catch (e) {
      if (e instanceof ApiKeyError) throw new CommandError(e.message);
      throw e;
    }
    if (values.json) return out(JSON.stringify({ key_id: created.key_id, account_id, livemode: created.livemode, secret: created.secret }));
    out(`key_id  ${created.key_id}\nsecret  ${created.secret}`);
    out('The secret is shown once; store it now. Send it as: Authorization: Bearer <secret>');
  },
});

export const apikeyListCommand = command({
  name: 'apikey list',
  args: '--account ID [--json]',
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const rows = await (await runtime()).apiKeys.list(account_id);
    const shown = rows.map((r) => ({
      key_id: r.key_id,
      key: `sk_${r.livemode ? 'live' : 'test'}_…${r.last4}`,
      name: r.name,
      status: r.status,
      created_at: new Date(Number(r.created_at)).toISOString(),
      revoked_at: r.revoked_at === null ? null : new Date(Number(r.revoked_at)).toISOString(),
    }));
    if (values.json) return out(JSON.stringify(shown));
    for (const r of shown) out(`${r.key_id}\t${r.key}\t${r.status}\t${r.created_at}\t${r.name}`);
    if (shown.length === 0) out(`no keys yet: npx tollgate apikey create --account ${account_id}`);
  },
});

export const apikeyRevokeCommand = command({
  name: 'apikey revoke',
  args: '--account ID --key KEY_ID',
  options: { account: { type: 'string' }, key: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const key_id = need(values.key, '--key');
    const done = await (await runtime()).apiKeys.revoke(account_id, key_id);
    if (!done) throw new CommandError(`no active key ${JSON.stringify(key_id)} on account ${account_id} (npx tollgate apikey list --account ${account_id})`);
    out(`key ${key_id} revoked`);
  },
});
