// Wire types of the acquiring interface (docs/interface.md), as a merchant sends and reads
// them. Kept apart from the server's schemas on purpose (a published client must not pull
// in the server); client.test.ts checks at compile time that the request types have the
// same fields as the route schemas, and at run time that answers carry exactly these fields.

/** `1` yes / `0` no flags of the interface (strings on the wire). */
export type Flag = '0' | '1';
/** A flag that may also say `2`: sent to the processor, not yet confirmed (docs/contract.md §20). */
export type PendingFlag = '0' | '1' | '2';
/**
 * `order_status`: 1 success, 0 failure, 2 pending shopper action, 3 held for risk review,
 * 4 pending at the processor (`0006`: the outcome comes as a notification and in queries).
 */
export type OrderStatus = '0' | '1' | '2' | '3' | '4';
/**
 * `payment_status`: 1000 pending shopper action, 1100 pending at the processor, 2000
 * authorised not captured, 2100 held for review, 3000 paid, 4000 refunded in full, 4100
 * partially refunded, 5000 cancelled, 6000 declined or failed, 7000 expired.
 */
export type PaymentStatus = '1000' | '1100' | '2000' | '2100' | '3000' | '4000' | '4100' | '5000' | '6000' | '7000';
/** `refund_status`: 1 refunded, 0 failed, 2 pending. */
export type RefundStatus = '0' | '1' | '2';
export type RiskAction = 'ACCEPT' | 'REVIEW' | 'REJECT';
/** `threeds_result`: Y authenticated, N failed, A attempted, U unavailable, empty when none. */
export type ThreeDSResult = 'Y' | 'N' | 'A' | 'U' | '';
/** A list of ids: an array, or one comma-separated string (at most 100 ids together). */
export type IdList = string | string[];

/** Fields every signed request carries; the client fills them in. */
export interface Identity {
  merchant_id: string;
  account_id: string;
}

// ---------- POST /v1/authorise (direct card payment, XML answer `respon`) ----------

export interface CartItem {
  basic_item_data: {
    name?: string;
    quantity?: string;
    type?: string;
    category?: string;
    productId?: string;
    price?: { amount_usd?: number; amount_local_currency?: number; currency?: string };
  };
}

export interface AccountOwner {
  first_name?: string;
  last_name?: string;
  email?: string;
  account_id?: string;
  created?: number;
  past_orders_count?: number;
  past_orders_sum?: number;
  lastLogin_ip?: string;
  registration_ip?: string;
}

/** 3-D Secure results from the merchant's own 3-D Secure server. */
export interface MpiInfo {
  eci?: string;
  cavv?: string;
  xid?: string;
  dsTransID?: string;
}

export interface Subscription {
  contract?: string;
  contract_name?: string;
  contract_amount?: string;
  interval?: 'day' | 'week' | 'month' | 'year';
  interval_count?: string;
  billing_cycle?: number;
  promotion_cycle?: number;
  contract_start?: string;
  contract_end?: string;
  price_id?: string;
}

/** A direct card payment. Amounts are decimal strings with the currency's minor digits. */
export interface AuthoriseRequest {
  order_no: string;
  currency: string;
  amount: string;
  /** Card number; or `token_id` of an earlier payment of this account instead. */
  card?: string;
  expiration_month?: string;
  expiration_year?: string;
  security_code?: string;
  token_id?: string;
  /** `1`: return a `token_id` for later payments. */
  token_flag?: '' | '0' | '1';
  capture_method?: 'automatic' | 'manual';
  /** `0` never challenge, `1` always authenticate; absent: the gateway decides. */
  open3d?: string;
  /** Where the shopper returns after a 3-D Secure challenge. */
  return_url?: string;
  notify_url?: string;
  item_total?: string;
  shipping?: string;
  handling?: string;
  tax_total?: string;
  insurance?: string;
  shipping_discount?: string;
  discount?: string;
  website?: string;
  items?: string;
  note?: string;
  shopper_id?: string;
  shopper_email?: string;
  shopper_ip?: string;
  shopper_phone?: string;
  shopper_level?: string;
  first_name?: string;
  last_name?: string;
  document?: string;
  /** `NN-NN-NNNN` */
  birth_date?: string;
  billing_country?: string;
  billing_state?: string;
  billing_city?: string;
  billing_address?: string;
  billing_postal_code?: string;
  os?: string;
  browser?: string;
  browser_lang?: string;
  resolution?: string;
  color_depth?: string;
  time_zone?: string;
  cookie_new?: string;
  cookie_old?: string;
  delivery_firstname?: string;
  delivery_lastname?: string;
  delivery_country?: string;
  delivery_state?: string;
  delivery_city?: string;
  delivery_address?: string;
  delivery_postal_code?: string;
  custom?: string;
  device_fingerprint?: string;
  platform_source?: string;
  device_type?: string;
  /** The shopper's language for the gateway's pages (`en`, `es`, `pt`, `fr`, `de`). */
  default_lang?: string;
  /** An alternative payment method (`pix`, `boleto`, `ideal`): use `authoriseApm`. */
  payment_method?: string;
  /** iDEAL: the shopper's bank, a BIC from the published list. */
  bank_code?: string;
  /** The payer, for methods that need one (Pix, Boleto: CPF/CNPJ, e-mail, address). */
  person?: Person;
  delivery_district_name?: string;
  delivery_street_name?: string;
  accept?: string;
  challenge_window_size?: string;
  session_id?: string;
  installments?: string;
  installments_id?: string;
  order_type?: string;
  checkout_time?: number;
  user_agent?: string;
  antifraud_token_cookie?: string;
  price_id?: string;
  quote_id?: string;
  quote_price?: string;
  storefront_domains?: string;
  cart_items?: CartItem[];
  account_owner?: AccountOwner[];
  total_discount?: Array<{ coupon_code_used?: string; discount_type?: string }>;
  additional_information?: Array<{ mpi_info?: MpiInfo }>;
  subscription?: Subscription;
}

/** The payer of an alternative-method payment (docs/contract.md §15). */
export interface Person {
  document_number?: string;
  document_type?: string;
  social_name?: string;
  email?: string;
  phone_country_code?: string;
  phone_area_code?: string;
  phone_number?: string;
  birth_date?: string;
  net_monthly_average_income?: string;
  address_street?: string;
  address_number?: string;
  address_complement?: string;
  address_postal_code?: string;
  address_city?: string;
  address_state?: string;
  address_country?: string;
  fiscal_country?: string;
  documents?: {
    file_type?: string;
    file_data?: string;
    file_url?: string;
    labels?: {
      person_bank_account_id?: string;
      bank_account?: {
        account_type?: string;
        account_number?: string;
        branch_number?: string;
        owner_document_number?: string;
        owner_name?: string;
        branch_country?: string;
        currency?: string;
        bank?: { code?: string; name?: string };
      };
    };
  };
}

/** An alternative-method payment: `authorise` fields without the card, with `payment_method` and `return_url`. */
export type ApmRequest = Omit<
  AuthoriseRequest,
  'card' | 'expiration_month' | 'expiration_year' | 'security_code' | 'token_id' | 'payment_method' | 'return_url'
> & {
  payment_method: string;
  /** Where the shopper comes back from the issuer's page, with signed result fields. */
  return_url: string;
};

/** The answer to an alternative-method payment: send the shopper to `issuer_url`. */
export interface ApmAnswer extends Identity {
  order_no: string;
  amount: string;
  currency: string;
  /** Single use: the issuer's page for this payment (empty on a `1011` duplicate). */
  issuer_url: string;
  transaction_id: string;
  order_status: OrderStatus;
  result_info: string;
  encryption_data: string;
}

/** A hosted checkout (docs/contract.md §14): the payment fields without the card, and where the shopper returns. */
export type CheckoutRequest = Omit<
  AuthoriseRequest,
  'card' | 'expiration_month' | 'expiration_year' | 'security_code' | 'token_id' | 'payment_method' | 'return_url'
> & {
  return_url: string;
  /** Where "Cancel" sends the shopper; `return_url` when absent. */
  cancel_url?: string;
};

/** The form a merchant's page posts (by the shopper's browser) to start a hosted checkout. */
export interface CheckoutForm {
  /** `<form method="post" action=…>` */
  action: string;
  /** Name and value of each hidden input, in bracket notation for nested fields, signed. */
  fields: Array<[name: string, value: string]>;
}

export interface RiskReason {
  name: string;
  status: string;
}

/**
 * The XML answer as a merchant reads it back (docs/contract.md §2): an element that occurs once
 * is a member, one that occurs several times is an array, an empty one is `''`. So
 * `risk_reasons` is `''` (no rule ran), one object, or an array: `riskReasons()` lists it.
 */
export interface AuthoriseAnswer extends Identity {
  order_no: string;
  amount: string;
  currency: string;
  /** Empty when the order was refused before a transaction existed (`1011`). */
  transaction_id: string;
  /** BIN and last four only. */
  card: string;
  order_status: OrderStatus;
  /** `<code>:<text>`, `0000:Success` on success; `resultCode()` takes the code. */
  result_info: string;
  contract_name: string;
  recurring_id: string;
  recurring_deduction_period: string;
  recurring_deduction_time: string;
  note: string;
  token_id: string;
  connector: string;
  threeds_result: ThreeDSResult;
  risk_action: RiskAction | '';
  risk_score: string;
  risk_reasons: RiskReason | RiskReason[] | '';
  /** Present when `order_status` is `2`: send the shopper there for the challenge. */
  threeds_url?: string;
  encryption_data: string;
}

// ---------- answers of the JSON endpoints ----------

/** Fields every processed JSON answer starts with (`return_status` `1`). */
export interface Processed extends Identity {
  return_status: '1';
  return_message: string;
  encryption_data: string;
}

// ---------- POST /v1/retrievalTrans (order query) ----------

/** By ids (`order_nos` and/or `transaction_ids`), or by `start_date`/`end_date` (`YYYYMMDDhhmmss`, UTC) with `cursor`. */
export interface QueryOrdersRequest {
  order_nos?: IdList;
  transaction_ids?: IdList;
  start_date?: string;
  end_date?: string;
  cursor?: string;
}

/** The order record: the query answer item and the `data` of payment notifications. */
export interface OrderRecord {
  amount: string;
  currency: string;
  delivery_information: {
    delivery_address: string;
    delivery_city: string;
    delivery_country: string;
    delivery_firstname: string;
    delivery_lastname: string;
    delivery_postal_code: string;
    delivery_state: string;
  };
  antifraud_provider: string;
  fraud_check_result: Array<{ check_items: string; status: string }>;
  is3ds: Flag | '';
  order_no: string;
  payment_status: PaymentStatus | '';
  /** `1` found, `0` not found (the record still names the requested id). */
  query_result: Flag;
  reference_no: string;
  shopper_email: string;
  shopper_phone: string;
  subscription_result: {
    contract_name: string;
    recurring_deduction_period: string;
    recurring_deduction_time: string;
    recurring_id: string;
    recurring_status: Flag | '';
    /** `Active`, `PastDue` (a deduction failed; retrying), `Inactived` (cancelled, or retries exhausted), `Completed`; empty when none. */
    subscription_status: 'Active' | 'PastDue' | 'Inactived' | 'Completed' | '';
    /** Why it ended: `cancelled by the merchant`, `payment failed: …`, `billing_cycle reached`, …; empty while it runs. */
    end_reason: string;
  };
  /** `YYYYMMDDhhmmss`, UTC */
  transaction_date: string;
  transaction_id: string;
  website: string;
  captured_amount: string;
  refunded_amount: string;
  card: string;
  result_info: string;
}

export interface QueryOrdersAnswer extends Processed {
  orders_list: OrderRecord[];
  /** Present when a date range has more orders: send it as `cursor`. */
  next_cursor?: string;
}

// ---------- POST /v1/capture, /v1/cancel ----------

/** Names a transaction exactly: its id, order number, currency and original order amount. */
export interface OrderItem {
  transaction_id: string;
  order_no: string;
  currency: string;
  /** Cancel: the original order amount. Capture: the amount to capture (at most the authorised amount). */
  amount: string;
}

export interface CaptureRequest {
  /** 1 to 50 orders, each answered on its own. */
  capture_orders: OrderItem[];
}

export interface CaptureResult {
  amount: string;
  /** `1` captured, `0` refused, `2` pending at the processor (the outcome follows as `payment.captured` and in queries). */
  capture_status: PendingFlag;
  currency: string;
  /** `<code>:<text>` when `capture_status` is `0`, else empty. */
  error_message: string;
  order_no: string;
  transaction_id: string;
}

export interface CaptureAnswer extends Processed {
  capture_orders: CaptureResult[];
}

export interface CancelRequest {
  cancel_orders: OrderItem[];
}

export interface CancelResult {
  amount: string;
  /** `1` cancelled, `0` refused, `2` pending at the processor (the outcome follows as `payment.cancelled` and in queries). */
  cancel_status: PendingFlag;
  currency: string;
  error_message: string;
  order_no: string;
  transaction_id: string;
}

export interface CancelAnswer extends Processed {
  cancel_orders: CancelResult[];
}

// ---------- POST /v1/refund ----------

export interface RefundOrder extends OrderItem {
  /** The amount to refund (`amount` is the original order amount). */
  refund_amount: string;
  refund_reason?: string;
}

export interface RefundRequest {
  refund_orders: RefundOrder[];
}

export interface RefundResult {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
  refund_amount: string;
  refund_reason: string;
  refund_reference: string;
  /** `<transaction_id>-01`, `-02`, … */
  refund_reference_id: string;
  refund_status: RefundStatus;
  /** `<code>:<text>` */
  refund_message: string;
}

export interface RefundAnswer extends Processed {
  refund_orders: RefundResult[];
}

// ---------- POST /v1/retrievalRefund (refund search) ----------

export interface SearchRefundsRequest {
  refund_reference_ids?: IdList;
  transaction_ids?: IdList;
  order_nos?: IdList;
  /** Over `refund_date`, `YYYYMMDDhhmmss`, UTC. */
  start_date?: string;
  end_date?: string;
  cursor?: string;
}

/** The refund record: the search answer item and the `data` of refund notifications. */
/**
 * A refund search item (also the `data` of refund notifications). An id that matches no
 * refund of the account is answered with `query_result` `0`, that id in its own field and
 * every other field empty.
 */
export interface RefundRecord {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
  refund_amount: string;
  refund_reason: string;
  refund_reference: string;
  refund_reference_id: string;
  refund_status: RefundStatus;
  payment_status: PaymentStatus;
  /** `YYYYMMDDhhmmss`, UTC */
  refund_date: string;
  refund_processing_date: string;
  /** `1` found, `0` no refund matches the requested id. */
  query_result: Flag;
}

export interface SearchRefundsAnswer extends Processed {
  refund_orders: RefundRecord[];
  next_cursor?: string;
}

// ---------- POST /v1/review ----------

export interface ReviewOrder {
  transaction_id: string;
  order_no: string;
  decision: 'ACCEPT' | 'REJECT';
  note?: string;
}

export interface ReviewRequest {
  /** At most 50. */
  review_orders: ReviewOrder[];
}

export interface ReviewResult {
  transaction_id: string;
  order_no: string;
  decision: string;
  /** `1` decided, `2` at the processor (the payment moves when it confirms), `0` refused. */
  review_status: PendingFlag;
  payment_status: PaymentStatus | '';
  error_message: string;
}

export interface ReviewAnswer extends Processed {
  review_orders: ReviewResult[];
}

// ---------- POST /v1/cancelsubscription ----------

export interface CancelSubscriptionRequest {
  recurring_id: string;
  contract_name: string;
}

export interface CancelSubscriptionAnswer extends Identity {
  recurring_id: string;
  contract_name: string;
  /** `1` the subscription is inactive (now, or it had ended already: safe to retry); `0` no such pair. */
  cancel_status: Flag;
  /** `''`, or `0404:Record not found`. */
  error_message: string;
  encryption_data: string;
}

// ---------- POST /v1/paymentmethods (methods ranked by expected approval) ----------

export interface PaymentMethodsRequest {
  /** ISO 4217, uppercase. */
  currency: string;
  /** Decimal with the currency's minor digits. */
  amount: string;
  /** ISO 3166-1 alpha-2, uppercase. */
  billing_country: string;
  /** First 6 to 8 digits of the shopper's card: only that brand is ranked among the cards. */
  card_bin?: string;
  device_type?: string;
}

export interface RankedPaymentMethod {
  /** A card brand (`visa`, `mastercard`, …) or an alternative method (`pix`, `boleto`, `ideal`). */
  payment_method: string;
  type: 'card' | 'apm';
  /** Expected approval, `0.0000` to `1.0000`. */
  approval_rate: string;
  /** How many of the account's recent payments with the method were counted. */
  sample_size: string;
  /** `1` for the best method and any within one percentage point of it. */
  recommended: Flag;
}

export interface PaymentMethodsAnswer extends Processed {
  currency: string;
  amount: string;
  billing_country: string;
  /** Highest expected approval first. */
  payment_methods: RankedPaymentMethod[];
}

// ---------- POST /v1/payout, /v1/cancelpayout, /v1/retrievalPayout (payouts) ----------
// Mirrors src/payouts/schema.ts (payouts.test.ts beside this file checks every field, at
// every depth, against those schemas and against the gateway's answers).

/** A settlement batch a payout paid (`PayoutRecord.settlement_batches`). */
export interface PayoutBatch {
  /** The batch (`stl_…`, `retrieveSettlement`). */
  batch_id: string;
  /** Its day, `YYYY-MM-DD` (UTC). */
  day: string;
  /** What the payout took of it in `source_currency`, an integer in minor units; negative for a debit batch the payout carries. */
  amount: number;
}

/** `SCHEDULED` (waits for `payment_date`; can be cancelled), `PROCESSING` (sent to the bank), `COMPLETED`, `FAILED` (see `failure_type`; the funds are released) or `CANCELLED`. */
export type PayoutStatus = 'SCHEDULED' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'CANCELLED';
/**
 * Empty unless the payout failed or was cancelled: `INSUFFICIENT_FUNDS` (the balance in
 * `source_currency` did not cover the amount and the fee), `INVALID_ACCOUNT` (the bank
 * refused the account), `RETURNED` (the beneficiary's bank sent the money back; the funds
 * are released), `CANCELLED` (cancelled before dispatch), `PROCESSOR_ERROR` (the payout
 * provider failed).
 */
export type PayoutFailureType = '' | 'INSUFFICIENT_FUNDS' | 'INVALID_ACCOUNT' | 'RETURNED' | 'CANCELLED' | 'PROCESSOR_ERROR';
/** `LOCAL` through the country's clearing system, or `SWIFT`. */
export type PayoutMethod = 'LOCAL' | 'SWIFT';
/** Who bears the fee: `PAYER` (default) or `BENEFICIARY` (deducted from what the beneficiary receives). */
export type FeePaidBy = 'PAYER' | 'BENEFICIARY';
/** `SWIFT` only: `SHARED` (default; the other banks' charges come out of the amount) or `PAYER` (you pay them, for a fee). */
export type SwiftChargeOption = 'SHARED' | 'PAYER';
/** `PERSONAL` (a person) or `COMPANY`. */
export type EntityType = 'PERSONAL' | 'COMPANY';

/** More about the beneficiary, when the destination asks for it (each at most 256 characters). */
export interface BeneficiaryAdditionalInfo {
  /** The company's line of business. */
  business_area?: string;
  /** The company's phone number. */
  business_phone_number?: string;
  /** The company's registration number. */
  business_registration_number?: string;
  /** The person's e-mail address. */
  personal_email?: string;
  /** The number of the person's identity document. */
  personal_id_number?: string;
  /** The kind of identity document (passport, national id, …). */
  personal_id_type?: string;
  /** The person's mobile number. */
  personal_mobile_number?: string;
  /** The person's average net monthly income. */
  personal_net_monthly_average_income?: string;
  /** The country calling code of the person's phone. */
  personal_phone_country_code?: string;
  /** The area code of the person's phone. */
  personal_phone_area_code?: string;
  /** The country where the person pays tax. */
  personal_fiscal_country?: string;
}

/** The beneficiary's address, echoed unchanged in the answer. */
export interface BeneficiaryAddress {
  /** City, at most 100 characters. */
  city?: string;
  /** The beneficiary's country (also the bank's country when `bank_details` has none): a two-letter uppercase ISO 3166-1 code. */
  country_code?: string;
  /** Postal code, at most 20 characters. */
  postcode?: string;
  /** State, province or region, at most 100 characters. */
  state?: string;
  /** Street name, at most 200 characters. */
  street?: string;
  /** House number, at most 20 characters. */
  number?: string;
  /** The street address on one line, at most 300 characters. */
  street_address?: string;
  /** Flat, floor, building, at most 200 characters. */
  complement?: string;
}

/** A document about the beneficiary, by URL. */
export interface PersonDocument {
  /** The document's media type, such as `application/pdf` or `image/jpeg`. */
  file_type?: string;
  /** An http or https URL. */
  file_url?: string;
  /** At most 10 labels (each at most 64 characters) saying what the document is. */
  labels?: string[];
}

/**
 * The account the money goes to; which fields are required depends on the clearing system
 * (country, currency and method): `ACH` (US/USD) needs `account_number` and the ABA routing
 * number in `bank_code`, `SEPA` an `iban`, `SWIFT` a `swift_code` (and the `iban` where the
 * country uses IBANs); `account_name` always. See `npx tollgate payouts rails`.
 */
export interface BankDetails {
  /** The account's currency: a three-letter uppercase ISO 4217 code; when sent it must equal `payment_currency`. */
  account_currency?: string;
  /** The account holder's name as the bank knows it, at most 140 characters (required). */
  account_name?: string;
  /** The account holder's document number, at most 140 characters. */
  owner_document_number?: string;
  /** The account number (its format depends on the clearing system); spaces and dashes are ignored; at most 34 characters. */
  account_number?: string;
  /** Account categories, comma-separated (such as `Checking` or `Savings`), at most 140 characters. */
  bank_account_category?: string;
  /** The branch's name or number, at most 140 characters. */
  bank_branch?: string;
  /** The bank's country: a two-letter uppercase ISO 3166-1 code (taken from the IBAN when absent). */
  bank_country_code?: string;
  /** The national bank code: ABA routing number (ACH), sort code (FASTER_PAYMENTS), BSB (BECS), IFSC (NEFT), …; at most 20 characters; never echoed. */
  bank_code?: string;
  /** The bank's name, at most 140 characters. */
  bank_name?: string;
  /** The bank's address, at most 140 characters. */
  bank_street_address?: string;
  /** A mobile number bound to the account, at most 140 characters. */
  binding_mobile_number?: string;
  /** The IBAN, with or without the spaces of its printed form (at most 34 characters without them); its check digits are verified. */
  iban?: string;
  /** The bank's BIC (SWIFT code), 8 or 11 characters; required for `SWIFT` payouts. */
  swift_code?: string;
  /** A reference for the beneficiary's bank statement, at most 140 characters. */
  transaction_reference?: string;
}

/** Who receives the money and where; saved by the payout, reusable as `beneficiary_id`. */
export interface Beneficiary {
  /** More about the beneficiary, when the destination asks for it. */
  additional_info?: BeneficiaryAdditionalInfo;
  /** The beneficiary's address, echoed unchanged in the answer. */
  address?: BeneficiaryAddress;
  /** At most 10 documents about the beneficiary. */
  person_documents?: PersonDocument[];
  /** The account the money goes to. */
  bank_details?: BankDetails;
  /** The company's name (`entity_type` `COMPANY`), at most 100 characters. */
  company_name?: string;
  /** The person's date of birth, `YYYY-MM-DD`. */
  date_of_birth?: string;
  /** `PERSONAL` (needs `first_name` and `last_name`) or `COMPANY` (needs `company_name`). */
  entity_type?: EntityType;
  /** The person's first name (`entity_type` `PERSONAL`), at most 100 characters. */
  first_name?: string;
  /** The person's last name (`entity_type` `PERSONAL`), at most 100 characters. */
  last_name?: string;
}

/** More about the payer, when the destination asks for it (each at most 256 characters). */
export interface PayerAdditionalInfo {
  /** The company's registration number. */
  business_registration_number?: string;
  /** The kind of registration. */
  business_registration_type?: string;
  /** Your own id of the payer. */
  external_id?: string;
  /** The person's e-mail address. */
  personal_email?: string;
  /** The number of the person's identity document. */
  personal_id_number?: string;
  /** The person's occupation. */
  job?: string;
}

/** The payer's address. */
export interface PayerAddress {
  /** City, at most 100 characters. */
  city?: string;
  /** The payer's country: a two-letter uppercase ISO 3166-1 code. */
  country_code?: string;
  /** Postal code, at most 20 characters. */
  postcode?: string;
  /** State, province or region, at most 100 characters. */
  state?: string;
  /** The street address on one line, at most 300 characters. */
  street_address?: string;
}

/** On whose behalf you pay, when not yourself. */
export interface Payer {
  /** More about the payer, when the destination asks for it. */
  additional_info?: PayerAdditionalInfo;
  /** The payer's address. */
  address?: PayerAddress;
  /** The company's name (`entity_type` `COMPANY`), at most 100 characters. */
  company_name?: string;
  /** The person's date of birth, `YYYY-MM-DD`. */
  date_of_birth?: string;
  /** `PERSONAL` (a person) or `COMPANY`. */
  entity_type?: EntityType;
  /** The person's first name (`entity_type` `PERSONAL`), at most 100 characters. */
  first_name?: string;
  /** The person's last name (`entity_type` `PERSONAL`), at most 100 characters. */
  last_name?: string;
}

/**
 * A payout. `beneficiary` or `beneficiary_id`, and exactly one of `payment_amount` and
 * `source_amount`, are required. Amounts are decimal strings with exactly the currency's
 * minor-unit digits (`"10.00"` USD, `"1200"` JPY).
 */
export interface PayoutRequest {
  /**
   * A UUID (8-4-4-4-12 hexadecimal digits) chosen by you: the idempotency key of the
   * payout. Store it before sending. A retry of the same payout (after a timeout, or your
   * process restarting) must send the same `request_id` with the same body: it answers the
   * same payout in its current status, never a second one (`Idempotent-Replayed`); another
   * body with it is refused (HTTP 409, `ConflictError` with `error_field` `request_id`).
   * The client's own retries resend the signed body unchanged, so they keep it. Not the
   * `request_id` of `CallOptions`, which is only the `X-Request-Id` log header.
   */
  request_id: string;
  /** Who receives the money and where (or `beneficiary_id`). */
  beneficiary?: Beneficiary;
  /** A beneficiary saved by an earlier payout (`ben_…`), instead of `beneficiary`. */
  beneficiary_id?: string;
  /** Your own data, echoed, at most 1000 characters. */
  client_data?: string;
  /** Who bears the fee: `PAYER` (default) or `BENEFICIARY` (deducted from what the beneficiary receives). */
  fee_paid_by?: FeePaidBy;
  /** On whose behalf you pay, when not yourself. */
  payer?: Payer;
  /** What the beneficiary receives, in `payment_currency` (send this or `source_amount`): a decimal string with the currency's minor digits. */
  payment_amount?: string;
  /** The currency the beneficiary receives: a three-letter uppercase ISO 4217 code. */
  payment_currency: string;
  /** When to pay (UTC), `YYYY-MM-DD`: today (the default) or later (at most 365 days ahead), which makes the payout `SCHEDULED`. */
  payment_date?: string;
  /** `LOCAL` through the country's clearing system, or `SWIFT`. */
  payment_method: PayoutMethod;
  /** Why you pay, 1 to 140 characters. */
  reason: string;
  /** The reference the beneficiary sees, 1 to 140 characters. */
  reference: string;
  /** What you pay, in `source_currency` (send this or `payment_amount`): a decimal string with the currency's minor digits. */
  source_amount?: string;
  /** The currency taken from your balance: a three-letter uppercase ISO 4217 code. */
  source_currency: string;
  /** `SWIFT` only: `SHARED` (default; the other banks' charges come out of the amount) or `PAYER` (you pay them, for a fee). */
  swift_charge_option?: SwiftChargeOption;
  /** Where the money comes from, at most 64 characters. */
  fund_source?: string;
  /** Where `payout.completed`, `payout.failed` and `payout.cancelled` are posted: an http or https URL. */
  notify_url?: string;
}

/**
 * The bank details as sent, without `bank_code`, plus `local_clearing_system`; `iban` and
 * `account_number` are masked to their last four (`••••3000`), as card numbers are.
 */
export interface BankDetailsRecord extends Omit<BankDetails, 'bank_code' | 'iban' | 'account_number'> {
  /** The IBAN's last four characters behind `••••`. */
  iban?: string;
  /** The account number's last four characters behind `••••`. */
  account_number?: string;
  /**
   * The clearing system the payout goes through, from the bank's country, the currency and
   * the method: `ACH`, `SEPA`, `FASTER_PAYMENTS`, `BECS`, `EFT`, `ZENGIN`, `FAST`, `FPS`,
   * `NEFT`, `SPEI`, `SIC`, `ELIXIR`, `BANKGIROT`, or `SWIFT`.
   */
  local_clearing_system: string;
}

/** The beneficiary (as sent, or as saved under `beneficiary_id`), with its bank details as recorded. */
export interface BeneficiaryRecord extends Omit<Beneficiary, 'bank_details'> {
  bank_details: BankDetailsRecord;
}

/**
 * The payout record: the request echoed (less `bank_details.bank_code`) and what the
 * gateway made of it; the answer to `createPayout`, the items of `retrievePayouts` and the
 * `data` of payout notifications. Amounts the gateway computed are integers in minor units.
 */
export interface PayoutRecord extends Identity {
  /** Your request_id. */
  request_id: string;
  /** The gateway's id of the payout. */
  transaction_id: string;
  /** A short reference (`P<yymmdd>-<8 characters>`), as bank statements show it. */
  short_reference_id: string;
  status: PayoutStatus;
  failure_type: PayoutFailureType;
  /** Why it failed, in words; empty otherwise. */
  failure_reason: string;
  /** As sent. */
  payment_method: PayoutMethod;
  /** The currency the beneficiary receives. */
  payment_currency: string;
  /** The currency taken from your balance. */
  source_currency: string;
  /** The payment amount, as sent (a decimal string). */
  payment_amount?: string;
  /** The source amount, as sent (a decimal string). */
  source_amount?: string;
  /** What the beneficiary receives in `payment_currency` (less the fee when `fee_paid_by` is `BENEFICIARY`), an integer in minor units. */
  amount_beneficiary_receives: number;
  /** What leaves your balance in `source_currency` for the payment, without the fee, an integer in minor units. */
  amount_payer_pays: number;
  /** The fee, in `fee_currency`, an integer in minor units. */
  fee_amount: number;
  /** The fee's currency: `source_currency`. */
  fee_currency: string;
  fee_paid_by: FeePaidBy;
  /** The applied exchange rate, a decimal string: units of `payment_currency` per unit of `source_currency` (`1` when they are the same). */
  fx_rate: string;
  /** The payment date, `YYYY-MM-DD` (UTC). */
  payment_date: string;
  /**
   * The settlement batches the payout paid, oldest first (debit batches, then credit batches by
   * day): empty until it is funded and again once it failed or was cancelled. Their sum is at most
   * the amount and fee; money no available batch holds yet is named by none.
   */
  settlement_batches: PayoutBatch[];
  /** `SWIFT` payouts only. */
  swift_charge_option?: SwiftChargeOption;
  /** As sent. */
  reason: string;
  /** As sent. */
  reference: string;
  /** The saved beneficiary (`ben_…`): send it instead of `beneficiary` next time. */
  beneficiary_id: string;
  beneficiary: BeneficiaryRecord;
  /** The account that pays (your account_id): the payer of record; `payer` describes it as sent. */
  payer_id: string;
  /** The payer, as sent. */
  payer?: Payer;
  /** Your data, as sent. */
  client_data?: string;
  /** The fund source, as sent. */
  fund_source?: string;
  /** The notification URL, as sent. */
  notify_url?: string;
  /** When it was created, ISO 8601 with a numeric offset (`2025-01-31T12:00:00+00:00`). */
  created_at: string;
  /** When its status last changed, ISO 8601 with a numeric offset. */
  last_updated_at: string;
}

/** The answer to `POST /v1/payout`: the payout record, signed. A repeated `request_id` with the same body answers the same payout. */
export interface PayoutAnswer extends PayoutRecord {
  encryption_data: string;
}

/** Names a payout to cancel: its `request_id` or its `transaction_id` (both: they must name the same payout). */
export type CancelPayoutRequest = { request_id: string; transaction_id?: string } | { request_id?: string; transaction_id: string };

export interface CancelPayoutAnswer extends Identity {
  /** The payout's request_id (as sent, or found). */
  request_id: string;
  /** The payout's transaction_id (as sent, or found). */
  transaction_id: string;
  /** `1` the payout is cancelled (now or already); `0` it was not (see `error_message`). */
  cancel_status: Flag;
  /** The payout's status after the request; empty when not found. */
  status: PayoutStatus | '';
  /** Empty when cancelled; else why not: `0404:Record not found`, or `1012:…` naming the status that can no longer be cancelled. */
  error_message: string;
  encryption_data: string;
}

/** By ids (at most 100 together), or by a range of creation times with `cursor`, 100 per page. */
export interface RetrievalPayoutRequest {
  request_ids?: IdList;
  transaction_ids?: IdList;
  short_reference_ids?: IdList;
  /** The first creation time of the range, `YYYYMMDDhhmmss` (UTC). */
  start_date?: string;
  /** The last creation time of the range, `YYYYMMDDhhmmss` (UTC). */
  end_date?: string;
  /** The `next_cursor` of the previous page, with the same dates. */
  cursor?: string;
}

/** A payout found: its record. */
export type FoundPayout = PayoutRecord & { query_result: '1' };

/** A requested id that names no payout of this account: that id in its own field, the others empty. */
export interface NotFoundPayout {
  query_result: '0';
  /** The requested request_id, or empty. */
  request_id: string;
  /** The requested transaction_id, or empty. */
  transaction_id: string;
  /** The requested short_reference_id, or empty. */
  short_reference_id: string;
}

export interface RetrievalPayoutAnswer extends Processed {
  /**
   * Requested ids in request order (request_ids, then transaction_ids, then
   * short_reference_ids), or up to 100 payouts of the date range; narrow on `query_result`.
   */
  payouts: Array<FoundPayout | NotFoundPayout>;
  /** Present when a date range has more payouts: send it as `cursor`. */
  next_cursor?: string;
}

// ---------- POST /v1/retrievalDispute, /v1/disputeEvidence, /v1/acceptDispute (disputes) ----------
// Mirrors src/disputes/schema.ts (src/disputes/client.test.ts checks the request types against it).

/**
 * `warning_needs_response` (an inquiry: no money moved yet) or `needs_response` (a
 * chargeback: the amount and the fee have left the balance): answer by `evidence_due_by`;
 * `under_review`: evidence submitted; `won` (the amount comes back), `lost` or `accepted`: closed.
 */
export type DisputeStatus = 'warning_needs_response' | 'needs_response' | 'under_review' | 'won' | 'lost' | 'accepted';

/** Evidence text fields (each at most 20,000 characters). */
export type DisputeEvidenceTextField =
  | 'uncategorized_text'
  | 'product_description'
  | 'customer_communication'
  | 'customer_name'
  | 'customer_email_address'
  | 'customer_purchase_ip'
  | 'billing_address'
  | 'shipping_address'
  | 'shipping_carrier'
  | 'shipping_date'
  | 'shipping_tracking_number'
  | 'service_date'
  | 'access_activity_log'
  | 'cancellation_policy_disclosure'
  | 'cancellation_rebuttal'
  | 'refund_policy_disclosure'
  | 'refund_refusal_explanation'
  | 'duplicate_charge_explanation'
  | 'duplicate_charge_id';

/** What an evidence file shows. */
export type DisputeEvidenceFileField =
  | 'receipt'
  | 'customer_communication'
  | 'customer_signature'
  | 'shipping_documentation'
  | 'service_documentation'
  | 'cancellation_policy'
  | 'refund_policy'
  | 'duplicate_charge_documentation'
  | 'uncategorized_file';

/** Settlement batches of a range of UTC days (`YYYYMMDD`, inclusive, at most 100 days). */
export interface RetrieveSettlementRequest {
  start_date: string;
  end_date: string;
  /** Only this currency's batches. */
  currency?: string;
  /** `json` (default): batches with their `items`; `csv`: the lines as CSV text in `csv`. */
  format?: 'json' | 'csv';
}

/** One balance movement of a batch: amounts in the currency's decimal form and in minor units. */
export interface SettlementLine {
  /** `capture` (with its fee), `refund`, `dispute` (with its fee), `dispute_won`, `payout_reserve`, `payout_release`, `transfer`, `top_up`, … */
  kind: string;
  transaction_id: string;
  order_no: string;
  /** The refund, payout, transfer or dispute it belongs to, or empty. */
  reference: string;
  created_at: string;
  gross: string;
  fee: string;
  net: string;
  gross_minor: number;
  fee_minor: number;
  net_minor: number;
}

/** A day's batch of one currency. */
export interface SettlementBatch {
  batch_id: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  currency: string;
  /** `pending` until its pending part becomes available at `available_at`. */
  status: 'pending' | 'available';
  lines: number;
  gross: string;
  fee: string;
  net: string;
  gross_minor: number;
  fee_minor: number;
  net_minor: number;
  pending: string;
  pending_minor: number;
  delay_days: number;
  closed_at: string;
  available_at: string;
  settled_at: string;
  /** Its lines (format `json`). */
  items?: SettlementLine[];
}

export interface RetrieveSettlementAnswer extends Processed {
  format: 'json' | 'csv';
  batches: SettlementBatch[];
  /** Format `csv`: the lines as CSV (docs/finance.md). */
  csv?: string;
}

/** By ids (at most 100 together), or by `start_date`/`end_date` (`YYYYMMDDhhmmss`, UTC, over the dispute's creation) with `cursor`. */
export interface RetrieveDisputesRequest {
  dispute_ids?: IdList;
  transaction_ids?: IdList;
  order_nos?: IdList;
  start_date?: string;
  end_date?: string;
  cursor?: string;
}

/** One piece of evidence given (never its content). */
export interface DisputeEvidenceEntry {
  field: string;
  type: 'text' | 'file';
  /** `text`, `application/pdf`, `image/png` or `image/jpeg` (read from the file's content). */
  content_type: string;
  /** Empty for text. */
  file_name: string;
  /** Bytes. */
  size: number;
}

/** A dispute: the `/v1/retrievalDispute` item, the evidence and accept answers, and the `data` of dispute notifications. */
export interface DisputeRecord {
  /** `dp_…` */
  dispute_id: string;
  transaction_id: string;
  order_no: string;
  amount: string;
  currency: string;
  /** The dispute fee charged to the account (not given back when won). */
  fee: string;
  /** `fraudulent`, `product_not_received`, `duplicate`, `general`, … */
  reason: string;
  kind: 'chargeback' | 'inquiry';
  status: DisputeStatus;
  /** ISO 8601, UTC. */
  evidence_due_by: string;
  /** ISO 8601, or empty before evidence is submitted. */
  evidence_submitted_at: string;
  evidence: DisputeEvidenceEntry[];
  /** Why the processor refused your last answer (evidence: the dispute is back with you; or the acceptance); empty when it took it or none was sent. */
  response_error: string;
  created_at: string;
  /** ISO 8601, or empty while open. */
  closed_at: string;
}

export interface FoundDispute extends DisputeRecord {
  query_result: '1';
}

/** A requested id that matches no dispute of the account: that id in its own field, every other field empty. */
export interface NotFoundDispute extends Omit<DisputeRecord, 'kind' | 'status'> {
  kind: '';
  status: '';
  query_result: '0';
}

export interface RetrieveDisputesAnswer extends Processed {
  /** The matching disputes, oldest first, then one `query_result` `0` item per requested id that matches none. */
  disputes: Array<FoundDispute | NotFoundDispute>;
  /** Present when a date range has more disputes: send it as `cursor`. */
  next_cursor?: string;
}

export interface DisputeEvidenceFile {
  field: DisputeEvidenceFileField;
  file_name: string;
  /** The file's bytes in standard base64: a PDF, PNG or JPEG by its content. */
  content_base64: string;
}

/**
 * Evidence for a dispute that asks for a response: text fields and files (at most 5 MB in
 * all per dispute); `submit` `1` sends it all to the processor (`under_review`).
 */
export type DisputeEvidenceRequest = {
  dispute_id: string;
  files?: DisputeEvidenceFile[];
  submit?: Flag;
} & { [K in DisputeEvidenceTextField]?: string };

export interface AcceptDisputeRequest {
  dispute_id: string;
}

/** The dispute as it is after the request. */
export interface DisputeAnswer extends Processed, DisputeRecord {}

// ---------- refusals and notifications ----------

/** A request refused as a whole (HTTP 4xx/5xx). Unsigned: see errors.ts. */
export interface RefusalAnswer extends Identity {
  return_status: '0';
  /** `<code>:<text>`, e.g. `0400:Invalid input` */
  return_message: string;
  /** The field and the problem. */
  error_message: string;
  /** The field named, in the interface's notation (`capture_orders[0].amount`), or empty. */
  error_field: string;
  request_id: string;
  /**
   * Test accounts only, on a 0401 whose signature differs: the canonical string the gateway
   * computed from the body (card numbers masked), to compare with the one that was signed.
   */
  canonical_string?: string;
}

export type PaymentEventType =
  | 'payment.succeeded'
  | 'payment.failed'
  | 'payment.pending'
  | 'payment.held'
  | 'payment.expired'
  | 'payment.captured'
  | 'payment.cancelled'
  /** A subscription deduction was paid; `data` is the deduction's order record. */
  | 'subscription.charged'
  /** A deduction declined (retried after 1, 3 and 5 days); `data` is the deduction's order record. */
  | 'subscription.failed'
  /** The subscription ended: cancelled, or its last retry failed (`subscription_result.end_reason` says which). */
  | 'subscription.cancelled';
export type RefundEventType = 'refund.succeeded' | 'refund.failed';
/** A payout's outcome, sent to the payout's `notify_url`; `data` is the payout record. */
export type PayoutEventType = 'payout.completed' | 'payout.failed' | 'payout.cancelled';

export type DisputeEventType = 'dispute.created' | 'dispute.updated' | 'dispute.closed';

interface EventBase {
  /** Also the `webhook-id` header; the same on every retry: deduplicate by it. */
  event_id: string;
  /** ISO 8601 */
  created_at: string;
  encryption_data: string;
}

export interface PaymentEvent extends EventBase {
  event_type: PaymentEventType;
  data: OrderRecord;
}

export interface RefundEvent extends EventBase {
  event_type: RefundEventType;
  data: RefundRecord;
}

export interface PayoutEvent extends EventBase {
  event_type: PayoutEventType;
  data: PayoutRecord;
}

export interface DisputeEvent extends EventBase {
  event_type: DisputeEventType;
  data: DisputeRecord;
}

/** A notification posted to `notify_url`; narrow on `event_type`. */
export type NotificationEvent = PaymentEvent | RefundEvent | PayoutEvent | DisputeEvent;

/** What the shopper carries back to `return_url` (or `cancel_url`) after a 3-D Secure challenge, an issuer page or the hosted checkout. */
export interface ThreeDSReturn extends Identity {
  order_no: string;
  transaction_id: string;
  order_status: OrderStatus;
  result_info: string;
  threeds_result: ThreeDSResult;
  encryption_data: string;
}
