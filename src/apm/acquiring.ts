// The acquiring interface's alternative-method payment (`POST /v1/authorise` with
// `payment_method`, docs/contract.md §15): its wire body mapped to the core's command
// (command.ts), with the checks a schema cannot express in the order they always ran. A
// hosted checkout's stored request has the same shape, so its method form takes its terms
// from here too.

import { requestHash, validateBody } from '../authorise/acquiring.js';
import { notFound } from '../core/outcomes.js';
import type { Keyring } from '../crypto/keyring.js';
import { type ApmMethod, apmMethod } from '../methods/catalogue.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { invalid } from '../web/errors.js';
import type { ApmKeptField, ApmPaymentCommand } from './command.js';
import { KEPT_FIELDS } from './command.js';
import { checkApmFields } from './fields.js';

/** Card fields an APM payment must not carry (the shopper pays at the issuer). */
const CARD_ONLY = ['card', 'expiration_month', 'expiration_year', 'security_code', 'token_id'] as const;

/** Where the method's fields are read: the acquiring body, or the checkout page's method form. */
type FieldSource = Record<string, unknown>;

type Terms = Omit<ApmPaymentCommand, 'order_no' | 'amount_minor' | 'request_hash'>;

/** `POST /v1/authorise` with `payment_method`: the body checked (400 naming the field, 404 for a method outside the catalogue), as a command. */
export function apmCommandOf(body: AuthoriseDirect, keyring: Keyring): ApmPaymentCommand {
  const amount_minor = checkRequest(body);
  const method = catalogueMethod(body.payment_method as string);
  return {
    ...apmTermsOf(body, method, body as FieldSource),
    order_no: body.order_no,
    amount_minor,
    request_hash: requestHash(keyring, body as Record<string, unknown>),
  };
}

/**
 * What an acquiring-shaped request says of an APM payment besides its order_no, amount and
 * fingerprint: `request` the checked request, `fields` where the method's fields are read
 * (the request itself, or a checkout's method form, as `checkoutApmTermsOf` gives them).
 */
function apmTermsOf(request: AuthoriseDirect, method: ApmMethod, fields: FieldSource): Terms {
  const kept: Partial<Record<ApmKeptField, unknown>> = {};
  for (const k of KEPT_FIELDS) if (request[k] !== undefined) kept[k] = request[k];
  const problem = checkApmFields(method, fields);
  const noReturn = request.return_url
    ? null
    : invalid('return_url', `is required for ${method.payment_method}: the shopper returns there from the issuer's page`);
  const bank_code = fields.bank_code;
  return {
    currency: request.currency,
    method,
    billing_country: request.billing_country ?? '',
    fields: methodFields(method, fields),
    refused: problem ?? noReturn,
    ...(typeof bank_code === 'string' ? { bank_code } : {}),
    capture_method: request.capture_method === 'manual' || request.capture_method === 'automatic' ? request.capture_method : null,
    notify_url: request.notify_url,
    return_url: request.return_url,
    kept,
  };
}

/** The method form of a hosted checkout page: the method, and the fields it asked the shopper for (blank ones left out). */
export interface ApmFormChoice {
  payment_method: string;
  person?: Record<string, string>;
  bank_code?: string;
}

/**
 * A hosted checkout's stored request with the shopper's method form: the same checks as a
 * direct APM payment (the stored request's card-only fields and subscription refuse it),
 * the method's fields read from the form (a checkout request carries neither `person` nor
 * `bank_code`). The order_no, amount and fingerprint are the session's payment's.
 */
export function checkoutApmTermsOf(stored: AuthoriseDirect, choice: ApmFormChoice): Terms {
  checkRequest(stored);
  const method = catalogueMethod(choice.payment_method);
  const fields: FieldSource = {};
  if (choice.person && Object.keys(choice.person).length > 0) fields.person = choice.person;
  if (choice.bank_code) fields.bank_code = choice.bank_code;
  return apmTermsOf(stored, method, fields);
}

/** The checks of an APM request after its schema and before its method; its amount in minor units. */
function checkRequest(request: AuthoriseDirect): number {
  for (const f of CARD_ONLY)
    if (request[f] !== undefined && request[f] !== '') throw invalid(f, 'is not sent with payment_method: the shopper pays at the issuer');
  // docs/contract.md §16: deductions charge a stored card; an alternative method leaves none.
  if (request.subscription !== undefined) throw invalid('subscription', 'needs a card payment: later deductions charge the stored card');
  return validateBody(request);
}

/** The method of the catalogue (404 naming payment_method when there is none); whether the account offers it is the service's check. */
function catalogueMethod(payment_method: string): ApmMethod {
  const method = apmMethod(payment_method);
  if (!method) throw notFound('payment_method', `payment_method "${payment_method}" is not a payment method of the catalogue`);
  return method;
}

/** The method's required fields as flat `path → value` strings for the connector. */
function methodFields(method: ApmMethod, source: FieldSource): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { path } of method.required) {
    let here: unknown = source;
    for (const part of path.split('.')) here = here && typeof here === 'object' ? (here as Record<string, unknown>)[part] : undefined;
    if (typeof here === 'string') out[path] = here;
  }
  return out;
}
