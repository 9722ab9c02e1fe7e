// Adyen's dispute notifications end to end (issue 34 item 2): a live merchant on the Adyen mock
// pays, then signed dispute notifications are posted to /hooks/adyen/<processor_id> as Adyen
// sends them (the shapes of Webhooks-v1.json's examples). A CHARGEBACK opens the dispute
// `needs_response` with the ledger's debit, the same notification again changes nothing,
// CHARGEBACK_REVERSED wins it; an inquiry escalates; reordered notifications end where Adyen's
// order would; a notification for a payment Tollgate does not know is kept and accepted.
// The ledger verifies after each. Both engines.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { runResponse } from '../../disputes/respond.js';
import { DISPUTE_RESPOND_KIND, giveEvidence } from '../../disputes/service.js';
import { accountBalances } from '../../ledger/balances.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { directPayment, readXml, type TestGateway, testGateway } from '../../test/harness.js';
import { setProcessor } from '../config.js';
import { DISPUTE_EVENTS } from './disputes.js';
import { type AdyenMock, startAdyenMock } from './mock.js';
import { type NotificationRequestItem, signItem } from './webhooks.js';

const API_KEY = 'AQE_live_disputes_key_51a0';
const HMAC_KEY = 'B1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8F91';
const MERCHANT = 'TollgateDisputesECOM';

let gw: TestGateway;
let mock: AdyenMock;
let live: CreatedMerchant;
let processor_id: string;

before(async () => {
  gw = await testGateway({ settings: { processor_timeout_ms: 2_000 } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (gw.app.server.address() as AddressInfo).port;
  const { store, keyring, deps } = gw.runtime;
  mock = await startAdyenMock({ api_key: API_KEY, merchant_account: MERCHANT, hmac_key: HMAC_KEY });
  live = await gw.newMerchant({ mode: 'live', name: 'Live on Adyen, disputed' });
  const row = await setProcessor(
    store,
    keyring,
    {
      account_id: live.account_id,
      connector: 'adyen',
      base_url: mock.url,
      credentials: [`api_key=${API_KEY}`, `merchant_account=${MERCHANT}`, `hmac_key=${HMAC_KEY}`],
    },
    Date.now(),
  );
  processor_id = row.processor_id;
  mock.webhook_url = `http://127.0.0.1:${port}/hooks/adyen/${processor_id}`;
  await deps.processors.reload();
});
after(async () => {
  await mock?.close();
  await gw?.close();
});

function freshCard(): string {
  const body = `4${Array.from({ length: 14 }, () => randomInt(10)).join('')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** An automatic payment of 10.00 EUR, approved and captured by Adyen: its transaction id and Adyen's pspReference. */
async function paid(): Promise<{ transaction_id: string; psp: string }> {
  const body = directPayment(live, { card: freshCard(), currency: 'EUR', amount: '10.00' });
  const res = await gw.post('/v1/authorise', body, { merchant: live });
  assert.equal(res.statusCode, 200, res.body);
  const x = readXml(res) as { transaction_id: string; order_status: string };
  mock.queued = [];
  const psp = [...mock.payments.values()].find((p) => p.reference === x.transaction_id)?.psp;
  assert.ok(psp, 'at Adyen');
  return { transaction_id: x.transaction_id, psp };
}

const newPsp = () => randomBytes(8).toString('hex').toUpperCase();

/** A dispute notification as Adyen sends it, signed. */
function item(
  eventCode: string,
  o: {
    dispute: string;
    payment?: string;
    merchantReference?: string;
    date?: string;
    additionalData?: Record<string, string>;
    value?: number;
    success?: 'true' | 'false';
  },
): NotificationRequestItem {
  const n: NotificationRequestItem = {
    pspReference: o.dispute,
    ...(o.payment ? { originalReference: o.payment } : {}),
    merchantAccountCode: MERCHANT,
    merchantReference: o.merchantReference ?? '',
    amount: { currency: 'EUR', value: o.value ?? 1000 },
    eventCode,
    eventDate: o.date ?? new Date().toISOString(),
    paymentMethod: 'visa',
    reason: '',
    success: o.success ?? 'true',
    additionalData: { ...(o.additionalData ?? {}) },
  };
  n.additionalData = { ...n.additionalData, hmacSignature: signItem(HMAC_KEY, n) };
  return n;
}

async function post(...items: NotificationRequestItem[]): Promise<void> {
  const r = await mock.post(items);
  assert.deepEqual([r.status, r.body], [200, '[accepted]']);
}

const db = () => gw.runtime.store.db;
const disputeOf = (tid: string) => db().selectFrom('disputes').selectAll().where('transaction_id', '=', tid).executeTakeFirst();
const available = async () => Number((await accountBalances(db(), live.account_id)).find((b) => b.currency === 'EUR')?.available_minor ?? 0);
const eventsOf = async (id: string) =>
  (await db().selectFrom('events').select('event_type').where('object_id', '=', id).orderBy('created_at').execute()).map((e) => e.event_type);

async function ledgerOk(): Promise<void> {
  assert.deepEqual((await verifyLedger(db())).problems, []);
}

describe('Adyen dispute notifications', () => {
  test('CHARGEBACK opens the dispute needs_response with the debit; the same notification again changes nothing; CHARGEBACK_REVERSED wins it', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    const due = '2031-07-31T03:03:07+02:00';
    const cb = item('CHARGEBACK', {
      dispute,
      payment: p.psp,
      merchantReference: p.transaction_id,
      additionalData: { chargebackReasonCode: '10.4', chargebackSchemeCode: 'visa', defensePeriodEndsAt: due, defendable: 'true' },
    });
    await post(cb);
    const d = await disputeOf(p.transaction_id);
    assert.ok(d, 'opened');
    assert.deepEqual(
      [d.status, d.kind, d.reason, d.connector, d.processor_ref, Number(d.amount_minor), d.currency, Number(d.evidence_due_by)],
      ['needs_response', 'chargeback', 'fraudulent', 'adyen', dispute, 1000, 'EUR', Date.parse(due)],
    );
    assert.equal(await available(), before - 1000, 'the amount left the available balance');
    await ledgerOk();

    // Adyen delivers it again (and in one delivery twice): nothing more.
    await post(cb);
    await post(cb, cb);
    assert.equal(await available(), before - 1000);
    assert.equal((await db().selectFrom('disputes').select('dispute_id').where('transaction_id', '=', p.transaction_id).execute()).length, 1);
    assert.deepEqual(await eventsOf(d.dispute_id), ['dispute.created']);
    const kept = await db()
      .selectFrom('processor_notifications')
      .select(['result'])
      .where('processor_id', '=', processor_id)
      .where('reference', '=', dispute)
      .execute();
    assert.deepEqual(
      kept.map((k) => k.result),
      ['settled'],
      'recorded once',
    );

    // Reversed (the later notifications of a dispute may lack originalReference): won, the amount comes back.
    const reversed = item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id });
    await post(reversed);
    await post(reversed);
    const won = await disputeOf(p.transaction_id);
    assert.equal(won?.status, 'won');
    assert.equal(await available(), before);
    assert.deepEqual(await eventsOf(d.dispute_id), ['dispute.created', 'dispute.closed']);
    await ledgerOk();

    // The issuer declines the defence: a second chargeback takes it again.
    await post(item('SECOND_CHARGEBACK', { dispute, merchantReference: p.transaction_id, additionalData: { chargebackReasonCode: '10.4' } }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'needs_response');
    assert.equal(await available(), before - 1000);
    await post(item('PREARBITRATION_LOST', { dispute, merchantReference: p.transaction_id }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'lost');
    assert.equal(await available(), before - 1000);
    await ledgerOk();
  });

  test('REQUEST_FOR_INFORMATION opens an inquiry (no money), INFORMATION_SUPPLIED submits it, CHARGEBACK escalates it; a defence period ended after the defence changes nothing', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    await post(item('REQUEST_FOR_INFORMATION', { dispute, payment: p.psp, merchantReference: p.transaction_id }));
    let d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind, d?.reason], ['warning_needs_response', 'inquiry', 'general']);
    assert.equal(await available(), before, 'an inquiry moves no money');
    await post(item('INFORMATION_SUPPLIED', { dispute, payment: p.psp, merchantReference: p.transaction_id, additionalData: { disputeStatus: 'Pending' } }));
    d = await disputeOf(p.transaction_id);
    assert.equal(d?.status, 'under_review');
    assert.ok(d?.submitted_at);
    await post(item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, additionalData: { chargebackReasonCode: '4855' } }));
    d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind], ['needs_response', 'chargeback']);
    assert.equal(await available(), before - 1000);
    await post(
      item('DISPUTE_DEFENSE_PERIOD_ENDED', { dispute, payment: p.psp, merchantReference: p.transaction_id, additionalData: { disputeStatus: 'Lost' } }),
    );
    assert.equal((await disputeOf(p.transaction_id))?.status, 'lost', 'unanswered since the chargeback: lost');
    await ledgerOk();
  });

  test('NOTIFICATION_OF_CHARGEBACK opens the dispute as a warning (Adyen deducts nothing yet); ISSUER_RESPONSE_TIMEFRAME_EXPIRED closes it won', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    await post(
      item('NOTIFICATION_OF_CHARGEBACK', {
        dispute,
        payment: p.psp,
        merchantReference: p.transaction_id,
        additionalData: { chargebackReasonCode: '13.1', defensePeriodEndsAt: '2031-01-01T00:00:00Z' },
      }),
    );
    const d = await disputeOf(p.transaction_id);
    assert.deepEqual([d?.status, d?.kind, d?.reason], ['warning_needs_response', 'inquiry', 'product_not_received']);
    assert.equal(await available(), before);
    await post(item('ISSUER_RESPONSE_TIMEFRAME_EXPIRED', { dispute, payment: p.psp, merchantReference: p.transaction_id }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(), before);
    await ledgerOk();
  });

  test('reordered: SECOND_CHARGEBACK, CHARGEBACK_REVERSED, CHARGEBACK in reverse end as Adyen’s order would (needs_response, debited once)', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    const t = Date.now();
    const at = (s: number) => new Date(t + s * 1000).toISOString();
    const cb = item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, date: at(0) });
    const rev = item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id, date: at(10) });
    const second = item('SECOND_CHARGEBACK', { dispute, merchantReference: p.transaction_id, date: at(20) });
    await post(second);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'needs_response');
    await post(rev);
    await post(cb);
    await post(second, rev, cb);
    const d = await disputeOf(p.transaction_id);
    assert.equal(d?.status, 'needs_response', 'the second chargeback, applied after the reversal it follows');
    assert.equal(await available(), before - 1000, 'debited once in all');
    await ledgerOk();
  });

  test('an INFORMATION_SUPPLIED before its REQUEST_FOR_INFORMATION waits for it, then applies', async () => {
    const p = await paid();
    const dispute = newPsp();
    await post(item('INFORMATION_SUPPLIED', { dispute, payment: p.psp, merchantReference: p.transaction_id }));
    assert.equal(await disputeOf(p.transaction_id), undefined, 'nothing opens it yet');
    await post(item('REQUEST_FOR_INFORMATION', { dispute, payment: p.psp, merchantReference: p.transaction_id }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'under_review');
    const kept = await db().selectFrom('dispute_orphans').select(['state', 'resolved_at']).where('processor_ref', '=', dispute).execute();
    assert.equal(kept.length, 1);
    assert.equal(kept[0]?.state, 'waiting');
    assert.ok(kept[0]?.resolved_at, 'applied');
  });

  test('a notification for a payment Tollgate does not know is kept (dispute_orphans, unmatched) and accepted', async () => {
    const dispute = newPsp();
    const unknown = newPsp();
    const n = item('CHARGEBACK', { dispute, payment: unknown, merchantReference: 'someone-elses-order', additionalData: { chargebackReasonCode: '4837' } });
    await post(n);
    await post(n);
    const kept = await db().selectFrom('dispute_orphans').selectAll().where('processor_ref', '=', dispute).execute();
    assert.equal(kept.length, 1);
    assert.deepEqual([kept[0]?.state, kept[0]?.payment_ref, kept[0]?.event, kept[0]?.account_id], ['unknown_payment', unknown, 'CHARGEBACK', live.account_id]);
    assert.ok(!kept[0]?.notice.includes('hmacSignature'));
    const noted = await db()
      .selectFrom('processor_notifications')
      .select('result')
      .where('processor_id', '=', processor_id)
      .where('reference', '=', dispute)
      .execute();
    assert.deepEqual(
      noted.map((x) => x.result),
      ['unmatched'],
    );
    assert.equal((await db().selectFrom('disputes').select('dispute_id').where('processor_ref', '=', dispute).execute()).length, 0);
  });

  // Issue 34 review, item 1: a repeated reopen notice that came after its own move must not wait to reopen the dispute again.
  test('SECOND_CHARGEBACK applied, its record lost (a crash before it), delivered again; then PREARBITRATION_WON: won, the amount back once', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    const t = Date.now();
    const at = (s: number) => new Date(t + s * 1000).toISOString();
    await post(item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, date: at(0) }));
    await post(item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id, date: at(10) }));
    const second = item('SECOND_CHARGEBACK', { dispute, merchantReference: p.transaction_id, date: at(20) });
    await post(second);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'needs_response');
    // The process died after the move committed and before its record: Adyen delivers it again.
    await gw.runtime.store.transaction((tx) =>
      tx
        .deleteFrom('processor_notifications')
        .where('processor_id', '=', processor_id)
        .where('notification_id', 'like', `dispute:${dispute}:SECOND_CHARGEBACK:%`)
        .execute(),
    );
    await post(second);
    assert.equal(await available(), before - 1000, 'the redelivery took nothing');
    const waiting = await db().selectFrom('dispute_orphans').select('event').where('processor_ref', '=', dispute).execute();
    assert.deepEqual(waiting, [], 'nothing kept waiting');
    const kept = await db()
      .selectFrom('processor_notifications')
      .select('result')
      .where('processor_id', '=', processor_id)
      .where('notification_id', 'like', `dispute:${dispute}:SECOND_CHARGEBACK:%`)
      .execute();
    assert.deepEqual(
      kept.map((k) => k.result),
      ['settled'],
      'recorded as the delivery that moved it',
    );
    await post(item('PREARBITRATION_WON', { dispute, merchantReference: p.transaction_id, date: at(30) }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(), before);
    // Delivered once more after the win (its record lost again): it reopens nothing.
    await gw.runtime.store.transaction((tx) =>
      tx
        .deleteFrom('processor_notifications')
        .where('processor_id', '=', processor_id)
        .where('notification_id', 'like', `dispute:${dispute}:SECOND_CHARGEBACK:%`)
        .execute(),
    );
    await post(second);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(), before);
    await ledgerOk();
  });

  test('SECOND_CHARGEBACK delivered three times at once: applied once, none kept waiting; PREARBITRATION_WON then ends it won, the amount back', async () => {
    const p = await paid();
    const before = await available();
    const dispute = newPsp();
    const t = Date.now();
    const at = (s: number) => new Date(t + s * 1000).toISOString();
    await post(item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, date: at(0) }));
    await post(item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id, date: at(10) }));
    const second = item('SECOND_CHARGEBACK', { dispute, merchantReference: p.transaction_id, date: at(20) });
    await Promise.all([post(second), post(second), post(second)]);
    assert.equal((await disputeOf(p.transaction_id))?.status, 'needs_response');
    assert.equal(await available(), before - 1000, 'taken once');
    const waiting = await db().selectFrom('dispute_orphans').select('event').where('processor_ref', '=', dispute).where('resolved_at', 'is', null).execute();
    assert.deepEqual(waiting, [], 'nothing kept waiting');
    await post(item('PREARBITRATION_WON', { dispute, merchantReference: p.transaction_id, date: at(30) }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(), before);
    await ledgerOk();
  });

  // Issue 34 review, item 2: Adyen books the chargeback it announced after the defence too.
  test('NOTIFICATION_OF_CHARGEBACK, the defence submitted, then CHARGEBACK: the money leaves, the dispute stays under review and its defence is still sent', async () => {
    const p = await paid();
    const before = await available();
    const dispute = mock.openDispute(p.psp);
    await post(
      item('NOTIFICATION_OF_CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, additionalData: { chargebackReasonCode: '10.4' } }),
    );
    const d = await disputeOf(p.transaction_id);
    assert.ok(d);
    await giveEvidence(gw.runtime.deps, d, [{ field: 'uncategorized_text', text: 'Delivered and signed for.' }], true, Date.now());
    assert.equal((await disputeOf(p.transaction_id))?.status, 'under_review');
    const due = async () =>
      (
        await db()
          .selectFrom('scheduled_jobs')
          .select('status')
          .where('kind', '=', DISPUTE_RESPOND_KIND)
          .where('payload', 'like', `%${d.dispute_id}%`)
          .execute()
      ).length;
    assert.equal(await due(), 1, 'the defence job is queued');
    await post(
      item('CHARGEBACK', {
        dispute,
        payment: p.psp,
        merchantReference: p.transaction_id,
        additionalData: { chargebackReasonCode: '10.4', disputeStatus: 'Pending' },
      }),
    );
    const booked = await disputeOf(p.transaction_id);
    assert.deepEqual([booked?.status, booked?.kind], ['under_review', 'chargeback'], 'not asked again');
    assert.equal(await available(), before - 1000, 'the amount left when Adyen booked it');
    assert.equal(await runResponse(gw.runtime.deps, d.dispute_id, 'defend', Date.now()), 'approved', 'the defence is still sent');
    assert.equal(mock.disputes.get(dispute)?.status, 'defended');
    // The same CHARGEBACK again, and CHARGEBACK_REVERSED: won, the amount back once.
    await post(item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, date: new Date(Date.now() - 1).toISOString() }));
    await post(item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'won');
    assert.equal(await available(), before);
    await ledgerOk();
  });

  test('lost when the defence period ended, then CHARGEBACK_REVERSED: won, the amount back; a reversal older than the loss changes nothing', async () => {
    const p = await paid();
    const before = await available();
    const t = Date.now();
    const at = (s: number) => new Date(t + s * 1000).toISOString();
    const dispute = newPsp();
    await post(item('CHARGEBACK', { dispute, payment: p.psp, merchantReference: p.transaction_id, date: at(0) }));
    await post(item('DISPUTE_DEFENSE_PERIOD_ENDED', { dispute, merchantReference: p.transaction_id, date: at(10), additionalData: { disputeStatus: 'Lost' } }));
    assert.equal((await disputeOf(p.transaction_id))?.status, 'lost');
    assert.equal(await available(), before - 1000);
    await post(item('CHARGEBACK_REVERSED', { dispute, merchantReference: p.transaction_id, date: at(20) }));
    const d = await disputeOf(p.transaction_id);
    assert.equal(d?.status, 'won', 'Adyen reversed it');
    assert.equal(await available(), before, 'the amount is back');
    assert.deepEqual(await eventsOf(d?.dispute_id ?? ''), ['dispute.created', 'dispute.closed', 'dispute.closed']);
    await ledgerOk();

    // Reordered: the reversal (t+10) comes after the pre-arbitration lost (t+30) that ended the dispute.
    const q = await paid();
    const other = newPsp();
    const qBefore = await available();
    await post(item('CHARGEBACK', { dispute: other, payment: q.psp, merchantReference: q.transaction_id, date: at(0) }));
    await post(item('SECOND_CHARGEBACK', { dispute: other, merchantReference: q.transaction_id, date: at(20) }));
    await post(item('PREARBITRATION_LOST', { dispute: other, merchantReference: q.transaction_id, date: at(30) }));
    assert.equal((await disputeOf(q.transaction_id))?.status, 'lost');
    await post(item('CHARGEBACK_REVERSED', { dispute: other, merchantReference: q.transaction_id, date: at(10) }));
    assert.equal((await disputeOf(q.transaction_id))?.status, 'lost', 'older than the loss: not applied');
    assert.equal(await available(), qBefore - 1000);
    await ledgerOk();
  });

  test('a forged dispute notification is refused 401 and opens nothing', async () => {
    const p = await paid();
    const n = item('CHARGEBACK', { dispute: newPsp(), payment: p.psp, merchantReference: p.transaction_id });
    n.additionalData = { ...n.additionalData, hmacSignature: 'AAAA' };
    assert.equal((await mock.post([n])).status, 401);
    assert.equal(await disputeOf(p.transaction_id), undefined);
  });
});

// Issue 34 review, item 4: every dispute eventCode of DISPUTE_EVENTS not driven above, one line each: the notifications
// before it (in Adyen's order), then it; where the dispute ends and what left the available balance in all.
const CASES: ReadonlyArray<{ event: string; after: readonly string[]; status: string | undefined; taken: number; success?: 'false' }> = [
  { event: 'PREARBITRATION_OPEN', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED'], status: 'needs_response', taken: 1000 },
  { event: 'PREARBITRATION_OPEN', after: [], status: 'needs_response', taken: 1000 },
  { event: 'PREARBITRATION_WON', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN'], status: 'won', taken: 0 },
  { event: 'PREARBITRATION_ISSUER_WITHDRAWN', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN'], status: 'won', taken: 0 },
  { event: 'PREARBITRATION_ACCEPTED', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN'], status: 'lost', taken: 1000 },
  { event: 'PREARBITRATION_DECLINED', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN'], status: 'needs_response', taken: 1000 },
  { event: 'SCHEME_ARBITRATION', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN'], status: 'needs_response', taken: 1000 },
  {
    event: 'SCHEME_ARBITRATION_WON',
    after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN', 'SCHEME_ARBITRATION'],
    status: 'won',
    taken: 0,
  },
  {
    event: 'SCHEME_ARBITRATION_LOST',
    after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'PREARBITRATION_OPEN', 'SCHEME_ARBITRATION'],
    status: 'lost',
    taken: 1000,
  },
  // A won arbitration after a lost pre-arbitration (the merchant took it to the scheme): won, the amount back.
  { event: 'SCHEME_ARBITRATION_WON', after: ['CHARGEBACK', 'CHARGEBACK_REVERSED', 'SECOND_CHARGEBACK', 'PREARBITRATION_LOST'], status: 'won', taken: 0 },
  { event: 'ISSUER_COMMENTS', after: ['CHARGEBACK'], status: 'needs_response', taken: 1000 },
  // `success` false: the event did not happen; kept, moves nothing (and opens nothing).
  { event: 'CHARGEBACK_REVERSED', after: ['CHARGEBACK'], status: 'needs_response', taken: 1000, success: 'false' },
  { event: 'CHARGEBACK', after: [], status: undefined, taken: 0, success: 'false' },
];

describe('Adyen dispute eventCodes, one line each', () => {
  for (const c of CASES) {
    const name = `${[...c.after, `${c.event}${c.success ? ' (success false)' : ''}`].join(' → ')}: ${c.status ?? 'no dispute'}, ${c.taken / 100} taken`;
    test(name, async () => {
      const p = await paid();
      const before = await available();
      const dispute = newPsp();
      const t = Date.now();
      const steps = [...c.after.map((event) => ({ event, success: 'true' as const })), { event: c.event, success: c.success ?? ('true' as const) }];
      for (const [i, step] of steps.entries())
        await post(
          item(step.event, {
            dispute,
            payment: p.psp,
            merchantReference: p.transaction_id,
            date: new Date(t + i * 1000).toISOString(),
            success: step.success,
          }),
        );
      assert.equal((await disputeOf(p.transaction_id))?.status, c.status);
      assert.equal(await available(), before - c.taken);
      const kept = await db()
        .selectFrom('processor_notifications')
        .select('outcome')
        .where('processor_id', '=', processor_id)
        .where('notification_id', 'like', `dispute:${dispute}:${c.event}:%:${c.success !== 'false'}`)
        .execute();
      assert.deepEqual(
        kept.map((k) => k.outcome),
        [c.success === 'false' ? 'note' : DISPUTE_EVENTS[c.event]?.action],
        'recorded with what it asked',
      );
      await ledgerOk();
    });
  }
  test('the table covers all 18 dispute eventCodes, each driven by a test of this file', () => {
    const driven = new Set([...CASES.flatMap((c) => [...c.after, c.event]), 'REQUEST_FOR_INFORMATION', 'NOTIFICATION_OF_CHARGEBACK', 'INFORMATION_SUPPLIED']);
    for (const e of ['ISSUER_RESPONSE_TIMEFRAME_EXPIRED', 'DISPUTE_DEFENSE_PERIOD_ENDED', 'PREARBITRATION_LOST']) driven.add(e);
    assert.equal(Object.keys(DISPUTE_EVENTS).length, 18);
    assert.deepEqual(
      Object.keys(DISPUTE_EVENTS).filter((e) => !driven.has(e)),
      [],
    );
  });
});
