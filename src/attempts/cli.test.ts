// The operator's processor commands (docs/contract.md §21) through the real CLI entry point
// against the test gateway's database: set, list, show, remove, status; credentials never
// printed or stored in clear; every change audited; bad settings refused with nothing written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const cli = async (...args: string[]) => {
  const r = await runCli(...args);
  // `json`: standard output alone, where --json writes (standard error may carry a warning of the process's, once).
  return { code: r.code, out: r.stdout + r.stderr, json: r.stdout };
};

const SECRET = 'whsec_very_secret_value_9f3k';

test('processor set/list/show/status/remove: the webhook address printed, credentials by their last four only, audited', async () => {
  const account = gw.merchant.account_id;
  const set = await cli(
    'processor',
    'set',
    '--account',
    account,
    '--connector',
    'sandbox',
    '--priority',
    '2',
    '--currencies',
    'usd,EUR',
    '--credential',
    `webhook_secret=${SECRET}`,
  );
  assert.equal(set.code, 0, set.out);
  assert.match(set.out, /webhook address to register at the provider: http.*\/hooks\/sandbox\/prc_/);
  assert.match(set.out, /credential webhook_secret ••••9f3k/);
  assert.ok(!set.out.includes(SECRET));
  const [row] = await gw.runtime.store.db.selectFrom('processors').selectAll().where('account_id', '=', account).execute();
  assert.ok(row);
  assert.ok(!JSON.stringify(row).includes(SECRET), 'stored encrypted');
  assert.equal(row.currencies, 'USD,EUR');

  const shown = JSON.parse((await cli('processor', 'show', '--account', account, '--connector', 'sandbox', '--json')).json);
  assert.deepEqual([shown.processor_id, shown.priority, shown.credentials], [row.processor_id, 2, { webhook_secret: '••••9f3k' }]);
  const listed = JSON.parse((await cli('processor', 'list', '--account', account, '--json')).json);
  assert.equal(listed.length, 1);
  const status = await cli('processor', 'status', '--account', account);
  assert.equal(status.code, 0, status.out);
  assert.match(status.out, /notifications that matched no attempt: 0/);

  // Changed: what is not given again is kept.
  assert.equal((await cli('processor', 'set', '--account', account, '--connector', 'sandbox', '--priority', '3')).code, 0);
  const again = JSON.parse((await cli('processor', 'show', '--account', account, '--id', row.processor_id, '--json')).json);
  assert.deepEqual([again.priority, again.credentials], [3, { webhook_secret: '••••9f3k' }]);

  const removed = await cli('processor', 'remove', '--account', account, '--connector', 'sandbox');
  assert.equal(removed.code, 0, removed.out);
  assert.equal((await gw.runtime.store.db.selectFrom('processors').selectAll().where('account_id', '=', account).execute()).length, 0);
  const audited = await gw.runtime.store.db
    .selectFrom('portal_audit')
    .select(['action', 'target'])
    .where('merchant_id', '=', gw.merchant.merchant_id)
    .where('action', 'like', 'processor.%')
    .orderBy('audit_id')
    .execute();
  assert.deepEqual(
    audited.map((a) => a.action),
    ['processor.set', 'processor.set', 'processor.remove'],
  );
  assert.ok(audited.every((a) => a.target === row.processor_id));
});

test('processor set refuses what it cannot use, naming it, and writes nothing', async () => {
  const account = gw.merchant.account_id;
  const cases: Array<[string[], RegExp]> = [
    [['--connector', 'paypal'], /--connector must be one of sandbox, adyen, stripe/],
    [['--connector', 'adyen', '--credential', 'api_key=x'], /the adyen connector needs --credential merchant_account=/],
    [['--connector', 'sandbox', '--credential', 'secret_key=x'], /takes api_key, webhook_secret/],
    [['--connector', 'sandbox', '--credential', 'novalue'], /NAME=VALUE/],
    [['--connector', 'sandbox', '--currencies', 'XYZ'], /XYZ is not a currency/],
    [['--connector', 'sandbox', '--priority=-1'], /--priority must be a whole number/],
    [['--connector', 'sandbox', '--brands', 'visa,<script>'], /is not a card brand name/],
  ];
  for (const [args, message] of cases) {
    const r = await cli('processor', 'set', '--account', account, ...args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.out, message, args.join(' '));
  }
  assert.equal((await gw.runtime.store.db.selectFrom('processors').selectAll().where('account_id', '=', account).execute()).length, 0);
  const unknown = await cli('processor', 'set', '--account', 'nope', '--connector', 'sandbox');
  assert.notEqual(unknown.code, 0);
});

test('processor reencrypt: after a master key rotation the credentials are sealed under the new key, which alone then reads them; audited', async () => {
  const m = await gw.newMerchant({ name: 'Rotating' });
  assert.equal((await cli('processor', 'set', '--account', m.account_id, '--connector', 'sandbox', '--credential', `webhook_secret=${SECRET}`)).code, 0);
  const NEW_KEY = `rotated2:${Buffer.alloc(32, 7).toString('base64')}`;
  useDatabase(gw.database_url, `${NEW_KEY},${TEST_MASTER_KEY}`);
  try {
    const done = await cli('processor', 'reencrypt');
    assert.equal(done.code, 0, done.out);
    assert.match(done.out, /^[1-9]\d* of \d+ processors' credentials sealed anew under master key rotated2/m);
    const rows = await gw.runtime.store.db.selectFrom('processors').select(['credentials_enc']).execute();
    for (const r of rows) assert.match(r.credentials_enc, /^v1\.rotated2\./);
    assert.match((await cli('processor', 'reencrypt')).out, /^0 of \d+ /m, 'a second run has nothing to do');
    useDatabase(gw.database_url, NEW_KEY);
    // The JSON is standard output alone: standard error may carry a line of the in-process gateway's (CI saw one on PostgreSQL).
    const show = await runCli('processor', 'show', '--account', m.account_id, '--connector', 'sandbox', '--json');
    assert.equal(show.code, 0, show.stdout + show.stderr);
    const shown = (() => {
      try {
        return JSON.parse(show.stdout);
      } catch (e) {
        throw new Error(
          `processor show --json: ${(e as Error).message}; standard output ${JSON.stringify(show.stdout)}, standard error ${JSON.stringify(show.stderr)}`,
        );
      }
    })();
    assert.deepEqual(shown.credentials, { webhook_secret: '••••9f3k' });
    const audited = await gw.runtime.store.db.selectFrom('portal_audit').select(['action']).where('action', '=', 'processor.reencrypt').execute();
    assert.ok(audited.length >= 1);
  } finally {
    useDatabase(gw.database_url, TEST_MASTER_KEY);
  }
});
