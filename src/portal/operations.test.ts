// The portal's operations pages (docs/contract.md §16, §17, §19; issue 14): subscriptions (list,
// cancel through the API's cancelSubscription; a viewer refused; another merchant's id 404),
// payouts (list, create through the API's createPayout; one payout per form however often it
// is sent; a refusal shows its reason), and the audit log (lines, filter, keyset pages).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { accountBalances } from '../ledger/balances.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { topUp } from '../payouts/admin.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { audit } from './audit.js';
import { AUDIT_PAGE_SIZE } from './audit-page.js';
import { formFields, type PortalAgent, signedInUser } from './testing.js';

const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);

let gw: TestGateway;
before(async () => {
  gw = await testGateway({ start_ms: NOW });
});
after(() => gw.close());

const db = () => gw.runtime.store.db;
let n = 0;

async function subscribe(m: CreatedMerchant): Promise<string> {
  const res = await gw.post(
    '/v1/authorise',
    directPayment(m, { amount: '9.99', currency: 'EUR', subscription: { contract_name: `plan-${++n}`, interval: 'month' } }),
    {
      merchant: m,
    },
  );
  const x = readXml(res);
  assert.match(x.recurring_id, /^rec_/, res.body);
  return x.recurring_id as string;
}

const statusOf = async (recurring_id: string) =>
  (await db().selectFrom('subscriptions').select('status').where('recurring_id', '=', recurring_id).executeTakeFirstOrThrow()).status;

/** The page's CSRF token and a fresh form token (from the account switch every signed-in page has), to post a form the page does not offer. */
async function secretsOf(agent: PortalAgent, page: string): Promise<Record<string, string>> {
  return formFields((await agent.get(page)).body, '/portal/account');
}

describe('subscriptions', () => {
  test('the list shows the account’s subscriptions newest first; an operator cancels one through the same domain code as the API', async () => {
    const first = await subscribe(gw.merchant);
    gw.clock.advance(1000);
    const second = await subscribe(gw.merchant);
    const { agent } = await signedInUser(gw, { role: 'operator' });
    const page = await agent.get('/portal/subscriptions');
    assert.equal(page.status, 200, page.body);
    const ids = [...page.body.matchAll(/data-subscription-id="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(ids.indexOf(second) < ids.indexOf(first) && ids.indexOf(second) >= 0, 'newest first');

    // The button asks first (issue 36 item 4): a page naming the plan, and nothing changes until its form is sent.
    const action = `/portal/subscriptions/${second}/cancel`;
    const asked = await agent.submit('/portal/subscriptions', action);
    assert.equal(asked.status, 200, asked.body.slice(0, 500));
    assert.match(asked.body, new RegExp(`<p id="confirm-question">Cancel the subscription “plan-${n}” of 9\\.99 EUR every 1 month \\(${second}\\)\\?</p>`));
    assert.match(asked.body, /<a class="button" href="\/portal\/subscriptions" id="back">/);
    assert.equal(await statusOf(second), 'Active');
    assert.equal((await db().selectFrom('portal_audit').selectAll().where('target', '=', second).execute()).length, 0, 'asking is no action');
    const r = await agent.request('POST', action, formFields(asked.body, action));
    assert.equal(r.status, 303, r.body);
    assert.equal(r.location, '/portal/subscriptions?done=subscription_cancelled');
    assert.equal(await statusOf(second), 'Inactived');
    assert.equal(await statusOf(first), 'Active');
    const row = await db().selectFrom('subscriptions').select('end_reason').where('recurring_id', '=', second).executeTakeFirstOrThrow();
    assert.equal(row.end_reason, 'cancelled by the merchant');
    const ev = await db().selectFrom('events').select('event_type').where('event_type', '=', 'subscription.cancelled').execute();
    assert.equal(ev.length, 1, 'the same event as the API’s cancel');
    const after = await agent.get('/portal/subscriptions?done=subscription_cancelled');
    assert.match(after.body, /id="notice">The subscription is cancelled./);
    assert.match(after.body, new RegExp(`data-subscription-id="${second}" data-status="Inactived"`));
    assert.doesNotMatch(after.body, new RegExp(`/portal/subscriptions/${second}/cancel`), 'no cancel form for an ended one');
    const line = await db().selectFrom('portal_audit').selectAll().where('action', '=', 'subscription.cancel').where('target', '=', second).execute();
    assert.equal(line.length, 1);
    assert.equal(line[0]?.outcome, 'ok');
  });

  test('a viewer sees no cancel form and a forged post is 403: nothing changes', async () => {
    const id = await subscribe(gw.merchant);
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const page = await agent.get('/portal/subscriptions');
    assert.match(page.body, new RegExp(`data-subscription-id="${id}"`));
    assert.doesNotMatch(page.body, /\/cancel"/);
    const r = await agent.request('POST', `/portal/subscriptions/${id}/cancel`, await secretsOf(agent, '/portal/subscriptions'));
    assert.equal(r.status, 403, r.body);
    assert.equal(await statusOf(id), 'Active');
  });

  test('another merchant’s subscription id is 404 (and is not cancelled); the list never shows it', async () => {
    const other = await gw.newMerchant();
    const theirs = await subscribe(other);
    const { agent } = await signedInUser(gw, { role: 'owner' });
    assert.doesNotMatch((await agent.get('/portal/subscriptions')).body, new RegExp(theirs));
    const r = await agent.request('POST', `/portal/subscriptions/${theirs}/cancel`, await secretsOf(agent, '/portal/subscriptions'));
    assert.equal(r.status, 404, r.body);
    assert.equal(await statusOf(theirs), 'Active');
    const r2 = await agent.request('POST', '/portal/subscriptions/rec_nosuchsubscription000000/cancel', await secretsOf(agent, '/portal/subscriptions'));
    assert.equal(r2.status, 404);
    // A NUL or other control character in the id is refused before any query (PostgreSQL
    // text cannot hold NUL: it answered 500 in the portal's fuzz).
    for (const bad of ['%00', 'rec%01x', '%20']) {
      const r3 = await agent.request('POST', `/portal/subscriptions/${bad}/cancel`, await secretsOf(agent, '/portal/subscriptions'));
      assert.ok(r3.status === 400 || r3.status === 404, `${bad}: HTTP ${r3.status} ${r3.body.slice(0, 200)}`);
    }
  });

  test('cancelling an ended one again is refused with 409', async () => {
    const id = await subscribe(gw.merchant);
    const { agent } = await signedInUser(gw, { role: 'admin' });
    const fields = await secretsOf(agent, '/portal/subscriptions');
    assert.equal((await agent.request('POST', `/portal/subscriptions/${id}/cancel`, { ...fields, confirm: 'yes' })).status, 303);
    // Ended, it is not asked about again: the refusal is the answer, confirmed or not.
    for (const confirm of [{}, { confirm: 'yes' }] as Record<string, string>[]) {
      const again = await agent.request('POST', `/portal/subscriptions/${id}/cancel`, { ...(await secretsOf(agent, '/portal/subscriptions')), ...confirm });
      assert.equal(again.status, 409);
      assert.match(again.body, /already ended/);
    }
  });

  test('keyset pages: 55 subscriptions over two pages, none twice', async () => {
    const m = await gw.newMerchant();
    for (let i = 0; i < 55; i++) {
      await subscribe(m);
      gw.clock.advance(i % 2 ? 0 : 1); // ties on created_at too
    }
    const { agent } = await signedInUser(gw, { role: 'viewer', merchant_id: m.merchant_id });
    const one = await agent.get('/portal/subscriptions');
    const ids1 = [...one.body.matchAll(/data-subscription-id="([^"]+)"/g)].map((x) => x[1]);
    const next = /id="next-page" href="([^"]+)"/.exec(one.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next, 'a next-page link');
    const two = await agent.get(next);
    const ids2 = [...two.body.matchAll(/data-subscription-id="([^"]+)"/g)].map((x) => x[1]);
    assert.equal(ids1.length, 50);
    assert.equal(ids2.length, 5);
    assert.equal(new Set([...ids1, ...ids2]).size, 55);
    assert.doesNotMatch(two.body, /id="next-page"/);
  });
});

describe('payouts', () => {
  const ACH = {
    source_currency: 'USD',
    payment_amount: '100.00',
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: 'INV-1001',
    entity_type: 'COMPANY',
    company_name: 'Acme Supplies LLC',
    country_code: 'US',
    account_name: 'Acme Supplies LLC',
    account_number: '000123456789',
    bank_code: '011000015',
  };

  async function funded(): Promise<{ m: CreatedMerchant; agent: PortalAgent }> {
    const m = await gw.newMerchant();
    await topUp(gw.runtime.store, { account_id: m.account_id, currency: 'USD', amount: '1000.00' }, gw.clock.now);
    const { agent } = await signedInUser(gw, { role: 'admin', merchant_id: m.merchant_id });
    return { m, agent };
  }
  const available = async (account_id: string) => (await accountBalances(db(), account_id)).find((b) => b.currency === 'USD')?.available_minor;
  const payouts = (account_id: string) => db().selectFrom('payouts').selectAll().where('account_id', '=', account_id).execute();

  test('an admin creates a payout to a new beneficiary; it is listed; the available balance shows it', async () => {
    const { m, agent } = await funded();
    const page = await agent.get('/portal/payouts');
    assert.match(page.body, /<table id="available">[\s\S]*?class="num available">1000.00</);
    const r = await agent.submit('/portal/payouts', '/portal/payouts', ACH);
    assert.equal(r.status, 303, r.body);
    assert.equal(r.location, '/portal/payouts?done=payout_created');
    const rows = await payouts(m.account_id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.status, 'COMPLETED');
    assert.equal(rows[0]?.local_clearing_system, 'ACH');
    assert.equal(await available(m.account_id), 90_000);
    const list = await agent.get(r.location);
    assert.match(list.body, new RegExp(`<table id="payouts"[^>]*>[\\s\\S]*data-payout-id="${rows[0]?.transaction_id}" data-status="COMPLETED"`));
    assert.match(list.body, /class="num available">900.00</);
    const ben = rows[0]?.beneficiary_id as string;
    // The row names the beneficiary (its saved label, not only its id) and shows the merchant's own reference.
    const row = new RegExp(`data-payout-id="${rows[0]?.transaction_id}"[\\s\\S]*?</tr>`).exec(list.body)?.[0] ?? '';
    assert.match(row, /<span class="beneficiary">[^<]*Acme Supplies LLC[^<]*<\/span>/);
    assert.match(row, /<span class="reference">INV-1001<\/span>/);
    assert.match(row, />completed</, 'the status in words');
    // The beneficiary is saved: the next form offers it, and paying it again needs no bank details.
    assert.match(list.body, new RegExp(`<option value="${ben}">`));
    const again = await agent.submit('/portal/payouts', '/portal/payouts', {
      source_currency: 'USD',
      payment_amount: '50.00',
      payment_method: 'LOCAL',
      reason: 'r',
      reference: 'INV-1002',
      beneficiary_id: ben,
    });
    assert.equal(again.status, 303, again.body);
    assert.equal(await available(m.account_id), 85_000);
    const line = await db().selectFrom('portal_audit').selectAll().where('merchant_id', '=', m.merchant_id).where('action', '=', 'payout.create').execute();
    assert.equal(line.length, 2);
  });

  test('one form sent twice, and twice at once, makes one payout each time', async () => {
    const { m, agent } = await funded();
    const page = await agent.get('/portal/payouts');
    const form = { ...formFields(page.body, '/portal/payouts'), ...ACH };
    const a = await agent.request('POST', '/portal/payouts', form);
    const b = await agent.request('POST', '/portal/payouts', form);
    assert.equal(a.status, 303, a.body);
    assert.equal(b.status, 303, b.body);
    assert.equal(b.location, a.location);
    assert.equal((await payouts(m.account_id)).length, 1);
    assert.equal(await available(m.account_id), 90_000);

    const page2 = await agent.get('/portal/payouts');
    const form2 = { ...formFields(page2.body, '/portal/payouts'), ...ACH };
    const both = await Promise.all([agent.request('POST', '/portal/payouts', form2), agent.request('POST', '/portal/payouts', form2)]);
    assert.deepEqual(
      both.map((x) => `${x.status} ${x.location}`),
      ['303 /portal/payouts?done=payout_created', '303 /portal/payouts?done=payout_created'],
      'the second waits for the first one’s answer',
    );
    assert.equal((await payouts(m.account_id)).length, 2);
    assert.equal(await available(m.account_id), 80_000);
  });

  test('a refusal shows the API’s reason on the filled-in form, and nothing is created', async () => {
    const { m, agent } = await funded();
    const bad = await agent.submit('/portal/payouts', '/portal/payouts', { ...ACH, bank_code: '123456789' });
    assert.equal(bad.status, 400, bad.body);
    assert.match(bad.body, /id="payout-error" role="alert">[^<]*beneficiary\.bank_details\.bank_code/);
    assert.match(bad.body, /value="Acme Supplies LLC"/, 'the form keeps what was typed');
    const shape = await agent.submit('/portal/payouts', '/portal/payouts', { ...ACH, payment_date: 'soon' });
    assert.equal(shape.status, 400);
    assert.match(shape.body, /payment_date/);
    assert.equal((await payouts(m.account_id)).length, 0);
    assert.equal(await available(m.account_id), 100_000);
    const refused = await db().selectFrom('portal_audit').selectAll().where('merchant_id', '=', m.merchant_id).where('outcome', '=', 'refused').execute();
    assert.equal(refused.length, 2);
  });

  test('more than the balance: the payout is created FAILED (INSUFFICIENT_FUNDS) and says so', async () => {
    const { m, agent } = await funded();
    const r = await agent.submit('/portal/payouts', '/portal/payouts', { ...ACH, payment_amount: '5000.00' });
    assert.equal(r.location, '/portal/payouts?done=payout_failed');
    const list = await agent.get(r.location);
    assert.match(list.body, /data-status="FAILED"/);
    assert.equal(await available(m.account_id), 100_000);
  });

  test('an operator sees the payouts but no form, and a forged post is 403', async () => {
    const { m } = await funded();
    const { agent } = await signedInUser(gw, { role: 'operator', merchant_id: m.merchant_id });
    const page = await agent.get('/portal/payouts');
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /id="payout-form"/);
    const r = await agent.request('POST', '/portal/payouts', { ...(await secretsOf(agent, '/portal/payouts')), ...ACH });
    assert.equal(r.status, 403);
    assert.equal((await payouts(m.account_id)).length, 0);
  });
});

describe('audit log', () => {
  test('newest first with time, user, action, target, outcome, IP, detail; filtered by action; keyset pages; the merchant’s only', async () => {
    const m = await gw.newMerchant();
    const { agent, email, user_id } = await signedInUser(gw, { role: 'owner', merchant_id: m.merchant_id });
    const base = { merchant_id: m.merchant_id, user_id, email, outcome: 'ok' as const, ip: '203.0.113.7' };
    for (let i = 0; i < 60; i++) {
      gw.clock.advance(1000);
      await audit(gw.runtime.store, { ...base, action: i % 2 ? 'payout.create' : 'subscription.cancel', target: `t-${i}`, detail: `line ${i}` }, gw.clock.now);
    }
    await audit(gw.runtime.store, { ...base, merchant_id: gw.merchant.merchant_id, action: 'payout.create', target: 'not-theirs' }, gw.clock.now);

    const one = await agent.get('/portal/audit');
    assert.equal(one.status, 200, one.body);
    const rows = [...one.body.matchAll(/<tr data-audit-id="[^"]+" data-outcome="(\w+)">([\s\S]*?)<\/tr>/g)];
    assert.equal(rows.length, AUDIT_PAGE_SIZE);
    const cells = (row: string) => [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]);
    const first = cells(rows[0]?.[2] ?? '');
    assert.equal(first[1], email);
    assert.equal(first[2], 'payout.create');
    assert.equal(first[3], 't-59');
    assert.equal(first[4], 'ok');
    assert.equal(first[5], '203.0.113.7');
    assert.equal(first[6], 'line 59');
    assert.match(first[0] ?? '', /^2026-11-24 \d\d:\d\d:\d\d$/);
    assert.doesNotMatch(one.body, /not-theirs/);

    const next = /id="next-page" href="([^"]+)"/.exec(one.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    assert.ok(next);
    const two = await agent.get(next);
    const targets = (body: string) => [...body.matchAll(/<td>(t-\d+)<\/td>/g)].map((x) => x[1]);
    const all = [...targets(one.body), ...targets(two.body)];
    assert.equal(all.length, 60);
    assert.equal(new Set(all).size, 60, 'no line twice');
    assert.match(two.body, /sign/, 'the sign-in lines are older');

    const filtered = await agent.get('/portal/audit?action=payout.create');
    const f = targets(filtered.body);
    assert.equal(f.length, 30);
    assert.ok(f.every((t) => Number(t?.slice(2)) % 2 === 1));
    assert.match(filtered.body, /<option value="payout.create" selected>/);
  });

  test('an operator cannot read the audit log', async () => {
    const { agent } = await signedInUser(gw, { role: 'operator' });
    assert.equal((await agent.get('/portal/audit')).status, 403);
  });
});
