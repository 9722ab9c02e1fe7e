// Goal: the client library's payouts (createPayout, cancelPayout, retrievePayouts, the
// payout events) against the in-process gateway on the engine under test. Its hand-written
// types have exactly the fields of the server's schemas at every depth (a field tree tied to
// each type at compile time, compared with the TypeBox schema at run time) and exactly the
// fields the gateway sends; answers are verified; a retry keeps the request_id and pays once;
// another body under a request_id is a ConflictError naming it; a SCHEDULED payout cancels;
// every selector finds; payout notifications verify and come back typed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { accountBalances } from '../ledger/balances.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { type Receiver, startReceiver } from '../notifications/test-receiver.js';
import { DeliveryWorker } from '../notifications/worker.js';
import { topUp } from '../payouts/admin.js';
import {
  CancelPayoutAnswer,
  CancelPayoutBody,
  PayoutAnswer,
  PayoutBody,
  PayoutRecordSchema,
  RetrievalPayoutAnswer,
  RetrievalPayoutBody,
} from '../payouts/schema.js';
import { injectFetch, type TestGateway, testGateway } from '../test/harness.js';
import {
  type Beneficiary,
  type CancelPayoutAnswer as CancelPayoutAnswerType,
  type CancelPayoutRequest,
  ConflictError,
  type EntityType,
  type FeePaidBy,
  type FetchLike,
  type FoundPayout,
  InvalidRequestError,
  type NotFoundPayout,
  type PayoutAnswer as PayoutAnswerType,
  type PayoutEventType,
  type PayoutFailureType,
  type PayoutMethod,
  type PayoutRecord,
  type PayoutRequest,
  type PayoutStatus,
  type RetrievalPayoutAnswer as RetrievalPayoutAnswerType,
  type RetrievalPayoutRequest,
  SignatureVerificationError,
  type SwiftChargeOption,
  type TollgateClient,
  WebhookVerificationError,
} from './index.js';

// ---------- field trees: every field at every depth, required or optional ----------
type Need = 'required' | 'optional';
type NeedOf<T, K extends keyof T> = Pick<T, K> extends Required<Pick<T, K>> ? 'required' : 'optional';
/** The fields of an object value (array elements by their element); `never` for a leaf. */
type Sub<V> = V extends readonly (infer E)[] ? Sub<E> : V extends object ? Tree<V> : never;
type Entry<T, K extends keyof T> = [Sub<NonNullable<T[K]>>] extends [never] ? NeedOf<T, K> : { need: NeedOf<T, K>; fields: Sub<NonNullable<T[K]>> };
/** Written out as a literal, tsc holds it to exactly the type's fields and their optionality. */
type Tree<T> = { [K in keyof T]-?: Entry<T, K> };
type AnyTree = { [k: string]: Need | { need: Need; fields: AnyTree } };

const R = 'required' as const;
const O = 'optional' as const;

const BANK_DETAILS_FIELDS = {
  account_currency: O,
  account_name: O,
  owner_document_number: O,
  account_number: O,
  bank_account_category: O,
  bank_branch: O,
  bank_country_code: O,
  bank_name: O,
  bank_street_address: O,
  binding_mobile_number: O,
  iban: O,
  swift_code: O,
  transaction_reference: O,
} as const;
const BENEFICIARY_REST = {
  additional_info: {
    need: O,
    fields: {
      business_area: O,
      business_phone_number: O,
      business_registration_number: O,
      personal_email: O,
      personal_id_number: O,
      personal_id_type: O,
      personal_mobile_number: O,
      personal_net_monthly_average_income: O,
      personal_phone_country_code: O,
      personal_phone_area_code: O,
      personal_fiscal_country: O,
    },
  },
  address: {
    need: O,
    fields: { city: O, country_code: O, postcode: O, state: O, street: O, number: O, street_address: O, complement: O },
  },
  person_documents: { need: O, fields: { file_type: O, file_url: O, labels: O } },
  company_name: O,
  date_of_birth: O,
  entity_type: O,
  first_name: O,
  last_name: O,
} as const;
const PAYER_FIELDS = {
  additional_info: {
    need: O,
    fields: { business_registration_number: O, business_registration_type: O, external_id: O, personal_email: O, personal_id_number: O, job: O },
  },
  address: { need: O, fields: { city: O, country_code: O, postcode: O, state: O, street_address: O } },
  company_name: O,
  date_of_birth: O,
  entity_type: O,
  first_name: O,
  last_name: O,
} as const;

const PAYOUT_REQUEST_FIELDS: Tree<PayoutRequest> = {
  request_id: R,
  beneficiary: { need: O, fields: { ...BENEFICIARY_REST, bank_details: { need: O, fields: { ...BANK_DETAILS_FIELDS, bank_code: O } } } },
  beneficiary_id: O,
  client_data: O,
  fee_paid_by: O,
  payer: { need: O, fields: PAYER_FIELDS },
  payment_amount: O,
  payment_currency: R,
  payment_date: O,
  payment_method: R,
  reason: R,
  reference: R,
  source_amount: O,
  source_currency: R,
  swift_charge_option: O,
  fund_source: O,
  notify_url: O,
};

const PAYOUT_RECORD_FIELDS: Tree<PayoutRecord> = {
  merchant_id: R,
  account_id: R,
  request_id: R,
  transaction_id: R,
  short_reference_id: R,
  status: R,
  failure_type: R,
  failure_reason: R,
  payment_method: R,
  payment_currency: R,
  source_currency: R,
  payment_amount: O,
  source_amount: O,
  amount_beneficiary_receives: R,
  amount_payer_pays: R,
  fee_amount: R,
  fee_currency: R,
  fee_paid_by: R,
  fx_rate: R,
  payment_date: R,
  settlement_batches: { need: R, fields: { batch_id: R, day: R, amount: R } },
  swift_charge_option: O,
  reason: R,
  reference: R,
  beneficiary_id: R,
  beneficiary: { need: R, fields: { ...BENEFICIARY_REST, bank_details: { need: R, fields: { ...BANK_DETAILS_FIELDS, local_clearing_system: R } } } },
  payer_id: R,
  payer: { need: O, fields: PAYER_FIELDS },
  client_data: O,
  fund_source: O,
  notify_url: O,
  created_at: R,
  last_updated_at: R,
};
const PAYOUT_ANSWER_FIELDS: Tree<PayoutAnswerType> = { ...PAYOUT_RECORD_FIELDS, encryption_data: R };
const FOUND_FIELDS: Tree<FoundPayout> = { query_result: R, ...PAYOUT_RECORD_FIELDS };
const NOT_FOUND_FIELDS: Tree<NotFoundPayout> = { query_result: R, request_id: R, transaction_id: R, short_reference_id: R };
const RETRIEVAL_REQUEST_FIELDS: Tree<RetrievalPayoutRequest> = {
  request_ids: O,
  transaction_ids: O,
  short_reference_ids: O,
  start_date: O,
  end_date: O,
  cursor: O,
};
/** CancelPayoutRequest is a union (one id required); its fields, flat. */
type CancelPayoutFields = { request_id?: string; transaction_id?: string };
const CANCEL_REQUEST_FIELDS: Tree<CancelPayoutFields> = { request_id: O, transaction_id: O };
const cancelRequestIsFlatFields: [CancelPayoutRequest] extends [CancelPayoutFields] ? true : false = true;
// @ts-expect-error: a cancel names its payout
const noId: CancelPayoutRequest = {};
const CANCEL_ANSWER_FIELDS: Tree<CancelPayoutAnswerType> = {
  merchant_id: R,
  account_id: R,
  request_id: R,
  transaction_id: R,
  cancel_status: R,
  status: R,
  error_message: R,
  encryption_data: R,
};
const RETRIEVAL_ANSWER_FIELDS: Omit<Tree<RetrievalPayoutAnswerType>, 'payouts'> & { payouts: { need: Need; fields: typeof FOUND_FIELDS } } = {
  merchant_id: R,
  account_id: R,
  return_status: R,
  return_message: R,
  payouts: { need: R, fields: FOUND_FIELDS },
  next_cursor: O,
  encryption_data: R,
};

type JsonSchema = { properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema; anyOf?: JsonSchema[]; enum?: string[] };
const WIRE = ['merchant_id', 'account_id', 'encryption_data'];

/** Where a field tree and a TypeBox object schema differ, at every depth. */
function treeVsSchema(tree: AnyTree, schema: JsonSchema, at = '', skip: string[] = []): string[] {
  const problems: string[] = [];
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const names = new Set([...Object.keys(tree), ...Object.keys(props).filter((k) => !skip.includes(k))]);
  for (const name of names) {
    const path = `${at}${name}`;
    const entry = tree[name];
    const child = props[name];
    if (!entry) problems.push(`${path}: in the schema, not in the client's type`);
    else if (!child) problems.push(`${path}: in the client's type, not in the schema`);
    else {
      const need = typeof entry === 'string' ? entry : entry.need;
      if ((need === 'required') !== required.has(name)) problems.push(`${path}: ${need} in the client's type, not in the schema`);
      // Object shapes of the field (an array's items; each branch of a union such as IdList).
      const shapes = (c: JsonSchema): JsonSchema[] => (c.anyOf ? c.anyOf.flatMap(shapes) : c.items ? shapes(c.items) : [c]);
      const objects = shapes(child).filter((c) => c.properties);
      if (typeof entry !== 'string') {
        const outcomes = objects.map((o) => treeVsSchema(entry.fields, o, `${path}.`));
        if (!outcomes.some((p) => p.length === 0)) problems.push(...(outcomes[0] ?? [`${path}: an object in the client's type, a leaf in the schema`]));
      } else if (objects.length) problems.push(`${path}: a leaf in the client's type, an object in the schema`);
    }
  }
  return problems;
}

/** Where an answer's fields differ from a field tree, at every depth. */
function valueVsTree(tree: AnyTree, value: unknown, at = ''): string[] {
  if (value === null || typeof value !== 'object') return [`${at || 'value'}: not an object`];
  const problems: string[] = [];
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) if (!(k in tree)) problems.push(`${at}${k}: sent, not in the client's type`);
  for (const [k, entry] of Object.entries(tree)) {
    const need = typeof entry === 'string' ? entry : entry.need;
    if (!(k in v)) {
      if (need === 'required') problems.push(`${at}${k}: in the client's type as required, not sent`);
      continue;
    }
    if (typeof entry === 'string') continue;
    const items = Array.isArray(v[k]) ? (v[k] as unknown[]) : [v[k]];
    for (const [i, item] of items.entries()) problems.push(...valueVsTree(entry.fields, item, `${at}${k}${Array.isArray(v[k]) ? `[${i}]` : ''}.`));
  }
  return problems;
}

function fieldsMatch(tree: object, value: unknown, what: string): void {
  const problems = valueVsTree(tree as AnyTree, value);
  assert.deepEqual(problems, [], `${what}: fields differ from the client's type`);
}

/** All members of a string union, checked by tsc in both directions. */
const all =
  <T extends string>() =>
  <const A extends readonly T[]>(...values: A & ([T] extends [A[number]] ? unknown : never)): readonly string[] =>
    values;

// ---------- the in-process gateway ----------
const NOW = Date.UTC(2026, 10, 24, 9, 0, 0);
let gw: TestGateway;
let receiver: Receiver;
before(async () => {
  gw = await testGateway({ start_ms: NOW });
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await gw.close();
});

const ACH_BENEFICIARY: Beneficiary = {
  entity_type: 'COMPANY',
  company_name: 'Acme Supplies LLC',
  address: { country_code: 'US', city: 'New York', street_address: '1 Main St', postcode: '10001', state: 'NY' },
  bank_details: { account_name: 'Acme Supplies LLC', account_number: '000123456789', bank_code: '011000015', bank_country_code: 'US', account_currency: 'USD' },
};

function payoutRequest(overrides: Partial<PayoutRequest> = {}): PayoutRequest {
  return {
    request_id: randomUUID(),
    beneficiary: ACH_BENEFICIARY,
    payment_currency: 'USD',
    payment_method: 'LOCAL',
    reason: 'supplier invoice',
    reference: 'INV-1001',
    source_currency: 'USD',
    payment_amount: '100.00',
    notify_url: receiver.url,
    ...overrides,
  };
}

async function funded(amount = '1000.00'): Promise<{ m: CreatedMerchant; client: TollgateClient }> {
  const m = await gw.newMerchant();
  await topUp(gw.runtime.store, { account_id: m.account_id, currency: 'USD', amount }, gw.clock.now);
  return { m, client: gw.client(m) };
}

async function available(account_id: string): Promise<{ available: number; reserved: number }> {
  const b = (await accountBalances(gw.runtime.store.db, account_id)).find((x) => x.currency === 'USD');
  return { available: b?.available_minor ?? 0, reserved: b?.payouts_reserved_minor ?? 0 };
}

async function payoutCount(account_id: string): Promise<number> {
  const r = await gw.runtime.store.db
    .selectFrom('payouts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', account_id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

const found = (p: FoundPayout | NotFoundPayout): p is FoundPayout => p.query_result === '1';
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('payout types against the server schemas', () => {
  test('every request and answer field, at every depth, required or optional as the schema says', () => {
    const rows: Array<[string, object, JsonSchema, string[]]> = [
      ['PayoutRequest', PAYOUT_REQUEST_FIELDS, PayoutBody as JsonSchema, WIRE],
      ['CancelPayoutRequest', CANCEL_REQUEST_FIELDS, CancelPayoutBody as JsonSchema, WIRE],
      ['RetrievalPayoutRequest', RETRIEVAL_REQUEST_FIELDS, RetrievalPayoutBody as JsonSchema, WIRE],
      ['PayoutRecord', PAYOUT_RECORD_FIELDS, PayoutRecordSchema as JsonSchema, []],
      ['PayoutAnswer', PAYOUT_ANSWER_FIELDS, PayoutAnswer as JsonSchema, []],
      ['CancelPayoutAnswer', CANCEL_ANSWER_FIELDS, CancelPayoutAnswer as JsonSchema, []],
      ['RetrievalPayoutAnswer', RETRIEVAL_ANSWER_FIELDS, RetrievalPayoutAnswer as JsonSchema, []],
    ];
    for (const [name, tree, schema, skip] of rows) assert.deepEqual(treeVsSchema(tree as AnyTree, schema, '', skip), [], name);
    const [foundSchema, missingSchema] = (RetrievalPayoutAnswer as JsonSchema).properties?.payouts?.items?.anyOf ?? [];
    assert.deepEqual(treeVsSchema(FOUND_FIELDS as AnyTree, foundSchema as JsonSchema), [], 'FoundPayout');
    assert.deepEqual(treeVsSchema(NOT_FOUND_FIELDS as AnyTree, missingSchema as JsonSchema), [], 'NotFoundPayout');
    assert.ok(cancelRequestIsFlatFields && noId !== undefined);
  });

  test('the unions have exactly the schema’s values', () => {
    const body = PayoutBody as JsonSchema;
    const rec = PayoutRecordSchema as JsonSchema;
    const rows: Array<[string, JsonSchema | undefined, readonly string[]]> = [
      ['status', rec.properties?.status, all<PayoutStatus>()('SCHEDULED', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED')],
      [
        'failure_type',
        rec.properties?.failure_type,
        all<PayoutFailureType>()('', 'INSUFFICIENT_FUNDS', 'INVALID_ACCOUNT', 'RETURNED', 'CANCELLED', 'PROCESSOR_ERROR'),
      ],
      ['payment_method', body.properties?.payment_method, all<PayoutMethod>()('LOCAL', 'SWIFT')],
      ['fee_paid_by', body.properties?.fee_paid_by, all<FeePaidBy>()('PAYER', 'BENEFICIARY')],
      ['swift_charge_option', body.properties?.swift_charge_option, all<SwiftChargeOption>()('SHARED', 'PAYER')],
      ['beneficiary.entity_type', body.properties?.beneficiary?.properties?.entity_type, all<EntityType>()('PERSONAL', 'COMPANY')],
      ['payer.entity_type', body.properties?.payer?.properties?.entity_type, all<EntityType>()('PERSONAL', 'COMPANY')],
      [
        'cancel status',
        (CancelPayoutAnswer as JsonSchema).properties?.status,
        all<CancelPayoutAnswerType['status']>()('', 'SCHEDULED', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'),
      ],
    ];
    for (const [name, schema, values] of rows) assert.deepEqual([...(schema?.enum ?? [])].sort(), [...values].sort(), name);
  });
});

/** `fetch` with the answer text rewritten on the way (a man in the middle). */
const tampering =
  (inner: FetchLike, edit: (text: string) => string): FetchLike =>
  async (input, init) => {
    const res = await inner(input, init);
    return new Response(edit(await res.text()), { status: res.status, headers: res.headers });
  };

describe('payouts through the client', () => {
  test('createPayout: a LOCAL ACH payout completes at once, typed, with exactly the declared fields, and moves the money', async () => {
    const { m, client } = await funded();
    const request = payoutRequest({ client_data: 'batch 7', payer: { entity_type: 'COMPANY', company_name: 'Shop Ltd', address: { country_code: 'GB' } } });
    const x = await client.createPayout(request);
    fieldsMatch(PAYOUT_ANSWER_FIELDS, x, 'payout answer');
    assert.deepEqual([x.status, x.failure_type, x.request_id, x.merchant_id, x.account_id], ['COMPLETED', '', request.request_id, m.merchant_id, m.account_id]);
    assert.deepEqual([x.amount_beneficiary_receives, x.amount_payer_pays, x.fee_amount, x.fee_currency, Number(x.fx_rate)], [10000, 10000, 0, 'USD', 1]);
    assert.equal(x.beneficiary.bank_details.local_clearing_system, 'ACH');
    assert.equal('bank_code' in x.beneficiary.bank_details, false, 'bank_code is never echoed');
    assert.deepEqual([x.payment_amount, x.client_data, x.payer?.company_name], ['100.00', 'batch 7', 'Shop Ltd']);
    assert.match(x.beneficiary_id, /^ben_/);
    assert.match(x.short_reference_id, /^P261124-[A-Z0-9]{8}$/);
    assert.equal(x.payment_date, '2026-11-24');
    assert.deepEqual(await available(m.account_id), { available: 90000, reserved: 0 });
  });

  test('the answer’s signature is verified: altered or stripped, it raises SignatureVerificationError', async () => {
    const { m } = await funded();
    const inject = injectFetch(gw.app);
    const altered = gw.client(m, {
      fetch: tampering(inject, (t) => t.replace('"amount_beneficiary_receives":10000', '"amount_beneficiary_receives":1000000')),
    });
    const e = await altered.createPayout(payoutRequest()).catch((err: unknown) => err);
    assert.ok(e instanceof SignatureVerificationError && e.reason === 'mismatch', String(e));
    const stripped = gw.client(m, { fetch: tampering(inject, (t) => t.replace(/,"encryption_data":"[0-9a-f]+"/, '')) });
    const s = await stripped.createPayout(payoutRequest()).catch((err: unknown) => err);
    assert.ok(s instanceof SignatureVerificationError && s.reason === 'missing', String(s));
  });

  test('the same request_id replays the same payout; the client’s own retry after a lost answer keeps it and pays once', async () => {
    const { m, client } = await funded();
    const request = payoutRequest();
    const first = await client.call('createPayout', request);
    const again = await client.call('createPayout', request);
    assert.equal(first.replayed, false);
    assert.equal(again.replayed, true, 'Idempotent-Replayed: true');
    assert.notEqual(again.idempotency_key, first.idempotency_key, 'a new call, a new Idempotency-Key: the request_id alone replays');
    assert.equal(again.answer.transaction_id, first.answer.transaction_id);
    assert.equal(again.answer.status, 'COMPLETED');

    // The first attempt reaches the gateway and its answer is lost: the retry resends the same body.
    const inject = injectFetch(gw.app);
    const sent: Array<{ key: string | null; request_id: unknown }> = [];
    let lost = false;
    const lossy: FetchLike = async (input, init) => {
      const res = await inject(input, init);
      sent.push({ key: new Headers(init?.headers).get('idempotency-key'), request_id: JSON.parse(String(init?.body)).request_id });
      if (!lost) {
        lost = true;
        throw new TypeError('fetch failed (simulated: the answer was lost)');
      }
      return res;
    };
    const retried = payoutRequest({ payment_amount: '25.00' });
    const r = await gw.client(m, { fetch: lossy, retry: { base_delay_ms: 1, max_delay_ms: 5 } }).call('createPayout', retried);
    assert.equal(r.attempts, 2);
    assert.equal(r.replayed, true);
    assert.deepEqual(sent, [
      { key: r.idempotency_key, request_id: retried.request_id },
      { key: r.idempotency_key, request_id: retried.request_id },
    ]);
    assert.equal(await payoutCount(m.account_id), 2, 'one payout per request_id');
    assert.deepEqual(await available(m.account_id), { available: 100000 - 10000 - 2500, reserved: 0 });
  });

  test('another body with a used request_id: ConflictError 0409 naming request_id, nothing paid', async () => {
    const { m, client } = await funded();
    const request = payoutRequest();
    await client.createPayout(request);
    const e = await client.createPayout({ ...request, payment_amount: '101.00' }).catch((err: unknown) => err);
    assert.ok(e instanceof ConflictError, String(e));
    assert.deepEqual([e.code, e.http_status, e.error_field], ['0409', 409, 'request_id']);
    assert.match(e.error_message, /request_id/);
    assert.match(e.request_id, /\S/);
    assert.equal(await payoutCount(m.account_id), 1);
    assert.deepEqual(await available(m.account_id), { available: 90000, reserved: 0 });
  });

  test('a request the gateway refuses is an InvalidRequestError naming the field (bank_code’s check digit)', async () => {
    const { m, client } = await funded();
    const bad = { ...ACH_BENEFICIARY, bank_details: { ...ACH_BENEFICIARY.bank_details, bank_code: '011000016' } };
    const e = await client.createPayout(payoutRequest({ beneficiary: bad })).catch((err: unknown) => err);
    assert.ok(e instanceof InvalidRequestError, String(e));
    assert.deepEqual([e.code, e.error_field], ['0400', 'beneficiary.bank_details.bank_code']);
    assert.equal(await payoutCount(m.account_id), 0);
  });

  test('cancelPayout: a SCHEDULED payout (payment_date tomorrow) cancels by request_id, again by transaction_id; too late and unknown are answers', async () => {
    const { m, client } = await funded();
    const tomorrow = day(gw.clock.now + 86_400_000);
    const scheduled = await client.createPayout(payoutRequest({ payment_date: tomorrow }));
    assert.deepEqual([scheduled.status, scheduled.payment_date], ['SCHEDULED', tomorrow]);
    assert.deepEqual(await available(m.account_id), { available: 90000, reserved: 10000 });

    const c = await client.cancelPayout({ request_id: scheduled.request_id });
    fieldsMatch(CANCEL_ANSWER_FIELDS, c, 'cancel answer');
    assert.deepEqual(
      [c.cancel_status, c.status, c.error_message, c.request_id, c.transaction_id],
      ['1', 'CANCELLED', '', scheduled.request_id, scheduled.transaction_id],
    );
    assert.deepEqual(await available(m.account_id), { available: 100000, reserved: 0 });
    const again = await client.cancelPayout({ transaction_id: scheduled.transaction_id });
    assert.deepEqual([again.cancel_status, again.status], ['1', 'CANCELLED']);

    const done = await client.createPayout(payoutRequest());
    const late = await client.cancelPayout({ transaction_id: done.transaction_id });
    assert.deepEqual([late.cancel_status, late.status], ['0', 'COMPLETED']);
    assert.match(late.error_message, /^1012:/);
    const unknown = randomUUID();
    const none = await client.cancelPayout({ request_id: unknown });
    assert.deepEqual(
      [none.cancel_status, none.status, none.error_message, none.request_id, none.transaction_id],
      ['0', '', '0404:Record not found', unknown, ''],
    );

    const [record] = (await client.retrievePayouts({ request_ids: [scheduled.request_id] })).payouts;
    assert.ok(record && found(record));
    assert.deepEqual([record.status, record.failure_reason], ['CANCELLED', 'Cancelled by the merchant']);

    // Untyped (the type needs an id): the gateway names request_id.
    const e = await client.cancelPayout({} as CancelPayoutRequest).catch((err: unknown) => err);
    assert.ok(e instanceof InvalidRequestError && e.error_field === 'request_id', String(e));
  });

  test('retrievePayouts by request_ids, transaction_ids, short_reference_ids and a date range; an unknown id is a NotFoundPayout', async () => {
    const { m, client } = await funded();
    const made: PayoutAnswerType[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await client.createPayout(payoutRequest({ payment_amount: '1.00' })));
      gw.clock.advance(1_000);
    }
    const [a, b, c] = made as [PayoutAnswerType, PayoutAnswerType, PayoutAnswerType];

    const byRequest = await client.retrievePayouts({ request_ids: [a.request_id] });
    fieldsMatch(RETRIEVAL_ANSWER_FIELDS, byRequest, 'retrieval answer');
    assert.deepEqual([byRequest.return_status, byRequest.return_message], ['1', 'OK']);
    assert.deepEqual(
      byRequest.payouts.map((p) => [p.query_result, p.transaction_id]),
      [['1', a.transaction_id]],
    );
    const item = byRequest.payouts[0];
    assert.ok(item && found(item));
    const { encryption_data: _e, ...record } = a;
    assert.deepEqual(item, { ...record, query_result: '1' }, 'the search item is the payout record');

    const byTransaction = await client.retrievePayouts({ transaction_ids: `${b.transaction_id},${c.transaction_id}` });
    assert.deepEqual(
      byTransaction.payouts.map((p) => p.transaction_id),
      [b.transaction_id, c.transaction_id],
    );
    const byShort = await client.retrievePayouts({ short_reference_ids: [c.short_reference_id] });
    assert.deepEqual(
      byShort.payouts.map((p) => p.request_id),
      [c.request_id],
    );

    const unknown = randomUUID();
    const missing = await client.retrievePayouts({ request_ids: [unknown], transaction_ids: [a.transaction_id] });
    assert.equal(missing.payouts.length, 2);
    const notFound = missing.payouts.find((p) => !found(p));
    assert.ok(notFound);
    fieldsMatch(NOT_FOUND_FIELDS, notFound, 'not-found item');
    assert.deepEqual(notFound, { query_result: '0', request_id: unknown, transaction_id: '', short_reference_id: '' });

    const other = await funded();
    assert.equal(
      (await other.client.retrievePayouts({ transaction_ids: [a.transaction_id] })).payouts[0]?.query_result,
      '0',
      "another account's payout is not found",
    );

    const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const range = await client.retrievePayouts({ start_date: stamp(NOW - 86_400_000), end_date: stamp(gw.clock.now + 86_400_000) });
    assert.deepEqual(
      range.payouts.filter(found).map((p) => p.transaction_id),
      made.map((p) => p.transaction_id),
    );
    assert.equal(range.next_cursor, undefined);
    assert.equal(m.account_id, a.account_id);
  });
});

describe('payout notifications', () => {
  let client: TollgateClient;
  const made = new Map<PayoutEventType, string>();
  const deliveries = new Map<string, { body: string; headers: Record<string, string> }>();

  before(async () => {
    const f = await funded('50.00');
    client = f.client;
    made.set('payout.completed', (await client.createPayout(payoutRequest({ payment_amount: '10.00' }))).transaction_id);
    made.set('payout.failed', (await client.createPayout(payoutRequest({ payment_amount: '100.00' }))).transaction_id);
    const scheduled = await client.createPayout(payoutRequest({ payment_amount: '5.00', payment_date: day(gw.clock.now + 86_400_000) }));
    await client.cancelPayout({ transaction_id: scheduled.transaction_id });
    made.set('payout.cancelled', scheduled.transaction_id);
    const worker = new DeliveryWorker({
      store: gw.runtime.store,
      merchants: gw.runtime.merchants,
      allow_private: true,
      schedule_ms: [1_000],
      timeout_ms: 10_000,
      now: () => gw.clock.now,
    });
    await worker.drain();
    for (const r of receiver.received) {
      const e = JSON.parse(r.body) as { event_type: string; data: { transaction_id?: string } };
      if (e.event_type.startsWith('payout.') && e.data.transaction_id)
        deliveries.set(e.data.transaction_id, { body: r.body, headers: r.headers as Record<string, string> });
    }
  });

  test('payout.completed, payout.failed and payout.cancelled verify and come back as typed PayoutEvents', () => {
    for (const [event_type, transaction_id] of made) {
      const delivery = deliveries.get(transaction_id);
      assert.ok(delivery, `${event_type} was delivered`);
      // webhook-timestamp is wall-clock time (the worker's), whatever the gateway's clock says.
      const event = client.notifications.verify(delivery.body, delivery.headers);
      assert.equal(event.event_type, event_type);
      assert.equal(event.event_id, delivery.headers['webhook-id']);
      if (event.event_type !== 'payout.completed' && event.event_type !== 'payout.failed' && event.event_type !== 'payout.cancelled') return;
      const data: PayoutRecord = event.data; // narrowed to PayoutEvent
      fieldsMatch(PAYOUT_RECORD_FIELDS, data, `${event_type} data`);
      assert.equal(data.transaction_id, transaction_id);
      assert.equal(data.status, { 'payout.completed': 'COMPLETED', 'payout.failed': 'FAILED', 'payout.cancelled': 'CANCELLED' }[event.event_type]);
      if (event.event_type === 'payout.failed') assert.equal(data.failure_type, 'INSUFFICIENT_FUNDS');
    }
  });

  test('a tampered payout event is refused', () => {
    const delivery = deliveries.get(made.get('payout.completed') as string);
    assert.ok(delivery);
    assert.throws(
      () => client.notifications.verify(delivery.body.replace('"status":"COMPLETED"', '"status":"FAILED"'), delivery.headers),
      (e: unknown) => e instanceof WebhookVerificationError && e.reason === 'signature',
    );
  });
});

// Where the gateway once differed from its own schema (src/payouts/schema.ts); fixed.
describe('server vs schema', () => {
  test('search items carry exactly the payout record (with merchant_id and account_id)', async () => {
    const { client } = await funded();
    const x = await client.createPayout(payoutRequest());
    const [item] = (await client.retrievePayouts({ transaction_ids: [x.transaction_id] })).payouts;
    fieldsMatch(FOUND_FIELDS, item, 'search item');
  });

  test('a cancelled payout has failure_type CANCELLED', async () => {
    const { client } = await funded();
    const x = await client.createPayout(payoutRequest({ payment_date: day(gw.clock.now + 86_400_000) }));
    await client.cancelPayout({ request_id: x.request_id });
    const [item] = (await client.retrievePayouts({ request_ids: [x.request_id] })).payouts;
    assert.ok(item && found(item));
    assert.equal(item.failure_type, 'CANCELLED');
  });

  test('fx_rate is `1.0` when both currencies are the same', async () => {
    const { client } = await funded();
    assert.equal((await client.createPayout(payoutRequest())).fx_rate, '1.0');
  });
});
