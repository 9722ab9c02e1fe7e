// The alternative-payment-method half of the connector interface: the shape of one
// catalogue row, which a connector declares as data (docs/contract.md §15: "data, not code
// paths"). The sandbox's rows are in sandbox/apm.ts; a real APM provider becomes a new
// connector with its own rows, and the gateway's catalogue (src/methods/catalogue.ts) lists them.

/** What the shopper does on the issuer page. */
export type ApmFlow =
  /** A page with approve and decline (Pix, iDEAL). */
  | 'approve_decline'
  /** A payment slip, paid later; the page has a "pay" control (Boleto). */
  | 'slip';

/** How one required field is checked (src/apm/fields.ts applies the rule). */
export type FieldRule =
  | { kind: 'text'; max_length: number }
  | { kind: 'email' }
  /** A Brazilian taxpayer id: CPF (people) or CNPJ (companies), check digits verified. */
  | { kind: 'br_document' }
  /** A Brazilian postal code (CEP): 8 digits, `01310-100` or `01310100`. */
  | { kind: 'br_postal_code' }
  /** A Brazilian state (UF): one of the 26 states or DF, two uppercase letters. */
  | { kind: 'br_state' }
  /** A two-letter country code that must be this one. */
  | { kind: 'country'; equals: string }
  /** One of a published list of codes (iDEAL banks). */
  | { kind: 'one_of'; values: readonly string[]; list_name: string };

export interface RequiredField {
  /** The field's path in the request: `bank_code`, `person.document_number`. */
  path: string;
  rule: FieldRule;
}

/** One alternative payment method as a connector serves it. */
export interface ApmMethod {
  /** The request's `payment_method` value. */
  payment_method: string;
  /** Its name on shopper pages. */
  label: string;
  /** ISO 4217 codes the method takes. */
  currencies: readonly string[];
  /** ISO 3166-1 codes of the billing countries it serves. */
  countries: readonly string[];
  /** Fields it needs besides those of every payment, in the order they are checked. */
  required: readonly RequiredField[];
  flow: ApmFlow;
  /** How long an unpaid payment waits for the shopper before it expires (`7000`). */
  expiry_ms: number;
}
