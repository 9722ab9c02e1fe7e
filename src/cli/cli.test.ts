// The operator's tool (docs/contract.md §13; issue 9): through a real process, and in-process for
// the checks that try every registered command.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINE } from '../test/harness.js';
import { cli, createMerchant, type FreshDatabase, freePort, freshDatabase, gatewayEnv, MASTER_KEY } from '../test/process.js';
import { commands } from './main.js';
import { runCli, useDatabase } from './testing.js';

let db: FreshDatabase;
let env: NodeJS.ProcessEnv;
before(async () => {
  db = await freshDatabase(ENGINE, 'cli');
  env = gatewayEnv(db, await freePort());
  useDatabase(db.url, MASTER_KEY);
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
  // The database line first (issue 36 item 6), then the refusal.
  assert.equal(
    unknownAccount.stderr,
    `database: ${db.file ?? db.url} (${db.file ? 'SQLite' : 'PostgreSQL'})\nerror: no account "1" (npx tollgate merchant list shows the accounts)\n`,
  );
  for (const [args, words] of [
    [['merchant', 'list', '--value', 'x'], 'unknown option --value'],
    [['ip', 'list', '--account'], '--account needs a value'],
    [['merchant', 'list', '--json=1'], '--json takes no value'],
  ] as const) {
    const r = cli(env, [...args]);
    assert.equal(r.status, 2, args.join(' '));
    assert.equal(r.stderr.split('\n')[0], words, args.join(' '));
  }
  const badCidr = createMerchant(env, 'CIDR');
  const r = cli(env, ['ip', 'add', '--account', badCidr.account_id, 'not-an-ip']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /not an IP address or CIDR range/);
});

const groups = [...new Set([...commands.keys()].filter((n) => n.includes(' ')).map((n) => n.split(' ')[0] as string))];
const words = (name: string) => name.split(' ');

describe('help everywhere', () => {
  test('the groups a newcomer tries exist', () => {
    for (const g of ['merchant', 'key', 'ip', 'events', 'blocklist', 'risk', 'pricing', 'ledger', 'webhook-secret']) assert.ok(groups.includes(g), g);
  });

  test('every command answers --help, -h and "help <command>" with its usage, exit 0', async () => {
    for (const name of commands.keys()) {
      for (const args of [
        [...words(name), '--help'],
        [...words(name), '-h'],
        ['help', ...words(name)],
        [...words(name), '--bogus', '--help'],
      ]) {
        const r = await runCli(...args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, '', args.join(' '));
        assert.ok(r.stdout.startsWith(`usage: npx tollgate ${name}`), `${args.join(' ')} printed: ${r.stdout}`);
      }
    }
  });

  test('every group alone, with --help and after "help" lists its commands, exit 0', async () => {
    for (const g of groups) {
      for (const args of [[g], [g, '--help'], [g, '-h'], ['help', g]]) {
        const r = await runCli(...args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        for (const name of commands.keys()) if (name.startsWith(`${g} `)) assert.ok(r.stdout.includes(`\n  ${name}`), `${args.join(' ')} lists ${name}`);
      }
    }
  });

  test('top-level help lists the groups and every command; an unknown one exits 2 with the help', async () => {
    for (const args of [[], ['help'], ['--help'], ['-h']]) {
      const r = await runCli(...args);
      assert.equal(r.code, 0);
      for (const g of groups) assert.ok(r.stdout.includes(g));
      for (const name of commands.keys()) assert.match(r.stdout, new RegExp(`^  ${name}  `, 'm'));
    }
    const unknown = await runCli('frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"[\s\S]*Commands:/);
    const unknownSub = await runCli('merchant', 'frobnicate');
    assert.equal(unknownSub.code, 2);
    assert.match(unknownSub.stderr, /no command "merchant frobnicate"[\s\S]*merchant create/);
  });

  test('through the real process: "merchant" and "merchant create --help" (found by a new user)', () => {
    const group = cli(env, ['merchant']);
    assert.equal(group.status, 0, group.stderr);
    assert.match(group.stdout, /merchant create --name NAME/);
    assert.match(group.stdout, /merchant list/);
    const one = cli(env, ['merchant', 'create', '--help']);
    assert.equal(one.status, 0, one.stderr);
    assert.match(one.stdout, /^usage: npx tollgate merchant create --name NAME/);
  });
});

describe('an unknown account', () => {
  const taking = [...commands.values()].filter((c) => 'account' in c.options).map((c) => c.name);

  test('is refused the same way by every command taking --account, malformed or unknown, and nothing runs', async () => {
    // The commands the issue named must be among them.
    for (const n of [
      'balance',
      'events list',
      'events replay',
      'blocklist list',
      'pricing show',
      'pricing set',
      'risk thresholds',
      'ip list',
      'key rotate',
      'key retire',
      'webhook-secret rotate',
    ])
      assert.ok(taking.includes(n), n);
    for (const name of taking) {
      for (const id of ['abc', '99999999', '', '1 OR 1=1']) {
        const r = await runCli(...words(name), '--account', id);
        assert.equal(r.code, 1, `${name} --account ${id}: ${r.stdout}${r.stderr}`);
        assert.equal(r.stderr, `error: no account ${JSON.stringify(id)} (npx tollgate merchant list shows the accounts)\n`, name);
        assert.equal(r.stdout, '', name);
      }
    }
    // Also with the command's other arguments given: the refusal comes first, nothing is written.
    const pricing = await runCli('pricing', 'set', '--account', 'abc', '--currency', 'USD', '--percent', '1', '--fixed', '0.10');
    assert.equal(pricing.code, 1);
    const list = await runCli('pricing', 'show', '--account', '99999999');
    assert.equal(list.code, 1);
  });

  test('a known account passes the check', async () => {
    const m = createMerchant(env, 'known');
    for (const name of ['balance', 'pricing show', 'blocklist list', 'risk thresholds', 'events list', 'ip list']) {
      const r = await runCli(...words(name), '--account', m.account_id);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    }
  });
});
