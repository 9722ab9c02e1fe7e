// The operator's tool through a real process (decisions §13).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cli, createMerchantCli, type Env, processEnv } from '../test/process.js';

let env: Env;
before(async () => {
  env = await processEnv();
});
after(async () => {
  await env.cleanup();
});

test('merchant create --json prints ids and secrets; key rotation, IP lists and migrate work', async () => {
  const m = await createMerchantCli(env.env, ['--mode', 'test', '--allow-ip', '10.1.0.0/16']);
  assert.match(m.merchant_id, /^\d+$/);
  assert.match(m.account_id, /^\d+$/);
  assert.match(m.secret_key, /^[0-9a-f]{48}$/);
  assert.match(m.webhook_secret, /^whsec_/);
  assert.deepEqual(m.allowed_ips.sort(), ['10.1.0.0/16', '127.0.0.1/32']);

  const rotated = JSON.parse(await cli(env.env, ['key', 'rotate', '--account', m.account_id, '--json'])) as { secret_key: string };
  assert.notEqual(rotated.secret_key, m.secret_key);
  assert.match(await cli(env.env, ['key', 'retire', '--account', m.account_id]), /retired 1 key/);

  assert.match(await cli(env.env, ['ip', 'add', '--account', m.account_id, '192.0.2.7']), /added 192\.0\.2\.7\/32/);
  assert.match(await cli(env.env, ['ip', 'remove', '--account', m.account_id, '10.1.0.0/16']), /removed/);
  assert.deepEqual((await cli(env.env, ['ip', 'list', '--account', m.account_id])).trim().split('\n').sort(), ['127.0.0.1/32', '192.0.2.7/32']);
  assert.match(await cli(env.env, ['merchant', 'list']), new RegExp(`${m.merchant_id}\\t${m.account_id}\\ttest`));
  assert.match(await cli(env.env, ['migrate']), /up to date/);
});

test('bad arguments exit non-zero with a usage line', async () => {
  await assert.rejects(cli(env.env, ['merchant', 'create', '--mode', 'sideways', '--name', 'x']), (e: { code?: number; stderr?: string }) => {
    assert.equal(e.code, 2);
    assert.match(String(e.stderr), /--mode must be test or live/);
    return true;
  });
  await assert.rejects(cli(env.env, ['ip', 'add', '--account', '1', 'not-an-ip']), /does not exist|not an IP/);
});
