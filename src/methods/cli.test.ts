// Goal: per-account enablement of alternative methods does what the operator is told. A
// test account offers every catalogue method until switched; a live account offers none
// until enabled; `npx tollgate methods enable|disable|list` switch and show them through the
// real CLI entry point (unknown accounts and methods refused, nothing written); and
// `enabledMethods` gives exactly the methods that are on AND take the currency AND serve the
// billing country.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli, useDatabase } from '../cli/testing.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { TEST_MASTER_KEY, type TestGateway, testGateway } from '../test/harness.js';
import { enabledMethods } from './enablement.js';

let gw: TestGateway;
let live: CreatedMerchant;
before(async () => {
  gw = await testGateway();
  live = await gw.newMerchant({ name: 'Live shop', mode: 'live' });
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await gw.close();
});

const cli = async (...args: string[]) => {
  const r = await runCli(...args);
  return { code: r.code, out: r.stdout, err: r.stderr };
};
const listed = async (account: string) => {
  const r = await cli('methods', 'list', '--account', account, '--json');
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as Array<{ payment_method: string; enabled: boolean; source: string }>).map((m) => [m.payment_method, m.enabled, m.source]);
};
const enabled = async (account_id: string, mode: 'test' | 'live', currency: string, country: string) =>
  (await enabledMethods(gw.runtime.store.db, { account_id, mode }, currency, country)).map((m) => m.payment_method);

test('defaults: a test account offers every method, a live account none (and is told how to enable)', async () => {
  assert.deepEqual(await listed(gw.merchant.account_id), [
    ['pix', true, 'default'],
    ['boleto', true, 'default'],
    ['ideal', true, 'default'],
  ]);
  assert.deepEqual(await listed(live.account_id), [
    ['pix', false, 'default'],
    ['boleto', false, 'default'],
    ['ideal', false, 'default'],
  ]);
  const text = await cli('methods', 'list', '--account', live.account_id);
  assert.match(text.out, /^pix\toff\t\(default for a live account\)\tBRL\tBR$/m);
  assert.match(text.out, /offers none until: npx tollgate methods enable --account \d+ METHOD/);
});

test('enabledMethods: enabled AND currency AND billing country', async () => {
  const table: Array<[string, string, string[]]> = [
    ['BRL', 'BR', ['pix', 'boleto']],
    ['EUR', 'NL', ['ideal']],
    ['BRL', 'NL', []],
    ['EUR', 'BR', []],
    ['USD', 'US', []],
  ];
  for (const [currency, country, methods] of table) {
    assert.deepEqual(await enabled(gw.merchant.account_id, 'test', currency, country), methods, `test ${currency} ${country}`);
    assert.deepEqual(await enabled(live.account_id, 'live', currency, country), [], `live ${currency} ${country}`);
  }
});

test('enable and disable switch methods per account, and the switch is what applies', async () => {
  const m = await gw.newMerchant();
  const off = await cli('methods', 'disable', '--account', m.account_id, 'boleto', 'ideal');
  assert.equal(off.code, 0, off.err);
  assert.match(off.out, /disabled boleto for account \d+\ndisabled ideal for account/);
  assert.deepEqual(await listed(m.account_id), [
    ['pix', true, 'default'],
    ['boleto', false, 'operator'],
    ['ideal', false, 'operator'],
  ]);
  assert.deepEqual(await enabled(m.account_id, 'test', 'BRL', 'BR'), ['pix']);
  assert.deepEqual(await enabled(m.account_id, 'test', 'EUR', 'NL'), []);

  assert.equal((await cli('methods', 'enable', '--account', m.account_id, 'ideal', 'ideal')).code, 0, 'a method named twice is one switch');
  assert.deepEqual(await enabled(m.account_id, 'test', 'EUR', 'NL'), ['ideal']);

  assert.equal((await cli('methods', 'enable', '--account', live.account_id, 'pix')).code, 0);
  assert.deepEqual(await enabled(live.account_id, 'live', 'BRL', 'BR'), ['pix']);
  assert.deepEqual(await listed(live.account_id), [
    ['pix', true, 'operator'],
    ['boleto', false, 'default'],
    ['ideal', false, 'default'],
  ]);
  assert.deepEqual(await enabled(gw.merchant.account_id, 'test', 'BRL', 'BR'), ['pix', 'boleto'], 'another account is untouched');

  const one = await cli('methods', 'list', '--account', m.account_id, 'ideal', '--json');
  assert.deepEqual(JSON.parse(one.out), [{ payment_method: 'ideal', enabled: true, source: 'operator', currencies: ['EUR'], countries: ['NL'] }]);
});

test('refusals: an unknown account or method, no method, no account; nothing is written', async () => {
  const before = await listed(gw.merchant.account_id);
  const unknownAccount = await cli('methods', 'enable', '--account', '99999999', 'pix');
  assert.equal(unknownAccount.code, 1);
  assert.match(unknownAccount.err, /no account "99999999"/);

  const unknownMethod = await cli('methods', 'disable', '--account', gw.merchant.account_id, 'pix', 'sofort');
  assert.equal(unknownMethod.code, 2);
  assert.match(unknownMethod.err, /"sofort" is not in the payment-method catalogue \(pix, boleto, ideal\)/);
  assert.deepEqual(await listed(gw.merchant.account_id), before, 'pix was not switched either');

  const card = await cli('methods', 'disable', '--account', gw.merchant.account_id, 'visa');
  assert.equal(card.code, 2, 'cards are not switched here');

  const none = await cli('methods', 'enable', '--account', gw.merchant.account_id);
  assert.equal(none.code, 2);
  assert.match(none.err, /name at least one METHOD/);

  assert.equal((await cli('methods', 'list')).code, 2, '--account is required');
  assert.equal((await cli('methods', 'list', '--account', gw.merchant.account_id, 'sofort')).code, 2);

  const help = await cli('methods', '--help');
  assert.equal(help.code, 0);
  assert.match(help.out, /methods enable --account ID METHOD\.\.\./);
});
