// The payment request fields of the spec (interface.md "Payment order request fields").
// One TypeBox schema validates, documents (OpenAPI) and types each endpoint (docs/style.md §2).
// Every optional field is still bounded in length and checked for shape when present.
import { type Static, type TSchema, Type } from 'typebox';
import { Signature as AnswerSignature, NextCursor, oneOf, ReturnMessage, ReturnStatus, text } from '../web/route-schema.js';
import { PAYMENT_STATUS_CODE } from './states.js';

const s = (maxLength: number, extra: Record<string, unknown> = {}) => Type.String({ maxLength, ...extra });
const digits = (min: number, max: number, description: string) => Type.String({ pattern: `^\\d{${min},${max}}$`, description });
const Decimal = Type.String({ pattern: '^\\d{1,16}(\\.\\d{1,4})?$', maxLength: 21, description: 'a decimal string such as "10.00"' });
const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'a two-letter uppercase ISO 3166-1 country code' });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'a three-letter uppercase ISO 4217 currency code' });
export const Url = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'an http or https URL' });
const Ip = Type.String({ maxLength: 45, pattern: '^[0-9A-Fa-f:.]{2,45}$', description: 'an IPv4 or IPv6 address' });
const Id = Type.String({ pattern: '^\\d{1,20}$', description: 'a string of 1 to 20 digits' });
const Signature = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: '64 hexadecimal characters (HMAC-SHA256)' });
const Name = s(64);

export const OrderNo = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[\\x21-\\x7E]{1,64}$',
  description: '1 to 64 printable ASCII characters without spaces',
});

const CartItem = Type.Object(
  {
    basic_item_data: Type.Object(
      {
        name: Type.Optional(s(255)),
        quantity: Type.Optional(digits(1, 6, 'a whole number of up to 6 digits')),
        type: Type.Optional(s(32)),
        category: Type.Optional(s(64)),
        productId: Type.Optional(s(64)),
        price: Type.Optional(
          Type.Object(
            {
              amount_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12 })),
              amount_local_currency: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12 })),
              currency: Type.Optional(Currency),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const AccountOwner = Type.Object(
  {
    first_name: Type.Optional(Name),
    last_name: Type.Optional(Name),
    email: Type.Optional(s(254)),
    account_id: Type.Optional(s(64)),
    created: Type.Optional(Type.Number({ minimum: 0, maximum: 1e13 })),
    past_orders_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e9 })),
    past_orders_sum: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
    lastLogin_ip: Type.Optional(Ip),
    registration_ip: Type.Optional(Ip),
  },
  { additionalProperties: false },
);

const TotalDiscount = Type.Object({ coupon_code_used: Type.Optional(s(64)), discount_type: Type.Optional(s(32)) }, { additionalProperties: false });

export const MpiInfo = Type.Object(
  {
    eci: Type.Optional(Type.String({ pattern: '^\\d{2}$', description: 'a two-digit ECI' })),
    cavv: Type.Optional(Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9+/=]{1,64}$', description: 'a base64 CAVV' })),
    xid: Type.Optional(Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9+/=-]{1,64}$', description: 'a base64 or UUID XID' })),
    dsTransID: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'a UUID' })),
  },
  { additionalProperties: false },
);

const AdditionalInformation = Type.Object({ mpi_info: Type.Optional(MpiInfo) }, { additionalProperties: false });

export const Subscription = Type.Object(
  {
    contract: Type.Optional(s(64)),
    contract_name: Type.Optional(s(128)),
    contract_amount: Type.Optional(Decimal),
    interval: Type.Optional(Type.String({ pattern: '^(day|week|month|year)$', description: 'one of day, week, month, year' })),
    interval_count: Type.Optional(digits(1, 3, 'a whole number of up to 3 digits')),
    billing_cycle: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    promotion_cycle: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    contract_start: Type.Optional(s(32)),
    contract_end: Type.Optional(s(32)),
    price_id: Type.Optional(s(64)),
  },
  { additionalProperties: false },
);

/** Fields shared by the direct, redirect and APM payment requests. */
export const commonPaymentFields = {
  merchant_id: Id,
  account_id: Id,
  order_no: OrderNo,
  currency: Currency,
  amount: Decimal,
  item_total: Type.Optional(Decimal),
  shipping: Type.Optional(Decimal),
  handling: Type.Optional(Decimal),
  tax_total: Type.Optional(Decimal),
  insurance: Type.Optional(Decimal),
  shipping_discount: Type.Optional(Decimal),
  discount: Type.Optional(Decimal),
  website: Type.Optional(s(255)),
  items: Type.Optional(s(8192)),
  note: Type.Optional(s(1024)),
  shopper_id: Type.Optional(s(64)),
  shopper_email: Type.Optional(Type.String({ maxLength: 254, pattern: '^$|^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' })),
  shopper_ip: Type.Optional(Ip),
  shopper_phone: Type.Optional(Type.String({ pattern: '^[0-9+()\\- ]{0,32}$', description: 'a phone number of up to 32 digits, spaces, +, -, ( and )' })),
  shopper_level: Type.Optional(s(32)),
  first_name: Type.Optional(Name),
  last_name: Type.Optional(Name),
  notify_url: Type.Optional(Url),
  document: Type.Optional(s(64)),
  birth_date: Type.Optional(Type.String({ pattern: '^$|^\\d{2}-\\d{2}-\\d{4}$', description: 'shaped NN-NN-NNNN' })),
  billing_country: Type.Optional(Country),
  billing_state: Type.Optional(s(64)),
  billing_city: Type.Optional(s(64)),
  billing_address: Type.Optional(s(255)),
  billing_postal_code: Type.Optional(s(16)),
  os: Type.Optional(s(64)),
  browser: Type.Optional(s(512)),
  browser_lang: Type.Optional(Type.String({ pattern: '^$|^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$', description: 'a language tag such as en-US' })),
  default_lang: Type.Optional(
    Type.String({
      pattern: '^$|^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,3}$',
      description: 'the language of the shopper pages, a tag such as pt-BR (before browser_lang)',
    }),
  ),
  resolution: Type.Optional(Type.String({ pattern: '^$|^\\d{1,5}x\\d{1,5}$', description: 'shaped <width>x<height>' })),
  color_depth: Type.Optional(Type.String({ pattern: '^$|^\\d{1,2}$', description: 'a number of bits such as 24' })),
  time_zone: Type.Optional(Type.String({ pattern: '^$|^[+-]?\\d{1,4}$', description: 'an integer offset such as -180' })),
  cookie_new: Type.Optional(Type.String({ maxLength: 4096, pattern: '^$|^[^=&]+=[^&]*(&[^=&]+=[^&]*)*$', description: 'key=value pairs joined by &' })),
  cookie_old: Type.Optional(Type.String({ maxLength: 4096, pattern: '^$|^[^=&]+=[^&]*(&[^=&]+=[^&]*)*$', description: 'key=value pairs joined by &' })),
  delivery_firstname: Type.Optional(Name),
  delivery_lastname: Type.Optional(Name),
  delivery_country: Type.Optional(Country),
  delivery_state: Type.Optional(s(64)),
  delivery_city: Type.Optional(s(64)),
  delivery_address: Type.Optional(s(255)),
  delivery_postal_code: Type.Optional(s(16)),
  custom: Type.Optional(s(1024)),
  device_fingerprint: Type.Optional(s(512)),
  encryption_data: Signature,
  platform_source: Type.Optional(s(64)),
  device_type: Type.Optional(s(32)),
} satisfies Record<string, TSchema>;

/** Fields of direct (D) and redirect (C) payments. */
export const cardPaymentFields = {
  open3d: Type.Optional(s(8)),
  token_flag: Type.Optional(Type.String({ pattern: '^(|0|1)$', description: '"1" to ask for a reusable token, "0" or empty not to' })),
  token_id: Type.Optional(s(64)),
  challenge_window_size: Type.Optional(Type.String({ pattern: '^$|^0[1-5]$', description: 'a two-digit code 01 to 05' })),
  session_id: Type.Optional(s(128)),
  installments: Type.Optional(s(32)),
  installments_id: Type.Optional(s(64)),
  order_type: Type.Optional(s(32)),
  checkout_time: Type.Optional(Type.Integer({ minimum: 0, maximum: 99999999999999 })),
  user_agent: Type.Optional(s(512)),
  antifraud_token_cookie: Type.Optional(s(1024)),
  price_id: Type.Optional(s(64)),
  quote_id: Type.Optional(s(64)),
  quote_price: Type.Optional(Type.String({ pattern: '^$|^\\d{1,16}(\\.\\d{1,8})?$', description: 'a decimal string' })),
  storefront_domains: Type.Optional(s(512)),
  cart_items: Type.Optional(Type.Array(CartItem, { maxItems: 100 })),
  account_owner: Type.Optional(Type.Array(AccountOwner, { maxItems: 10 })),
  total_discount: Type.Optional(Type.Array(TotalDiscount, { maxItems: 20 })),
  additional_information: Type.Optional(Type.Array(AdditionalInformation, { maxItems: 5 })),
  subscription: Type.Optional(Subscription),
  /** docs/contract.md §7 */
  capture_method: Type.Optional(Type.String({ pattern: '^(automatic|manual)$', description: 'automatic or manual' })),
} satisfies Record<string, TSchema>;

const Country2 = Type.String({ pattern: '^$|^[A-Z]{2}$', description: 'a two-letter uppercase ISO 3166-1 country code' });

/** `person` of an APM payment (interface.md "Nested shapes"); what a method needs is in its catalogue row. */
export const Person = Type.Object(
  {
    document_number: Type.Optional(s(32)),
    document_type: Type.Optional(s(16)),
    social_name: Type.Optional(s(128)),
    email: Type.Optional(s(254)),
    phone_country_code: Type.Optional(Country2),
    phone_area_code: Type.Optional(Type.String({ pattern: '^\\d{0,5}$', description: 'up to 5 digits' })),
    phone_number: Type.Optional(Type.String({ pattern: '^[0-9 -]{0,20}$', description: 'up to 20 digits, spaces and -' })),
    birth_date: Type.Optional(s(10)),
    net_monthly_average_income: Type.Optional(Type.String({ pattern: '^$|^\\d{1,16}(\\.\\d{1,2})?$', description: 'a decimal string' })),
    address_street: Type.Optional(s(255)),
    address_number: Type.Optional(s(16)),
    address_complement: Type.Optional(s(128)),
    address_postal_code: Type.Optional(s(16)),
    address_city: Type.Optional(s(64)),
    address_state: Type.Optional(s(64)),
    address_country: Type.Optional(Country2),
    fiscal_country: Type.Optional(Country2),
    documents: Type.Optional(
      Type.Object(
        {
          file_type: Type.Optional(s(32)),
          file_data: Type.Optional(Type.String({ maxLength: 700_000, pattern: '^[A-Za-z0-9+/=\\s]*$', description: 'base64' })),
          file_url: Type.Optional(Url),
          labels: Type.Optional(
            Type.Object(
              {
                person_bank_account_id: Type.Optional(s(64)),
                bank_account: Type.Optional(
                  Type.Object(
                    {
                      account_type: Type.Optional(s(32)),
                      account_number: Type.Optional(s(34)),
                      branch_number: Type.Optional(s(16)),
                      owner_document_number: Type.Optional(s(32)),
                      owner_name: Type.Optional(s(128)),
                      branch_country: Type.Optional(Country2),
                      currency: Type.Optional(Type.String({ pattern: '^$|^[A-Z]{3}$', description: 'a three-letter ISO 4217 code' })),
                      bank: Type.Optional(Type.Object({ code: Type.Optional(s(16)), name: Type.Optional(s(128)) }, { additionalProperties: false })),
                    },
                    { additionalProperties: false },
                  ),
                ),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Fields of an APM payment (A) that a card payment does not have (docs/contract.md §15). */
export const apmPaymentFields = {
  payment_method: Type.Optional(
    Type.String({ pattern: '^[a-z0-9_-]{1,32}$', description: 'an alternative payment method (`pix`, `boleto`, `ideal`); absent for a card payment' }),
  ),
  bank_code: Type.Optional(s(32, { description: 'the shopper’s bank (iDEAL: a BIC from the published list)' })),
  person: Type.Optional(Person),
  delivery_district_name: Type.Optional(s(64)),
  delivery_street_name: Type.Optional(s(255)),
} satisfies Record<string, TSchema>;

export const AuthoriseDirectBody = Type.Object(
  {
    ...commonPaymentFields,
    ...cardPaymentFields,
    ...apmPaymentFields,
    card: Type.Optional(Type.String({ pattern: '^\\d{12,19}$', description: '12 to 19 digits' })),
    expiration_month: Type.Optional(Type.String({ pattern: '^(0?[1-9]|1[0-2])$', description: 'a month from 1 to 12' })),
    expiration_year: Type.Optional(Type.String({ pattern: '^(\\d{2}|\\d{4})$', description: 'a year as YY or YYYY' })),
    security_code: Type.Optional(Type.String({ pattern: '^\\d{3,4}$', description: '3 or 4 digits' })),
    accept: Type.Optional(s(256)),
    /** docs/contract.md §10: where the shopper returns after a 3-D Secure challenge. */
    return_url: Type.Optional(Url),
  },
  { additionalProperties: false },
);

export type AuthoriseDirect = Static<typeof AuthoriseDirectBody>;

// ---- answers (interface.md "Direct payment response record", "Order record") ----------

const RISK_ACTIONS = ['ACCEPT', 'REVIEW', 'REJECT'] as const;
const ORDER_STATUS = oneOf(
  ['0', '1', '2', '3', '4'],
  '`1` success, `0` failure, `2` pending shopper action (3-D Secure challenge), `3` held for risk review, `4` pending at the processor (`0006`: the outcome follows as a notification)',
);
const PAYMENT_STATUS = oneOf(
  ['', ...Object.values(PAYMENT_STATUS_CODE)],
  '`1000` pending shopper action, `1100` pending at the processor, `2000` authorised not captured, `2100` held for review, `3000` paid (captured), `4000` refunded in full, `4100` partially refunded, `5000` cancelled, `6000` declined or failed, `7000` expired; empty when not found',
);
const MaskedCard = text('the card as BIN and last four (`424242******4242`)');
const ResultInfo = text('the outcome as `<code>:<text>`; `0000:Success` is success');

/** One `<risk_reasons>` element per rule checked (repeated, not wrapped). */
const RiskReasonXml = Type.Object({ name: text('the rule'), status: oneOf(RISK_ACTIONS, 'what the rule says') }, { xml: { name: 'risk_reasons' } });

/** The direct payment answer: XML, root `respon`. */
export const AuthoriseAnswer = Type.Object(
  {
    merchant_id: text('your merchant_id'),
    account_id: text('your account_id'),
    order_no: text('your order number'),
    amount: text('the amount as sent, a decimal string'),
    currency: text('ISO 4217 code'),
    transaction_id: text('the gateway’s id of the payment; empty for a duplicate order_no'),
    card: MaskedCard,
    order_status: ORDER_STATUS,
    result_info: ResultInfo,
    contract_name: text('subscription contract name, or empty'),
    recurring_id: text('subscription id, or empty'),
    recurring_deduction_period: text('subscription period such as `1 month`, or empty'),
    recurring_deduction_time: text('next subscription deduction `YYYY-MM-DD hh:mm:ss` (UTC), or empty'),
    note: text('your note, echoed'),
    token_id: text('a card token for later payments (with `token_flag` `1`), or empty'),
    connector: text('the processor that handled the payment (`sandbox` on test accounts)'),
    threeds_result: oneOf(['', 'Y', 'N', 'A', 'U'], '`Y` authenticated, `N` failed, `A` attempted, `U` unavailable, empty when none'),
    risk_action: oneOf(['', ...RISK_ACTIONS], 'the anti-fraud decision; empty when the payment was not scored'),
    risk_score: text('0 to 100, or empty'),
    risk_reasons: Type.Array(RiskReasonXml, {
      xml: { wrapped: false },
      description: 'one element with `name` and `status` per rule checked; a single empty `<risk_reasons/>` when none was',
    }),
    threeds_url: Type.Optional(text('only while a 3-D Secure challenge is pending: send the shopper here')),
    encryption_data: AnswerSignature,
  },
  {
    xml: { name: 'respon' },
    description:
      'Signed like a request, over the XML as you read it back: an element that occurs once is a member (`risk_reasons.name`), several times an array (`risk_reasons[0].name`); an empty element is an empty string and so left out.',
  },
);

/** The answer to `POST /v1/authorise` with `payment_method` (docs/contract.md §15). */
export const ApmAnswer = Type.Object(
  {
    merchant_id: text('your merchant_id'),
    account_id: text('your account_id'),
    order_no: text('your order number'),
    amount: text('the amount as sent, a decimal string'),
    currency: text('ISO 4217 code'),
    issuer_url: text('single use: send the shopper here to pay at the issuer; empty for a duplicate order_no'),
    transaction_id: text('the gateway’s id of the payment; empty for a duplicate order_no'),
    order_status: oneOf(['0', '2'], '`2` pending shopper action (the payment waits for the issuer); `0` for a duplicate order_no'),
    result_info: text('`0003:Pending shopper action`, or `1011:Duplicate order`'),
    encryption_data: AnswerSignature,
  },
  { xml: { name: 'respon' }, description: 'The payment waits for the shopper at `issuer_url`; its outcome comes as a notification and on `return_url`.' },
);

const DeliveryInformation = Type.Object(
  Object.fromEntries(
    ['delivery_address', 'delivery_city', 'delivery_country', 'delivery_firstname', 'delivery_lastname', 'delivery_postal_code', 'delivery_state'].map((k) => [
      k,
      text('as sent with the payment, or empty'),
    ]),
  ),
);

const SubscriptionResult = Type.Object({
  contract_name: text('or empty'),
  recurring_deduction_period: text('or empty'),
  recurring_deduction_time: text('`YYYY-MM-DD`, or empty'),
  recurring_id: text('or empty'),
  recurring_status: oneOf(['', '0', '1'], '`1` active, `0` inactive; empty when the payment has no subscription'),
  subscription_status: oneOf(
    ['', 'Active', 'PastDue', 'Inactived', 'Completed'],
    'the named state: `PastDue` while a failed deduction is retried (after 1, 3 and 5 days), `Inactived` once cancelled or its retries ran out, `Completed` at `billing_cycle` or `contract_end`',
  ),
  end_reason: text(
    'why it ended (`cancelled by the merchant`, `payment failed: 1002:Card declined (retried 3 times)`, `billing_cycle reached`, …); empty while it runs',
  ),
});

/** The order record: an item of the query answer, and the `data` of payment notifications. */
export const OrderRecord = Type.Object({
  amount: text('the order amount, a decimal string; empty when not found'),
  currency: text('ISO 4217 code'),
  delivery_information: DeliveryInformation,
  antifraud_provider: text('`tollgate-risk` when the payment was scored, else empty'),
  fraud_check_result: Type.Array(Type.Object({ check_items: text('the rule'), status: oneOf(RISK_ACTIONS, 'what the rule says') }), {
    description: 'one entry per rule checked',
  }),
  is3ds: oneOf(['', '0', '1'], '`1` authenticated with 3-D Secure, `0` not; empty when not found'),
  order_no: text('your order number (the requested one when not found)'),
  payment_status: PAYMENT_STATUS,
  query_result: oneOf(['0', '1'], '`1` found, `0` not found (the record still names the requested id)'),
  reference_no: text('reference number, or empty'),
  shopper_email: text('as sent, or empty'),
  shopper_phone: text('as sent, or empty'),
  subscription_result: SubscriptionResult,
  transaction_date: text('`YYYYMMDDhhmmss` (UTC)'),
  transaction_id: text('the gateway’s id (the requested one when not found)'),
  website: text('as sent, or empty'),
  captured_amount: text('the amount captured so far'),
  refunded_amount: text('the amount refunded so far'),
  card: MaskedCard,
  result_info: ResultInfo,
});

export const QueryAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  orders_list: Type.Array(OrderRecord, { description: 'requested ids in request order (transaction_ids first), or up to 100 orders of the date range' }),
  next_cursor: Type.Optional(NextCursor),
  encryption_data: AnswerSignature,
});
