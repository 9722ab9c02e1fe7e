// `/v1/accounts` through the API (issue 13): create, retrieve, update, delete, list, the
// wire conventions they share, and test/live separation of keys.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { topUp } from '../payouts/admin.js';
import { type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
let key: string;
before(async () => {
  gw = await testGateway();
  key = await gw.apiKey();
});
after(async () => gw.close());

describe('connected accounts', () => {
  test('create (form body in bracket notation), retrieve, update metadata, delete', async () => {
    const created = await gw.generic('POST', '/v1/accounts', key, {
      type: 'custom',
      country: 'GB',
      email: 'shop@example.com',
      business_profile: { name: 'Corner shop', industry: 'retail' },
      capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
      metadata: { ref: '42' },
    });
    assert.equal(created.statusCode, 200, created.body);
    const a = created.json();
    assert.match(a.id, /^acct_[A-Za-z0-9]+$/);
    assert.equal(a.object, 'account');
    assert.equal(a.country, 'GB');
    assert.equal(a.livemode, false);
    assert.deepEqual(a.capabilities, { card_payments: 'active', transfers: 'active' });
    assert.deepEqual(a.metadata, { ref: '42' });
    assert.equal(typeof a.created, 'number');
    assert.ok(created.headers['request-id']);

    const got = await gw.generic('GET', `/v1/accounts/${a.id}`, key);
    assert.deepEqual(got.json(), a);

    const upd = await gw.generic('POST', `/v1/accounts/${a.id}`, key, { metadata: { ref: '', extra: 'x' }, email: 'new@example.com' });
    assert.equal(upd.statusCode, 200, upd.body);
    assert.deepEqual(upd.json().metadata, { extra: 'x' });
    assert.equal(upd.json().email, 'new@example.com');

    const del = await gw.generic('DELETE', `/v1/accounts/${a.id}`, key);
    assert.deepEqual(del.json(), { id: a.id, object: 'account', deleted: true });
    const gone = await gw.generic('GET', `/v1/accounts/${a.id}`, key);
    assert.equal(gone.statusCode, 404);
    assert.equal(gone.json().error.type, 'invalid_request_error');
    assert.equal(gone.json().error.code, 'resource_missing');
  });

  test('an account holding a balance cannot be deleted until its transfers are reversed', async () => {
    await topUp(gw.runtime.store, { account_id: gw.merchant.account_id, currency: 'USD', amount: '50.00' }, Date.now());
    const a = (await gw.generic('POST', '/v1/accounts', key, { country: 'US', capabilities: { transfers: { requested: true } } })).json();
    const t = await gw.generic('POST', '/v1/transfers', key, { amount: 1500, currency: 'usd', destination: a.id });
    assert.equal(t.statusCode, 200, t.body);
    const refused = await gw.generic('DELETE', `/v1/accounts/${a.id}`, key);
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json().error.code, 'balance_insufficient');
    assert.equal((await gw.generic('GET', `/v1/accounts/${a.id}`, key)).statusCode, 200, 'the refusal changed nothing');
    assert.equal((await gw.generic('POST', `/v1/transfers/${t.json().id}/reversals`, key)).statusCode, 200);
    assert.equal((await gw.generic('DELETE', `/v1/accounts/${a.id}`, key)).json().deleted, true);
    const late = await gw.generic('POST', '/v1/transfers', key, { amount: 100, currency: 'usd', destination: a.id });
    assert.equal(late.statusCode, 400, 'no transfer to a deleted account');
  });

  test('one Idempotency-Key on two objects is two requests: refused (400 idempotency_error), never the other object’s answer', async () => {
    const a = (await gw.generic('POST', '/v1/accounts', key, { country: 'US' })).json();
    const b = (await gw.generic('POST', '/v1/accounts', key, { country: 'US' })).json();
    const first = await gw.generic('POST', `/v1/accounts/${a.id}`, key, { metadata: { x: '1' } }, { headers: { 'idempotency-key': 'same-key-two-ids' } });
    assert.equal(first.json().id, a.id);
    const second = await gw.generic('POST', `/v1/accounts/${b.id}`, key, { metadata: { x: '1' } }, { headers: { 'idempotency-key': 'same-key-two-ids' } });
    assert.equal(second.statusCode, 400);
    assert.equal(second.json().error.type, 'idempotency_error');
    assert.deepEqual((await gw.generic('GET', `/v1/accounts/${b.id}`, key)).json().metadata, {});
  });

  test('JSON bodies work too', async () => {
    const r = await gw.generic('POST', '/v1/accounts', key, { country: 'US', metadata: { a: 'b' } }, { json: true });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.json().type, 'custom');
  });

  test('refusals name the parameter and change nothing', async () => {
    const before = (await gw.generic('GET', '/v1/accounts?limit=100', key)).json().data.length;
    const unknown = await gw.generic('POST', '/v1/accounts', key, { country: 'US', colour: 'red' });
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.json().error.param, 'colour');
    assert.equal(unknown.json().error.code, 'parameter_unknown');
    const nested = await gw.generic('POST', '/v1/accounts', key, { business_profile: { nam: 'x' } });
    assert.equal(nested.json().error.param, 'business_profile[nam]');
    const country = await gw.generic('POST', '/v1/accounts', key, { country: 'XX' });
    assert.equal(country.statusCode, 400);
    assert.equal(country.json().error.param, 'country');
    const tooMany: Record<string, string> = {};
    for (let i = 0; i < 51; i++) tooMany[`k${i}`] = 'v';
    const meta = await gw.generic('POST', '/v1/accounts', key, { metadata: tooMany });
    assert.equal(meta.statusCode, 400);
    assert.equal(meta.json().error.param, 'metadata');
    const longKey = await gw.generic('POST', '/v1/accounts', key, { metadata: { ['k'.repeat(41)]: 'v' } });
    assert.equal(longKey.statusCode, 400);
    const longValue = await gw.generic('POST', '/v1/accounts', key, { metadata: { k: 'v'.repeat(501) } });
    assert.equal(longValue.statusCode, 400);
    const malformed = await gw.generic('POST', '/v1/accounts', key, undefined, { headers: {} });
    assert.equal(malformed.statusCode, 200); // an empty body is a valid create (all optional)
    const after = (await gw.generic('GET', '/v1/accounts?limit=100', key)).json().data.length;
    assert.equal(after, before + 1);
  });

  test('a missing, malformed, unknown or revoked key is 401 in the error shape', async () => {
    const none = await gw.generic('GET', '/v1/accounts', '');
    assert.equal(none.statusCode, 401);
    assert.equal(none.json().error.type, 'invalid_request_error');
    const bad = await gw.generic('GET', '/v1/accounts', `sk_test_${'A'.repeat(48)}`);
    assert.equal(bad.statusCode, 401);
    assert.doesNotMatch(bad.body, /AAAAAAAAAAAA/);
    const k2 = await gw.runtime.apiKeys.create(gw.merchant.account_id);
    assert.equal((await gw.generic('GET', '/v1/accounts', k2.secret)).statusCode, 200);
    assert.ok(await gw.runtime.apiKeys.revoke(gw.merchant.account_id, k2.key_id));
    assert.equal((await gw.generic('GET', '/v1/accounts', k2.secret)).statusCode, 401);
    assert.equal((await gw.generic('GET', '/v1/accounts', key)).statusCode, 200, 'other keys stay active');
  });
});
