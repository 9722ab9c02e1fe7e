// What the generic interface publishes in `/openapi.json` (issue 13 part 6): its tags, the
// Bearer security scheme, and the answers of its routes, from the same TypeBox schemas the
// routes validate with.
import { type TSchema, Type } from 'typebox';

export const PAYMENTS_TAG = 'generic: payments';
export const CONNECT_TAG = 'generic: connect';
export const CUSTOMERS_TAG = 'generic: customers';
export const WEBHOOKS_TAG = 'generic: webhooks';

export const GENERIC_TAGS = [
  {
    name: PAYMENTS_TAG,
    description:
      'The generic interface (Bearer key): card payments and refunds in the widely used card-platform shape. The same payments as the acquiring interface: same processor, risk rules, 3-D Secure, ledger and events.',
  },
  {
    name: CONNECT_TAG,
    description:
      'The generic interface (Bearer key): connected accounts of your platform account, transfers of available balance to them, and their reversals.',
  },
  {
    name: CUSTOMERS_TAG,
    description: 'The generic interface (Bearer key): customers of your account, in the platform family’s shape.',
  },
  {
    name: WEBHOOKS_TAG,
    description:
      'The generic interface (Bearer key): webhook endpoints and the events sent to them, in the platform family’s shape, signed with `Stripe-Signature` so the family’s own libraries verify them.',
  },
];

export const BEARER_SCHEME = {
  type: 'http' as const,
  scheme: 'bearer',
  description:
    '`Authorization: Bearer sk_test_…` (a test account) or `sk_live_…` (a live account): keys from `npx tollgate apikey create --account ID`, shown once; Basic with the key as the user name works too (`curl -u sk_test_…:`). A key sees only its own account’s objects of its own mode.',
};

const ErrorObject = Type.Object(
  {
    error: Type.Object({
      type: Type.String({ enum: ['invalid_request_error', 'card_error', 'idempotency_error', 'api_error'] }),
      code: Type.Optional(
        Type.String({ description: 'a short machine-readable reason: parameter_missing, parameter_unknown, resource_missing, card_declined, …' }),
      ),
      message: Type.String({ description: 'what is wrong, for a person' }),
      param: Type.Optional(Type.String({ description: 'the parameter at fault, in bracket notation (`payment_method[card][number]`)' })),
      decline_code: Type.Optional(Type.String({ description: 'card errors: the issuer’s reason (insufficient_funds, lost_card, …)' })),
      payment: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'card errors: the declined payment' })),
    }),
  },
  { description: 'A refused request.' },
);

const MEANING: Record<number, string> = {
  400: 'A parameter is missing, unknown or invalid (`error.param` names it), the operation is not possible in the object’s state, or the `Idempotency-Key` was used with other parameters (`error.type` `idempotency_error`). Nothing was done.',
  401: 'No API key, a malformed one, an unknown or a revoked one.',
  402: 'The card was declined (`error.type` `card_error`, `error.decline_code`); the declined payment is in `error.payment`.',
  403: 'Reading data back (every GET) answers only addresses on the account’s IP allow-list (`npx tollgate ip add`), or no processor takes the payment; the message says which. Nothing was done.',
  404: 'No such object for this key (another account’s or the other mode’s objects are not found either).',
  409: '`idempotency_key_in_use`: the first request under this `Idempotency-Key` is still running; retry later.',
  429: 'Too many requests with this key; see `Retry-After`.',
  503: '`api_error`: the database or storage is unavailable, or the gateway is overloaded (the message says which); nothing was done. Retry after `Retry-After` seconds with the same `Idempotency-Key`.',
};

export function objectAnswers(schema: TSchema, description: string): Record<string, unknown> {
  return { 200: { description, content: { 'application/json': { schema } } } };
}

export function errorAnswers(statuses: number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Every route can meet a database fault or load shedding (issue 17).
  for (const s of [...statuses, 503]) out[s] = { description: MEANING[s] ?? 'Refused.', content: { 'application/json': { schema: ErrorObject } } };
  return out;
}
