// The payout request and answer schemas (interface.md "Payout record"; docs/contract.md §17).
// One TypeBox schema validates (Ajv with type coercion), documents (OpenAPI) and types
// each endpoint (docs/style.md §2). Every field is bounded and shaped here; what a schema cannot
// say (ISO membership, IBAN check digits, which bank fields a clearing system needs, the
// amount's exponent, exactly one of payment_amount / source_amount, a saved beneficiary
// or a new one) is checked by bank.ts and the service, with an error naming the field.
import { type Static, Type } from 'typebox';
import { IdList } from '../payments/query.js';
import { Url } from '../payments/schema.js';
import { Signature as AnswerSignature, NextCursor, oneOf, ReturnMessage, ReturnStatus, SignedIdentity, text } from '../web/route-schema.js';
import { PAYOUT_STATUSES } from './tables.js';

// ---- request pieces -------------------------------------------------------------------

const str = (maxLength: number, description: string) => Type.String({ maxLength, description });
const closed = { additionalProperties: false } as const;

const RequestId = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'a UUID (8-4-4-4-12 hexadecimal digits) chosen by you: the idempotency key of the payout',
});
const IsoDate = (description: string) =>
  Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', description: `${description}, \`YYYY-MM-DD\`` });
const Country = (description: string) => Type.String({ pattern: '^[A-Z]{2}$', description: `${description}: a two-letter uppercase ISO 3166-1 code` });
const Currency = (description: string) => Type.String({ pattern: '^[A-Z]{3}$', description: `${description}: a three-letter uppercase ISO 4217 code` });
const Amount = (description: string) =>
  Type.String({
    pattern: '^\\d{1,15}(\\.\\d{1,3})?$',
    maxLength: 19,
    description: `${description}: a decimal string with exactly the currency’s minor-unit digits ("10.00" USD, "1200" JPY)`,
  });
const EntityType = oneOf(['PERSONAL', 'COMPANY'], '`PERSONAL` (a person) or `COMPANY`');
const PersonName = (what: string) => str(100, `${what}, at most 100 characters`);
const MediaType = Type.String({
  maxLength: 100,
  pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$',
  description: 'the document’s media type, such as `application/pdf` or `image/jpeg`',
});

const BENEFICIARY_INFO = [
  ['business_area', 'the company’s line of business'],
  ['business_phone_number', 'the company’s phone number'],
  ['business_registration_number', 'the company’s registration number'],
  ['personal_email', 'the person’s e-mail address'],
  ['personal_id_number', 'the number of the person’s identity document'],
  ['personal_id_type', 'the kind of identity document (passport, national id, …)'],
  ['personal_mobile_number', 'the person’s mobile number'],
  ['personal_net_monthly_average_income', 'the person’s average net monthly income'],
  ['personal_phone_country_code', 'the country calling code of the person’s phone'],
  ['personal_phone_area_code', 'the area code of the person’s phone'],
  ['personal_fiscal_country', 'the country where the person pays tax'],
] as const;

const PAYER_INFO = [
  ['business_registration_number', 'the company’s registration number'],
  ['business_registration_type', 'the kind of registration'],
  ['external_id', 'your own id of the payer'],
  ['personal_email', 'the person’s e-mail address'],
  ['personal_id_number', 'the number of the person’s identity document'],
  ['job', 'the person’s occupation'],
] as const;

/** An object of optional strings of at most `max` characters, one per [name, description]. */
function infoObject(fields: ReadonlyArray<readonly [string, string]>, max: number, description: string) {
  return Type.Object(Object.fromEntries(fields.map(([name, says]) => [name, Type.Optional(str(max, `${says}, at most ${max} characters`))])), {
    ...closed,
    description,
  });
}

const BeneficiaryAddress = Type.Object(
  {
    city: Type.Optional(str(100, 'city, at most 100 characters')),
    country_code: Type.Optional(Country('the beneficiary’s country (also the bank’s country when `bank_details` has none)')),
    postcode: Type.Optional(str(20, 'postal code, at most 20 characters')),
    state: Type.Optional(str(100, 'state, province or region, at most 100 characters')),
    street: Type.Optional(str(200, 'street name, at most 200 characters')),
    number: Type.Optional(str(20, 'house number, at most 20 characters')),
    street_address: Type.Optional(str(300, 'the street address on one line, at most 300 characters')),
    complement: Type.Optional(str(200, 'flat, floor, building, at most 200 characters')),
  },
  { ...closed, description: 'the beneficiary’s address, echoed unchanged in the answer' },
);

const PersonDocument = Type.Object(
  {
    file_type: Type.Optional(MediaType),
    file_url: Type.Optional(Url),
    labels: Type.Optional(
      Type.Array(str(64, 'a label, at most 64 characters'), { maxItems: 10, description: 'at most 10 labels saying what the document is' }),
    ),
  },
  { ...closed, description: 'a document about the beneficiary, by URL' },
);

export const BankDetails = Type.Object(
  {
    account_currency: Type.Optional(Currency('the account’s currency; when sent it must equal `payment_currency`')),
    account_name: Type.Optional(str(140, 'the account holder’s name as the bank knows it, at most 140 characters')),
    owner_document_number: Type.Optional(str(140, 'the account holder’s document number, at most 140 characters')),
    account_number: Type.Optional(
      str(34, 'the account number (its format depends on the clearing system, see the payout guide); spaces and dashes are ignored; at most 34 characters'),
    ),
    bank_account_category: Type.Optional(str(140, 'account categories, comma-separated (such as `Checking` or `Savings`), at most 140 characters')),
    bank_branch: Type.Optional(str(140, 'the branch’s name or number, at most 140 characters')),
    bank_country_code: Type.Optional(Country('the bank’s country (taken from the IBAN when absent)')),
    bank_code: Type.Optional(
      str(20, 'the national bank code: ABA routing number (ACH), sort code (FASTER_PAYMENTS), BSB (BECS), IFSC (NEFT), …; at most 20 characters; never echoed'),
    ),
    bank_name: Type.Optional(str(140, 'the bank’s name, at most 140 characters')),
    bank_street_address: Type.Optional(str(140, 'the bank’s address, at most 140 characters')),
    binding_mobile_number: Type.Optional(str(140, 'a mobile number bound to the account, at most 140 characters')),
    iban: Type.Optional(
      str(42, 'the IBAN, with or without the spaces of its printed form (at most 34 characters without them); its check digits are verified'),
    ),
    swift_code: Type.Optional(str(11, 'the bank’s BIC (SWIFT code), 8 or 11 characters; required for `SWIFT` payouts')),
    transaction_reference: Type.Optional(str(140, 'a reference for the beneficiary’s bank statement, at most 140 characters')),
  },
  { ...closed, description: 'the account the money goes to; which fields are required depends on the clearing system (country, currency and method)' },
);

export const Beneficiary = Type.Object(
  {
    additional_info: Type.Optional(infoObject(BENEFICIARY_INFO, 256, 'more about the beneficiary, when the destination asks for it')),
    address: Type.Optional(BeneficiaryAddress),
    person_documents: Type.Optional(Type.Array(PersonDocument, { maxItems: 10, description: 'at most 10 documents about the beneficiary' })),
    bank_details: Type.Optional(BankDetails),
    company_name: Type.Optional(PersonName('the company’s name (`entity_type` `COMPANY`)')),
    date_of_birth: Type.Optional(IsoDate('the person’s date of birth')),
    entity_type: Type.Optional(EntityType),
    first_name: Type.Optional(PersonName('the person’s first name (`entity_type` `PERSONAL`)')),
    last_name: Type.Optional(PersonName('the person’s last name (`entity_type` `PERSONAL`)')),
  },
  { ...closed, description: 'who receives the money and where; saved by the payout, reusable as `beneficiary_id`' },
);

const PayerAddress = Type.Object(
  {
    city: Type.Optional(str(100, 'city, at most 100 characters')),
    country_code: Type.Optional(Country('the payer’s country')),
    postcode: Type.Optional(str(20, 'postal code, at most 20 characters')),
    state: Type.Optional(str(100, 'state, province or region, at most 100 characters')),
    street_address: Type.Optional(str(300, 'the street address on one line, at most 300 characters')),
  },
  { ...closed, description: 'the payer’s address' },
);

export const Payer = Type.Object(
  {
    additional_info: Type.Optional(infoObject(PAYER_INFO, 256, 'more about the payer, when the destination asks for it')),
    address: Type.Optional(PayerAddress),
    company_name: Type.Optional(PersonName('the company’s name (`entity_type` `COMPANY`)')),
    date_of_birth: Type.Optional(IsoDate('the person’s date of birth')),
    entity_type: Type.Optional(EntityType),
    first_name: Type.Optional(PersonName('the person’s first name (`entity_type` `PERSONAL`)')),
    last_name: Type.Optional(PersonName('the person’s last name (`entity_type` `PERSONAL`)')),
  },
  { ...closed, description: 'on whose behalf you pay, when not yourself' },
);

const BeneficiaryId = Type.String({
  pattern: '^ben_[A-Za-z0-9]{1,40}$',
  description: 'a beneficiary saved by an earlier payout (`ben_…`), instead of `beneficiary`',
});
const TransactionId = Type.String({ minLength: 1, maxLength: 64, description: 'the gateway’s id of the payout' });

// ---- requests -------------------------------------------------------------------------

export const PayoutBody = Type.Object(
  {
    ...SignedIdentity,
    request_id: RequestId,
    beneficiary: Type.Optional(Beneficiary),
    beneficiary_id: Type.Optional(BeneficiaryId),
    client_data: Type.Optional(str(1000, 'your own data, echoed, at most 1000 characters')),
    fee_paid_by: Type.Optional(
      oneOf(['PAYER', 'BENEFICIARY'], 'who bears the fee: `PAYER` (default) or `BENEFICIARY` (deducted from what the beneficiary receives)'),
    ),
    payer: Type.Optional(Payer),
    payment_amount: Type.Optional(Amount('what the beneficiary receives, in `payment_currency` (send this or `source_amount`)')),
    payment_currency: Currency('the currency the beneficiary receives'),
    payment_date: Type.Optional(IsoDate('when to pay (UTC): today (the default) or later, which makes the payout `SCHEDULED`')),
    payment_method: oneOf(['LOCAL', 'SWIFT'], '`LOCAL` through the country’s clearing system, or `SWIFT`'),
    reason: Type.String({ minLength: 1, maxLength: 140, description: 'why you pay, 1 to 140 characters' }),
    reference: Type.String({ minLength: 1, maxLength: 140, description: 'the reference the beneficiary sees, 1 to 140 characters' }),
    source_amount: Type.Optional(Amount('what you pay, in `source_currency` (send this or `payment_amount`)')),
    source_currency: Currency('the currency taken from your balance'),
    swift_charge_option: Type.Optional(
      oneOf(['SHARED', 'PAYER'], '`SWIFT` only: `SHARED` (default; the other banks’ charges come out of the amount) or `PAYER` (you pay them, for a fee)'),
    ),
    fund_source: Type.Optional(str(64, 'where the money comes from, at most 64 characters')),
    notify_url: Type.Optional(Url),
  },
  { ...closed, description: 'A payout. `beneficiary` or `beneficiary_id`, and exactly one of `payment_amount` and `source_amount`, are required.' },
);

export const CancelPayoutBody = Type.Object(
  {
    ...SignedIdentity,
    request_id: Type.Optional(RequestId),
    transaction_id: Type.Optional(TransactionId),
  },
  { ...closed, description: 'Cancels a `SCHEDULED` payout named by `request_id` or `transaction_id`.' },
);

const Timestamp14 = (description: string) => Type.String({ pattern: '^\\d{14}$', description: `${description}, \`YYYYMMDDhhmmss\` (UTC)` });

export const RetrievalPayoutBody = Type.Object(
  {
    ...SignedIdentity,
    request_ids: Type.Optional(IdList),
    transaction_ids: Type.Optional(IdList),
    short_reference_ids: Type.Optional(IdList),
    start_date: Type.Optional(Timestamp14('the first creation time of the range')),
    end_date: Type.Optional(Timestamp14('the last creation time of the range')),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'the `next_cursor` of the previous page, with the same dates' })),
  },
  { ...closed, description: 'Selects payouts by ids (at most 100 together) or by a range of creation times, 100 per page.' },
);

export type PayoutRequest = Static<typeof PayoutBody>;
export type BeneficiaryInput = Static<typeof Beneficiary>;
export type BankDetailsInput = Static<typeof BankDetails>;
export type PayerInput = Static<typeof Payer>;
export type CancelPayoutInput = Static<typeof CancelPayoutBody>;
export type RetrievalPayoutInput = Static<typeof RetrievalPayoutBody>;

// ---- answers (they describe; answers are signed strings, never serialised) ------------

export { PAYOUT_STATUSES } from './tables.js';
export const FAILURE_TYPES = ['', 'INSUFFICIENT_FUNDS', 'INVALID_ACCOUNT', 'RETURNED', 'CANCELLED', 'PROCESSOR_ERROR'] as const;

const STATUS_SAYS =
  '`SCHEDULED` (waits for `payment_date`; can be cancelled), `PROCESSING` (sent to the bank), `COMPLETED`, `FAILED` (see `failure_type`; the funds are released) or `CANCELLED`';
const FAILURE_SAYS =
  'empty unless the payout failed or was cancelled: `INSUFFICIENT_FUNDS` (the balance in `source_currency` did not cover the amount and the fee), `INVALID_ACCOUNT` (the bank refused the account), `RETURNED` (the beneficiary’s bank sent the money back; the funds are released), `CANCELLED` (cancelled before dispatch), `PROCESSOR_ERROR` (the payout provider failed)';

const echo = (what: string) => Type.Optional(text(`${what}, as sent`));
const echoObject = (fields: ReadonlyArray<readonly [string, string]>, description: string) =>
  Type.Object(Object.fromEntries(fields.map(([name, says]) => [name, echo(says)])), { description });

const BankDetailsRecord = Type.Object(
  {
    account_currency: echo('the account’s currency'),
    account_name: echo('the account holder’s name'),
    owner_document_number: echo('the holder’s document number'),
    account_number: Type.Optional(text('the account number masked to its last four (`••••6789`), as card numbers are')),
    bank_account_category: echo('account categories'),
    bank_branch: echo('the branch'),
    bank_country_code: echo('the bank’s country'),
    bank_name: echo('the bank’s name'),
    bank_street_address: echo('the bank’s address'),
    binding_mobile_number: echo('the bound mobile number'),
    iban: Type.Optional(text('the IBAN masked to its last four (`••••3000`), as card numbers are')),
    swift_code: echo('the BIC'),
    transaction_reference: echo('the statement reference'),
    local_clearing_system: text(
      'the clearing system the payout goes through, from the bank’s country, the currency and the method: `ACH`, `SEPA`, `FASTER_PAYMENTS`, `BECS`, `EFT`, `ZENGIN`, `FAST`, `FPS`, `NEFT`, `SPEI`, `SIC`, `ELIXIR`, `BANKGIROT`, or `SWIFT`',
    ),
  },
  {
    description:
      'the bank details as sent, without `bank_code`, with `iban` and `account_number` masked to their last four (the full details are kept only encrypted), plus `local_clearing_system`',
  },
);

const BeneficiaryRecord = Type.Object(
  {
    additional_info: Type.Optional(echoObject(BENEFICIARY_INFO, 'as sent')),
    address: Type.Optional(
      echoObject(
        [
          ['city', 'city'],
          ['country_code', 'country'],
          ['postcode', 'postal code'],
          ['state', 'state'],
          ['street', 'street'],
          ['number', 'house number'],
          ['street_address', 'street address'],
          ['complement', 'complement'],
        ],
        'as sent, unchanged',
      ),
    ),
    person_documents: Type.Optional(
      Type.Array(
        Type.Object({
          file_type: echo('media type'),
          file_url: echo('URL'),
          labels: Type.Optional(Type.Array(text('a label'), { description: 'as sent' })),
        }),
        { description: 'as sent' },
      ),
    ),
    bank_details: BankDetailsRecord,
    company_name: echo('company name'),
    date_of_birth: echo('date of birth'),
    entity_type: echo('`PERSONAL` or `COMPANY`'),
    first_name: echo('first name'),
    last_name: echo('last name'),
  },
  { description: 'the beneficiary (as sent, or as saved under `beneficiary_id`)' },
);

const PayerRecord = Type.Object(
  {
    additional_info: Type.Optional(echoObject(PAYER_INFO, 'as sent')),
    address: Type.Optional(
      echoObject(
        [
          ['city', 'city'],
          ['country_code', 'country'],
          ['postcode', 'postal code'],
          ['state', 'state'],
          ['street_address', 'street address'],
        ],
        'as sent',
      ),
    ),
    company_name: echo('company name'),
    date_of_birth: echo('date of birth'),
    entity_type: echo('`PERSONAL` or `COMPANY`'),
    first_name: echo('first name'),
    last_name: echo('last name'),
  },
  { description: 'the payer, as sent' },
);

const minor = (description: string) => Type.Integer({ minimum: 0, description: `${description}, an integer in minor units` });

const payoutRecordFields = {
  request_id: text('your request_id'),
  transaction_id: text('the gateway’s id of the payout'),
  short_reference_id: text('a short reference (`P<yymmdd>-<8 characters>`), as bank statements show it'),
  status: oneOf(PAYOUT_STATUSES, STATUS_SAYS),
  failure_type: oneOf(FAILURE_TYPES, FAILURE_SAYS),
  failure_reason: text('why it failed, in words; empty otherwise'),
  payment_method: text('`LOCAL` or `SWIFT`, as sent'),
  payment_currency: text('the currency the beneficiary receives'),
  source_currency: text('the currency taken from your balance'),
  payment_amount: echo('the payment amount'),
  source_amount: echo('the source amount'),
  amount_beneficiary_receives: minor('what the beneficiary receives in `payment_currency` (less the fee when `fee_paid_by` is `BENEFICIARY`)'),
  amount_payer_pays: minor('what leaves your balance in `source_currency` for the payment, without the fee'),
  fee_amount: minor('the fee, in `fee_currency`'),
  fee_currency: text('the fee’s currency: `source_currency`'),
  fee_paid_by: text('`PAYER` or `BENEFICIARY`'),
  fx_rate: text('the applied exchange rate, a decimal string: units of `payment_currency` per unit of `source_currency` (`1.0` when they are the same)'),
  payment_date: text('the payment date, `YYYY-MM-DD` (UTC)'),
  settlement_batches: Type.Array(
    Type.Object(
      {
        batch_id: text('the settlement batch (`stl_…`, `/v1/retrievalSettlement`)'),
        day: text('its day, `YYYY-MM-DD` (UTC)'),
        amount: Type.Integer({
          description:
            'what the payout took of it in `source_currency`, an integer in minor units; negative for a batch whose movements net to a debit (a day of refunds), which the payout carries',
        }),
      },
      closed,
    ),
    {
      description:
        'the settlement batches the payout paid, oldest first: debit batches, then credit batches by day, each up to what earlier payouts left of it; empty until it is funded and again once it failed or was cancelled. Their sum is at most the amount and fee: money no available batch holds yet is named by none',
    },
  ),
  swift_charge_option: Type.Optional(text('`SWIFT` payouts: `SHARED` or `PAYER`')),
  reason: text('as sent'),
  reference: text('as sent'),
  beneficiary_id: text('the saved beneficiary (`ben_…`): send it instead of `beneficiary` next time'),
  beneficiary: BeneficiaryRecord,
  payer_id: text('the account that pays (your account_id): the payer of record; `payer` describes it as sent'),
  payer: Type.Optional(PayerRecord),
  client_data: echo('your data'),
  fund_source: echo('the fund source'),
  notify_url: echo('the notification URL'),
  created_at: text('when it was created, ISO 8601 with a numeric offset (`2025-01-31T12:00:00+00:00`)'),
  last_updated_at: text('when its status last changed, ISO 8601 with a numeric offset'),
};

/** The payout record: the request echoed (less `bank_details.bank_code`) and what the gateway made of it. */
/** What the record carries around the payout's own fields: whose it is. */
const recordIdentity = { merchant_id: text('your merchant_id'), account_id: text('your account_id') };

export const PayoutRecordSchema = Type.Object({ ...recordIdentity, ...payoutRecordFields }, { description: 'A payout (also the `data` of payout events).' });

/** The answer to `POST /v1/payout`: the payout record, signed. */
export const PayoutAnswer = Type.Object(
  {
    ...recordIdentity,
    ...payoutRecordFields,
    encryption_data: AnswerSignature,
  },
  { description: 'The payout as recorded; a repeated `request_id` with the same body answers the same payout.' },
);

const FoundPayout = Type.Object(
  { query_result: oneOf(['1'], '`1`: found'), ...recordIdentity, ...payoutRecordFields },
  { description: 'a payout found: its record' },
);
const MissingPayout = Type.Object(
  {
    query_result: oneOf(['0'], '`0`: not found for this account'),
    request_id: text('the requested request_id, or empty'),
    transaction_id: text('the requested transaction_id, or empty'),
    short_reference_id: text('the requested short_reference_id, or empty'),
  },
  { description: 'a requested id that names no payout of this account' },
);

export const RetrievalPayoutAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  payouts: Type.Array(Type.Union([FoundPayout, MissingPayout]), {
    description: 'the payouts found, oldest first (at most 100), then an item with `query_result` `0` for each requested id that names none',
  }),
  next_cursor: Type.Optional(NextCursor),
  encryption_data: AnswerSignature,
});

export const CancelPayoutAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  request_id: text('the payout’s request_id (as sent, or found)'),
  transaction_id: text('the payout’s transaction_id (as sent, or found)'),
  cancel_status: oneOf(['0', '1'], '`1` the payout is cancelled (now or already); `0` it was not (see `error_message`)'),
  status: oneOf(['', ...PAYOUT_STATUSES], 'the payout’s status after the request; empty when not found'),
  error_message: text('empty when cancelled; else why not: `0404:Record not found`, or the status that can no longer be cancelled'),
  encryption_data: AnswerSignature,
});
