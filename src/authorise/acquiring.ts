// The acquiring interface's card payment (`POST /v1/authorise`, docs/interface.md "Create a direct
// payment"): its wire body mapped to the core's command (command.ts), and the checks of that
// body a schema cannot express. A hosted checkout's stored request has the same shape, so its
// card payment takes its terms from here too.
import { fourDigitYear } from '../cards/card.js';
import type { Keyring } from '../crypto/keyring.js';
import { canonicalString } from '../crypto/signature.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import * as v from '../payments/validate.js';
import { subscriptionTermsOf } from '../subscriptions/service.js';
import { parseMpiInfo, type ThreedsRequest } from '../threeds/mpi.js';
import { invalid } from '../web/errors.js';
import { type CardPaymentCommand, type CardSource, KEPT_FIELDS, type KeptField } from './command.js';

/** The checks of every payment request a schema cannot express; the amount in minor units. */
export function validateBody(body: AuthoriseDirect): number {
  v.requireCurrency('currency', body.currency);
  const amount_minor = v.amountField('amount', body.amount, body.currency);
  if (amount_minor <= 0) throw invalid('amount', 'must be greater than zero');
  v.checkComponents(body as Record<string, unknown>, amount_minor, body.currency);
  v.checkIp('shopper_ip', body.shopper_ip);
  body.account_owner?.forEach((o, i) => {
    v.checkIp(`account_owner[${i}].lastLogin_ip`, o.lastLogin_ip);
    v.checkIp(`account_owner[${i}].registration_ip`, o.registration_ip);
  });
  v.checkCountry('billing_country', body.billing_country);
  v.checkCountry('delivery_country', body.delivery_country);
  v.checkItems(body.items);
  v.checkTimeZone(body.time_zone);
  v.checkBirthDate(body.birth_date);
  body.cart_items?.forEach((c, i) => {
    const cur = c.basic_item_data.price?.currency;
    if (cur) v.requireCurrency(`cart_items[${i}].basic_item_data.price.currency`, cur);
  });
  if (body.subscription?.contract_amount !== undefined) v.amountField('subscription.contract_amount', body.subscription.contract_amount, body.currency);
  return amount_minor;
}

/**
 * The keyed fingerprint of a body, which a replay of its order_no is compared with. Stored
 * hashes were computed from this canonical string: it must never change.
 */
export function requestHash(keyring: Keyring, body: Record<string, unknown>): string {
  return keyring.fingerprint(canonicalString(body));
}

/** `POST /v1/authorise` with a card or a token: the body checked (400 naming the field), as a command. */
export function cardCommandOf(body: AuthoriseDirect, keyring: Keyring): CardPaymentCommand {
  const amount_minor = validateBody(body);
  return {
    ...paymentTermsOf(body),
    order_no: body.order_no,
    amount_minor,
    card: cardSourceOf(body),
    request_hash: requestHash(keyring, body as Record<string, unknown>),
  };
}

/** What an acquiring-shaped request (a direct body, a checkout session's request) says of a card payment besides its card and amount. */
export function paymentTermsOf(body: AuthoriseDirect): Omit<CardPaymentCommand, 'order_no' | 'amount_minor' | 'card' | 'request_hash'> {
  const kept: Partial<Record<KeptField, unknown>> = {};
  for (const k of KEPT_FIELDS) if (body[k] !== undefined) kept[k] = body[k];
  return {
    currency: body.currency,
    capture_method: body.capture_method === 'manual' || body.capture_method === 'automatic' ? body.capture_method : null,
    threeds: { request: threedsRequestOf(body.open3d), mpi: (brand) => parseMpiInfo(body.additional_information, brand) },
    keep_token: body.token_flag === '1',
    shopper: {
      shopper_email: body.shopper_email,
      shopper_ip: body.shopper_ip,
      device_fingerprint: body.device_fingerprint,
      billing_country: body.billing_country,
    },
    notify_url: body.notify_url,
    return_url: body.return_url,
    subscription: subscriptionOf(body),
    kept,
  };
}

/** `open3d`: 1 always authenticates, 0 never, anything else when risk says so. */
function threedsRequestOf(open3d: string | undefined): ThreedsRequest {
  return open3d === '1' ? 'always' : open3d === '0' ? 'never' : 'on_risk';
}

/** The card fields, or a token_id from an earlier payment; a refusal is kept for where the card is resolved (command.ts). */
function cardSourceOf(body: AuthoriseDirect): CardSource {
  if (body.token_id) {
    if (body.card) return { kind: 'refused', error: invalid('token_id', 'cannot be sent together with card; send one of them') };
    return { kind: 'token', token_id: body.token_id };
  }
  for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code'] as const) {
    if (!body[f]) return { kind: 'refused', error: invalid(f, 'is required (or send a token_id from an earlier payment)') };
  }
  return {
    kind: 'card',
    pan: body.card as string,
    exp_month: Number(body.expiration_month),
    exp_year: fourDigitYear(body.expiration_year as string),
    security_code: body.security_code,
  };
}

/** The request's subscription object, read (and refused, naming its field) when the payment gets to it. */
function subscriptionOf(body: AuthoriseDirect): CardPaymentCommand['subscription'] {
  const sub = body.subscription;
  return sub ? (first_payment_ms) => subscriptionTermsOf(sub, body.currency, first_payment_ms) : null;
}
