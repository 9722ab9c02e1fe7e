// `npx tollgate user …` (docs/contract.md §19): the operator makes the first user and hands over a
// one-time link; list, disable (sessions end), enable, reset (a new link, the lock lifted).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { PortalAgent, TEST_PASSWORD } from './testing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const tokenOf = (stdout: string) => /\/portal\/setup\/([A-Za-z0-9_-]+)/.exec(stdout)?.[1] ?? '';

test('create prints a link that sets the password once; list; disable ends the sessions; enable; reset opens a new link', async () => {
  const m = gw.merchant;
  const created = await runCli('user', 'create', '--merchant', m.merchant_id, '--email', 'Ops@Shop.example', '--role', 'owner');
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /ops@shop\.example, owner/);
  const token = tokenOf(created.stdout);
  assert.ok(token.length >= 40, created.stdout);
  const twice = await runCli('user', 'create', '--merchant', m.merchant_id, '--email', 'ops@shop.example', '--role', 'owner');
  assert.equal(twice.code, 1, `one user per e-mail: ${twice.stderr}`);
  assert.equal((await runCli('user', 'create', '--merchant', m.merchant_id, '--email', 'x@shop.example', '--role', 'root')).code, 2, 'roles are checked');
  assert.equal((await runCli('user', 'create', '--merchant', '99999', '--email', 'y@shop.example', '--role', 'viewer')).code, 1, 'the merchant must exist');

  const agent = new PortalAgent(gw);
  assert.equal((await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD })).status, 303);
  assert.equal(
    (await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email: 'ops@shop.example', password: TEST_PASSWORD }))
      .status,
    303,
  );
  assert.equal((await agent.get('/portal/profile')).status, 200);

  const list = await runCli('user', 'list', '--merchant', m.merchant_id, '--json');
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    JSON.parse(list.stdout).map((u: { email: string; status: string; totp: boolean }) => [u.email, u.status, u.totp]),
    [['ops@shop.example', 'active', false]],
  );

  assert.equal((await runCli('user', 'disable', '--merchant', m.merchant_id, '--email', 'ops@shop.example')).code, 0);
  assert.equal((await agent.get('/portal/profile')).status, 303, 'the session ended');
  assert.equal(
    (await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email: 'ops@shop.example', password: TEST_PASSWORD }))
      .status,
    401,
  );
  assert.equal((await runCli('user', 'enable', '--merchant', m.merchant_id, '--email', 'ops@shop.example')).code, 0);
  assert.equal(
    (await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email: 'ops@shop.example', password: TEST_PASSWORD }))
      .status,
    303,
  );

  const reset = await runCli('user', 'reset', '--merchant', m.merchant_id, '--email', 'ops@shop.example');
  assert.equal(reset.code, 0, reset.stderr);
  assert.equal((await agent.get('/portal/profile')).status, 303, 'a reset ends the sessions');
  assert.equal(
    (await agent.submit('/portal/signin', '/portal/signin', { merchant_id: gw.merchant.merchant_id, email: 'ops@shop.example', password: TEST_PASSWORD }))
      .status,
    401,
    'the old password is gone',
  );
  const again = tokenOf(reset.stdout);
  assert.notEqual(again, token);
  assert.equal((await agent.get(`/portal/setup/${token}`)).status, 404, 'the old link stays closed');
  assert.equal((await agent.get(`/portal/setup/${again}`)).status, 200);
  assert.equal((await runCli('user', 'disable', '--merchant', m.merchant_id, '--email', 'nobody@shop.example')).code, 1);
});

test('issue 29: an address used at one merchant can be a user at another; the commands name the merchant', async () => {
  const a = gw.merchant;
  const b = await gw.newMerchant();
  assert.equal((await runCli('user', 'create', '--merchant', a.merchant_id, '--email', 'both@shop.example', '--role', 'viewer')).code, 0);
  const atB = await runCli('user', 'create', '--merchant', b.merchant_id, '--email', 'both@shop.example', '--role', 'owner');
  assert.equal(atB.code, 0, atB.stderr);
  const again = await runCli('user', 'create', '--merchant', b.merchant_id, '--email', 'both@shop.example', '--role', 'owner');
  assert.equal(again.code, 1);
  assert.match(again.stderr, /this merchant has a user with the e-mail/);
  assert.equal((await runCli('user', 'disable', '--merchant', b.merchant_id, '--email', 'both@shop.example')).code, 0);
  const statusAt = (m: string) =>
    runCli('user', 'list', '--merchant', m, '--json').then(
      (r) => JSON.parse(r.stdout).find((u: { email: string; status: string }) => u.email === 'both@shop.example')?.status,
    );
  assert.equal(await statusAt(b.merchant_id), 'disabled');
  assert.equal(await statusAt(a.merchant_id), 'invited', 'only the named merchant’s user was disabled');
  assert.equal((await runCli('user', 'disable', '--email', 'both@shop.example')).code, 2, '--merchant is required');
});
