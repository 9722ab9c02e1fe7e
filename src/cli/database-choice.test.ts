// Which database the operator's tool opens (issue 36 item 6): run from another folder it
// created a new database and master key there and then said "no account". Now every command
// that opens the database names it on standard error, a SQLite database (the default or a
// DATABASE_URL's) is created only by `serve` and `migrate`, a link says which address it was made of, and a DATABASE_URL
// without a master key says how to make one. Through the real process (compiled build), on
// the engine under test; the default database is SQLite on both runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadSettings } from '../config/index.js';
import { Keyring } from '../crypto/keyring.js';
import { ENGINE } from '../test/harness.js';
import { cli, createMerchant, type FreshDatabase, freePort, freshDatabase, gatewayEnv, MASTER_KEY, ROOT } from '../test/process.js';
import { describeDatabase } from './database.js';
import { runCli, useDatabase } from './testing.js';

/** The environment without any Tollgate setting: what a shell in another folder has. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TOLLGATE_') || k === 'DATABASE_URL' || k === 'HOST' || k === 'PORT') delete env[k];
  return { ...env, TOLLGATE_LOG_LEVEL: 'warn', ...extra };
}

function tollgate(env: NodeJS.ProcessEnv, args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), ...args], { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

let db: FreshDatabase;
let env: NodeJS.ProcessEnv;
/** The line naming the test's database, as the CLI prints it. */
let line: string;
before(async () => {
  db = await freshDatabase(ENGINE, 'dbchoice');
  env = gatewayEnv(db, await freePort());
  line = `database: ${db.file ?? db.url} (${db.file ? 'SQLite' : 'PostgreSQL'})\n`;
  const migrated = cli(env, ['migrate']);
  assert.equal(migrated.status, 0, migrated.stderr);
});
after(async () => {
  await db.drop();
});

describe('the database a command opens is named on standard error', () => {
  test('a SQLite file by its absolute path; a PostgreSQL URL without its password', () => {
    assert.equal(describeDatabase('sqlite:data/tollgate.db'), `${path.resolve('data/tollgate.db')} (SQLite)`);
    assert.equal(describeDatabase('sqlite:///srv/tg/tollgate.db'), '/srv/tg/tollgate.db (SQLite)');
    assert.equal(describeDatabase('postgres://tg:hunter2@db.internal:5432/tollgate'), 'postgres://tg@db.internal:5432/tollgate (PostgreSQL)');
    assert.equal(
      describeDatabase('postgresql://tg@db.internal/tollgate?password=hunter2&sslmode=require'),
      'postgresql://tg@db.internal/tollgate?sslmode=require (PostgreSQL)',
    );
  });

  test('on the engine under test: one line on stderr, --json output on stdout untouched', () => {
    const m = createMerchant(env, 'database line');
    const listed = cli(env, ['merchant', 'list', '--json']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal(listed.stderr, line);
    assert.ok((JSON.parse(listed.stdout) as { merchant_id: string }[]).some((x) => x.merchant_id === m.merchant_id));
    const balance = cli(env, ['balance', '--account', m.account_id]);
    assert.equal(balance.status, 0, balance.stderr);
    assert.equal(balance.stderr, line);
  });

  test('as the operator wrote it: a relative SQLite path made absolute, a PostgreSQL password left out', () => {
    const given =
      ENGINE === 'sqlite'
        ? { url: `sqlite:${path.basename(db.file as string)}`, cwd: db.dir }
        : { url: db.url.replace('postgres@', 'postgres:hunter2@'), cwd: ROOT }; // the test server trusts, so the password is ignored
    assert.notEqual(given.url, db.url);
    const r = tollgate({ ...env, DATABASE_URL: given.url }, ['merchant', 'list'], given.cwd);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, line);
    assert.ok(!r.stderr.includes('hunter2'));
  });

  test('help and sign open no database: no line, and neither loads a database driver or the HTTP server', () => {
    const help = tollgate(env, ['help']);
    assert.equal(help.status, 0);
    assert.equal(help.stderr, '');
    const loaded = (args: string[]) => {
      // require.cache lists the CommonJS packages an ES module imported: the drivers and fastify are CommonJS.
      const script = [
        "import { createRequire } from 'node:module';",
        `const { main } = await import(${JSON.stringify(path.join(ROOT, 'dist/cli/main.js'))});`,
        'const code = await main(process.argv.slice(2));',
        'const names = Object.keys(createRequire(import.meta.url).cache).map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(p)?.[1]);',
        "process.stderr.write('\\nLOADED ' + code + ' ' + [...new Set(names)].filter(Boolean).join(' ') + '\\n');",
      ].join('\n');
      // A file, not `-e`: SQLite's worker threads inherit the process's options, and `--input-type` refuses a file.
      const file = path.join(db.dir, 'loaded.mjs');
      fs.writeFileSync(file, script);
      const r = spawnSync(process.execPath, [file, ...args], { env, cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      const m = /\nLOADED (\d+) (.*)\n/.exec(r.stderr);
      assert.ok(m, r.stderr);
      assert.equal(m[1], '0', `${args.join(' ')}: ${r.stderr}`);
      return (m[2] as string).split(' ');
    };
    const heavy = ['pg', 'better-sqlite3', 'fastify'];
    const body = path.join(db.dir, 'body.json');
    fs.writeFileSync(body, '{"merchant_id":"10001","amount":"1.00"}');
    for (const args of [['help'], ['sign', '--secret', 'abc', '--file', body], ['merchant', '--help']])
      assert.deepEqual(
        heavy.filter((p) => loaded(args).includes(p)),
        [],
        args.join(' '),
      );
    // The check sees a driver when one is loaded.
    assert.ok(loaded(['merchant', 'list']).includes(ENGINE === 'sqlite' ? 'better-sqlite3' : 'pg'));
  });
});

describe('outside serve and migrate the embedded default database is not created', () => {
  let folder: string;
  before(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-shop-'));
  });
  after(() => {
    fs.rmSync(folder, { recursive: true, force: true });
  });

  test('run from another folder: refused, naming the file and how to make it; nothing is written', () => {
    const file = path.join(folder, 'data', 'tollgate.db');
    for (const args of [
      ['merchant', 'list'],
      ['merchant', 'create', '--name', 'Shop'],
      ['ledger', 'verify'],
      ['user', 'list', '--merchant', '10001'],
    ]) {
      const r = tollgate(bareEnv(), args, folder);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^error: no database at ${file.replace(/[.]/g, '\\.')}: this command does not create one`), args.join(' '));
      assert.match(r.stderr, /npx tollgate migrate/);
      assert.match(r.stderr, /TOLLGATE_DATA_DIR \(or DATABASE_URL\)/);
      assert.equal(fs.existsSync(path.join(folder, 'data')), false, `${args.join(' ')} created the data folder`);
    }
    const elsewhere = path.join(folder, 'gateway-data');
    const r = tollgate(bareEnv({ TOLLGATE_DATA_DIR: elsewhere }), ['merchant', 'list'], folder);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`no database at ${path.join(elsewhere, 'tollgate.db').replace(/[.]/g, '\\.')}`));
    assert.equal(fs.existsSync(elsewhere), false);
  });

  test('a DATABASE_URL naming a missing SQLite file: refused too, nothing written; migrate with it creates it', () => {
    const file = path.join(folder, 'elsewhere', 'shop.db');
    const given = bareEnv({ DATABASE_URL: `sqlite:${file}`, TOLLGATE_MASTER_KEY: `k1:${Buffer.alloc(32, 7).toString('base64')}` });
    const r = tollgate(given, ['merchant', 'list'], folder);
    assert.equal(r.status, 1, `${r.stdout}${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^error: no database at ${file.replace(/[.]/g, '\\.')} \\(DATABASE_URL\\): this command does not create one`));
    assert.match(r.stderr, /npx tollgate migrate/);
    assert.equal(fs.existsSync(path.join(folder, 'elsewhere')), false, 'the folder was created');
    const migrated = tollgate(given, ['migrate'], folder);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.equal(tollgate(given, ['merchant', 'list'], folder).status, 0);
  });

  test('migrate creates it (and the development key); then commands open it and say so', () => {
    const migrated = tollgate(bareEnv(), ['migrate'], folder);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.equal(migrated.stderr, `database: ${path.join(folder, 'data', 'tollgate.db')} (SQLite)\n`);
    assert.ok(fs.existsSync(path.join(folder, 'data', 'master.key')));
    const listed = tollgate(bareEnv(), ['merchant', 'list'], folder);
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal(listed.stderr, `database: ${path.join(folder, 'data', 'tollgate.db')} (SQLite)\n`);
  });

  test('a missing development key beside an existing database is not replaced by a new one', () => {
    const key = path.join(folder, 'data', 'master.key');
    const saved = fs.readFileSync(key);
    fs.rmSync(key);
    try {
      const r = tollgate(bareEnv(), ['merchant', 'list'], folder);
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, new RegExp(`^error: no master key at ${key.replace(/[.]/g, '\\.')} beside the database`));
      assert.match(r.stderr, /set TOLLGATE_MASTER_KEY/);
      assert.equal(fs.existsSync(key), false, 'no new key was written');
      // With the key given in the environment the file is not needed.
      const given = tollgate(bareEnv({ TOLLGATE_MASTER_KEY: saved.toString('utf8').trim() }), ['merchant', 'list'], folder);
      assert.equal(given.status, 0, given.stderr);
    } finally {
      fs.writeFileSync(key, saved, { mode: 0o600 });
    }
  });
});

describe('a link printed by the CLI says which address it was made of', () => {
  const saved = { PORT: process.env.PORT, HOST: process.env.HOST, TOLLGATE_PUBLIC_URL: process.env.TOLLGATE_PUBLIC_URL };
  let merchant_id: string;
  before(() => {
    merchant_id = createMerchant(env, 'links').merchant_id;
    useDatabase(db.url, MASTER_KEY);
    process.env.PORT = '8123';
    delete process.env.HOST;
    delete process.env.TOLLGATE_PUBLIC_URL;
  });
  after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  test('TOLLGATE_PUBLIC_URL unset: the default address, and a note to set it (on stderr, --json intact)', async () => {
    const r = await runCli('user', 'create', '--merchant', merchant_id, '--email', 'one@shop.example', '--role', 'owner');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /set-password link \(once, 72 h\): http:\/\/127\.0\.0\.1:8123\/portal\/setup\/[A-Za-z0-9_-]{40,}\n/);
    assert.match(r.notices, /^note: the link uses http:\/\/127\.0\.0\.1:8123, .*set TOLLGATE_PUBLIC_URL to it/m);
    const json = await runCli('user', 'create', '--merchant', merchant_id, '--email', 'two@shop.example', '--role', 'viewer', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.match((JSON.parse(json.stdout) as { set_password_link: string }).set_password_link, /^http:\/\/127\.0\.0\.1:8123\/portal\/setup\//);
    assert.match(json.notices, /TOLLGATE_PUBLIC_URL/);
    const reset = await runCli('user', 'reset', '--merchant', merchant_id, '--email', 'one@shop.example');
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.notices, /^note: the link uses http:\/\/127\.0\.0\.1:8123/m);
    // A command printing no link has no note.
    assert.doesNotMatch((await runCli('user', 'list', '--merchant', merchant_id)).notices, /note:/);
  });

  test('TOLLGATE_PUBLIC_URL set: the link is made of it, without a note (an empty one counts as unset)', async () => {
    assert.equal(loadSettings({ TOLLGATE_PUBLIC_URL: '', PORT: '8125' }).public_url, 'http://127.0.0.1:8125');
    process.env.TOLLGATE_PUBLIC_URL = 'https://pay.example.com/';
    try {
      const r = await runCli('user', 'create', '--merchant', merchant_id, '--email', 'three@shop.example', '--role', 'admin');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /: https:\/\/pay\.example\.com\/portal\/setup\/[A-Za-z0-9_-]{40,}\n/);
      assert.doesNotMatch(r.notices, /note:/);
    } finally {
      delete process.env.TOLLGATE_PUBLIC_URL;
    }
  });

  test('through the real process the note goes to standard error', () => {
    const r = cli({ ...env, PORT: '8124' }, ['user', 'create', '--merchant', merchant_id, '--email', 'four@shop.example', '--role', 'owner']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /http:\/\/127\.0\.0\.1:8124\/portal\/setup\//);
    assert.doesNotMatch(r.stdout, /TOLLGATE_PUBLIC_URL/);
    assert.match(r.stderr, /^note: the link uses http:\/\/127\.0\.0\.1:8124, .*TOLLGATE_PUBLIC_URL/m);
  });
});

test('a DATABASE_URL without TOLLGATE_MASTER_KEY: serve refuses and gives a command that makes a working key', () => {
  const noKey = { ...env };
  delete noKey.TOLLGATE_MASTER_KEY;
  const r = tollgate(noKey, ['serve']);
  assert.equal(r.status, 1, r.stdout);
  assert.match(r.stderr, /TOLLGATE_MASTER_KEY is required with a DATABASE_URL/);
  const command = /export TOLLGATE_MASTER_KEY="\$\((.+)\)"\n/.exec(r.stderr)?.[1];
  assert.ok(command, r.stderr);
  const made = spawnSync('sh', ['-c', command], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  const ring = Keyring.parse(made.stdout.trim());
  assert.equal(ring.active.key.length, 32);
  assert.equal(ring.decrypt(ring.encrypt('x')), 'x');
  // The CLI's other commands say the same.
  const list = tollgate(noKey, ['merchant', 'list']);
  assert.equal(list.status, 1);
  assert.match(list.stderr, /export TOLLGATE_MASTER_KEY=/);
});
