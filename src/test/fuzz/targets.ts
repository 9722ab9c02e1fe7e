// Fuzz targets: every registered signed endpoint (spec and docs/contract.md §8, §14), with a
// valid-ish body to mutate. The 3-D Secure page routes (GET and POST /threeds/:id) are
// fuzzed by fuzz.ts, and the hosted checkout's and APM issuer's shopper pages by shopper.ts,
// with their own generators (hostile ids and form fields). Paths of the
// spec that this build does not register are in UNREGISTERED: they only reach the 404
// handler, so they are fuzzed as a separate group that is reported but never counted
// toward the 20,000 cases of issue 6. POST /v1/cancelsubscription (docs/contract.md §16) gets real
// recurring_id/contract_name pairs of the merchant (seeded, and harvested from the fuzzed
// authorise answers), another merchant's real pairs, and near misses of both. The payout
// endpoints have their own generators and funded merchants (payouts.ts).
import type { CreatedMerchant } from '../../merchants/service.js';

export interface KnownPayment {
  transaction_id: string;
  order_no: string;
  amount: string;
  /** The dispute seeded on it (fuzz.ts), when it has one. */
  dispute_id?: string;
}

/** A real subscription: its pair, and whether it is another merchant's (never cancellable with this merchant's key). */
export interface KnownSubscription {
  recurring_id: string;
  contract_name: string;
  foreign?: boolean;
}

export interface FuzzTarget {
  path: string;
  /** A body the endpoint would accept, built from real payments (and subscriptions) of the merchant. */
  base(m: CreatedMerchant, known: KnownPayment[], n: number, subs?: KnownSubscription[]): Record<string, unknown>;
}

const YEAR = String(new Date().getUTCFullYear() + 2);
const pick = (known: KnownPayment[], n: number): KnownPayment => known[n % known.length] ?? { transaction_id: 'T0', order_no: 'O0', amount: '10.00' };
const ids = (m: CreatedMerchant) => ({ merchant_id: m.merchant_id, account_id: m.account_id });
const item = (p: KnownPayment) => ({ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount: p.amount });
/**
 * A seeded dispute of the merchant, so that a case reaches what lies behind the lookup (evidence checked by content,
 * size and processor, stored, submitted; an acceptance): those of even seed for evidence (`half` 0), odd for accept
 * (1), which closes them, so evidence keeps open ones of its own. Every fifth case an id that names none (404).
 */
function disputeId(known: KnownPayment[], n: number, half: 0 | 1): string {
  const seeded = known.flatMap((p) => (p.dispute_id ? [p.dispute_id] : [])).filter((_, i) => i % 2 === half);
  const real = seeded[n % Math.max(1, seeded.length)];
  return n % 5 === 0 || real === undefined ? `dp_${pick(known, n).transaction_id}` : real;
}

export const TARGETS: FuzzTarget[] = [
  {
    path: '/v1/authorise',
    base: (m, _k, n) => ({
      ...ids(m),
      order_no: `FZ-${n}`,
      currency: 'USD',
      amount: '10.00',
      item_total: '8.00',
      shipping: '2.00',
      card: '4242424242424242',
      expiration_month: '12',
      expiration_year: YEAR,
      security_code: '123',
      shopper_email: 'a@example.com',
      shopper_ip: '203.0.113.9',
      // A notify_url host must resolve (docs/contract.md §11; the harness allows loopback webhooks),
      // and cavv and xid are 20 bytes in base64: a body the gateway accepts, before mutation.
      notify_url: 'http://127.0.0.1:9/notify',
      birth_date: '01-02-1990',
      checkout_time: 1763596800,
      cart_items: [{ basic_item_data: { name: 'Tee', quantity: '1', price: { amount_usd: 10.5, amount_local_currency: 10.5, currency: 'USD' } } }],
      additional_information: [
        {
          mpi_info: { eci: '05', cavv: 'AAECAwQFBgcICQoLDA0ODxAREhM=', xid: 'FBUWFxgZGhscHR4fICEiIyQlJic=', dsTransID: '0b1c7a3e-3d41-4a8e-9c8e-2a8f0e1d2c3b' },
        },
      ],
      // A new contract_name mostly (so accepted bodies create subscriptions, which the
      // cancelsubscription fuzz then uses); every fourth the same one, taken after its first use.
      subscription: {
        contract: 'c',
        contract_name: n % 4 === 0 ? 'gold' : `gold-${n}`,
        contract_amount: '10.00',
        interval: 'month',
        interval_count: '1',
        billing_cycle: 12,
      },
    }),
  },
  {
    path: '/v1/retrievalTrans',
    base: (m, k, n) => ({ ...ids(m), order_nos: [pick(k, n).order_no], transaction_ids: pick(k, n + 1).transaction_id }),
  },
  { path: '/v1/capture', base: (m, k, n) => ({ ...ids(m), capture_orders: [item(pick(k, n))] }) },
  { path: '/v1/cancel', base: (m, k, n) => ({ ...ids(m), cancel_orders: [item(pick(k, n))] }) },
  {
    path: '/v1/refund',
    base: (m, k, n) => ({ ...ids(m), refund_orders: [{ ...item(pick(k, n)), refund_amount: '1.00', refund_reason: 'fuzz' }] }),
  },
  {
    path: '/v1/retrievalRefund',
    base: (m, k, n) => ({ ...ids(m), transaction_ids: [pick(k, n).transaction_id], start_date: '20250101000000', end_date: '20250102000000' }),
  },
  // Settlement (docs/contract.md §23): a range of days, in JSON or CSV.
  { path: '/v1/retrievalSettlement', base: (m) => ({ ...ids(m), start_date: '20260101', end_date: '20260131', format: 'csv' }) },
  // Disputes (docs/contract.md §22): the seeded disputes of the merchant's payments, and ids that name none (404, or query_result 0).
  { path: '/v1/retrievalDispute', base: (m, k, n) => ({ ...ids(m), transaction_ids: [pick(k, n).transaction_id], order_nos: pick(k, n + 1).order_no }) },
  {
    path: '/v1/disputeEvidence',
    base: (m, k, n) => ({
      ...ids(m),
      dispute_id: disputeId(k, n, 0),
      uncategorized_text: 'fuzz',
      files: [{ field: 'receipt', file_name: 'r.pdf', content_base64: 'JVBERi0xLjQK' }],
      submit: '0',
    }),
  },
  { path: '/v1/acceptDispute', base: (m, k, n) => ({ ...ids(m), dispute_id: disputeId(k, n, 1) }) },
  {
    path: '/v1/review',
    base: (m, k, n) => ({
      ...ids(m),
      review_orders: [{ transaction_id: pick(k, n).transaction_id, order_no: pick(k, n).order_no, decision: 'ACCEPT', note: 'ok' }],
    }),
  },
  {
    // A purchase where cards and each alternative method apply in turn, with and without a BIN.
    path: '/v1/paymentmethods',
    base: (m, _k, n) => {
      const where = [
        { currency: 'USD', amount: '10.00', billing_country: 'US' },
        { currency: 'BRL', amount: '50.00', billing_country: 'BR' },
        { currency: 'EUR', amount: '25.00', billing_country: 'NL' },
        { currency: 'JPY', amount: '1200', billing_country: 'JP' },
      ][n % 4];
      return { ...ids(m), ...where, ...(n % 3 === 0 ? {} : { card_bin: ['424242', '55555555', '378282'][n % 3] }), device_type: 'mobile' };
    },
  },
  {
    // The hosted checkout (docs/contract.md §14): a direct payment's fields without the card, in the
    // four places the payment page offers different methods; accepted bodies open sessions,
    // which the shopper page fuzz (shopper.ts) then uses.
    path: '/v1/checkout',
    base: (m, _k, n) => ({
      ...ids(m),
      order_no: `FZC-${n}`,
      ...[
        { currency: 'USD', amount: '10.00', billing_country: 'US' },
        { currency: 'BRL', amount: '50.00', billing_country: 'BR' },
        { currency: 'EUR', amount: '25.00', billing_country: 'NL' },
        { currency: 'JPY', amount: '1200', billing_country: 'JP' },
      ][n % 4],
      return_url: 'https://merchant.example/r?cart=1',
      cancel_url: 'https://merchant.example/cart',
      notify_url: 'http://127.0.0.1:9/notify', // must resolve (docs/contract.md §11); the harness allows loopback
      shopper_email: 'a@example.com',
      first_name: 'Ana',
      last_name: 'Silva',
      default_lang: ['en', 'pt-BR', 'de', 'fr'][n % 4],
      website: 'merchant.example',
      items: 'Tee#,#1#,#10.00#,#T1',
      cart_items: [{ basic_item_data: { name: 'Tee', quantity: '1', price: { amount_usd: 10.5, amount_local_currency: 10.5, currency: 'USD' } } }],
    }),
  },
  {
    // docs/contract.md §16: real pairs mostly (the first cancel of each one is accepted and writes;
    // later ones find it ended), and near misses, swapped names, another merchant's real
    // pairs and unknown ids, which must answer cancel_status 0 and write nothing.
    path: '/v1/cancelsubscription',
    base: (m, _k, n, subs = []) => {
      const own = subs.filter((x) => !x.foreign);
      const foreign = subs.filter((x) => x.foreign);
      const s = own[n % Math.max(1, own.length)] ?? { recurring_id: `rec_${'A'.repeat(24)}`, contract_name: 'gold' };
      const other = own[(n * 7 + 3) % Math.max(1, own.length)] ?? s;
      const stranger = foreign[n % Math.max(1, foreign.length)] ?? s;
      const pairs: Array<{ recurring_id: string; contract_name: string }> = [
        s,
        s,
        s,
        s,
        { recurring_id: s.recurring_id, contract_name: other.contract_name },
        { recurring_id: s.recurring_id.slice(0, -1), contract_name: s.contract_name },
        { recurring_id: `${s.recurring_id.slice(0, 4)}${s.recurring_id.slice(4).toUpperCase()}`, contract_name: s.contract_name },
        { recurring_id: s.recurring_id, contract_name: ` ${s.contract_name}` },
        { recurring_id: s.recurring_id, contract_name: s.contract_name.toUpperCase() },
        { recurring_id: stranger.recurring_id, contract_name: stranger.contract_name },
        { recurring_id: `rec_${'A'.repeat(24)}`, contract_name: s.contract_name },
        { recurring_id: `${s.recurring_id}%`, contract_name: '%' },
      ];
      const pair = pairs[n % pairs.length] as { recurring_id: string; contract_name: string };
      return { ...ids(m), recurring_id: pair.recurring_id, contract_name: pair.contract_name };
    },
  },
];

/**
 * Spec paths with no route on this build: fuzzed for 404 answers only, not counted. None
 * today: /v1/payout, /v1/cancelpayout and /v1/retrievalPayout are registered (docs/contract.md
 * §17) and fuzzed by payouts.ts.
 */
export const UNREGISTERED: FuzzTarget[] = [];
