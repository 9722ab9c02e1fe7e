// The security review's forgeries of a signed hosted-checkout form (issue 29, docs/contract.md §2 as
// amended): the shopper's browser carries the merchant's signed form, so a shopper could move
// a field into a neighbour's value (`notify_url=…/notify&open3d=1`) and keep the signature,
// paying without 3-D Secure, at a lower subscription price, or with another capture mode.
// With `%`, `&` and `=` escaped the folded body no longer verifies: 401, nothing stored.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sign } from '../crypto/signature.js';
import { type TestGateway, testGateway } from '../test/harness.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

let n = 0;
function signedForm(fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {
    merchant_id: gw.merchant.merchant_id,
    account_id: gw.merchant.account_id,
    order_no: `FORGE-${Date.now().toString(36)}-${++n}`,
    currency: 'USD',
    amount: '1.00',
    return_url: 'https://shop.example/done',
    first_name: 'Ana',
    last_name: 'Silva',
    shopper_email: 'ana@example.com',
    billing_country: 'US',
    website: 'shop.example',
    ...fields,
  };
  return { ...body, encryption_data: sign(body, gw.merchant.secret_key) };
}

/** Posts a form as the shopper's browser would, with the signature it carries. */
const submit = (body: Record<string, unknown>) => gw.post('/v1/checkout', body, { format: 'form', sign: false, remoteAddress: '198.51.100.7' });

async function stored(order_no: unknown): Promise<number> {
  const rows = await gw.runtime.store.db
    .selectFrom('payments')
    .select('transaction_id')
    .where('order_no', '=', order_no as string)
    .execute();
  return rows.length;
}

/** The merchant's form, and the shopper's version of it with one field folded into another. */
const ATTACKS: Array<[name: string, signed: Record<string, unknown>, fold: (b: Record<string, unknown>) => Record<string, unknown>]> = [
  [
    'open3d folded into notify_url (paid with no 3-D Secure)',
    { notify_url: 'http://127.0.0.1:9/notify', open3d: '1' },
    ({ open3d, ...b }) => ({ ...b, notify_url: `${b.notify_url}&open3d=${open3d}` }),
  ],
  [
    'subscription.contract_amount folded into subscription[contract] (charged 1.00 a month, not 30.00)',
    { subscription: { contract: 'gold', contract_name: `gold-${Date.now()}`, contract_amount: '30.00', interval: 'month' } },
    (b) => {
      const { contract_amount, ...sub } = b.subscription as Record<string, unknown>;
      return { ...b, subscription: { ...sub, contract: `${sub.contract}&subscription.contract_amount=${contract_amount}` } };
    },
  ],
  [
    'capture_method folded into cancel_url (manual capture dropped)',
    { cancel_url: 'https://shop.example/cart', capture_method: 'manual' },
    ({ capture_method, ...b }) => ({ ...b, cancel_url: `${b.cancel_url}&capture_method=${capture_method}` }),
  ],
];

describe('a signed checkout form cannot be re-shaped by the shopper (docs/contract.md §2)', () => {
  for (const [name, fields, fold] of ATTACKS) {
    test(`${name}: 401, nothing stored; the form as signed is accepted`, async () => {
      const form = signedForm(fields);
      const forged = fold(form);
      const res = await submit(forged);
      assert.equal(res.statusCode, 401, `the folded form was accepted: ${res.body.slice(0, 200)}`);
      assert.equal(await stored(form.order_no), 0);
      const genuine = await submit(form);
      assert.equal(genuine.statusCode, 200, genuine.body.slice(0, 300));
      assert.equal(await stored(form.order_no), 1);
    });
  }

  test('empty values a shopper adds change nothing: the form signs and acts as without them', async () => {
    const form = signedForm({ capture_method: 'manual' });
    const res = await submit({ ...form, open3d: '', note: '', cart_items: [], custom: '' });
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const session = await gw.runtime.store.db
      .selectFrom('checkout_sessions')
      .innerJoin('payments', 'payments.transaction_id', 'checkout_sessions.transaction_id')
      .select('checkout_sessions.request')
      .where('payments.order_no', '=', form.order_no as string)
      .executeTakeFirstOrThrow();
    const request = JSON.parse(session.request) as Record<string, unknown>;
    for (const field of ['open3d', 'note', 'cart_items', 'custom']) assert.equal(field in request, false, `${field} was stored as given`);
  });
});
