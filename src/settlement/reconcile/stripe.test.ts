// Reconciliation with Stripe end to end (issue 35 item 3), on both engines: a live merchant on the
// Stripe mock pays four times, refunds one and has one disputed (Stripe's charge.dispute.created).
// The Dashboard's balance transactions export names a charge by its `transaction_id (metadata)`
// column, a refund by its Source (our refund attempt's `re_…`), a dispute by its Source (our
// dispute's processor reference), and cannot name a charge without metadata (its `ch_…` is no
// reference of ours). An itemised balance report names every charge by `payment_intent_id`, and
// agrees with the ledger throughout.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, useDatabase } from '../../cli/testing.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { setProcessor } from '../../processors/config.js';
import { type MockStripe, type MockStripeOptions, startMockStripe } from '../../processors/stripe/mock.js';
import { directPayment, readXml, TEST_MASTER_KEY, type TestGateway, testGateway } from '../../test/harness.js';
import { item, type Paid, refundBatch } from '../../test/lifecycle.js';

const SECRET_KEY = 'sk_test_recon_51HxYz0001';
const WEBHOOK_SECRET = 'whsec_recon_0001';
let gw: TestGateway;
let mock: MockStripe;
const mockOptions: MockStripeOptions = { secret_key: SECRET_KEY, hold_webhooks: true };
let live: CreatedMerchant;

before(async () => {
  gw = await testGateway({ start_ms: Date.now(), settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  mock = await startMockStripe(mockOptions);
  live = await gw.newMerchant({ mode: 'live', name: 'Reconciled on Stripe', capture_method: 'automatic' });
  const row = await setProcessor(
    gw.runtime.store,
    gw.runtime.keyring,
    { account_id: live.account_id, connector: 'stripe', base_url: mock.url, credentials: [`secret_key=${SECRET_KEY}`, `webhook_secret=${WEBHOOK_SECRET}`] },
    Date.now(),
  );
  mockOptions.webhook = { url: `http://127.0.0.1:${port}/hooks/stripe/${row.processor_id}`, secret: WEBHOOK_SECRET };
  await gw.runtime.deps.processors.reload();
  useDatabase(gw.database_url, TEST_MASTER_KEY);
});
after(async () => {
  await mock?.idle();
  await mock?.close();
  await gw?.close();
});

let serial = 0;
function freshCard(): string {
  const body = `4111${String(Date.now() % 1e6).padStart(6, '0')}${String(++serial).padStart(5, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    sum += d > 9 ? d - 9 : d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

const db = () => gw.runtime.store.db;
type Payment = Paid & { pi: string; fee: string };
async function pay(amount: string): Promise<Payment> {
  const body = directPayment(live, { card: freshCard(), currency: 'USD', amount });
  const x = readXml(await gw.post('/v1/authorise', body, { merchant: live }));
  assert.equal(x.result_info, '0000:Success', JSON.stringify(x));
  const attempt = await db()
    .selectFrom('processor_attempts')
    .select('reference')
    .where('object_id', '=', x.transaction_id)
    .where('operation', '=', 'authorise')
    .executeTakeFirstOrThrow();
  const fees = await db()
    .selectFrom('ledger_entries')
    .select('amount_minor')
    .where('transaction_id', '=', x.transaction_id)
    .where('ledger_account', '=', 'fees')
    .execute();
  const fee = fees.reduce((s, r) => s + Number(r.amount_minor), 0);
  return { transaction_id: x.transaction_id, order_no: body.order_no as string, currency: 'USD', amount, pi: attempt.reference, fee: (fee / 100).toFixed(2) };
}

interface World {
  s: Payment[];
  refund: { id: string; re: string };
  dispute: string;
  minute: string;
}
let world: World;

async function makeWorld(): Promise<World> {
  assert.equal((await runCli('pricing', 'set', '--account', live.account_id, '--currency', 'USD', '--percent', '2.9', '--fixed', '0.30')).code, 0);
  const s = [await pay('10.00'), await pay('20.00'), await pay('30.00'), await pay('40.00')];
  const [, , s3, s4] = s as [Payment, Payment, Payment, Payment];
  const r = (await refundBatch(gw, [{ ...item(s4), refund_amount: '5.00', refund_reason: 'reconcile' }], live)).refund_orders[0];
  assert.equal(r.refund_status, '1', JSON.stringify(r));
  const re = await db()
    .selectFrom('processor_attempts')
    .select('reference')
    .where('object_id', '=', r.refund_reference_id)
    .where('operation', '=', 'refund')
    .executeTakeFirstOrThrow();
  assert.match(re.reference, /^re_/);
  const d = mock.openDispute(s3.pi);
  const ev = mock.events.findLast((e) => e.type === 'charge.dispute.created' && e.data.object.id === d.id);
  assert.equal(await mock.deliver(ev as never), 200);
  const posted = await db()
    .selectFrom('ledger_postings')
    .select(['reason', 'created_at'])
    .where('transaction_id', '=', s3.transaction_id)
    .where('reason', '=', 'dispute')
    .executeTakeFirstOrThrow();
  const minute = new Date(Number(posted.created_at)).toISOString().slice(0, 16).replace('T', ' ');
  return { s, refund: { id: r.refund_reference_id, re: re.reference }, dispute: d.id, minute };
}

function write(name: string, rows: string[]): string {
  const file = path.join(fs.mkdtempSync(path.join(gw.dir, 'stripe-')), name);
  fs.writeFileSync(file, `\ufeff${rows.join('\n')}\n`);
  return file;
}
async function reconcile(file: string): Promise<Record<string, any>> {
  const r = await runCli('reconcile', '--account', live.account_id, '--connector', 'stripe', '--file', file, '--json');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('reconcile --connector stripe', () => {
  before(async () => {
    world = await makeWorld();
  });

  test('the Dashboard export: metadata, a refund’s and a dispute’s Source name ours; a bare ch_ does not', async () => {
    const [s1, s2] = world.s as [Payment, Payment];
    const m = world.minute;
    const file = write('balance_history.csv', [
      'id,Type,Source,Amount,Fee,Net,Currency,Created (UTC),Available On (UTC),Description,transaction_id (metadata)',
      `txn_1,charge,ch_1,10.00,${s1.fee},9.41,usd,${m},${m},Order 1,${s1.transaction_id}`,
      `txn_2,charge,ch_2,20.00,${s2.fee},19.12,usd,${m},${m},Order 2,`,
      `txn_3,refund,${world.refund.re},-5.00,0.00,-5.00,usd,${m},${m},REFUND FOR CHARGE,`,
      `txn_4,adjustment,${world.dispute},-30.00,15.00,-45.00,usd,${m},${m},Chargeback withdrawal,`,
      `txn_5,payout,po_1,-100.00,0.00,-100.00,usd,${m},${m},STRIPE PAYOUT,`,
      `txn_6,stripe_fee,,-2.00,0.00,-2.00,usd,${m},${m},Billing,`,
    ]);
    const run = await reconcile(file);
    assert.deepEqual(
      ['matched', 'missing_here', 'missing_at_processor', 'amount_differs', 'fee_differs', 'not_applicable'].map((k) => run[k]),
      [2, 1, 3, 0, 1, 2],
    );
    const show = JSON.parse((await runCli('reconcile', 'show', '--run', run.run_id, '--json')).stdout);
    const items = show.items.map((i: Record<string, unknown>) => [i.kind, i.line_no, i.movement, i.transaction_id, i.ours_fee_minor, i.theirs_fee_minor]);
    const [, , s3, s4] = world.s as Paid[];
    assert.deepEqual(items.slice(0, 2), [
      ['missing_here', 3, 'capture', '', null, Number(s2.fee.replace('.', ''))],
      ['fee_differs', 5, 'dispute', s3?.transaction_id, 0, 1500],
    ]);
    assert.match(show.items[0].detail, /reference ch_2: .*names no payment of Tollgate/);
    assert.deepEqual(
      items
        .slice(2)
        .map((i: unknown[]) => i[3])
        .sort(),
      [s2.transaction_id, s3?.transaction_id, s4?.transaction_id].sort(),
      'the captures the export could not name, or does not have, are missing at the processor',
    );
  });

  test('an itemised balance report: every charge by its PaymentIntent, the refund by its re_, the dispute by its du_: all matched', async () => {
    const m = `${world.minute}:00`;
    const file = write('balance_change_from_activity.itemized.3.csv', [
      'balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,payment_intent_id,description',
      ...world.s.map((p, i) => `txn_c${i},${m},usd,${p.amount},${p.fee},0,charge,ch_c${i},${p.pi},"Order, ${i}"`),
      `txn_r,${m},usd,-5.00,0.00,-5.00,refund,${world.refund.re},${world.s[3]?.pi},`,
      `txn_d,${m},usd,-30.00,0.00,-30.00,dispute,${world.dispute},${world.s[2]?.pi},`,
      `txn_p,${m},usd,-100.00,0.00,-100.00,payout,po_2,,`,
    ]);
    const run = await reconcile(file);
    assert.deepEqual([run.lines, run.matched, run.mismatches, run.not_applicable], [7, 6, 0, 1], JSON.stringify(run));
  });
});
