// The portal's Processors page (docs/contract.md §21; issue 32 item 1): owners only; each
// processor with its webhook address and its credentials by their last four; set through the
// same setProcessor as the CLI (stored encrypted, a credential left empty kept), refusals shown
// on the form (400, nothing written, secrets not echoed), remove after a confirmation page;
// every change audited as the portal user and seen by the serving process at once; a live
// account's processors changed only with two-step sign-in; no form without its CSRF token.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type TestGateway, testGateway } from '../test/harness.js';
import { formFields, signedInUser } from './testing.js';

let gw: TestGateway;
/** Everything the gateway logged (every request line, at info). */
let logged = '';
before(async () => {
  const sink = new PassThrough();
  sink.on('data', (d: Buffer) => {
    logged += d.toString('utf8');
  });
  gw = await testGateway({ settings: { log_level: 'info', log_format: 'json' }, log_destination: sink });
});
after(() => gw.close());
// Sign-ins are rate-limited per IP on the gateway's clock, and a processor's reload compares
// its updated_at: each test moves the clock on.
beforeEach(() => gw.clock.advance(61_000));

const PAGE = '/portal/processors';
const SET = `${PAGE}/set`;
const API_KEY = 'AQEyhmfxK4zPYhVAw0m/n3Q5qf3VaY9UCJ14XWZE03G7k-secret-Zx9q';
const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6B7f3e';
const MERCHANT_ACCOUNT = 'TollgateShopECOM';
const ADYEN = { base_url: 'https://checkout-test.adyen.com/v71', priority: '2', currencies: 'usd,EUR', brands: 'visa' };
const CREDENTIALS = { credential_api_key: API_KEY, credential_merchant_account: MERCHANT_ACCOUNT, credential_hmac_key: HMAC_KEY };

const db = () => gw.runtime.store.db;
const rowsOf = (account_id: string) => db().selectFrom('processors').selectAll().where('account_id', '=', account_id).execute();
const audits = (merchant_id: string) =>
  db().selectFrom('portal_audit').selectAll().where('merchant_id', '=', merchant_id).where('action', 'like', 'processor.%').orderBy('audit_id').execute();

async function owner(o: { mode?: 'test' | 'live'; role?: string } = {}) {
  const m = await gw.newMerchant({ mode: o.mode });
  return { m, ...(await signedInUser(gw, { role: o.role ?? 'owner', merchant_id: m.merchant_id })) };
}

/** The set form of `connector` on the page, filled with `fields`, posted. */
async function setVia(agent: Awaited<ReturnType<typeof owner>>['agent'], connector: string, fields: Record<string, string>) {
  const page = await agent.get(`${PAGE}?connector=${connector}`);
  assert.equal(page.status, 200, page.body.slice(0, 500));
  return agent.request('POST', SET, { ...formFields(page.body, SET), ...fields });
}

/** No secret anywhere the merchant or a log reader could see it: answers, the log, the audit log, stored forms. */
async function assertNowhere(bodies: string[], merchant_id: string) {
  const audit = JSON.stringify(await db().selectFrom('portal_audit').selectAll().where('merchant_id', '=', merchant_id).execute());
  const idem = JSON.stringify(await db().selectFrom('idempotency_keys').selectAll().execute());
  for (const secret of [API_KEY, HMAC_KEY]) {
    for (const b of bodies) assert.ok(!b.includes(secret), 'not in any answer');
    assert.ok(!logged.includes(secret), 'not in the log');
    assert.ok(!audit.includes(secret), 'not in the audit log');
    assert.ok(!idem.includes(secret), 'not in the stored form answers');
  }
}

describe('who sees the Processors page', () => {
  test('an owner sees it in the navigation with each webhook address; admins, operators and viewers neither see it nor may post', async () => {
    const { m, agent } = await owner();
    const empty = await agent.get(PAGE);
    assert.equal(empty.status, 200, empty.body.slice(0, 500));
    assert.match(empty.body, /<a href="\/portal\/processors" aria-current="page">Processors<\/a>/);
    assert.match(empty.body, new RegExp(`id="processors-account">${m.account_id}<`));
    assert.match(empty.body, /id="no-processors"/);
    assert.match(empty.body, /this test account uses the in-process sandbox/);
    assert.equal((await setVia(agent, 'adyen', { ...ADYEN, ...CREDENTIALS })).status, 303);
    const [row] = await rowsOf(m.account_id);
    assert.ok(row);
    const page = await agent.get(PAGE);
    assert.ok(page.body.includes(`${gw.settings.public_url}/hooks/adyen/${row.processor_id}`), 'the webhook address to register');

    for (const role of ['admin', 'operator', 'viewer']) {
      const u = await signedInUser(gw, { role, merchant_id: m.merchant_id });
      assert.equal((await u.agent.get(PAGE)).status, 403, role);
      const dashboard = await u.agent.get('/portal/dashboard');
      assert.ok(!dashboard.body.includes('href="/portal/processors"'), `${role}: not in the navigation`);
      const csrf = formFields(dashboard.body, '/portal/signout').csrf ?? '';
      const posted = await u.agent.request('POST', SET, { csrf, form_token: `ft-${role}`, connector: 'sandbox' });
      assert.equal(posted.status, 403, `${role} cannot set`);
      const removed = await u.agent.request('POST', `${PAGE}/${row.processor_id}/remove`, { csrf, form_token: `rm-${role}`, confirm: 'yes' });
      assert.equal(removed.status, 403, `${role} cannot remove`);
    }
    assert.equal((await rowsOf(m.account_id)).length, 1, 'nothing changed');
  });
});

describe('set', () => {
  test('set with credentials: shown by their last four only, stored encrypted, audited as the portal user, used at once; set again without them keeps them', async () => {
    const { m, agent, email, user_id } = await owner();
    const r = await setVia(agent, 'adyen', { ...ADYEN, ...CREDENTIALS });
    assert.equal(r.status, 303, r.body.slice(0, 500));
    assert.equal(r.location, `${PAGE}?connector=adyen&done=processor_set`);
    const [row] = await rowsOf(m.account_id);
    assert.ok(row);
    assert.deepEqual([row.connector, row.base_url, row.priority, row.currencies, row.brands], ['adyen', ADYEN.base_url, 2, 'USD,EUR', 'visa']);
    const stored = JSON.stringify(row);
    for (const secret of [API_KEY, HMAC_KEY, MERCHANT_ACCOUNT]) assert.ok(!stored.includes(secret), 'the column holds no credential in clear');
    assert.deepEqual(JSON.parse(gw.runtime.keyring.decrypt(row.credentials_enc)), {
      api_key: API_KEY,
      merchant_account: MERCHANT_ACCOUNT,
      hmac_key: HMAC_KEY,
    });
    assert.equal(gw.runtime.deps.processors.byProcessorId(row.processor_id)?.row.connector, 'adyen', 'the serving process has it at once');

    const page = await agent.get(r.location);
    assert.match(page.body, /id="notice">The processor was saved/);
    assert.ok(page.body.includes(`api_key ••••${API_KEY.slice(-4)}`));
    assert.ok(page.body.includes(`hmac_key ••••${HMAC_KEY.slice(-4)}`));
    assert.ok(page.body.includes(`stored ••••${API_KEY.slice(-4)}; leave empty to keep it`));
    assert.doesNotMatch(page.body, /type="password"[^>]*value=/, 'no password input is filled');

    // Changed without giving the credentials again: they are kept.
    gw.clock.advance(1_000);
    const again = await setVia(agent, 'adyen', { base_url: ADYEN.base_url, priority: '5', currencies: '', brands: '' });
    assert.equal(again.status, 303, again.body.slice(0, 500));
    const [changed] = await rowsOf(m.account_id);
    assert.equal(changed?.priority, 5);
    assert.equal(changed?.processor_id, row.processor_id, 'the same processor, changed');
    assert.equal(JSON.parse(gw.runtime.keyring.decrypt(changed?.credentials_enc ?? '')).hmac_key, HMAC_KEY);
    assert.equal(gw.runtime.deps.processors.byProcessorId(row.processor_id)?.row.priority, 5);

    const log = await audits(m.merchant_id);
    assert.deepEqual(
      log.map((a) => [a.action, a.outcome, a.target, a.user_id, a.email]),
      [
        ['processor.set', 'ok', row.processor_id, user_id, email],
        ['processor.set', 'ok', row.processor_id, user_id, email],
      ],
    );
    assert.match(log[0]?.detail ?? '', /^adyen https:\/\/checkout-test\.adyen\.com\/v71; credentials api_key, merchant_account, hmac_key$/);
    assert.ok(logged.includes('/portal/processors/set'), 'the log has the requests');
    await assertNowhere([r.body, page.body, again.body, (await agent.get('/portal/audit')).body], m.merchant_id);
  });

  test('a bad URL, currency or missing credential: 400 on the form, filled in as typed but for credentials, nothing written', async () => {
    const { m, agent } = await owner();
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...ADYEN, ...CREDENTIALS, base_url: 'ftp://checkout.example' }, /The base URL must be an http or https URL/],
      [{ ...ADYEN, ...CREDENTIALS, base_url: 'not a url at all' }, /The base URL is not a URL\./],
      [{ ...ADYEN, ...CREDENTIALS, base_url: 'https://user:pw@checkout.example' }, /must not carry credentials/],
      [{ ...ADYEN, ...CREDENTIALS, currencies: 'USD,XYZ' }, /Currencies: XYZ is not a currency/],
      [{ ...ADYEN, ...CREDENTIALS, priority: '-3' }, /Priority must be a whole number from 0 to 1000/],
      [{ ...ADYEN, ...CREDENTIALS, brands: 'visa,<b>' }, /is not a card brand name/],
      [{ ...ADYEN, credential_api_key: API_KEY, credential_hmac_key: HMAC_KEY }, /The adyen connector needs the credential merchant_account/],
    ];
    const bodies: string[] = [];
    for (const [fields, message] of cases) {
      const r = await setVia(agent, 'adyen', fields);
      bodies.push(r.body);
      assert.equal(r.status, 400, `${JSON.stringify(fields.base_url)}: ${r.body.slice(0, 300)}`);
      assert.match(r.body, /id="set-error" role="alert"/);
      assert.match(r.body, message);
      if (fields.currencies) assert.ok(r.body.includes(`name="currencies" type="text" value="${fields.currencies}"`), 'the form filled in as typed');
      assert.match(r.body, /<input type="hidden" name="connector" value="adyen">/);
    }
    const typed = await setVia(agent, 'adyen', { ...ADYEN, ...CREDENTIALS, currencies: 'usd,XYZ' });
    assert.match(typed.body, /id="f-base_url" name="base_url" type="text" value="https:\/\/checkout-test\.adyen\.com\/v71"/);
    assert.match(typed.body, /id="f-currencies" name="currencies" type="text" value="usd,XYZ"/);
    assert.equal((await rowsOf(m.account_id)).length, 0, 'nothing written');
    const log = await audits(m.merchant_id);
    assert.equal(log.length, cases.length + 1);
    assert.ok(log.every((a) => a.action === 'processor.set' && a.outcome === 'refused'));
    assert.ok(
      log.every((a) => !a.detail.includes('pw@')),
      'a URL with credentials is not repeated in the audit log',
    );
    await assertNowhere([...bodies, typed.body], m.merchant_id);
  });

  test('a POST without the session’s CSRF token is refused and changes nothing', async () => {
    const { m, agent } = await owner();
    const page = await agent.get(`${PAGE}?connector=sandbox`);
    const { csrf: _csrf, ...rest } = formFields(page.body, SET);
    const none = await agent.request('POST', SET, { ...rest, priority: '1' });
    assert.equal(none.status, 403);
    const wrong = await agent.request('POST', SET, { ...rest, csrf: 'x'.repeat(43), priority: '1' });
    assert.equal(wrong.status, 403);
    assert.equal((await rowsOf(m.account_id)).length, 0);
  });
});

describe('remove', () => {
  test('asks on a page of its own and removes only with confirm=yes; audited; another account’s processor is not found', async () => {
    const { m, agent, user_id } = await owner();
    assert.equal((await setVia(agent, 'sandbox', { priority: '1', credential_webhook_secret: 'whsec_portal_test_value_q7r2' })).status, 303);
    const [row] = await rowsOf(m.account_id);
    assert.ok(row);
    const path = `${PAGE}/${row.processor_id}/remove`;
    const ask = await agent.submit(PAGE, path);
    assert.equal(ask.status, 200, ask.body.slice(0, 500));
    assert.match(ask.body, /id="confirm-question">Remove the sandbox processor/);
    assert.ok(!ask.body.includes('whsec_portal_test_value_q7r2'));
    assert.equal((await rowsOf(m.account_id)).length, 1, 'nothing removed yet');
    const done = await agent.request('POST', path, formFields(ask.body, path));
    assert.equal(done.status, 303, done.body.slice(0, 500));
    assert.equal(done.location, `${PAGE}?done=processor_removed`);
    assert.equal((await rowsOf(m.account_id)).length, 0);
    assert.equal(gw.runtime.deps.processors.byProcessorId(row.processor_id), undefined, 'the serving process dropped it at once');
    assert.deepEqual(
      // (One clock tick for both: sorted by action, as their ids need not be in order.)
      (await audits(m.merchant_id)).map((a) => [a.action, a.outcome, a.target, a.user_id]).sort(),
      [
        ['processor.remove', 'ok', row.processor_id, user_id],
        ['processor.set', 'ok', row.processor_id, user_id],
      ],
    );

    // Another merchant's processor, by its id: 404, and it stays.
    const other = await owner();
    assert.equal((await setVia(other.agent, 'sandbox', { priority: '1' })).status, 303);
    const [theirs] = await rowsOf(other.m.account_id);
    assert.ok(theirs);
    const csrf = formFields((await agent.get(PAGE)).body, SET).csrf ?? '';
    const foreign = await agent.request('POST', `${PAGE}/${theirs.processor_id}/remove`, { csrf, form_token: 'ft-foreign', confirm: 'yes' });
    assert.equal(foreign.status, 404);
    assert.equal((await rowsOf(other.m.account_id)).length, 1);
  });
});

describe('live accounts', () => {
  test('an owner with two-step sign-in sets a live account’s processor; without it (a session begun before the account was live) it is refused', async () => {
    const live = await owner({ mode: 'live' });
    assert.ok(live.totp_secret, 'enrolled: the portal asks every user of a live merchant');
    const page = await live.agent.get(PAGE);
    assert.match(page.body, /this live account refuses payments \(1016\)/);
    assert.equal((await setVia(live.agent, 'adyen', { ...ADYEN, ...CREDENTIALS })).status, 303);
    assert.equal((await rowsOf(live.m.account_id)).length, 1);

    const { m, agent } = await owner();
    await gw.runtime.store.transaction((tx) => tx.updateTable('accounts').set({ mode: 'live' }).where('account_id', '=', m.account_id).execute());
    const refused = await setVia(agent, 'sandbox', { priority: '1' });
    assert.equal(refused.status, 403);
    assert.match(refused.body, /only with two-step sign-in/);
    assert.equal((await rowsOf(m.account_id)).length, 0);
    assert.deepEqual(
      (await audits(m.merchant_id)).map((a) => [a.action, a.outcome]),
      [['processor.set', 'refused']],
    );
  });
});
