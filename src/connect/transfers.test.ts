// `/v1/transfers`, their reversals and `GET /v1/balance` through the API (docs/contract.md §12,
// §18), on SQLite and PostgreSQL: the objects, updates, lists and filters; refusals that
// move nothing; funding under concurrency (never below zero on either side); reversals
// bounded by what was sent; Idempotency-Key replays (and the re-run after a lost answer);
// scoping by platform account and mode; and `ledger verify` catching tampered transfers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { post } from '../ledger/postings.js';
import { verifyLedger } from '../ledger/verify.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { topUp } from '../payouts/admin.js';
import { type TestGateway, type TestResponse, testGateway } from '../test/harness.js';

type Json = Record<string, any>;

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => gw.close());

interface Platform {
  m: CreatedMerchant;
  key: string;
}

/** A new platform account with its own key (own rate bucket), topped up with `minor` USD. */
async function platform(minor = 0, currency = 'USD'): Promise<Platform> {
  const m = await gw.newMerchant({ name: 'platform' });
  if (minor > 0) await topUp(gw.runtime.store, { account_id: m.account_id, currency, amount: (minor / 100).toFixed(2) }, gw.clock.now);
  return { m, key: await gw.apiKey(m) };
}

async function connected(p: Platform): Promise<string> {
  const r = await gw.generic('POST', '/v1/accounts', p.key, { capabilities: { transfers: { requested: true } } });
  assert.equal(r.statusCode, 200, r.body);
  return r.json().id;
}

async function ok(r: Promise<TestResponse> | TestResponse): Promise<Json> {
  const res = await r;
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

function refused(res: TestResponse, status: number, code: string | undefined, param?: string): Json {
  assert.equal(res.statusCode, status, res.body);
  const e = res.json().error;
  assert.equal(e.type, 'invalid_request_error', res.body);
  assert.equal(e.code, code, res.body);
  if (param !== undefined) assert.equal(e.param, param, res.body);
  assert.ok(e.message.length > 0);
  return e;
}

const transfer = (p: Platform, body: Json, headers: Record<string, string> = {}) => gw.generic('POST', '/v1/transfers', p.key, body, { headers });
const reverse = (p: Platform, id: string, body: Json = {}, headers: Record<string, string> = {}) =>
  gw.generic('POST', `/v1/transfers/${id}/reversals`, p.key, body, { headers });

/** Available minor units of one account (platform id or acct_…) in USD, from the ledger. */
async function available(account_id: string, currency = 'USD'): Promise<number> {
  const r = await gw.runtime.store.db
    .selectFrom('ledger_balances')
    .select(sql<number>`coalesce(sum(balance_minor), 0)`.as('total'))
    .where('account_id', '=', account_id)
    .where('currency', '=', currency)
    .where('ledger_account', '=', 'merchant_available')
    .executeTakeFirstOrThrow();
  return Number(r.total);
}

async function postingCount(): Promise<number> {
  const r = await gw.runtime.store.db.selectFrom('ledger_postings').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

async function transferRows(platform_account_id: string): Promise<number> {
  const r = await gw.runtime.store.db
    .selectFrom('transfers')
    .select(sql<number>`count(*)`.as('n'))
    .where('platform_account_id', '=', platform_account_id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

async function ledgerClean(): Promise<void> {
  const report = await verifyLedger(gw.runtime.store.db);
  assert.deepEqual(report.problems, []);
  assert.ok(report.transfers > 0);
}

describe('transfers', () => {
  test('only an account with the transfers capability active receives transfers; nothing is written otherwise', async () => {
    const p = await platform(10_000);
    const bare = (await ok(gw.generic('POST', '/v1/accounts', p.key, { country: 'US' }))).id as string;
    refused(await transfer(p, { amount: 100, currency: 'usd', destination: bare }), 400, 'transfers_not_allowed', 'destination');
    assert.equal((await ok(gw.generic('GET', '/v1/transfers', p.key))).data.length, 0);
    await ok(gw.generic('POST', `/v1/accounts/${bare}`, p.key, { capabilities: { transfers: { requested: true } } }));
    await ok(transfer(p, { amount: 100, currency: 'usd', destination: bare }));
  });

  test('create: the transfer object; the money moves from the platform to the connected account', async () => {
    const p = await platform(100_000);
    const dest = await connected(p);
    const t = await ok(
      transfer(p, { amount: 1500, currency: 'USD', destination: dest, description: 'week 12', metadata: { order: '6735' }, transfer_group: 'ORDER_1' }),
    );
    assert.match(t.id, /^tr_[0-9A-Z]{26}$/);
    assert.deepEqual(t, {
      id: t.id,
      object: 'transfer',
      amount: 1500,
      amount_reversed: 0,
      currency: 'usd',
      created: Math.floor(gw.clock.now / 1000),
      description: 'week 12',
      destination: dest,
      livemode: false,
      metadata: { order: '6735' },
      reversals: { object: 'list', data: [], has_more: false, url: `/v1/transfers/${t.id}/reversals` },
      reversed: false,
      transfer_group: 'ORDER_1',
      balance_transaction: null,
      source_transaction: null,
      source_type: 'card',
    });
    assert.equal(await available(p.m.account_id), 100_000 - 1500);
    assert.equal(await available(dest), 1500);
    assert.deepEqual(await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key)), t);

    // JSON bodies, a lowercase currency, no optional fields.
    const bare = await ok(gw.generic('POST', '/v1/transfers', p.key, { amount: 1, currency: 'usd', destination: dest }, { json: true }));
    assert.equal(bare.description, null);
    assert.equal(bare.transfer_group, null);
    assert.deepEqual(bare.metadata, {});
    await ledgerClean();
  });

  test('update changes description and metadata only (merged); other fields are unknown parameters', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 700, currency: 'usd', destination: dest, metadata: { a: '1', b: '2' } }));
    const upd = await ok(gw.generic('POST', `/v1/transfers/${t.id}`, p.key, { description: 'paid out', metadata: { a: '', c: '3' } }));
    assert.deepEqual(upd.metadata, { b: '2', c: '3' });
    assert.equal(upd.description, 'paid out');
    assert.equal(upd.amount, 700);
    assert.deepEqual(await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key)), upd);
    const cleared = await ok(gw.generic('POST', `/v1/transfers/${t.id}`, p.key, { metadata: '', description: '' }));
    assert.deepEqual(cleared.metadata, {});
    assert.equal(cleared.description, null);
    refused(await gw.generic('POST', `/v1/transfers/${t.id}`, p.key, { amount: 1 }), 400, 'parameter_unknown', 'amount');
    refused(await gw.generic('POST', `/v1/transfers/${t.id}`, p.key, { destination: dest }), 400, 'parameter_unknown', 'destination');
    refused(await gw.generic('POST', '/v1/transfers/tr_nope', p.key, { description: 'x' }), 404, 'resource_missing', 'id');
    assert.equal((await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key))).amount, 700);
  });

  test('list: newest first, cursors both ways, destination, transfer_group and created filters', async () => {
    const p = await platform(100_000);
    const [a, b] = [await connected(p), await connected(p)];
    const start = gw.clock.now;
    const made: Json[] = [];
    for (let i = 0; i < 6; i++) {
      gw.clock.advance(1000);
      made.unshift(await ok(transfer(p, { amount: 100 + i, currency: 'usd', destination: i % 2 ? b : a, transfer_group: i < 3 ? 'G1' : 'G2' })));
    }
    const ids = made.map((t) => t.id);
    const all = await ok(gw.generic('GET', '/v1/transfers?limit=100', p.key));
    assert.deepEqual(
      all.data.map((t: Json) => t.id),
      ids,
    );
    assert.equal(all.url, '/v1/transfers');
    assert.equal(all.has_more, false);

    const first = await ok(gw.generic('GET', '/v1/transfers?limit=4', p.key));
    assert.deepEqual(
      first.data.map((t: Json) => t.id),
      ids.slice(0, 4),
    );
    assert.equal(first.has_more, true);
    const next = await ok(gw.generic('GET', `/v1/transfers?limit=4&starting_after=${ids[3]}`, p.key));
    assert.deepEqual(
      next.data.map((t: Json) => t.id),
      ids.slice(4),
    );
    assert.equal(next.has_more, false);
    const back = await ok(gw.generic('GET', `/v1/transfers?limit=2&ending_before=${ids[4]}`, p.key));
    assert.deepEqual(
      back.data.map((t: Json) => t.id),
      ids.slice(2, 4),
    );
    assert.equal(back.has_more, true);

    const toA = await ok(gw.generic('GET', `/v1/transfers?destination=${a}`, p.key));
    assert.deepEqual(
      toA.data.map((t: Json) => t.id),
      made.filter((t) => t.destination === a).map((t) => t.id),
    );
    assert.equal(toA.data.length, 3);
    const g2 = await ok(gw.generic('GET', '/v1/transfers?transfer_group=G2', p.key));
    assert.deepEqual(
      g2.data.map((t: Json) => t.id),
      ids.slice(0, 3),
    );
    const both = await ok(gw.generic('GET', `/v1/transfers?transfer_group=G1&destination=${b}`, p.key));
    assert.deepEqual(
      both.data.map((t: Json) => t.id),
      [ids[4]],
    );
    // A cursor filtered out by the filter still places the page.
    const afterA = await ok(gw.generic('GET', `/v1/transfers?destination=${b}&starting_after=${ids[1]}`, p.key));
    assert.deepEqual(
      afterA.data.map((t: Json) => t.id),
      [ids[2], ids[4]],
    );

    const s = Math.floor(start / 1000);
    const late = await ok(gw.generic('GET', `/v1/transfers?created[gte]=${s + 5}`, p.key));
    assert.deepEqual(
      late.data.map((t: Json) => t.id),
      ids.slice(0, 2),
    );
    const exact = await ok(gw.generic('GET', `/v1/transfers?created=${s + 3}`, p.key));
    assert.deepEqual(
      exact.data.map((t: Json) => t.id),
      [ids[3]],
    );
    const window = await ok(gw.generic('GET', `/v1/transfers?created[gt]=${s + 1}&created[lt]=${s + 4}`, p.key));
    assert.deepEqual(
      window.data.map((t: Json) => t.id),
      [ids[3], ids[4]],
    );
    refused(await gw.generic('GET', '/v1/transfers?starting_after=tr_unknown', p.key), 404, 'resource_missing', 'starting_after');
    refused(await gw.generic('GET', '/v1/transfers?limit=101', p.key), 400, undefined, 'limit');
    refused(await gw.generic('GET', '/v1/transfers?colour=red', p.key), 400, 'parameter_unknown', 'colour');
  });

  test('refusals name the parameter and write nothing', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const other = await platform();
    const foreign = await connected(other);
    const gone = await connected(p);
    await ok(gw.generic('DELETE', `/v1/accounts/${gone}`, p.key));
    const postings = await postingCount();
    const cases: Array<[Json, string | undefined, string]> = [
      [{ currency: 'usd', destination: dest }, 'parameter_missing', 'amount'],
      [{ amount: 100, destination: dest }, 'parameter_missing', 'currency'],
      [{ amount: 100, currency: 'usd' }, 'parameter_missing', 'destination'],
      [{ amount: 0, currency: 'usd', destination: dest }, undefined, 'amount'],
      [{ amount: -5, currency: 'usd', destination: dest }, undefined, 'amount'],
      [{ amount: '12.5', currency: 'usd', destination: dest }, 'parameter_invalid_integer', 'amount'],
      [{ amount: '9007199254740993', currency: 'usd', destination: dest }, undefined, 'amount'],
      [{ amount: 100, currency: 'xyz', destination: dest }, undefined, 'currency'],
      [{ amount: 100, currency: 'usdd', destination: dest }, undefined, 'currency'],
      [{ amount: 100, currency: 'usd', destination: 'acct_nothing' }, 'resource_missing', 'destination'],
      [{ amount: 100, currency: 'usd', destination: foreign }, 'resource_missing', 'destination'],
      [{ amount: 100, currency: 'usd', destination: gone }, 'resource_missing', 'destination'],
      [{ amount: 100, currency: 'usd', destination: dest, source_transaction: 'ch_1' }, 'parameter_unknown', 'source_transaction'],
      [{ amount: 100, currency: 'usd', destination: dest, metadata: { ['k'.repeat(41)]: 'v' } }, undefined, 'metadata'],
    ];
    for (const [body, code, param] of cases) refused(await transfer(p, body), 400, code, param);
    assert.equal(await transferRows(p.m.account_id), 0);
    assert.equal(await postingCount(), postings);
    assert.equal(await available(p.m.account_id), 10_000);
  });

  test('more than the available balance is refused with balance_insufficient and moves nothing', async () => {
    const p = await platform(1000);
    const dest = await connected(p);
    const postings = await postingCount();
    const e = refused(await transfer(p, { amount: 1001, currency: 'usd', destination: dest }), 400, 'balance_insufficient', 'amount');
    assert.match(e.message, /1000/);
    // Another currency has no balance at all.
    refused(await transfer(p, { amount: 1, currency: 'eur', destination: dest }), 400, 'balance_insufficient', 'amount');
    assert.equal(await transferRows(p.m.account_id), 0);
    assert.equal(await postingCount(), postings);
    const funding = await gw.runtime.store.db.selectFrom('payout_funding').selectAll().where('account_id', '=', p.m.account_id).execute();
    assert.deepEqual(funding, [], 'the funding row upsert rolled back with the refusal');
    await ok(transfer(p, { amount: 1000, currency: 'usd', destination: dest }));
    refused(await transfer(p, { amount: 1, currency: 'usd', destination: dest }), 400, 'balance_insufficient', 'amount');
    assert.equal(await available(p.m.account_id), 0);
    assert.equal(await available(dest), 1000);
    assert.equal(await transferRows(p.m.account_id), 1);
  });

  test('50 concurrent transfers against a balance covering 20: exactly 20 move, never below zero', async () => {
    const p = await platform(20 * 250);
    const dests = [await connected(p), await connected(p), await connected(p)];
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => transfer(p, { amount: 250, currency: 'usd', destination: dests[i % 3] as string, metadata: { i: String(i) } })),
    );
    const byStatus = new Map<number, number>();
    for (const r of answers) byStatus.set(r.statusCode, (byStatus.get(r.statusCode) ?? 0) + 1);
    assert.deepEqual([...byStatus.entries()].sort(), [
      [200, 20],
      [400, 30],
    ]);
    for (const r of answers) if (r.statusCode === 400) assert.equal(r.json().error.code, 'balance_insufficient');
    assert.equal(await available(p.m.account_id), 0);
    assert.equal(
      (await Promise.all(dests.map((d) => available(d)))).reduce((a, b) => a + b, 0),
      20 * 250,
    );
    assert.equal(await transferRows(p.m.account_id), 20);
    await ledgerClean();
  });
});

describe('transfer reversals', () => {
  test('a partial reversal, then the rest; more than is left is amount_too_large', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 1000, currency: 'usd', destination: dest }));
    gw.clock.advance(1000);
    const part = await ok(reverse(p, t.id, { amount: 300, description: 'returned goods', metadata: { why: 'refund' }, refund_application_fee: true }));
    assert.match(part.id, /^trr_[0-9A-Z]{26}$/);
    assert.deepEqual(part, {
      id: part.id,
      object: 'transfer_reversal',
      amount: 300,
      currency: 'usd',
      created: Math.floor(gw.clock.now / 1000),
      transfer: t.id,
      description: 'returned goods',
      metadata: { why: 'refund' },
      balance_transaction: null,
      destination_payment_refund: null,
      source_refund: null,
    });
    const mid = await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key));
    assert.equal(mid.amount_reversed, 300);
    assert.equal(mid.reversed, false);
    assert.deepEqual(mid.reversals, { object: 'list', data: [part], has_more: false, url: `/v1/transfers/${t.id}/reversals` });
    assert.equal(await available(dest), 700);
    assert.equal(await available(p.m.account_id), 9300);

    refused(await reverse(p, t.id, { amount: 701 }), 400, 'amount_too_large', 'amount');
    gw.clock.advance(1000);
    const rest = await ok(reverse(p, t.id));
    assert.equal(rest.amount, 700, 'no amount: all that is left');
    assert.equal(rest.description, null);
    const done = await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key));
    assert.equal(done.amount_reversed, 1000);
    assert.equal(done.reversed, true);
    assert.deepEqual(
      done.reversals.data.map((r: Json) => r.id),
      [rest.id, part.id],
    );
    refused(await reverse(p, t.id), 400, 'amount_too_large', 'amount');
    refused(await reverse(p, t.id, { amount: 1 }), 400, 'amount_too_large', 'amount');
    assert.equal(await available(dest), 0);
    assert.equal(await available(p.m.account_id), 10_000);
    refused(await reverse(p, t.id, { amount: 0 }), 400, undefined, 'amount');
    refused(await reverse(p, 'tr_nothing', { amount: 1 }), 404, 'resource_missing', 'id');
    await ledgerClean();
  });

  test('list, retrieve and update reversals; a reversal under another transfer is not found', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 2000, currency: 'usd', destination: dest }));
    const other = await ok(transfer(p, { amount: 10, currency: 'usd', destination: dest }));
    const made: string[] = [];
    for (let i = 0; i < 12; i++) {
      gw.clock.advance(1000);
      made.unshift((await ok(reverse(p, t.id, { amount: 10 + i }))).id);
    }
    const embedded = (await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key))).reversals;
    assert.deepEqual(
      embedded.data.map((r: Json) => r.id),
      made.slice(0, 10),
    );
    assert.equal(embedded.has_more, true);
    const page = await ok(gw.generic('GET', `/v1/transfers/${t.id}/reversals?limit=5&starting_after=${made[4]}`, p.key));
    assert.deepEqual(
      page.data.map((r: Json) => r.id),
      made.slice(5, 10),
    );
    assert.equal(page.has_more, true);
    assert.equal(page.url, `/v1/transfers/${t.id}/reversals`);
    const listedOnList = (await ok(gw.generic('GET', '/v1/transfers?limit=2', p.key))).data.find((x: Json) => x.id === t.id);
    assert.deepEqual(listedOnList.reversals.data.length, 10);

    const one = await ok(gw.generic('GET', `/v1/transfers/${t.id}/reversals/${made[3]}`, p.key));
    assert.equal(one.amount, 18);
    const upd = await ok(gw.generic('POST', `/v1/transfers/${t.id}/reversals/${made[3]}`, p.key, { metadata: { note: 'x' } }));
    assert.deepEqual(upd.metadata, { note: 'x' });
    assert.equal(upd.amount, 18);
    const upd2 = await ok(gw.generic('POST', `/v1/transfers/${t.id}/reversals/${made[3]}`, p.key, { metadata: { more: 'y' } }));
    assert.deepEqual(upd2.metadata, { note: 'x', more: 'y' });
    refused(await gw.generic('POST', `/v1/transfers/${t.id}/reversals/${made[3]}`, p.key, { amount: 1 }), 400, 'parameter_unknown', 'amount');
    refused(await gw.generic('GET', `/v1/transfers/${other.id}/reversals/${made[3]}`, p.key), 404, 'resource_missing');
    refused(await gw.generic('POST', `/v1/transfers/${other.id}/reversals/${made[3]}`, p.key, { metadata: { a: 'b' } }), 404, 'resource_missing');
    refused(await gw.generic('GET', `/v1/transfers/${other.id}/reversals?starting_after=${made[0]}`, p.key), 404, 'resource_missing', 'starting_after');
    assert.deepEqual((await ok(gw.generic('GET', `/v1/transfers/${other.id}/reversals`, p.key))).data, []);
  });

  test('a reversal never takes the connected account below zero (balance_insufficient)', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 1000, currency: 'usd', destination: dest }));
    // Money leaves the connected account some other way (a payout of its own, later): 800 of the 1000.
    await gw.runtime.store.transaction((tx) =>
      post(
        tx,
        {
          account_id: dest,
          currency: 'USD',
          reason: 'test_debit',
          entries: [
            { ledger_account: 'merchant_available', amount_minor: -800 },
            { ledger_account: 'processor_clearing', amount_minor: 800 },
          ],
        },
        gw.clock.now,
      ),
    );
    const postings = await postingCount();
    refused(await reverse(p, t.id, { amount: 500 }), 400, 'balance_insufficient', 'amount');
    refused(await reverse(p, t.id), 400, 'balance_insufficient', 'amount');
    assert.equal(await postingCount(), postings);
    assert.equal((await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key))).amount_reversed, 0);
    await ok(reverse(p, t.id, { amount: 200 }));
    assert.equal(await available(dest), 0);
    refused(await reverse(p, t.id, { amount: 1 }), 400, 'balance_insufficient', 'amount');
  });

  test('concurrent reversals of one transfer never exceed it', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 1000, currency: 'usd', destination: dest }));
    const answers = await Promise.all(Array.from({ length: 30 }, () => reverse(p, t.id, { amount: 100 })));
    assert.equal(answers.filter((r) => r.statusCode === 200).length, 10);
    for (const r of answers) if (r.statusCode !== 200) refused(r, 400, 'amount_too_large', 'amount');
    const after = await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key));
    assert.equal(after.amount_reversed, 1000);
    assert.equal(after.reversed, true);

    // "All that is left", many at once: exactly one takes it.
    const t2 = await ok(transfer(p, { amount: 500, currency: 'usd', destination: dest }));
    const rests = await Promise.all(Array.from({ length: 10 }, () => reverse(p, t2.id)));
    assert.deepEqual(
      rests.filter((r) => r.statusCode === 200).map((r) => r.json().amount),
      [500],
    );
    assert.equal(await available(dest), 0);
    await ledgerClean();
  });

  test('transfers and reversals between one platform and several accounts at once: no deadlock, the books add up', async () => {
    const p = await platform(5000);
    const dests = [await connected(p), await connected(p), await connected(p)];
    const seed = await Promise.all(dests.map((d) => ok(transfer(p, { amount: 1000, currency: 'usd', destination: d }))));
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? reverse(p, (seed[i % 3] as Json).id, { amount: 50 }) : transfer(p, { amount: 100, currency: 'usd', destination: dests[i % 3] as string }),
      ),
    );
    for (const r of answers) assert.ok(r.statusCode === 200 || r.statusCode === 400, `${r.statusCode} ${r.body}`);
    const moved = answers.filter((r, i) => i % 2 === 0 && r.statusCode === 200).length * 100;
    const back = answers.filter((r, i) => i % 2 === 1 && r.statusCode === 200).length * 50;
    assert.equal(await available(p.m.account_id), 5000 - 3000 - moved + back);
    assert.ok((await available(p.m.account_id)) >= 0);
    for (const d of dests) assert.ok((await available(d)) >= 0);
    await ledgerClean();
  });
});

describe('Idempotency-Key on transfers and reversals', () => {
  test('a replay answers the same transfer (one row, one debit); another body with the key is 409', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const body = { amount: 400, currency: 'usd', destination: dest, metadata: { order: '1' } };
    const first = await transfer(p, body, { 'idempotency-key': 'tr-key-1' });
    assert.equal(first.statusCode, 200, first.body);
    const again = await transfer(p, body, { 'idempotency-key': 'tr-key-1' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.json().id, first.json().id);
    assert.equal(await transferRows(p.m.account_id), 1);
    assert.equal(await available(p.m.account_id), 9600);
    const changed = await transfer(p, { ...body, amount: 401 }, { 'idempotency-key': 'tr-key-1' });
    assert.equal(changed.statusCode, 400, changed.body);
    assert.equal(changed.json().error.type, 'idempotency_error');
    assert.equal(await transferRows(p.m.account_id), 1);

    const id = first.json().id;
    const r1 = await reverse(p, id, { amount: 100 }, { 'idempotency-key': 'trr-key-1' });
    const r2 = await reverse(p, id, { amount: 100 }, { 'idempotency-key': 'trr-key-1' });
    assert.equal(r2.json().id, r1.json().id);
    assert.equal(r2.headers['idempotent-replayed'], 'true');
    assert.equal((await ok(gw.generic('GET', `/v1/transfers/${id}`, p.key))).amount_reversed, 100);
    assert.equal((await reverse(p, id, { amount: 150 }, { 'idempotency-key': 'trr-key-1' })).json().error.type, 'idempotency_error');
    await ledgerClean();
  });

  test('a re-run after the answer was lost (the key’s lease taken over) answers what the first run made', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const body = { amount: 250, currency: 'usd', destination: dest };
    const first = await ok(transfer(p, body, { 'idempotency-key': 'lost-1' }));
    const rev = await ok(reverse(p, first.id, { amount: 50 }, { 'idempotency-key': 'lost-2' }));
    // As after a kill between the commit and the stored answer, once the 60 s lease has run out.
    await gw.runtime.store.transaction((tx) =>
      tx
        .updateTable('idempotency_keys')
        .set({ status: 'started', response_status: 0, response_body: '', locked_until: 0 })
        .where('idem_key', 'in', ['lost-1', 'lost-2'])
        .execute(),
    );
    const rerun = await transfer(p, body, { 'idempotency-key': 'lost-1' });
    assert.equal(rerun.statusCode, 200, rerun.body);
    assert.equal(rerun.headers['idempotent-replayed'], undefined, 'the handler ran again');
    assert.equal(rerun.json().id, first.id);
    assert.equal(rerun.json().amount_reversed, 50, 'the transfer as it stands now');
    const rerunRev = await ok(reverse(p, first.id, { amount: 50 }, { 'idempotency-key': 'lost-2' }));
    assert.equal(rerunRev.id, rev.id);
    assert.equal(await transferRows(p.m.account_id), 1);
    assert.equal(await available(p.m.account_id), 10_000 - 200);
    assert.equal((await transfer(p, body, { 'idempotency-key': 'lost-1' })).headers['idempotent-replayed'], 'true', 'stored this time');
    await ledgerClean();
  });
});

describe('scoping by platform account and mode', () => {
  test('another platform’s key, or a live key, can neither see nor reverse nor update a transfer', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 500, currency: 'usd', destination: dest }));
    const r = await ok(reverse(p, t.id, { amount: 100 }));
    const stranger = await platform(10_000);
    const live = await gw.newMerchant({ name: 'live platform', mode: 'live' });
    const liveKey = await gw.apiKey(live);
    assert.match(liveKey, /^sk_live_/);
    for (const key of [stranger.key, liveKey]) {
      refused(await gw.generic('GET', `/v1/transfers/${t.id}`, key), 404, 'resource_missing', 'id');
      refused(await gw.generic('POST', `/v1/transfers/${t.id}`, key, { metadata: { x: 'y' } }), 404, 'resource_missing', 'id');
      refused(await gw.generic('POST', `/v1/transfers/${t.id}/reversals`, key, { amount: 1 }), 404, 'resource_missing', 'id');
      refused(await gw.generic('GET', `/v1/transfers/${t.id}/reversals`, key), 404, 'resource_missing', 'id');
      refused(await gw.generic('GET', `/v1/transfers/${t.id}/reversals/${r.id}`, key), 404, 'resource_missing');
      refused(await gw.generic('POST', `/v1/transfers/${t.id}/reversals/${r.id}`, key, { metadata: { x: 'y' } }), 404, 'resource_missing');
      refused(await gw.generic('GET', `/v1/transfers?starting_after=${t.id}`, key), 404, 'resource_missing', 'starting_after');
      assert.equal((await gw.generic('GET', `/v1/transfers?destination=${dest}`, key)).statusCode, 404, 'another platform’s account is no such account');
      refused(await gw.generic('GET', '/v1/balance', key, undefined, { headers: { 'stripe-account': dest } }), 404, 'resource_missing', 'Stripe-Account');
    }
    refused(await transfer(stranger, { amount: 1, currency: 'usd', destination: dest }), 400, 'resource_missing', 'destination');
    const still = await ok(gw.generic('GET', `/v1/transfers/${t.id}`, p.key));
    assert.equal(still.amount_reversed, 100);
    assert.deepEqual(still.metadata, {});
  });
});

describe('GET /v1/balance', () => {
  test('the caller’s balance; with Stripe-Account one of its connected accounts’', async () => {
    const p = await platform(10_000);
    await topUp(gw.runtime.store, { account_id: p.m.account_id, currency: 'EUR', amount: '5.00' }, gw.clock.now);
    const dest = await connected(p);
    const empty = await connected(p);
    await ok(transfer(p, { amount: 1234, currency: 'usd', destination: dest }));
    const mine = await ok(gw.generic('GET', '/v1/balance', p.key));
    const funds = (amount: number, currency: string) => ({ amount, currency, source_types: { card: amount } });
    assert.deepEqual(mine, {
      object: 'balance',
      livemode: false,
      available: [funds(500, 'eur'), funds(10_000 - 1234, 'usd')],
      pending: [funds(0, 'eur'), funds(0, 'usd')],
      connect_reserved: [],
    });
    const theirs = await ok(gw.generic('GET', '/v1/balance', p.key, undefined, { headers: { 'stripe-account': dest } }));
    assert.deepEqual(theirs, { object: 'balance', livemode: false, available: [funds(1234, 'usd')], pending: [funds(0, 'usd')], connect_reserved: [] });
    assert.deepEqual(await ok(gw.generic('GET', '/v1/balance', p.key, undefined, { headers: { 'stripe-account': empty } })), {
      object: 'balance',
      livemode: false,
      available: [],
      pending: [],
      connect_reserved: [],
    });
    refused(
      await gw.generic('GET', '/v1/balance', p.key, undefined, { headers: { 'stripe-account': 'acct_nothing' } }),
      404,
      'resource_missing',
      'Stripe-Account',
    );
    assert.equal((await gw.generic('GET', '/v1/balance', '')).statusCode, 401);

    // Other routes refuse the header rather than act on the platform's own balance unasked.
    refused(await transfer(p, { amount: 100, currency: 'usd', destination: empty }, { 'stripe-account': dest }), 400, 'parameter_unknown', 'Stripe-Account');
    assert.equal(await available(p.m.account_id), 10_000 - 1234);
    assert.equal(await available(dest), 1234);
  });
});

describe('GET /v1/events with Stripe-Account', () => {
  test('a connected account’s events: its account.updated and the transfers it received, naming it; another account’s are not its; writes still refuse the header', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const other = await connected(p);
    const t = await ok(transfer(p, { amount: 300, currency: 'usd', destination: dest }));
    await ok(reverse(p, t.id, { amount: 100 }));
    const elsewhere = await ok(transfer(p, { amount: 200, currency: 'usd', destination: other }));
    await ok(gw.generic('POST', `/v1/accounts/${dest}`, p.key, { metadata: { k: 'v' } }));
    const as = (id: string) => ({ headers: { 'stripe-account': id } });

    const theirs = await ok(gw.generic('GET', '/v1/events?limit=100', p.key, undefined, as(dest)));
    assert.deepEqual(theirs.data.map((e: Json) => e.type).sort(), ['account.updated', 'transfer.created', 'transfer.reversed']);
    for (const e of theirs.data as Json[]) {
      assert.equal(e.account, dest, 'an event read for a connected account names it');
      assert.ok([dest, t.id].includes(e.data.object.id), JSON.stringify(e.data.object).slice(0, 200));
    }
    const filtered = await ok(gw.generic('GET', '/v1/events?type=transfer.*', p.key, undefined, as(dest)));
    assert.deepEqual(filtered.data.map((e: Json) => e.type).sort(), ['transfer.created', 'transfer.reversed']);
    // The platform's own read has all of them, the other account's transfer too, and names no account.
    const mine = await ok(gw.generic('GET', '/v1/events?limit=100', p.key));
    assert.ok(mine.data.some((e: Json) => e.data.object.id === elsewhere.id));
    assert.ok(mine.data.every((e: Json) => e.account === undefined));

    const about = theirs.data[0] as Json;
    assert.equal((await ok(gw.generic('GET', `/v1/events/${about.id}`, p.key, undefined, as(dest)))).account, dest);
    const notTheirs = mine.data.find((e: Json) => e.data.object.id === elsewhere.id) as Json;
    refused(await gw.generic('GET', `/v1/events/${notTheirs.id}`, p.key, undefined, as(dest)), 404, 'resource_missing', 'id');
    assert.equal((await ok(gw.generic('GET', `/v1/events/${notTheirs.id}`, p.key, undefined, as(other)))).account, other);

    // Not one of the caller's connected accounts (another platform's, unknown): 404 on the header.
    const stranger = await platform();
    for (const id of [dest, 'acct_nothing'])
      refused(await gw.generic('GET', '/v1/events', stranger.key, undefined, as(id)), 404, 'resource_missing', 'Stripe-Account');
    refused(await gw.generic('GET', `/v1/events/${about.id}`, stranger.key, undefined, as(dest)), 404, 'resource_missing', 'Stripe-Account');
    // Where connected accounts have nothing of their own, the header is still refused.
    refused(await gw.generic('GET', '/v1/customers', p.key, undefined, as(dest)), 400, 'parameter_unknown', 'Stripe-Account');
    refused(await gw.generic('GET', '/v1/payment_intents', p.key, undefined, as(dest)), 400, 'parameter_unknown', 'Stripe-Account');
    refused(
      await gw.generic('POST', '/v1/webhook_endpoints', p.key, { url: 'https://hooks.example/x', enabled_events: ['*'] }, as(dest)),
      400,
      'parameter_unknown',
      'Stripe-Account',
    );
  });
});

describe('ledger verify and transfers', () => {
  test('a tampered transfer or reversal is caught; restored, the ledger verifies', async () => {
    const p = await platform(10_000);
    const dest = await connected(p);
    const t = await ok(transfer(p, { amount: 900, currency: 'usd', destination: dest }));
    const r = await ok(reverse(p, t.id, { amount: 300 }));
    await ledgerClean();
    const db = gw.runtime.store;
    const problemsAfter = async (change: () => Promise<unknown>, undo: () => Promise<unknown>): Promise<string[]> => {
      await change();
      const report = await verifyLedger(db.db);
      await undo();
      return report.problems;
    };
    const setTransfer = (values: { reversed_minor?: number; amount_minor?: number }) => () =>
      db.transaction((tx) => tx.updateTable('transfers').set(values).where('id', '=', t.id).execute());

    // reversed_minor raised without a reversal: the rows and the postings disagree with it.
    const raised = await problemsAfter(setTransfer({ reversed_minor: 400 }), setTransfer({ reversed_minor: 300 }));
    assert.ok(
      raised.some((x) => x.includes(t.id) && x.includes('reversals sum to 300')),
      raised.join('\n'),
    );
    assert.ok(
      raised.some((x) => x.includes(`transfer ${t.id}`) && x.includes('merchant_available posts -600, expected -500')),
      raised.join('\n'),
    );
    // Past the amount.
    const over = await problemsAfter(setTransfer({ reversed_minor: 1000 }), setTransfer({ reversed_minor: 300 }));
    assert.ok(
      over.some((x) => x.includes('outside 0 … 900')),
      over.join('\n'),
    );
    // A reversal row changed: its postings and the transfer's sum disagree.
    const setReversal = (amount_minor: number) => () =>
      db.transaction((tx) => tx.updateTable('transfer_reversals').set({ amount_minor }).where('id', '=', r.id).execute());
    const rev = await problemsAfter(setReversal(250), setReversal(300));
    assert.ok(
      rev.some((x) => x.startsWith(`reversal ${r.id}`)),
      rev.join('\n'),
    );
    // A transfer's amount changed.
    const amount = await problemsAfter(setTransfer({ amount_minor: 1000 }), setTransfer({ amount_minor: 900 }));
    assert.ok(
      amount.some((x) => x.includes(`transfer ${t.id}`)),
      amount.join('\n'),
    );
    await ledgerClean();
  });
});
