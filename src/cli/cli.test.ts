// The operator's tool (docs/contract.md §13; issue 9): through a real process, and in-process for
// the checks that try every registered command.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ENGINE } from '../test/harness.js';
import { cli, createMerchant, type FreshDatabase, freePort, freshDatabase, gatewayEnv, MASTER_KEY, ROOT } from '../test/process.js';
import { loadAll } from './commands.js';
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

describe('a command loads only what it needs (issue 36 item 6: each took 2.8–5.5 s, mostly loading modules)', () => {
  // A module hook in the child names every file it loads (the CLI's own modules and the packages' entry points).
  let dir: string;
  let hook: string;
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-loads-'));
    fs.writeFileSync(
      path.join(dir, 'loader.mjs'),
      `export async function load(url, context, next) {\n  if (url.startsWith('file:')) process.stderr.write('loaded ' + url + '\\n');\n  return next(url, context);\n}\n`,
    );
    hook = path.join(dir, 'hook.mjs');
    fs.writeFileSync(hook, `import { register } from 'node:module';\nregister(new URL('./loader.mjs', import.meta.url));\n`);
  });
  const loads = (args: string[], input = ''): string[] => {
    const r = spawnSync(process.execPath, ['--import', hook, path.join(ROOT, 'bin/tollgate.js'), ...args], {
      env,
      cwd: ROOT,
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    // The CLI runs from its bundle (dist/bundle/, as shipped): each of its files loaded stands
    // for the modules in it (the bundle's modules.json), named as in dist/ and node_modules.
    const held = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
    const raw = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('loaded '))
      .map((l) => path.relative(ROOT, fileURLToPath(l.slice('loaded '.length))));
    assert.ok(raw.includes(path.join('dist', 'bundle', 'cli', 'run.js')), `bin/tollgate.js ran the bundle: ${r.stderr}`);
    const files = raw.flatMap((f) => {
      if (!f.startsWith(`dist${path.sep}bundle${path.sep}`)) return [f];
      const inside = held[path.relative(path.join('dist', 'bundle'), f)];
      assert.ok(inside, `${f} is in the bundle's modules.json`);
      return inside.map((m) => (m.startsWith('src/') ? path.join('dist', m.slice('src/'.length).replace(/\.ts$/, '.js')) : m));
    });
    assert.ok(
      files.some((f) => f.endsWith(path.join('cli', 'main.js'))),
      `the hook saw the CLI load: ${r.stderr}`,
    );
    return files;
  };
  const packages = (files: string[]) => new Set(files.filter((f) => f.includes('node_modules')).map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1]));
  // The HTTP application and what only the pages, the portal or the API document use.
  const server = ['fastify', '@fastify/swagger', 'swagger-ui-dist', 'pino', 'pino-pretty', 'marked', 'qrcode', '@node-rs/argon2', 'typebox'];

  test('help loads the command list only: no command module, no package', () => {
    const files = loads(['help']);
    const own = files.filter((f) => !f.includes('node_modules') && !f.startsWith('bin'));
    const allowed = ['cli/run', 'cli/main', 'cli/commands', 'cli/database', 'command/registry', 'config/index'];
    assert.deepEqual(
      own.filter((f) => !allowed.some((a) => f.endsWith(`${a}.js`))),
      [],
      'modules help loaded besides the list',
    );
    assert.deepEqual([...packages(files)], []);
  });

  test('sign and merchant list load neither the HTTP server nor, on SQLite, the PostgreSQL driver', () => {
    const sign = packages(loads(['sign', '--secret', 'abc'], '{"order_no":"A-1"}'));
    const list = packages(loads(['merchant', 'list']));
    for (const p of server) {
      assert.ok(!sign.has(p), `sign loaded ${p}`);
      assert.ok(!list.has(p), `merchant list loaded ${p}`);
    }
    assert.ok(!sign.has('kysely') && !sign.has('better-sqlite3') && !sign.has('pg'), `sign opened no database: ${[...sign]}`);
    // PostgreSQL's driver is loaded when a PostgreSQL store is opened (the embedded default needs only better-sqlite3).
    if (ENGINE === 'sqlite') assert.ok(!list.has('pg'), `merchant list on SQLite loaded pg: ${[...list]}`);
  });
});

describe('an unknown account', () => {
  test('is refused the same way by every command taking --account, malformed or unknown, and nothing runs', async () => {
    const taking = (await loadAll()).filter((c) => 'account' in c.options).map((c) => c.name);
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
