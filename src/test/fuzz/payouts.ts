// Fuzz of the payout endpoints (docs/contract.md §17; issue 12 item 5): POST /v1/payout,
// /v1/cancelpayout and /v1/retrievalPayout in every body format (JSON, bracket form, XML).
// The payouts belong to their own funded test merchant (P), so the card payments and
// refunds of the rest of the run never move its balance, and another funded merchant (B)
// owns payouts that P's key must never reach. Generators start from valid bodies (ACH,
// the sandbox's failing and returned accounts, SEPA with FX, FASTER_PAYMENTS, ZENGIN,
// SWIFT, scheduled ones) and spoil them: wrong IBANs and BICs, amounts with the wrong
// decimals, both or neither amount, bad request_ids, reused request_ids, B's beneficiary,
// bank_details as an array, a huge string or a deep object, person_documents with deep
// label arrays, unknown nested keys, numbers where strings belong, __proto__/constructor
// keys, unicode, bodies past 1 MiB, and generic mutations and raw payloads.
//
// Invariants, besides fuzz.ts's for every case (no 5xx, a refusal changes no table):
// - an accepted payout is P's, and P's available balance is never below zero; for every
//   currency, top-ups = available + reserved + Σ(amount_payer_pays + fee_amount) of
//   COMPLETED payouts, and reserved = Σ of SCHEDULED and PROCESSING ones, exactly;
// - the exact body of an accepted payout sent again answers the same transaction_id and
//   writes nothing; the same request_id with another amount is 409 (and writes nothing);
// - a cancel answering cancel_status 0, and every retrieval, writes nothing (an
//   Idempotency-Key header may store its answer: that table only); cancel_status 1 only
//   for P's own SCHEDULED payouts, never for B's (by request_id or transaction_id);
// - a retrieval never answers one of B's payouts;
// - at the end, B's payouts are as they were seeded; then the payout jobs run (dispatch of
//   every SCHEDULED one, checks of PROCESSING ones) and every P payout ends COMPLETED,
//   FAILED or CANCELLED with nothing reserved, no payout job failed, and the ledger verifies.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { maskAccount } from '../../db/tables/payouts.js';
import { accountBalances } from '../../ledger/balances.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { setPayoutPricing, topUp } from '../../payouts/admin.js';
import { CHECK_KIND, checkHandler, DISPATCH_KIND, dispatchHandler } from '../../payouts/service.js';
import { Scheduler } from '../../scheduler/scheduler.js';
import type { TestGateway } from '../harness.js';
import { type Case, CONTENT_TYPES, describeCase, encodeLoose, hostileValue, type Mutation, mutate, mutation, RAW, setField, signOrGarbage } from './inputs.js';
import type { Answer } from './shopper.js';
import type { FuzzTarget } from './targets.js';

type Json = Record<string, any>;
type Format = 'json' | 'form' | 'xml';

export const PAYOUT_ROUTES = ['POST /v1/payout', 'POST /v1/cancelpayout', 'POST /v1/retrievalPayout'] as const;

/** What fuzz.ts lends this module. */
export interface PayoutFuzzer {
  run(label: string, c: Case): Promise<Answer>;
  /** Tables whose contents the last case changed ("name before → after"). */
  changed(): string[];
  property(label: string, what: string, prop: fc.IAsyncProperty<any>, numRuns: number): Promise<void>;
  headers: fc.Arbitrary<Record<string, string> | undefined>;
}

export interface PayoutRuns {
  bodies: number;
  replays: number;
  cancels: number;
  retrievals: number;
  raw: number;
}

interface Ref {
  request_id: string;
  transaction_id: string;
  short_reference_id: string;
  beneficiary_id: string;
  status: string;
}

/** A payout P's key had accepted: what to send again. */
interface Accepted {
  /** A valid body as generated (no spoiler, no mutation): it reads the same in every format. */
  clean: boolean;
  body: Json;
  format: Format;
  payload: string;
  contentType: string;
  transaction_id: string;
}

export class PayoutPool {
  /** P's payouts (seeded, then every accepted one); SCHEDULED ones are cancel targets. */
  own: Ref[] = [];
  /** B's payouts: P's key must never cancel or read them. */
  foreign: Ref[] = [];
  accepted: Accepted[] = [];
  /** Minor units put into P's available balance, per currency. */
  funded = new Map<string, number>();
  constructor(
    readonly p: CreatedMerchant,
    readonly b: CreatedMerchant,
    readonly today: string,
    readonly tomorrow: string,
  ) {}
}

const DAY_MS = 86_400_000;
const MAX_ACCEPTED = 400;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// ---------- valid starting points ----------

const ACH = {
  entity_type: 'COMPANY',
  company_name: 'Acme Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: { account_name: 'Acme Supplies LLC', account_number: '000123456789', bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' },
};
const withAccount = (b: Json, account_number: string): Json => ({ ...b, bank_details: { ...b.bank_details, account_number } });
const SEPA = {
  entity_type: 'PERSONAL',
  first_name: 'Lena',
  last_name: 'Schmidt',
  date_of_birth: '1988-04-02',
  address: { country_code: 'DE', city: 'Berlin', street_address: 'Unter den Linden 1', postcode: '10117' },
  bank_details: { account_name: 'Lena Schmidt', iban: 'DE89370400440532013000', bank_country_code: 'DE', account_currency: 'EUR' },
  person_documents: [{ file_type: 'application/pdf', file_url: 'https://docs.example/id.pdf', labels: ['id', 'front'] }],
};
const GB = {
  entity_type: 'PERSONAL',
  first_name: 'Ann',
  last_name: 'Lee',
  address: { country_code: 'GB', city: 'London' },
  bank_details: { account_name: 'Ann Lee', account_number: '31926819', bank_code: '601613', bank_country_code: 'GB' },
};
const JP = {
  entity_type: 'COMPANY',
  company_name: '株式会社テスト',
  address: { country_code: 'JP', city: '東京' },
  bank_details: { account_name: 'テスト', account_number: '1234567', bank_code: '0001001', bank_country_code: 'JP', account_currency: 'JPY' },
};

interface Template {
  name: string;
  beneficiary: Json;
  payment_currency: string;
  payment_method: 'LOCAL' | 'SWIFT';
  amounts: string[];
  extra?: Json;
}

const TEMPLATES: Template[] = [
  { name: 'ACH', beneficiary: ACH, payment_currency: 'USD', payment_method: 'LOCAL', amounts: ['10.00', '25.50', '99.99', '0.01'] },
  { name: 'ACH', beneficiary: ACH, payment_currency: 'USD', payment_method: 'LOCAL', amounts: ['40.00', '120.00'] },
  { name: 'invalid account', beneficiary: withAccount(ACH, '000111111116'), payment_currency: 'USD', payment_method: 'LOCAL', amounts: ['15.00'] },
  { name: 'returned', beneficiary: withAccount(ACH, '000222222226'), payment_currency: 'USD', payment_method: 'LOCAL', amounts: ['12.00'] },
  {
    name: 'SWIFT',
    beneficiary: { ...ACH, bank_details: { ...ACH.bank_details, swift_code: 'CHASUS33' } },
    payment_currency: 'USD',
    payment_method: 'SWIFT',
    amounts: ['30.00'],
    extra: { swift_charge_option: 'SHARED' },
  },
  { name: 'SEPA', beneficiary: SEPA, payment_currency: 'EUR', payment_method: 'LOCAL', amounts: ['20.00', '7.77'] },
  {
    name: 'SWIFT DE',
    beneficiary: { ...SEPA, bank_details: { ...SEPA.bank_details, swift_code: 'DEUTDEFF' } },
    payment_currency: 'EUR',
    payment_method: 'SWIFT',
    amounts: ['50.00'],
  },
  { name: 'FASTER_PAYMENTS', beneficiary: GB, payment_currency: 'GBP', payment_method: 'LOCAL', amounts: ['10.00'] },
  { name: 'ZENGIN', beneficiary: JP, payment_currency: 'JPY', payment_method: 'LOCAL', amounts: ['1200', '1'] },
];

function baseBody(pool: PayoutPool, m: CreatedMerchant, t: Template, pick: number): Json {
  return {
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    request_id: randomUUID(),
    beneficiary: structuredClone(t.beneficiary),
    payment_currency: t.payment_currency,
    payment_method: t.payment_method,
    reason: 'supplier invoice',
    reference: `INV-${pick}`,
    source_currency: pick % 7 === 3 ? 'EUR' : 'USD',
    payment_amount: t.amounts[pick % t.amounts.length],
    // Every fifth is for tomorrow: SCHEDULED, funds reserved, a cancel target.
    ...(pick % 5 === 0 ? { payment_date: pool.tomorrow } : {}),
    notify_url: 'http://127.0.0.1:9/notify',
    ...t.extra,
  };
}

/** Static bodies for the socket part of the run (no pool, any merchant). */
export function payoutTargets(): FuzzTarget[] {
  const pool = new PayoutPool({} as CreatedMerchant, {} as CreatedMerchant, isoDay(Date.now()), isoDay(Date.now() + DAY_MS));
  return [
    { path: '/v1/payout', base: (m, _k, n) => baseBody(pool, m, TEMPLATES[n % TEMPLATES.length] as Template, n) },
    { path: '/v1/cancelpayout', base: (m) => ({ merchant_id: m.merchant_id, account_id: m.account_id, request_id: randomUUID() }) },
    {
      path: '/v1/retrievalPayout',
      base: (m) => ({ merchant_id: m.merchant_id, account_id: m.account_id, request_ids: [randomUUID()], transaction_ids: 'T1,T2' }),
    },
  ];
}

// ---------- seeding ----------

async function seedOne(gw: TestGateway, pool: PayoutPool, m: CreatedMerchant, body: Json): Promise<Ref> {
  const format = (['json', 'form', 'xml'] as const)[pool.accepted.length % 3] as Format;
  body.encryption_data = signOrGarbage(body, m.secret_key, format);
  const { payload, contentType } = encodeLoose(body, format);
  const res = await gw.app.inject({ method: 'POST', url: '/v1/payout', payload, headers: { 'content-type': contentType }, remoteAddress: '127.0.0.1' });
  if (res.statusCode !== 200) throw new Error(`seeding a payout failed: HTTP ${res.statusCode} ${res.body.slice(0, 300)}`);
  const r = JSON.parse(res.body) as Json;
  // P's seeds are replayed later, in the format they were sent.
  if (m === pool.p) pool.accepted.push({ clean: true, body, format, payload, contentType, transaction_id: r.transaction_id });
  return {
    request_id: r.request_id,
    transaction_id: r.transaction_id,
    short_reference_id: r.short_reference_id,
    beneficiary_id: r.beneficiary_id,
    status: r.status,
  };
}

/** P (funded in USD and EUR) with scheduled and finished payouts, and B with its own. */
export async function seedPayouts(gw: TestGateway): Promise<PayoutPool> {
  const p = await gw.newMerchant({ name: 'fuzz-payouts' });
  const b = await gw.newMerchant({ name: 'fuzz-payouts-other' });
  const pool = new PayoutPool(p, b, isoDay(gw.clock.now), isoDay(gw.clock.now + DAY_MS));
  for (const [currency, amount] of [
    ['USD', '60000.00'],
    ['EUR', '3000.00'],
  ] as const) {
    pool.funded.set(currency, await topUp(gw.runtime.store, { account_id: p.account_id, currency, amount }, gw.clock.now));
  }
  await topUp(gw.runtime.store, { account_id: b.account_id, currency: 'USD', amount: '1000.00' }, gw.clock.now);
  // Fees, so the books carry them (the debit is amount_payer_pays + fee_amount).
  for (const price of [
    { currency: 'USD', method: 'LOCAL', percent: '1', fixed: '0.25' },
    { currency: 'USD', method: 'SWIFT', percent: '0.5', fixed: '2.00', swift_payer: '5.00' },
    { currency: 'EUR', method: 'LOCAL', percent: '0.5', fixed: '0.10' },
  ])
    await setPayoutPricing(gw.runtime.store, { account_id: p.account_id, ...price }, gw.clock.now);
  const [ach, invalid, returned, swift] = TEMPLATES.filter((_, i) => [0, 2, 3, 4].includes(i)) as [Template, Template, Template, Template];
  const seed = async (m: CreatedMerchant, t: Template, i: number, date?: string) => {
    const body = baseBody(pool, m, t, i);
    delete body.payment_date;
    body.source_currency = 'USD';
    if (date) body.payment_date = date;
    return seedOne(gw, pool, m, body);
  };
  for (let i = 0; i < 30; i++) pool.own.push(await seed(p, ach, i, pool.tomorrow));
  for (let i = 0; i < 6; i++) pool.own.push(await seed(p, [ach, invalid, returned, swift][i % 4] as Template, i));
  for (let i = 0; i < 6; i++) pool.foreign.push(await seed(b, ach, i, pool.tomorrow));
  for (let i = 0; i < 4; i++) pool.foreign.push(await seed(b, [ach, invalid, returned, swift][i % 4] as Template, i));
  return pool;
}

// ---------- spoilers ----------

const BAD_REQUEST_IDS: unknown[] = [
  '',
  'not-a-uuid',
  '00000000-0000-0000-0000-00000000000',
  '00000000-0000-0000-0000-0000000000000',
  '{00000000-0000-4000-8000-000000000000}',
  'g0000000-0000-4000-8000-000000000000',
  '00000000000040008000000000000000',
  '00000000-0000-4000-8000-000000000000\u0000',
  ' 00000000-0000-4000-8000-000000000000',
  '０0000000-0000-4000-8000-000000000000',
  "00000000-0000-4000-8000-000000000000' OR '1'='1",
  'x'.repeat(70_000),
  123,
  true,
  null,
  ['00000000-0000-4000-8000-000000000000'],
  { id: '00000000-0000-4000-8000-000000000000' },
];
const BAD_AMOUNTS: unknown[] = [
  '10.0',
  '10.001',
  '10',
  '1e3',
  '-1.00',
  '0.00',
  '0',
  '.50',
  '10.',
  '１０.００',
  ' 10.00',
  '10.00 ',
  '+10.00',
  '10,00',
  '999999999999999.99',
  '9999999999999999',
  '99999999999999.999',
  '0x10',
  'NaN',
  '',
  10,
  10.5,
  -0,
  1e308,
  null,
  ['10.00'],
  { amount: '10.00' },
];
const BAD_IBANS: unknown[] = [
  'DE89370400440532013001',
  'DE88370400440532013000',
  'DE8937040044053201300',
  'DE893704004405320130000',
  'de89 3704 0044 0532 0130 00',
  'DE89-3704-0044-0532-0130-00',
  'GB29NWBK60161331926819',
  'US12345678901234567890',
  'XX89370400440532013000',
  'CH4431999123000889012',
  'FR7630006000011234567890189',
  'FR7630006000011234567890188',
  'NL91ABNA0417164300',
  'DE00370400440532013000',
  'DE89370400440532013000'.repeat(3),
  'DE89３７0400440532013000',
  '',
  '    ',
  12345,
  ['DE89370400440532013000'],
];
const BAD_BICS: unknown[] = [
  'CHASUS3',
  'CHASUS333',
  'CHASUS3300',
  'chasus33',
  'CHAS US 33',
  'DEUTDEFF',
  'DEUTDEFF500',
  'CHASXX33',
  '1HASUS33',
  'CHASUS33XXXX',
  'CHAS\u0000S33',
  '',
  33,
];
const BAD_ACCOUNTS: unknown[] = [
  '123',
  '123456789012345678',
  '0001-2345-6789',
  '000 123 456 789',
  '000123456789x',
  '０００１２３４５６７８９',
  '000111111116',
  '000222222226',
  '0'.repeat(35),
  123456789,
  1e20,
  '',
];
const BAD_BANK_CODES: unknown[] = ['011000016', '01100001', '0110000150', '991000015', '011-000-015', 'ABCDEFGHI', 11000015, ''];
const BAD_CURRENCIES: unknown[] = ['usd', 'US', 'USDD', 'XXX', 'XAU', 'ABC', 'EUR', 'GBP', 'JPY', 'MXN', '', 840, null];
const BAD_DATES = (pool: PayoutPool): unknown[] => [
  isoDay(Date.parse(`${pool.today}T00:00:00Z`) - DAY_MS),
  pool.today,
  isoDay(Date.parse(`${pool.today}T00:00:00Z`) + 365 * DAY_MS),
  isoDay(Date.parse(`${pool.today}T00:00:00Z`) + 366 * DAY_MS),
  '2027-02-30',
  '2028-02-29',
  '2027-13-01',
  '0000-01-01',
  '9999-12-31',
  'tomorrow',
  `${pool.tomorrow}T00:00:00Z`,
  pool.tomorrow.replace(/-/g, ''),
  '',
  20270101,
];

function nest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { x: v };
  return v;
}

/** Sets a dotted path, making objects on the way (through arrays' first items). */
function setPath(body: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let o: any = body;
  for (const k of keys.slice(0, -1)) {
    if (o[k] === null || typeof o[k] !== 'object') o[k] = {};
    if (Array.isArray(o[k]) && (o[k][0] === null || typeof o[k][0] !== 'object')) o[k][0] = {};
    o = Array.isArray(o[k]) ? o[k][0] : o[k];
  }
  setField(o, keys[keys.length - 1] as string, value);
}

function deletePath(body: Json, path: string): void {
  const keys = path.split('.');
  let o: any = body;
  for (const k of keys.slice(0, -1)) {
    o = o?.[k];
    if (o === null || typeof o !== 'object') return;
  }
  delete o[keys[keys.length - 1] as string];
}

type Spoiler = (b: Json, pick: number, pool: PayoutPool, value: unknown) => void;
const from =
  (list: unknown[]): ((pick: number) => unknown) =>
  (pick) =>
    list[pick % list.length];

const SPOILERS: Record<string, Spoiler> = {
  'request_id bad': (b, k) => setField(b, 'request_id', from(BAD_REQUEST_IDS)(k)),
  'request_id uppercase': (b) => setField(b, 'request_id', String(b.request_id).toUpperCase()),
  'request_id reused (own)': (b, k, pool) => setField(b, 'request_id', pool.own[k % pool.own.length]?.request_id),
  // Request ids are per account: B's id is a new payout for P.
  'request_id of B': (b, k, pool) => setField(b, 'request_id', pool.foreign[k % pool.foreign.length]?.request_id),
  'request_id missing': (b) => delete b.request_id,
  'payment_amount bad': (b, k) => setField(b, 'payment_amount', from(BAD_AMOUNTS)(k)),
  'both amounts': (b) => setField(b, 'source_amount', '10.00'),
  'neither amount': (b) => delete b.payment_amount,
  'source_amount only': (b, k) => {
    delete b.payment_amount;
    b.source_amount = ['10.00', '0.01', '5.5', '12', '99999.99'][k % 5];
  },
  'source_amount bad': (b, k) => {
    delete b.payment_amount;
    setField(b, 'source_amount', from(BAD_AMOUNTS)(k));
  },
  iban: (b, k) => setPath(b, 'beneficiary.bank_details.iban', from(BAD_IBANS)(k)),
  'iban on ACH': (b) => setPath(b, 'beneficiary.bank_details.iban', 'DE89370400440532013000'),
  bic: (b, k) => setPath(b, 'beneficiary.bank_details.swift_code', from(BAD_BICS)(k)),
  'SWIFT without BIC': (b) => {
    b.payment_method = 'SWIFT';
    deletePath(b, 'beneficiary.bank_details.swift_code');
  },
  account_number: (b, k) => setPath(b, 'beneficiary.bank_details.account_number', from(BAD_ACCOUNTS)(k)),
  bank_code: (b, k) => setPath(b, 'beneficiary.bank_details.bank_code', from(BAD_BANK_CODES)(k)),
  'bank_details array': (b) => setPath(b, 'beneficiary.bank_details', [b.beneficiary?.bank_details, b.beneficiary?.bank_details]),
  'bank_details string': (b, k) => setPath(b, 'beneficiary.bank_details', 'A'.repeat([10, 70_000, 1_100_000][k % 3] as number)),
  'bank_details number': (b) => setPath(b, 'beneficiary.bank_details', 42),
  'bank_details null': (b) => setPath(b, 'beneficiary.bank_details', null),
  'bank_details deep': (b, k) => setPath(b, 'beneficiary.bank_details', nest(20 + (k % 400), 'x', false)),
  'bank_details.iban deep': (b, k) => setPath(b, 'beneficiary.bank_details.iban', nest(10 + (k % 200), 'DE89370400440532013000', k % 2 === 0)),
  'beneficiary array': (b) => setField(b, 'beneficiary', [b.beneficiary, b.beneficiary]),
  'beneficiary string': (b) => setField(b, 'beneficiary', JSON.stringify(b.beneficiary)),
  'beneficiary missing': (b) => delete b.beneficiary,
  'beneficiary_id own': (b, k, pool) => {
    delete b.beneficiary;
    b.beneficiary_id = pool.own[k % pool.own.length]?.beneficiary_id;
  },
  'beneficiary_id of B': (b, k, pool) => {
    delete b.beneficiary;
    b.beneficiary_id = pool.foreign[k % pool.foreign.length]?.beneficiary_id;
  },
  'beneficiary and beneficiary_id': (b, k, pool) => setField(b, 'beneficiary_id', pool.own[k % pool.own.length]?.beneficiary_id),
  'beneficiary_id hostile': (b, _k, _p, v) => {
    delete b.beneficiary;
    setField(b, 'beneficiary_id', v);
  },
  'labels deep': (b, k) => setPath(b, 'beneficiary.person_documents', [{ file_type: 'application/pdf', labels: nest(5 + (k % 300), 'id', true) as unknown[] }]),
  'labels many': (b, k) => setPath(b, 'beneficiary.person_documents', [{ labels: Array.from({ length: 11 + (k % 5000) }, (_, i) => `l${i}`) }]),
  'labels long': (b) => setPath(b, 'beneficiary.person_documents', [{ labels: ['x'.repeat(65)] }]),
  'documents many': (b) =>
    setPath(
      b,
      'beneficiary.person_documents',
      Array.from({ length: 11 }, () => ({ labels: ['a'] })),
    ),
  'documents object': (b) => setPath(b, 'beneficiary.person_documents', { labels: ['a'], file_url: 'https://x.example/a' }),
  'document hostile': (b, _k, _p, v) => setPath(b, 'beneficiary.person_documents', [{ file_url: v, file_type: v, labels: [v] }]),
  'unknown nested key': (b, k, _p, v) =>
    setPath(
      b,
      ['beneficiary.bank_details.zz', 'beneficiary.address.floor', 'beneficiary.additional_info.shoe_size', 'payer.additional_info.zz', 'beneficiary.zz', 'zz'][
        k % 6
      ] as string,
      v,
    ),
  'number for string': (b, k) =>
    setPath(
      b,
      ['beneficiary.bank_details.account_number', 'beneficiary.bank_details.bank_code', 'payment_amount', 'reason', 'reference', 'beneficiary.company_name'][
        k % 6
      ] as string,
      [123456789, 11000015, 10, 5, 0, -1.5][k % 6],
    ),
  'prototype key': (b, k) => {
    const holder = [b, b.beneficiary, b.beneficiary?.bank_details, b.beneficiary?.address][k % 4];
    const target = holder && typeof holder === 'object' ? holder : b;
    const name = ['__proto__', 'constructor', 'prototype'][k % 3] as string;
    setField(target, name, k % 2 ? { polluted: 1, account_number: '000111111116' } : { prototype: { polluted: 1 } });
  },
  unicode: (b, k) =>
    setPath(
      b,
      ['beneficiary.company_name', 'beneficiary.bank_details.account_name', 'reason', 'reference', 'beneficiary.address.city'][k % 5] as string,
      ['Ǆ̀͂ 株式会社 🙂', '\u202Eevil\u202C', 'a\u0000b', '\uD800', '١٢٣', '🙂'.repeat(60), 'é'.repeat(100), 'é'.repeat(101), '\uFEFFx'][k % 9],
    ),
  'huge field': (b, k) =>
    setPath(b, ['client_data', 'beneficiary.company_name', 'reason'][k % 3] as string, 'x'.repeat([1_100_000, 1_048_000, 600_000][k % 3] as number)),
  'many keys': (b, k) => {
    const o: Json = {};
    for (let i = 0; i < 200 + (k % 4000); i++) o[`k${i}`] = 'v';
    setPath(b, ['beneficiary.bank_details', 'beneficiary.address', 'payer'][k % 3] as string, { ...(b.beneficiary?.bank_details ?? {}), ...o });
  },
  payment_currency: (b, k) => setField(b, 'payment_currency', from(BAD_CURRENCIES)(k)),
  source_currency: (b, k) => setField(b, 'source_currency', from(BAD_CURRENCIES)(k)),
  account_currency: (b, k) => setPath(b, 'beneficiary.bank_details.account_currency', from(BAD_CURRENCIES)(k)),
  country: (b, k) =>
    setPath(
      b,
      k % 2 ? 'beneficiary.bank_details.bank_country_code' : 'beneficiary.address.country_code',
      ['us', 'XX', 'ZZ', 'USA', 'DE', 'GB', 'CH', '', 1][k % 9],
    ),
  payment_date: (b, k, pool) => setField(b, 'payment_date', from(BAD_DATES(pool))(k)),
  payment_method: (b, k) => setField(b, 'payment_method', ['swift', 'Local', 'SEPA', 'SWIFT', 'LOCAL', '', 1][k % 7]),
  fee_paid_by: (b, k) => setField(b, 'fee_paid_by', ['BENEFICIARY', 'PAYER', 'beneficiary', 'BOTH', ''][k % 5]),
  swift_charge_option: (b, k) => setField(b, 'swift_charge_option', ['PAYER', 'SHARED', 'OUR', ''][k % 4]),
  'entity mismatch': (b, k) => {
    setPath(b, 'beneficiary.entity_type', ['PERSONAL', 'COMPANY', 'personal', ''][k % 4]);
    if (k % 2) deletePath(b, 'beneficiary.company_name');
  },
  date_of_birth: (b, k, pool) => setPath(b, 'beneficiary.date_of_birth', [pool.today, pool.tomorrow, '1899-13-01', '2000-02-30', ''][k % 5]),
  payer: (b, k, _p, v) =>
    setField(b, 'payer', k % 3 === 0 ? v : { entity_type: 'COMPANY', company_name: 'Shop', address: { country_code: ['GB', 'gb', 'XX'][k % 3] } }),
  notify_url: (b, k) =>
    setField(b, 'notify_url', ['javascript:alert(1)', 'http://169.254.169.254/latest', 'ftp://x', 'http://', 'http://no-such-host.invalid/x', ''][k % 6]),
  'missing reason': (b, k) => delete b[['reason', 'reference', 'payment_currency', 'payment_method', 'source_currency'][k % 5] as string],
  hostile: (b, k, _p, v) =>
    setPath(
      b,
      [
        'request_id',
        'payment_amount',
        'beneficiary.bank_details.iban',
        'beneficiary.bank_details.account_number',
        'beneficiary.bank_details',
        'beneficiary.person_documents',
        'client_data',
        'reference',
      ][k % 8] as string,
      v,
    ),
};
const SPOILER_NAMES = Object.keys(SPOILERS);

type Signing = 'valid' | 'none' | 'wrong' | "B's key" | "B's ids";

function sign(body: Json, pool: PayoutPool, signing: Signing, format: Format): void {
  const { p, b } = pool;
  if (signing === "B's ids") {
    // B's merchant and account, signed with P's key: never B's payout.
    body.merchant_id = b.merchant_id;
    body.account_id = b.account_id;
    body.encryption_data = signOrGarbage(body, p.secret_key, format);
  } else if (signing === "B's key") body.encryption_data = signOrGarbage(body, b.secret_key, format);
  else if (signing === 'valid') body.encryption_data = signOrGarbage(body, p.secret_key, format);
  else if (signing === 'wrong') body.encryption_data = 'f'.repeat(64);
}

const formatArb = fc.constantFrom<Format>('json', 'json', 'form', 'xml');

/** The record of a 200 answer ({} when it is not JSON). */
function record(a: Answer): Json {
  try {
    return JSON.parse(a.body) as Json;
  } catch {
    return {};
  }
}

// ---------- the run ----------

export interface PayoutTally {
  cases: Map<string, number>;
  statuses: Map<string, Map<string, number>>;
  /** 400s per named field (error_field), for /v1/payout. */
  refusedBy: Map<string, number>;
  outcomes: Map<string, number>;
  replays: number;
  conflicts: number;
  cancelled: number;
  notFound: number;
  tooLate: number;
  foreignRefused: number;
  retrievals: number;
  balanceChecks: number;
}

export async function fuzzPayouts(
  fz: PayoutFuzzer,
  gw: TestGateway,
  pool: PayoutPool,
  runs: PayoutRuns,
  log: (line: string) => void,
  casesSoFar: () => number,
): Promise<void> {
  const db = gw.runtime.store.db;
  const foreignTx = new Set(pool.foreign.map((r) => r.transaction_id));
  const tally: PayoutTally = {
    cases: new Map(),
    statuses: new Map(),
    refusedBy: new Map(),
    outcomes: new Map(),
    replays: 0,
    conflicts: 0,
    cancelled: 0,
    notFound: 0,
    tooLate: 0,
    foreignRefused: 0,
    retrievals: 0,
    balanceChecks: 0,
  };
  const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
  const note = (label: string, what: string, a: Answer) => {
    bump(tally.cases, `${label} ${what}`);
    const s = tally.statuses.get(label) ?? new Map<string, number>();
    bump(s, String(a.statusCode));
    tally.statuses.set(label, s);
  };
  /** Tables a case changed, less the idempotency store when the case sent an Idempotency-Key. */
  const writes = (c: Case) => fz.changed().filter((t) => !(c.headers?.['idempotency-key'] !== undefined && t.startsWith('idempotency_keys ')));

  /** P's balances against its payouts: available ≥ 0, reserved and completed debits add up to the top-ups. */
  const balanceProblem = async (): Promise<string | null> => {
    tally.balanceChecks++;
    const balances = await accountBalances(db, pool.p.account_id);
    const rows = await db
      .selectFrom('payouts')
      .select(['status', 'source_currency', 'amount_payer_pays', 'fee_amount'])
      .where('account_id', '=', pool.p.account_id)
      .execute();
    const currencies = new Set([...pool.funded.keys(), ...balances.map((b) => b.currency), ...rows.map((r) => r.source_currency)]);
    for (const cur of currencies) {
      const b = balances.find((x) => x.currency === cur);
      const available = b?.available_minor ?? 0;
      const reserved = b?.payouts_reserved_minor ?? 0;
      let held = 0;
      let paid = 0;
      for (const r of rows) {
        if (r.source_currency !== cur) continue;
        const debit = Number(r.amount_payer_pays) + Number(r.fee_amount);
        if (r.status === 'SCHEDULED' || r.status === 'PROCESSING') held += debit;
        if (r.status === 'COMPLETED') paid += debit;
      }
      const funded = pool.funded.get(cur) ?? 0;
      if (available < 0) return `${cur} available is ${available}, below zero`;
      if (reserved !== held) return `${cur} payouts_reserved is ${reserved}, but SCHEDULED and PROCESSING payouts hold ${held}`;
      if (available + reserved + paid !== funded)
        return `${cur}: available ${available} + reserved ${reserved} + completed debits ${paid} = ${available + reserved + paid}, but ${funded} was topped up`;
    }
    return null;
  };

  /** After an accepted payout: it is P's, recorded, and the balances still add up. */
  const accepted = async (c: Case, a: Answer, body: Json | null, format: Format | null, clean: boolean, t?: Template): Promise<void> => {
    const r = record(a);
    const replayed = a.headers['idempotent-replayed'] === 'true';
    // A valid body as generated, in any format: the outcome its beneficiary's account and method say.
    if (clean && t && body && !replayed) {
      const status = `${r.status}${r.failure_type ? ` ${r.failure_type}` : ''}`;
      const want = body.payment_date
        ? 'SCHEDULED'
        : t.name === 'invalid account'
          ? 'FAILED INVALID_ACCOUNT'
          : t.name === 'returned' || t.payment_method === 'SWIFT'
            ? 'PROCESSING'
            : 'COMPLETED';
      if (status !== want && status !== 'FAILED INSUFFICIENT_FUNDS')
        throw new Error(`a ${t.name} payout (${format}) ended ${status}, expected ${want}, for ${describeCase(c)}: ${a.body.slice(0, 300)}`);
      const system = t.payment_method === 'SWIFT' ? 'SWIFT' : ({ USD: 'ACH', EUR: 'SEPA', GBP: 'FASTER_PAYMENTS', JPY: 'ZENGIN' } as Json)[t.payment_currency];
      if (r.beneficiary?.bank_details?.local_clearing_system !== system || r.beneficiary?.bank_details?.bank_code !== undefined)
        throw new Error(
          `a ${t.name} payout answered clearing system ${r.beneficiary?.bank_details?.local_clearing_system} (bank_code echoed: ${r.beneficiary?.bank_details?.bank_code !== undefined}), for ${describeCase(c)}`,
        );
      // The account is answered masked to its last four, and never in full anywhere in the answer (issue 29).
      for (const field of ['account_number', 'iban'] as const) {
        const sent = body.beneficiary?.bank_details?.[field];
        if (typeof sent !== 'string' || sent === '') continue;
        const answered = r.beneficiary?.bank_details?.[field];
        if (answered !== maskAccount(sent)) throw new Error(`${field} ${sent} sent, ${answered} answered, not ${maskAccount(sent)} (${format})`);
        const compact = sent.replace(/[\s-]/g, '');
        if (compact.length >= 8 && (a.body.includes(sent) || a.body.includes(compact)))
          throw new Error(`${field} ${sent} is in the answer in full (${format}): ${a.body.slice(0, 300)}`);
      }
      const minor = Math.round(Number(body.payment_amount) * (t.payment_currency === 'JPY' ? 1 : 100));
      if (r.amount_beneficiary_receives !== minor || (body.source_currency === t.payment_currency && r.amount_payer_pays !== minor))
        throw new Error(
          `payment_amount ${body.payment_amount} ${t.payment_currency} answered receives ${r.amount_beneficiary_receives}, pays ${r.amount_payer_pays} ${body.source_currency}, for ${describeCase(c)}`,
        );
    }
    if (r.account_id !== pool.p.account_id || r.merchant_id !== pool.p.merchant_id)
      throw new Error(`an accepted payout answered account ${String(r.account_id)}, not P's, for ${describeCase(c)}`);
    if (foreignTx.has(r.transaction_id)) throw new Error(`an accepted payout answered B's payout ${r.transaction_id}`);
    bump(tally.outcomes, `${r.status}${r.failure_type ? ` ${r.failure_type}` : ''}`);
    if (!pool.own.some((x) => x.transaction_id === r.transaction_id))
      pool.own.push({
        request_id: r.request_id,
        transaction_id: r.transaction_id,
        short_reference_id: r.short_reference_id,
        beneficiary_id: r.beneficiary_id,
        status: r.status,
      });
    if (body && format && !replayed && pool.accepted.length < MAX_ACCEPTED && typeof c.payload === 'string' && c.headers === undefined)
      pool.accepted.push({ clean, body, format, payload: c.payload, contentType: c.contentType, transaction_id: r.transaction_id });
    const problem = await balanceProblem();
    if (problem) throw new Error(`${problem}, after ${describeCase(c)}`);
  };

  // 1. Generated payout bodies.
  {
    const label = 'POST /v1/payout';
    const t0 = Date.now();
    const before = casesSoFar();
    const bodyCase = fc.record({
      template: fc.nat({ max: TEMPLATES.length - 1 }),
      pick: fc.nat(),
      spoils: fc.oneof(
        { weight: 2, arbitrary: fc.constant([] as Array<{ name: string; pick: number; value: unknown }>) },
        {
          weight: 5,
          arbitrary: fc.array(fc.record({ name: fc.constantFrom(...SPOILER_NAMES), pick: fc.nat(), value: hostileValue }), { minLength: 1, maxLength: 1 }),
        },
        {
          weight: 2,
          arbitrary: fc.array(fc.record({ name: fc.constantFrom(...SPOILER_NAMES), pick: fc.nat(), value: hostileValue }), { minLength: 2, maxLength: 3 }),
        },
      ),
      muts: fc.oneof({ weight: 6, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) }),
      format: formatArb,
      signing: fc.oneof(
        { weight: 12, arbitrary: fc.constant<Signing>('valid') },
        { weight: 1, arbitrary: fc.constantFrom<Signing>('none', 'wrong', "B's key", "B's ids") },
      ),
      // Rarely another content type or hostile headers: most cases are about the body.
      contentType: fc.oneof({ weight: 11, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) }),
      headers: fc.oneof({ weight: 11, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fz.headers }),
    });
    await fz.property(
      label,
      'bodies',
      fc.asyncProperty(bodyCase, async (bc) => {
        const t = TEMPLATES[bc.template] as Template;
        let body = baseBody(pool, pool.p, t, bc.pick);
        for (const sp of bc.spoils) (SPOILERS[sp.name] as Spoiler)(body, sp.pick, pool, sp.value);
        if (bc.muts.length) body = mutate(body, bc.muts);
        sign(body, pool, bc.signing, bc.format);
        const enc = encodeLoose(body, bc.format);
        const c: Case = { method: 'POST', path: '/v1/payout', payload: enc.payload, contentType: bc.contentType ?? enc.contentType, headers: bc.headers };
        const a = await fz.run(label, c);
        note(label, 'bodies', a);
        if (a.statusCode === 400) {
          const r = record(a);
          bump(tally.refusedBy, String(r.error_field || `(no field: ${String(r.error_message ?? a.body).slice(0, 40)})`));
        }
        if (a.statusCode === 409) tally.conflicts++;
        if (a.statusCode !== 200) return;
        if (bc.signing !== 'valid') throw new Error(`a payout signed "${bc.signing}" was accepted, for ${describeCase(c)}`);
        const clean = bc.spoils.length === 0 && bc.muts.length === 0;
        await accepted(c, a, bc.contentType === undefined ? body : null, bc.contentType === undefined ? bc.format : null, clean, t);
      }),
      runs.bodies,
    );
    log(`    ${casesSoFar() - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  // 2. Replays: an accepted body again (the same payout, nothing written), or its request_id with another amount (409).
  {
    const label = 'POST /v1/payout';
    const t0 = Date.now();
    const before = casesSoFar();
    await fz.property(
      label,
      'replays',
      fc.asyncProperty(fc.nat(), fc.constantFrom('exact', 'exact', 'changed', 'other format'), async (pick, asked) => {
        let how = asked;
        if (pool.accepted.length === 0) throw new Error('no accepted payout to replay');
        const x = pool.accepted[pick % pool.accepted.length] as Accepted;
        // Only a clean body reads the same in another format (an empty object or array vanishes from a form, say).
        if (how === 'other format' && !x.clean) how = 'exact';
        let c: Case = { method: 'POST', path: '/v1/payout', payload: x.payload, contentType: x.contentType };
        if (how !== 'exact') {
          const body = structuredClone(x.body);
          delete body.encryption_data;
          if (how === 'changed') {
            const field = body.payment_amount !== undefined ? 'payment_amount' : 'source_amount';
            // The accepted amount may have been a JSON number or a string such as '01': compare by value.
            const was = String(body[field]);
            const n = Number(was);
            body[field] = n === 1 ? '2' : n === 0.01 ? '0.02' : was.includes('.') ? '0.01' : '1';
          }
          const format: Format = how === 'changed' ? x.format : x.format === 'json' ? 'form' : 'json';
          body.encryption_data = signOrGarbage(body, pool.p.secret_key, format);
          const enc = encodeLoose(body, format);
          c = { method: 'POST', path: '/v1/payout', payload: enc.payload, contentType: enc.contentType };
        }
        const a = await fz.run(label, c);
        note(label, 'replays', a);
        if (how === 'changed') {
          if (a.statusCode !== 409)
            throw new Error(`request_id reused with another amount answered ${a.statusCode}, not 409, for ${describeCase(c)}: ${a.body.slice(0, 300)}`);
          tally.conflicts++;
          return;
        }
        if (a.statusCode !== 200) throw new Error(`a replay answered ${a.statusCode}, for ${describeCase(c)}: ${a.body.slice(0, 300)}`);
        const r = record(a);
        if (r.transaction_id !== x.transaction_id) throw new Error(`a replay answered ${r.transaction_id}, first ${x.transaction_id}, for ${describeCase(c)}`);
        const w = writes(c);
        if (w.length) throw new Error(`a replay changed table contents (${w.join('; ')}) for ${describeCase(c)}`);
        tally.replays++;
      }),
      runs.replays,
    );
    log(`    ${casesSoFar() - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  // 3. Cancels: P's scheduled ones (cancelled), P's finished ones (1012), B's (0404), near misses, hostile values.
  {
    const label = 'POST /v1/cancelpayout';
    const t0 = Date.now();
    const before = casesSoFar();
    const cancelCase = fc.record({
      pick: fc.nat(),
      kind: fc.constantFrom(
        'own',
        'own',
        'own',
        'own by transaction_id',
        'own both',
        'foreign',
        'foreign by transaction_id',
        'own request_id, foreign transaction_id',
        'near',
        'hostile',
        'neither',
        'mutated',
      ),
      hostile: fc.oneof(fc.constantFrom<unknown>(...BAD_REQUEST_IDS, '%', '_', "' OR '1'='1", 'x'.repeat(65)), hostileValue),
      muts: fc.array(mutation, { minLength: 1, maxLength: 2 }),
      format: fc.constantFrom<Format>('json', 'form', 'xml'),
      signing: fc.oneof(
        { weight: 10, arbitrary: fc.constant<Signing>('valid') },
        { weight: 1, arbitrary: fc.constantFrom<Signing>('none', "B's key", "B's ids") },
      ),
      headers: fc.oneof({ weight: 11, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fz.headers }),
    });
    await fz.property(
      label,
      'selectors',
      fc.asyncProperty(cancelCase, async (cc) => {
        const own = pool.own[cc.pick % pool.own.length] as Ref;
        const foreign = pool.foreign[cc.pick % pool.foreign.length] as Ref;
        let body: Json = { merchant_id: pool.p.merchant_id, account_id: pool.p.account_id };
        const sel: Json = {};
        if (cc.kind === 'own') sel.request_id = own.request_id;
        else if (cc.kind === 'own by transaction_id') sel.transaction_id = own.transaction_id;
        else if (cc.kind === 'own both') Object.assign(sel, { request_id: own.request_id, transaction_id: own.transaction_id });
        else if (cc.kind === 'foreign') sel.request_id = foreign.request_id;
        else if (cc.kind === 'foreign by transaction_id') sel.transaction_id = foreign.transaction_id;
        else if (cc.kind === 'own request_id, foreign transaction_id')
          Object.assign(sel, { request_id: own.request_id, transaction_id: foreign.transaction_id });
        else if (cc.kind === 'near')
          Object.assign(
            sel,
            [
              { transaction_id: own.transaction_id.slice(0, -1) },
              { transaction_id: `${own.transaction_id}0` },
              { transaction_id: own.transaction_id.toLowerCase() },
              { request_id: own.request_id.toUpperCase() },
              { transaction_id: ` ${own.transaction_id}` },
              { transaction_id: `${own.transaction_id.slice(0, 4)}%` },
              { request_id: foreign.request_id.toUpperCase() },
            ][cc.pick % 7],
          );
        else if (cc.kind === 'hostile') setField(sel, cc.pick % 2 ? 'request_id' : 'transaction_id', cc.hostile);
        Object.assign(body, sel);
        if (cc.kind === 'mutated') {
          body.request_id = own.request_id;
          body = mutate(body, cc.muts);
        }
        sign(body, pool, cc.signing, cc.format);
        const enc = encodeLoose(body, cc.format);
        const c: Case = { method: 'POST', path: '/v1/cancelpayout', payload: enc.payload, contentType: enc.contentType, headers: cc.headers };
        const a = await fz.run(label, c);
        note(label, 'selectors', a);
        // Request ids are per account: P may have made a payout with one of B's (a spoiler below), which it may cancel.
        const reused = cc.kind === 'foreign' && pool.own.some((x) => x.request_id === foreign.request_id);
        const touchesForeign = (cc.kind.startsWith('foreign') && !reused) || cc.kind === 'own request_id, foreign transaction_id' || cc.signing === "B's ids";
        if (a.statusCode !== 200) {
          if (touchesForeign) tally.foreignRefused++;
          return;
        }
        if (cc.signing !== 'valid') throw new Error(`a cancel signed "${cc.signing}" was answered 200, for ${describeCase(c)}`);
        const r = record(a);
        // A not-found answer echoes the ids it was sent; anything more about B's payout is a leak.
        if (foreignTx.has(r.transaction_id) && (r.cancel_status !== '0' || r.status !== ''))
          throw new Error(`a cancel with P's key answered B's payout ${r.transaction_id} (cancel_status ${r.cancel_status}), for ${describeCase(c)}`);
        if (touchesForeign) {
          if (r.cancel_status !== '0' || !String(r.error_message).startsWith('0404'))
            throw new Error(`a cancel naming B's payout answered cancel_status ${r.cancel_status} ${r.error_message}, for ${describeCase(c)}`);
          tally.foreignRefused++;
        }
        if (r.cancel_status === '1') {
          if (r.status !== 'CANCELLED') throw new Error(`cancel_status 1 with status ${r.status}, for ${describeCase(c)}`);
          const mine = pool.own.find((x) => x.transaction_id === r.transaction_id);
          if (!mine) throw new Error(`cancel_status 1 for ${r.transaction_id}, not a payout P made, for ${describeCase(c)}`);
          mine.status = 'CANCELLED';
          tally.cancelled++;
          const problem = await balanceProblem();
          if (problem) throw new Error(`${problem}, after ${describeCase(c)}`);
          return;
        }
        if (r.cancel_status !== '0') throw new Error(`cancel_status ${String(r.cancel_status)}, for ${describeCase(c)}`);
        if (String(r.error_message).startsWith('0404')) tally.notFound++;
        else if (String(r.error_message).startsWith('1012')) tally.tooLate++;
        else throw new Error(`cancel_status 0 with error_message ${String(r.error_message)}, for ${describeCase(c)}`);
        const w = writes(c);
        if (w.length) throw new Error(`a cancel_status 0 answer changed table contents (${w.join('; ')}) for ${describeCase(c)}`);
      }),
      runs.cancels,
    );
    log(`    ${casesSoFar() - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  // 4. Retrievals: P's ids, B's ids, mixes, comma strings, too many ids, date ranges, cursors.
  {
    const label = 'POST /v1/retrievalPayout';
    const t0 = Date.now();
    const before = casesSoFar();
    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const retrievalCase = fc.record({
      pick: fc.nat(),
      kind: fc.constantFrom(
        'own ids',
        'own ids',
        'foreign ids',
        'mixed',
        'comma string',
        'too many',
        'range',
        'range hostile',
        'cursor hostile',
        'hostile',
        'mutated',
      ),
      field: fc.constantFrom('request_ids', 'transaction_ids', 'short_reference_ids'),
      hostile: hostileValue,
      muts: fc.array(mutation, { minLength: 1, maxLength: 2 }),
      format: fc.constantFrom<Format>('json', 'form', 'xml'),
      signing: fc.oneof(
        { weight: 10, arbitrary: fc.constant<Signing>('valid') },
        { weight: 1, arbitrary: fc.constantFrom<Signing>('none', "B's key", "B's ids") },
      ),
      headers: fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fz.headers }),
    });
    const idOf = (r: Ref, field: string) => (field === 'request_ids' ? r.request_id : field === 'transaction_ids' ? r.transaction_id : r.short_reference_id);
    await fz.property(
      label,
      'selectors',
      fc.asyncProperty(retrievalCase, async (rc) => {
        const own = Array.from({ length: 1 + (rc.pick % 4) }, (_, i) => pool.own[(rc.pick + i * 7) % pool.own.length] as Ref);
        const foreign = Array.from({ length: 1 + (rc.pick % 3) }, (_, i) => pool.foreign[(rc.pick + i) % pool.foreign.length] as Ref);
        let body: Json = { merchant_id: pool.p.merchant_id, account_id: pool.p.account_id };
        if (rc.kind === 'own ids') body[rc.field] = own.map((r) => idOf(r, rc.field));
        else if (rc.kind === 'foreign ids') body[rc.field] = foreign.map((r) => idOf(r, rc.field));
        else if (rc.kind === 'mixed') {
          body.request_ids = [own[0]?.request_id, foreign[0]?.request_id];
          body.transaction_ids = [foreign[0]?.transaction_id, own[0]?.transaction_id];
          body.short_reference_ids = foreign.map((r) => r.short_reference_id);
        } else if (rc.kind === 'comma string') body[rc.field] = [...own, ...foreign].map((r) => idOf(r, rc.field)).join(rc.pick % 2 ? ',' : ', ');
        else if (rc.kind === 'too many') body[rc.field] = Array.from({ length: 101 + (rc.pick % 50) }, (_, i) => `${i}`);
        else if (rc.kind === 'range') {
          const now = gw.clock.now;
          Object.assign(
            body,
            [
              { start_date: stamp(now - DAY_MS), end_date: stamp(now + DAY_MS) },
              { start_date: stamp(now + DAY_MS), end_date: stamp(now - DAY_MS) },
              { start_date: stamp(now - 400 * DAY_MS) },
              { end_date: stamp(now) },
              { start_date: stamp(now - DAY_MS), end_date: stamp(now + DAY_MS), request_ids: [own[0]?.request_id] },
            ][rc.pick % 5],
          );
        } else if (rc.kind === 'range hostile') {
          setField(body, 'start_date', ['00000000000000', '99991231235959', '20250229120000', '2025-01-01', rc.hostile][rc.pick % 5]);
          setField(body, 'end_date', ['99991231235959', '20251301000000', stamp(gw.clock.now), rc.hostile][rc.pick % 4]);
        } else if (rc.kind === 'cursor hostile') {
          Object.assign(body, { start_date: stamp(gw.clock.now - DAY_MS), end_date: stamp(gw.clock.now + DAY_MS) });
          setField(body, 'cursor', ['', 'x', 'AAAA', '%', 'eyJ4IjoxfQ', `${'A'.repeat(200)}`, 'MTox', rc.hostile][rc.pick % 8]);
        } else if (rc.kind === 'hostile') setField(body, rc.field, rc.hostile);
        else body = mutate({ ...body, request_ids: own.map((r) => r.request_id) }, rc.muts);
        sign(body, pool, rc.signing, rc.format);
        const enc = encodeLoose(body, rc.format);
        const c: Case = { method: 'POST', path: '/v1/retrievalPayout', payload: enc.payload, contentType: enc.contentType, headers: rc.headers };
        const a = await fz.run(label, c);
        note(label, 'selectors', a);
        if (a.statusCode !== 200) return;
        if (rc.signing !== 'valid') throw new Error(`a retrieval signed "${rc.signing}" was answered 200, for ${describeCase(c)}`);
        tally.retrievals++;
        const r = record(a);
        for (const item of (r.payouts ?? []) as Json[]) {
          if (item.query_result !== '1') continue;
          if (foreignTx.has(item.transaction_id) || item.account_id !== pool.p.account_id)
            throw new Error(`a retrieval with P's key answered ${item.transaction_id} of account ${item.account_id}, for ${describeCase(c)}`);
        }
        // (P may have used one of B's request_ids for a payout of its own: request ids are per account.)
        if (rc.kind === 'foreign ids' && rc.field !== 'request_ids' && ((r.payouts ?? []) as Json[]).some((x) => x.query_result === '1'))
          throw new Error(`B's ids found a payout, for ${describeCase(c)}`);
        const w = writes(c);
        if (w.length) throw new Error(`a retrieval changed table contents (${w.join('; ')}) for ${describeCase(c)}`);
      }),
      runs.retrievals,
    );
    log(`    ${casesSoFar() - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  // 5. Raw payloads at each path.
  {
    const t0 = Date.now();
    const before = casesSoFar();
    for (const path of ['/v1/payout', '/v1/cancelpayout', '/v1/retrievalPayout']) {
      const label = `POST ${path}`;
      await fz.property(
        label,
        'raw payloads',
        fc.asyncProperty(fc.constantFrom(...RAW), fc.constantFrom(...CONTENT_TYPES), async (payload, contentType) => {
          const a = await fz.run(label, { method: 'POST', path, payload, contentType });
          note(label, 'raw payloads', a);
        }),
        runs.raw,
      );
    }
    log(`    ${casesSoFar() - before} raw cases at the three paths, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  const fmt = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}×${v}`)
      .join(', ');
  for (const [label, s] of tally.statuses) log(`  ${label}: ${fmt(s)}`);
  log(`  accepted payouts by outcome: ${fmt(tally.outcomes)}`);
  log(`  POST /v1/payout 400s by field: ${fmt(tally.refusedBy)}`);
  log(
    `  ${tally.replays} replays answered the same payout and wrote nothing, ${tally.conflicts} request_id conflicts (409); cancels: ${tally.cancelled} cancel_status 1, ${tally.notFound} not found, ${tally.tooLate} too late, ${tally.foreignRefused} naming B's payouts refused; ${tally.retrievals} retrievals answered none of B's; balances checked ${tally.balanceChecks} times`,
  );
}

/**
 * The end of the payout fuzz: B's payouts as seeded; then every payout job (dispatch,
 * checks) runs as of a year and more ahead, and every P payout is final, nothing is
 * reserved, the balances add up, no payout job failed, and the ledger verifies. Returns
 * the problems ([] when all hold) and a summary line.
 */
export async function settlePayouts(gw: TestGateway, pool: PayoutPool): Promise<{ problems: string[]; summary: string }> {
  const db = gw.runtime.store.db;
  const problems: string[] = [];
  const foreignRows = await db.selectFrom('payouts').select(['transaction_id', 'request_id', 'status']).where('account_id', '=', pool.b.account_id).execute();
  const seeded = new Map(pool.foreign.map((r) => [r.transaction_id, r]));
  if (foreignRows.length !== seeded.size) problems.push(`B has ${foreignRows.length} payouts, ${seeded.size} were seeded`);
  for (const r of foreignRows) {
    const s = seeded.get(r.transaction_id);
    if (!s) problems.push(`B has a payout ${r.transaction_id} nobody seeded`);
    else if (s.status !== r.status) problems.push(`B's payout ${r.transaction_id} was ${s.status}, is ${r.status}`);
  }

  const scheduler = new Scheduler(gw.runtime.store);
  scheduler.register(DISPATCH_KIND, dispatchHandler(gw.runtime.deps));
  scheduler.register(CHECK_KIND, checkHandler(gw.runtime.deps));
  let ran = 0;
  // Dispatch (at most 365 days ahead), then the checks of what the dispatch left PROCESSING.
  for (const at of [gw.clock.now + 367 * DAY_MS, gw.clock.now + 368 * DAY_MS]) {
    for (let i = 0; i < 100; i++) {
      const r = await scheduler.runDue(at, 500);
      ran += r.claimed;
      if (r.claimed === 0) break;
    }
  }
  const jobs = await db
    .selectFrom('scheduled_jobs')
    .select(['job_key', 'status', 'last_error'])
    .where('kind', 'in', [DISPATCH_KIND, CHECK_KIND])
    .where('status', '<>', 'done')
    .execute();
  for (const j of jobs.slice(0, 5)) problems.push(`payout job ${j.job_key} is ${j.status}: ${j.last_error}`);
  const rows = await db
    .selectFrom('payouts')
    .select(['transaction_id', 'status', 'failure_type', 'source_currency', 'amount_payer_pays', 'fee_amount'])
    .where('account_id', '=', pool.p.account_id)
    .execute();
  const open = rows.filter((r) => r.status === 'SCHEDULED' || r.status === 'PROCESSING');
  if (open.length)
    problems.push(
      `${open.length} of P's payouts are not final after the jobs ran, e.g. ${open
        .slice(0, 3)
        .map((r) => `${r.transaction_id} ${r.status}`)
        .join(', ')}`,
    );
  const balances = await accountBalances(db, pool.p.account_id);
  for (const cur of new Set([...pool.funded.keys(), ...balances.map((b) => b.currency)])) {
    const b = balances.find((x) => x.currency === cur);
    const paid = rows
      .filter((r) => r.status === 'COMPLETED' && r.source_currency === cur)
      .reduce((s, r) => s + Number(r.amount_payer_pays) + Number(r.fee_amount), 0);
    const available = b?.available_minor ?? 0;
    const reserved = b?.payouts_reserved_minor ?? 0;
    if (available < 0) problems.push(`${cur} available ${available} is below zero`);
    if (reserved !== 0) problems.push(`${cur} payouts_reserved ${reserved} with every payout final`);
    if (available + reserved + paid !== (pool.funded.get(cur) ?? 0))
      problems.push(`${cur}: available ${available} + reserved ${reserved} + completed ${paid} ≠ topped up ${pool.funded.get(cur) ?? 0}`);
  }
  const ledger = await verifyLedger(db);
  if (!ledger.ok) problems.push(`ledger verify: ${ledger.problems.slice(0, 3).join('; ')}`);
  const by = new Map<string, number>();
  for (const r of rows)
    by.set(`${r.status}${r.failure_type ? ` ${r.failure_type}` : ''}`, (by.get(`${r.status}${r.failure_type ? ` ${r.failure_type}` : ''}`) ?? 0) + 1);
  const summary = `${rows.length} payouts of P (${[...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}×${v}`)
    .join(', ')}) after ${ran} payout jobs ran; B's ${foreignRows.length} as seeded; ledger verified (${ledger.postings} postings, ${ledger.payouts} payouts)`;
  return { problems, summary };
}
