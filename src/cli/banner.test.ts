// The first-start banner (issue 29 item 3): the demo merchant's secrets and its signed curl
// go to a terminal only. Standard output that is a file or a pipe ends up in a log, so
// there the banner gives the ids and the commands that hand out a key instead.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadSettings, type Settings } from '../config/index.js';
import { createPgDatabase, ENGINE, TEST_MASTER_KEY } from '../test/harness.js';
import { bannerLines, startServer } from './serve.js';

/** Starts a gateway on a fresh database twice (first start, then a restart) and returns what each printed. */
async function firstAndSecondStart(tty: boolean): Promise<{ first: string; second: string; secrets: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-banner-'));
  const pg = ENGINE === 'postgres' ? await createPgDatabase() : null;
  const settings: Settings = {
    ...loadSettings({}),
    database_url: pg?.url ?? `sqlite:${path.join(dir, 'tollgate.db')}`,
    data_dir: dir,
    master_key: TEST_MASTER_KEY,
    log_level: 'silent',
    demo_merchant: true,
    worker_enabled: false,
    port: 0,
  };
  const printed: string[][] = [];
  let secrets: string[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const lines: string[] = [];
      printed.push(lines);
      const server = await startServer(settings, (l) => lines.push(l), { tty });
      const [demo] = await server.runtime.merchants.listMerchants();
      assert.ok(demo);
      const creds = await server.runtime.merchants.credentials(demo.merchant_id, demo.account_id, true);
      secrets = [...(creds?.secrets ?? []), creds?.webhook_secret ?? ''];
      await server.close();
    }
  } finally {
    await pg?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { first: (printed[0] ?? []).join('\n'), second: (printed[1] ?? []).join('\n'), secrets };
}

test('not a terminal: the demo merchant’s ids and how to get its keys, never a secret nor the signed curl', async () => {
  const { first, second, secrets } = await firstAndSecondStart(false);
  assert.equal(secrets.length, 2);
  for (const s of secrets) {
    assert.ok(s.length >= 16);
    assert.ok(!first.includes(s) && !second.includes(s), `a secret was printed:\n${first}`);
  }
  assert.doesNotMatch(first, /secret_key\s+\S{16}|encryption_data|curl/);
  assert.match(first, /merchant_id {5}\d+\n {2}account_id {6}(\d+)/);
  const account = /account_id {6}(\d+)/.exec(first)?.[1];
  assert.match(first, new RegExp(`npx tollgate key rotate --account ${account} `));
  assert.match(first, new RegExp(`npx tollgate webhook-secret rotate --account ${account} `));
  assert.match(second, new RegExp(`Demo test merchant: .*npx tollgate key rotate --account ${account}\\)`));
});

test('a terminal: the secrets and a signed curl, shown once', async () => {
  const { first, second, secrets } = await firstAndSecondStart(true);
  for (const s of secrets) assert.ok(first.includes(s), 'the secret is shown on the terminal');
  assert.match(first, /curl -s -X POST .*\/v1\/authorise .*encryption_data/);
  for (const s of secrets) assert.ok(!second.includes(s), 'only once');
});

test('the banner names the database as the CLI does: the absolute SQLite path, the PostgreSQL URL without its password (issue 36 item 6)', () => {
  const banner = (database_url: string) => bannerLines({ ...loadSettings({}), database_url })[0];
  assert.equal(banner('sqlite:./data/tollgate.db'), `Tollgate listening on http://127.0.0.1:8080 (database ${path.resolve('data/tollgate.db')}, SQLite)`);
  assert.equal(
    banner('postgres://tg:hunter2@db.internal:5432/tollgate'),
    'Tollgate listening on http://127.0.0.1:8080 (database postgres://tg@db.internal:5432/tollgate, PostgreSQL)',
  );
});
