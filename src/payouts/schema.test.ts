// The payout schemas (schema.ts) under Ajv as the routes compile them (type coercion, no
// removal of unknown fields): a full body passes, unknown fields at any depth, bad enums
// and malformed ids are refused; every property is described (it becomes OpenAPI).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import {
  CancelPayoutAnswer,
  CancelPayoutBody,
  PayoutAnswer,
  PayoutBody,
  PayoutRecordSchema,
  type PayoutRequest,
  RetrievalPayoutAnswer,
  RetrievalPayoutBody,
} from './schema.js';

const ajv = new Ajv({ coerceTypes: true, removeAdditional: false, allErrors: true, useDefaults: false, strict: true });
const payout = ajv.compile(PayoutBody);
const cancel = ajv.compile(CancelPayoutBody);
const retrieval = ajv.compile(RetrievalPayoutBody);

const identity = { merchant_id: '10001', account_id: '1000101', encryption_data: 'a'.repeat(64) };

function fullBody(): PayoutRequest {
  return {
    ...identity,
    request_id: '3F2504E0-4F89-41D3-9A0C-0305E82C3301',
    beneficiary: {
      additional_info: {
        business_area: 'Retail',
        business_phone_number: '+1 212 555 0100',
        business_registration_number: 'REG-1',
        personal_email: 'ada@example.com',
        personal_id_number: 'X1234567',
        personal_id_type: 'PASSPORT',
        personal_mobile_number: '+1 212 555 0101',
        personal_net_monthly_average_income: '5000.00',
        personal_phone_country_code: '1',
        personal_phone_area_code: '212',
        personal_fiscal_country: 'US',
      },
      address: {
        city: 'New York',
        country_code: 'US',
        postcode: '10001',
        state: 'NY',
        street: 'Fifth Avenue',
        number: '350',
        street_address: '350 Fifth Avenue',
        complement: 'Floor 20',
      },
      person_documents: [{ file_type: 'application/pdf', file_url: 'https://files.example.com/id.pdf', labels: ['passport', 'front'] }],
      bank_details: {
        account_currency: 'USD',
        account_name: 'Ada Lovelace',
        owner_document_number: 'X1234567',
        account_number: '000123456789',
        bank_account_category: 'Checking',
        bank_branch: 'Midtown',
        bank_country_code: 'US',
        bank_code: '011000015',
        bank_name: 'Example Bank',
        bank_street_address: '1 Bank Street',
        binding_mobile_number: '+1 212 555 0101',
        iban: '',
        swift_code: 'CHASUS33',
        transaction_reference: 'INV-1',
      },
      company_name: 'Analytical Engines LLC',
      date_of_birth: '1815-12-10',
      entity_type: 'PERSONAL',
      first_name: 'Ada',
      last_name: 'Lovelace',
    },
    client_data: 'anything',
    fee_paid_by: 'BENEFICIARY',
    payer: {
      additional_info: {
        business_registration_number: 'REG-2',
        business_registration_type: 'LLC',
        external_id: 'payer-1',
        personal_email: 'charles@example.com',
        personal_id_number: 'Y7654321',
        job: 'Engineer',
      },
      address: { city: 'London', country_code: 'GB', postcode: 'SW1A 1AA', state: 'London', street_address: '1 Downing Street' },
      company_name: 'Difference Ltd',
      date_of_birth: '1791-12-26',
      entity_type: 'COMPANY',
      first_name: 'Charles',
      last_name: 'Babbage',
    },
    payment_amount: '100.00',
    payment_currency: 'USD',
    payment_date: '2030-01-31',
    payment_method: 'LOCAL',
    reason: 'Invoice 1',
    reference: 'INV-1',
    source_currency: 'EUR',
    swift_charge_option: 'SHARED',
    fund_source: 'sales',
    notify_url: 'https://shop.example.com/payouts',
  };
}

const errorsOf = (validate: typeof payout) => ajv.errorsText(validate.errors);

describe('PayoutBody', () => {
  test('a full body passes', () => {
    assert.ok(payout(fullBody()), errorsOf(payout));
  });
  test('the minimal body passes, lowercase UUID and a saved beneficiary', () => {
    const body = {
      ...identity,
      request_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
      beneficiary_id: 'ben_01HX',
      source_amount: '1200',
      payment_currency: 'JPY',
      payment_method: 'SWIFT',
      reason: 'r',
      reference: 'x',
      source_currency: 'JPY',
    };
    assert.ok(payout(body), errorsOf(payout));
  });

  const refused: Array<[string, (b: any) => void, RegExp]> = [
    ['an unknown top-level field', (b) => (b.amount = '1.00'), /additional properties/],
    ['an unknown beneficiary field', (b) => (b.beneficiary.nickname = 'x'), /\/beneficiary must NOT have additional properties/],
    ['an unknown bank_details field', (b) => (b.beneficiary.bank_details.routing_number = '011000015'), /\/beneficiary\/bank_details must NOT have additional/],
    ['an unknown address field', (b) => (b.beneficiary.address.line2 = 'x'), /\/beneficiary\/address must NOT have additional/],
    ['an unknown additional_info field', (b) => (b.beneficiary.additional_info.shoe_size = '9'), /additional_info must NOT have additional/],
    ['an unknown document field', (b) => (b.beneficiary.person_documents[0].file_data = 'AAAA'), /person_documents\/0 must NOT have additional/],
    ['an unknown payer field', (b) => (b.payer.address.street = 'x'), /\/payer\/address must NOT have additional/],
    ['a bad payment_method', (b) => (b.payment_method = 'WIRE'), /\/payment_method must be equal to one of the allowed values/],
    ['a bad fee_paid_by', (b) => (b.fee_paid_by = 'SHARED'), /\/fee_paid_by must be equal to one of/],
    ['a bad swift_charge_option', (b) => (b.swift_charge_option = 'OUR'), /\/swift_charge_option must be equal to one of/],
    ['a bad entity_type', (b) => (b.beneficiary.entity_type = 'person'), /\/beneficiary\/entity_type must be equal to one of/],
    ['a request_id that is not a UUID', (b) => (b.request_id = 'order-1'), /\/request_id must match pattern/],
    ['a request_id one digit short', (b) => (b.request_id = '3f2504e0-4f89-41d3-9a0c-0305e82c330'), /\/request_id must match pattern/],
    ['no request_id', (b) => delete b.request_id, /must have required property 'request_id'/],
    ['no reason', (b) => delete b.reason, /must have required property 'reason'/],
    ['an empty reference', (b) => (b.reference = ''), /\/reference must NOT have fewer than 1 characters/],
    ['a reason of 141 characters', (b) => (b.reason = 'r'.repeat(141)), /\/reason must NOT have more than 140/],
    ['a lowercase currency', (b) => (b.payment_currency = 'usd'), /\/payment_currency must match pattern/],
    ['an amount with 4 decimals', (b) => (b.payment_amount = '1.0000'), /\/payment_amount must match pattern/],
    ['a negative amount', (b) => (b.source_amount = '-1.00'), /\/source_amount must match pattern/],
    ['a payment_date of another shape', (b) => (b.payment_date = '31/01/2030'), /\/payment_date must match pattern/],
    ['a 13th month of birth', (b) => (b.beneficiary.date_of_birth = '1815-13-10'), /date_of_birth must match pattern/],
    ['a lowercase country', (b) => (b.beneficiary.bank_details.bank_country_code = 'us'), /bank_country_code must match pattern/],
    ['a beneficiary_id of another shape', (b) => (b.beneficiary_id = 'cus_1'), /\/beneficiary_id must match pattern/],
    ['a long account number', (b) => (b.beneficiary.bank_details.account_number = '1'.repeat(35)), /account_number must NOT have more than 34/],
    ['eleven documents', (b) => (b.beneficiary.person_documents = Array(11).fill({})), /person_documents must NOT have more than 10 items/],
    ['a media type without a slash', (b) => (b.beneficiary.person_documents[0].file_type = 'pdf'), /file_type must match pattern/],
    ['a notify_url that is not http', (b) => (b.notify_url = 'ftp://x.example.com'), /\/notify_url must match pattern/],
    ['client_data of 1001 characters', (b) => (b.client_data = 'c'.repeat(1001)), /\/client_data must NOT have more than 1000/],
  ];
  for (const [what, change, message] of refused) {
    test(`refused: ${what}`, () => {
      const body = fullBody();
      change(body);
      assert.equal(payout(body), false, what);
      assert.match(errorsOf(payout), message);
    });
  }

  test('a form body’s numbers arrive as strings; a JSON number is coerced to one', () => {
    const body: any = fullBody();
    const bank = body.beneficiary.bank_details;
    bank.account_number = 123456789;
    assert.ok(payout(body), errorsOf(payout));
    assert.equal(bank.account_number, '123456789');
  });
});

describe('CancelPayoutBody and RetrievalPayoutBody', () => {
  test('cancel by request_id or transaction_id', () => {
    assert.ok(cancel({ ...identity, request_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }), ajv.errorsText(cancel.errors));
    assert.ok(cancel({ ...identity, transaction_id: '01HX00000000000000' }), ajv.errorsText(cancel.errors));
    assert.equal(cancel({ ...identity, request_id: 'nope' }), false);
    assert.equal(cancel({ ...identity, transaction_id: 't'.repeat(65) }), false);
    assert.equal(cancel({ ...identity, order_no: '1' }), false);
  });
  test('retrieval by ids (array or comma-separated) or dates', () => {
    assert.ok(
      retrieval({ ...identity, request_ids: ['a', 'b'], transaction_ids: 'c,d', short_reference_ids: ['P250131-ABCDEFGH'] }),
      ajv.errorsText(retrieval.errors),
    );
    assert.ok(retrieval({ ...identity, start_date: '20250101000000', end_date: '20250131235959', cursor: 'abc' }), ajv.errorsText(retrieval.errors));
    assert.equal(retrieval({ ...identity, start_date: '2025-01-01' }), false);
    assert.equal(retrieval({ ...identity, cursor: 'c'.repeat(201) }), false);
    assert.equal(retrieval({ ...identity, order_nos: ['1'] }), false);
  });
});

describe('answers', () => {
  const record = {
    merchant_id: '1',
    account_id: '2',
    request_id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    transaction_id: '01HX00000000000000',
    short_reference_id: 'P250131-ABCDEFGH',
    status: 'COMPLETED',
    failure_type: '',
    failure_reason: '',
    payment_method: 'LOCAL',
    payment_currency: 'USD',
    source_currency: 'EUR',
    payment_amount: '100.00',
    amount_beneficiary_receives: 10000,
    amount_payer_pays: 9224,
    fee_amount: 150,
    fee_currency: 'EUR',
    fee_paid_by: 'PAYER',
    fx_rate: '1.0842',
    payment_date: '2025-01-31',
    settlement_batches: [{ batch_id: 'stl_01HX', day: '2025-01-30', amount: 9374 }],
    reason: 'Invoice 1',
    reference: 'INV-1',
    beneficiary_id: 'ben_01HX',
    beneficiary: { bank_details: { account_number: '000123456789', bank_country_code: 'US', local_clearing_system: 'ACH' }, first_name: 'Ada' },
    payer_id: '',
    created_at: '2025-01-31T12:00:00.000+00:00',
    last_updated_at: '2025-01-31T12:00:01.000+00:00',
  };
  const answer = ajv.compile(PayoutAnswer);
  test('a payout answer validates; integers are integers', () => {
    assert.ok(answer({ ...record, encryption_data: 'b'.repeat(64) }), ajv.errorsText(answer.errors));
    assert.ok(ajv.validate(PayoutRecordSchema, record), ajv.errorsText(ajv.errors));
    assert.equal(ajv.validate(PayoutRecordSchema, { ...record, fee_amount: 1.5 }), false);
    assert.equal(ajv.validate(PayoutRecordSchema, { ...record, status: 'PAID' }), false);
  });
  test('retrieval: found and not-found items', () => {
    const v = ajv.compile(RetrievalPayoutAnswer);
    const ok = v({
      merchant_id: '1',
      account_id: '2',
      return_status: '1',
      return_message: 'OK',
      payouts: [
        { query_result: '1', ...record },
        { query_result: '0', request_id: 'x', transaction_id: '', short_reference_id: '' },
      ],
      encryption_data: 'b'.repeat(64),
    });
    assert.ok(ok, ajv.errorsText(v.errors));
  });
  test('cancel answer', () => {
    const v = ajv.compile(CancelPayoutAnswer);
    const base = { merchant_id: '1', account_id: '2', request_id: '', transaction_id: 't', error_message: '', encryption_data: 'b'.repeat(64) };
    assert.ok(v({ ...base, cancel_status: '1', status: 'CANCELLED' }), ajv.errorsText(v.errors));
    assert.ok(v({ ...base, cancel_status: '0', status: '' }), ajv.errorsText(v.errors));
  });
});

describe('documentation', () => {
  /** Paths of properties without a description, anywhere in a schema. */
  function undescribed(schema: any, at: string): string[] {
    if (!schema || typeof schema !== 'object') return [];
    const out: string[] = [];
    for (const [k, v] of Object.entries<any>(schema.properties ?? {})) {
      if (!v.description) out.push(`${at}.${k}`);
      out.push(...undescribed(v, `${at}.${k}`));
    }
    if (schema.items) out.push(...undescribed(schema.items, `${at}[]`));
    for (const branch of schema.anyOf ?? []) out.push(...undescribed(branch, at));
    return out;
  }
  for (const [name, schema] of Object.entries({ PayoutBody, CancelPayoutBody, RetrievalPayoutBody, PayoutAnswer, RetrievalPayoutAnswer, CancelPayoutAnswer })) {
    test(`every property of ${name} is described`, () => assert.deepEqual(undescribed(schema, name), []));
  }
  test('the answer never documents bank_code, and documents local_clearing_system', () => {
    const bank = (PayoutRecordSchema as any).properties.beneficiary.properties.bank_details.properties;
    assert.ok(!('bank_code' in bank));
    assert.ok('local_clearing_system' in bank);
  });
});
