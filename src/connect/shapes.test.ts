// The connect objects' shapes against the platform family's examples (docs/contract.md §24;
// issue 33 item 7), driven through its official client library's typed methods: a transfer
// (new, retrieved with a reversal inside, listed), a transfer reversal (new, retrieved,
// listed) and the balance (the platform's and, with Stripe-Account, a connected account's).
// Every member of the example is present with the same JSON type, or is one this file's
// NOT_OFFERED names, each of which docs/interface.md's "What is not offered (yet)" table
// lists on the object's row. Both engines.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { topUp } from '../payouts/admin.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { shapeProblems } from '../test/platform-shapes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Members of the family's examples absent from ours (docs/interface.md "What is not offered"). */
const NOT_OFFERED: Readonly<Record<'transfer' | 'transfer_reversal' | 'balance', readonly string[]>> = {
  // The payment (py_…) the destination account would receive: Tollgate moves the money in its
  // ledger and makes no payment object on the connected account.
  transfer: ['destination_payment'],
  transfer_reversal: [],
  balance: [],
};

let gw: TestGateway;
let stripe: Stripe;

before(async () => {
  gw = await testGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const platform = await gw.newMerchant({ name: 'shapes platform' });
  await topUp(gw.runtime.store, { account_id: platform.account_id, currency: 'USD', amount: '100.00' }, gw.clock.now);
  await topUp(gw.runtime.store, { account_id: platform.account_id, currency: 'EUR', amount: '5.00' }, gw.clock.now);
  stripe = new Stripe(await gw.apiKey(platform), { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0 });
});
after(async () => gw.close());

const asRecord = (o: object) => o as unknown as Record<string, unknown>;
const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * The items of the example balance's arrays (`available[]`, `pending[]`, `connect_reserved[]`),
 * which shapeProblems does not walk: each member of the example's first item present in each
 * of ours with its JSON type, one level into objects (`source_types`).
 */
function balanceItemProblems(ours: Record<string, unknown>): string[] {
  const { example } = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'src/generic/vendor/objects.trimmed.json'), 'utf8')) as {
      objects: Record<string, { example: Record<string, unknown> }>;
    }
  ).objects.balance as { example: Record<string, unknown> };
  const problems: string[] = [];
  const hold = (want: Record<string, unknown>, got: Record<string, unknown>, at: string) => {
    for (const [k, w] of Object.entries(want)) {
      if (!(k in got)) problems.push(`${at}.${k} is missing`);
      else if (typeOf(got[k]) !== typeOf(w)) problems.push(`${at}.${k} is ${typeOf(got[k])}, the example's is ${typeOf(w)}`);
      else if (typeOf(w) === 'object') hold(w as Record<string, unknown>, got[k] as Record<string, unknown>, `${at}.${k}`);
    }
  };
  for (const [member, items] of Object.entries(example)) {
    if (!Array.isArray(items) || items.length === 0) continue;
    const mine = ours[member];
    if (!Array.isArray(mine)) continue; // shapeProblems reports it
    mine.forEach((item, i) => {
      hold(items[0] as Record<string, unknown>, item as Record<string, unknown>, `balance.${member}[${i}]`);
    });
  }
  return problems;
}

describe('connect objects in the platform family’s shape (issue 33 item 7)', () => {
  test('transfer and transfer reversal: created, retrieved, listed', async () => {
    const dest = await stripe.accounts.create({ type: 'custom', country: 'US', capabilities: { transfers: { requested: true } } });
    const t = await stripe.transfers.create({ amount: 1500, currency: 'usd', destination: dest.id, transfer_group: 'ORDER_7', metadata: { order: '7' } });
    assert.deepEqual(shapeProblems('transfer', asRecord(t), NOT_OFFERED.transfer), []);
    assert.equal(t.source_type, 'card');
    assert.equal(t.amount_reversed, 0);
    assert.equal(t.reversals.object, 'list');
    assert.equal(t.reversals.url, `/v1/transfers/${t.id}/reversals`);
    assert.equal(t.balance_transaction, null);
    // Without a group the member is there, null (the family's document allows it).
    const plain = await stripe.transfers.create({ amount: 1, currency: 'usd', destination: dest.id });
    assert.equal(plain.transfer_group, null);
    assert.deepEqual(shapeProblems('transfer', asRecord(plain), NOT_OFFERED.transfer), []);

    const r = await stripe.transfers.createReversal(t.id, { amount: 300, metadata: { why: 'returned' } });
    assert.deepEqual(shapeProblems('transfer_reversal', asRecord(r), NOT_OFFERED.transfer_reversal), []);
    assert.equal(r.transfer, t.id);
    const got = await stripe.transfers.retrieveReversal(t.id, r.id);
    assert.deepEqual(shapeProblems('transfer_reversal', asRecord(got), NOT_OFFERED.transfer_reversal), []);
    const reversals = await stripe.transfers.listReversals(t.id);
    assert.equal(reversals.data.length, 1);
    for (const x of reversals.data) assert.deepEqual(shapeProblems('transfer_reversal', asRecord(x), NOT_OFFERED.transfer_reversal), []);

    // The transfer with its reversal inside, then as a list holds it.
    const after = await stripe.transfers.retrieve(t.id);
    assert.deepEqual(shapeProblems('transfer', asRecord(after), NOT_OFFERED.transfer), []);
    assert.equal(after.amount_reversed, 300);
    assert.deepEqual(
      after.reversals.data.map((x) => x.id),
      [r.id],
    );
    for (const x of after.reversals.data) assert.deepEqual(shapeProblems('transfer_reversal', asRecord(x), NOT_OFFERED.transfer_reversal), []);
    const listed = await stripe.transfers.list({ destination: dest.id });
    assert.equal(listed.data.length, 2);
    for (const x of listed.data) assert.deepEqual(shapeProblems('transfer', asRecord(x), NOT_OFFERED.transfer), []);
  });

  test('balance: the platform’s and a connected account’s (Stripe-Account), each amount with its source types', async () => {
    const dest = await stripe.accounts.create({ type: 'custom', country: 'US', capabilities: { transfers: { requested: true } } });
    await stripe.transfers.create({ amount: 250, currency: 'usd', destination: dest.id });
    const mine = await stripe.balance.retrieve();
    assert.deepEqual(shapeProblems('balance', asRecord(mine), NOT_OFFERED.balance), []);
    assert.deepEqual(balanceItemProblems(asRecord(mine)), []);
    assert.ok(mine.available.length >= 2, 'two currencies: the items are held');
    for (const b of [...mine.available, ...mine.pending]) assert.deepEqual(b.source_types, { card: b.amount }, 'one balance per currency: card');
    assert.deepEqual(mine.connect_reserved, []);

    const theirs = await stripe.balance.retrieve({}, { stripeAccount: dest.id });
    assert.deepEqual(shapeProblems('balance', asRecord(theirs), NOT_OFFERED.balance), []);
    assert.deepEqual(balanceItemProblems(asRecord(theirs)), []);
    assert.deepEqual(theirs.available, [{ amount: 250, currency: 'usd', source_types: { card: 250 } }]);
  });

  test('events: transfer.created, transfer.reversed and account.updated carry the transfer and the account as their routes answer them', async () => {
    const dest = await stripe.accounts.create({ type: 'custom', country: 'US', capabilities: { transfers: { requested: true } } });
    const tr = await stripe.transfers.create({ amount: 300, currency: 'usd', destination: dest.id });
    await stripe.transfers.createReversal(tr.id, { amount: 100 });
    await stripe.accounts.update(dest.id, { metadata: { tier: 'gold' } });
    const of = async (type: string) =>
      (await stripe.events.list({ type, limit: 100 })).data.filter(
        (e) => (e.data.object as { id: string }).id === (type.startsWith('transfer') ? tr.id : dest.id),
      );
    const created = await of('transfer.created');
    assert.equal(created.length, 1);
    assert.deepEqual(shapeProblems('transfer', asRecord(created[0]?.data.object as object), NOT_OFFERED.transfer), []);
    const reversed = await of('transfer.reversed');
    assert.equal(reversed.length, 1);
    const updated = await of('account.updated');
    assert.equal(updated.length, 1);
    assert.deepEqual(updated[0]?.data.object, await stripe.accounts.retrieve(dest.id));
  });

  test('every member not offered is on its object’s row of docs/interface.md “What is not offered (yet)”', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/interface.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### What is not offered (yet)'));
    for (const [kind, members] of Object.entries(NOT_OFFERED)) {
      const row = section.split('\n').find((l) => l.startsWith(`| ${kind} |`));
      assert.ok(row, `docs/interface.md has no row for ${kind}`);
      for (const m of members) assert.ok(row.includes(`\`${m}\``), `docs/interface.md's ${kind} row does not name ${m}`);
    }
  });
});
