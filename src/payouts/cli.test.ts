// The payout commands (docs/contract.md §17) through the CLI on the test gateway's database:
// top-up (test accounts only), payout pricing and markup as the API then applies them,
// listings that show no full account number.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
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

const BENEFICIARY = {
  entity_type: 'COMPANY',
  company_name: 'Acme Supplies LLC',
  bank_details: { account_name: 'Acme Supplies LLC', account_number: '000123456789', bank_code: '011000015', bank_country_code: 'US' },
};

test('top-up, pricing, markup, then a payout that uses them; list, show, beneficiaries, rails', async () => {
  const m = await gw.newMerchant();
  const top = await runCli('balance', 'top-up', '--account', m.account_id, '--currency', 'USD', '--amount', '500.00');
  assert.equal(top.code, 0, top.stderr);
  assert.match(top.stdout, /500\.00 USD added to available/);
  assert.equal((await runCli('balance', 'top-up', '--account', m.account_id, '--currency', 'USD', '--amount', '5.5')).code, 2, 'amount digits are checked');
  const live = await gw.newMerchant({ mode: 'live' });
  const refused = await runCli('balance', 'top-up', '--account', live.account_id, '--currency', 'USD', '--amount', '5.00');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /only test accounts/);

  const pricing = await runCli('pricing', 'payout', '--account', m.account_id, '--currency', 'USD', '--method', 'LOCAL', '--percent', '0.5', '--fixed', '0.25');
  assert.equal(pricing.code, 0, pricing.stderr);
  assert.match(pricing.stdout, /USD LOCAL: 0\.50% \+ 0\.25 per payout/);
  assert.equal(
    (await runCli('pricing', 'payout', '--account', m.account_id, '--currency', 'USD', '--method', 'ACH', '--percent', '1', '--fixed', '0.00')).code,
    2,
  );
  const markup = await runCli('fx', 'markup', '--account', m.account_id, '--percent', '0.5');
  assert.equal(markup.code, 0, markup.stderr);
  assert.equal((await runCli('fx', 'markup', '--account', m.account_id, '--percent', '11')).code, 2, 'at most 10%');

  const res = await gw.post(
    '/v1/payout',
    {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      request_id: randomUUID(),
      beneficiary: BENEFICIARY,
      payment_currency: 'USD',
      payment_method: 'LOCAL',
      reason: 'invoice',
      reference: 'INV-1',
      source_currency: 'USD',
      payment_amount: '100.00',
    },
    { merchant: m },
  );
  assert.equal(res.statusCode, 200, res.body);
  const rec = JSON.parse(res.body);
  assert.equal(rec.fee_amount, 75); // 0.5% of 100.00 + 0.25
  assert.equal(rec.fx_rate, '1.0', 'no markup within one currency');

  const list = await runCli('payouts', 'list', '--account', m.account_id);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`${rec.transaction_id}\\s+${rec.short_reference_id}\\s+COMPLETED\\s+100\\.00 USD → 100\\.00 USD\\s+fee 0\\.75`));
  const json = JSON.parse((await runCli('payouts', 'list', '--account', m.account_id, '--status', 'COMPLETED', '--json')).stdout);
  assert.equal(json.length, 1);
  assert.equal((await runCli('payouts', 'list', '--account', m.account_id, '--status', 'DONE')).code, 2);
  for (const id of [rec.transaction_id, rec.request_id, rec.short_reference_id]) {
    const show = await runCli('payouts', 'show', '--account', m.account_id, id);
    assert.equal(show.code, 0, show.stderr);
    assert.equal(JSON.parse(show.stdout).transaction_id, rec.transaction_id);
  }
  const other = await gw.newMerchant();
  assert.equal((await runCli('payouts', 'show', '--account', other.account_id, rec.transaction_id)).code, 1, "another account's payout is not found");

  const bens = await runCli('beneficiaries', 'list', '--account', m.account_id);
  assert.equal(bens.code, 0, bens.stderr);
  assert.match(bens.stdout, new RegExp(`${rec.beneficiary_id}\\s+Acme Supplies LLC · US · ACH · ••••6789`));
  assert.ok(!bens.stdout.includes('000123456789'), 'the account number is masked');

  const bal = JSON.parse((await runCli('balance', '--account', m.account_id, '--json')).stdout);
  assert.deepEqual(bal, [
    { currency: 'USD', pending: '0.00', available: '399.25', held: '0.00', refunds_in_flight: '0.00', fees: '0.75', payouts_reserved: '0.00' },
  ]);
  const rails = await runCli('payouts', 'rails');
  assert.match(rails.stdout, /US\s+USD\s+ACH/);
  assert.match(rails.stdout, /every SEPA country\s+EUR\s+SEPA/);
  const verify = await runCli('ledger', 'verify');
  assert.equal(verify.code, 0, verify.stdout);
  assert.match(verify.stdout, /\d+ payouts, \d+ transfers checked/);
});

test('payouts resolve settles a PROCESSING payout by hand, with its funds and event; refuses any other', async () => {
  const m = await gw.newMerchant();
  assert.equal((await runCli('balance', 'top-up', '--account', m.account_id, '--currency', 'USD', '--amount', '100.00')).code, 0);
  const swift = { ...BENEFICIARY, bank_details: { ...BENEFICIARY.bank_details, swift_code: 'CHASUS33' } };
  const send = async () => {
    const res = await gw.post(
      '/v1/payout',
      {
        merchant_id: m.merchant_id,
        account_id: m.account_id,
        request_id: randomUUID(),
        beneficiary: swift,
        payment_currency: 'USD',
        payment_method: 'SWIFT',
        reason: 'r',
        reference: 'f',
        source_currency: 'USD',
        payment_amount: '10.00',
      },
      { merchant: m },
    );
    assert.equal(res.statusCode, 200, res.body);
    return JSON.parse(res.body);
  };
  const a = await send();
  const b = await send();
  assert.equal(a.status, 'PROCESSING');
  const done = await runCli('payouts', 'resolve', '--account', m.account_id, a.transaction_id, '--completed');
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /COMPLETED/);
  const failed = await runCli(
    'payouts',
    'resolve',
    '--account',
    m.account_id,
    b.transaction_id,
    '--failed',
    'RETURNED',
    '--reason',
    'returned by the bank (statement of 24 Nov)',
  );
  assert.equal(failed.code, 0, failed.stderr);
  assert.match(failed.stdout, /FAILED \(RETURNED\)/);
  assert.equal((await runCli('payouts', 'resolve', '--account', m.account_id, a.transaction_id, '--completed')).code, 1, 'only PROCESSING');
  assert.equal((await runCli('payouts', 'resolve', '--account', m.account_id, b.transaction_id)).code, 2);
  const bal = JSON.parse((await runCli('balance', '--account', m.account_id, '--json')).stdout)[0];
  assert.deepEqual([bal.available, bal.payouts_reserved], ['90.00', '0.00']);
  const events = await gw.runtime.store.db.selectFrom('events').select('event_type').where('account_id', '=', m.account_id).orderBy('created_at').execute();
  assert.deepEqual(events.map((e) => e.event_type).sort(), ['payout.completed', 'payout.failed']);
  assert.equal((await runCli('ledger', 'verify')).code, 0);
});
