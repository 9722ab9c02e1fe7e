// The operator's tool through a real process (decisions §13).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ENGINE } from '../test/harness.js';
import { cli, createMerchant, type FreshDatabase, freePort, freshDatabase, gatewayEnv } from '../test/process.js';

let db: FreshDatabase;
let env: NodeJS.ProcessEnv;
before(async () => {
  db = await freshDatabase(ENGINE, 'cli');
  env = gatewayEnv(db, await freePort());
});
after(async () => {
  await db.drop();
});

const ok = (args: string[]) => {
  const r = cli(env, args);
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};

test('merchant create --json prints ids and secrets; key rotation, IP lists and migrate work', () => {
  const m = createMerchant(env, 'CLI test', ['--mode', 'test', '--allow-ip', '10.1.0.0/16']);
  assert.match(m.merchant_id, /^\d+$/);
  assert.match(m.account_id, /^\d+$/);
  assert.match(m.secret_key, /^[0-9a-f]{48}$/);
  assert.match(m.webhook_secret, /^whsec_/);
  assert.deepEqual([...m.allowed_ips].sort(), ['10.1.0.0/16', '127.0.0.1/32']);

  const rotated = JSON.parse(ok(['key', 'rotate', '--account', m.account_id, '--json'])) as { secret_key: string };
  assert.notEqual(rotated.secret_key, m.secret_key);
  assert.match(ok(['key', 'retire', '--account', m.account_id]), /retired 1 key/);

  assert.match(ok(['ip', 'add', '--account', m.account_id, '192.0.2.7']), /added 192\.0\.2\.7\/32/);
  assert.match(ok(['ip', 'remove', '--account', m.account_id, '10.1.0.0/16']), /removed/);
  assert.deepEqual(ok(['ip', 'list', '--account', m.account_id]).trim().split('\n').sort(), ['127.0.0.1/32', '192.0.2.7/32']);
  assert.match(ok(['merchant', 'list']), new RegExp(`${m.merchant_id}\\t${m.account_id}\\ttest`));
  assert.match(ok(['migrate']), /up to date/);
});

test('bad arguments exit non-zero with a usage line', () => {
  const bad = cli(env, ['merchant', 'create', '--mode', 'sideways', '--name', 'x']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--mode must be test or live/);
  const unknownAccount = cli(env, ['ip', 'add', '--account', '1', '10.0.0.1']);
  assert.equal(unknownAccount.status, 1);
  assert.match(unknownAccount.stderr, /account 1 does not exist/);
  const badCidr = createMerchant(env, 'CIDR');
  const r = cli(env, ['ip', 'add', '--account', badCidr.account_id, 'not-an-ip']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /not an IP address or CIDR range/);
});
