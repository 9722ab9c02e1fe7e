// `/v1/payment_methods` of the generic interface (docs/contract.md §24; issue 33): a card put
// into the vault (number encrypted under the master keyring, security code checked for form
// and never kept) as the platform family's PaymentMethod; retrieve, update, attach to and
// detach from a customer, list a customer's. The family's documented test PaymentMethods
// (`pm_card_visa`, `pm_card_chargeDeclined`, …) name sandbox cards on a test key: naming one
// where the family makes one (attach, a PaymentIntent's payment_method) makes a new
// PaymentMethod of that card; a retrieve, update or detach of one is `resource_missing`.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { KeyCaller } from '../apikeys/service.js';
import { cardFacts, isExpired } from '../cards/card.js';
import { newId } from '../crypto/ids.js';
import type { PaymentMethodRow } from '../db/tables/payment-methods.js';
import type { CardRow } from '../db/tables/payments.js';
import { TEST_PAYMENT_METHODS } from '../processors/sandbox/cards.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { customerObject, findCustomer } from './customers.js';
import { CUSTOMERS_TAG, errorAnswers, objectAnswers } from './docs.js';
import {
  Expand,
  type ExpandersOf,
  expanded,
  GenericError,
  IdParams,
  ListEnvelope,
  type ListQuery,
  listObject,
  listPage,
  listParams,
  Metadata,
  type MetadataInput,
  mergeMetadata,
  newMetadata,
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from './wire.js';

// ---- parameters -------------------------------------------------------------------------

const Address = Type.Object(
  {
    line1: Type.Optional(Type.String({ maxLength: 200 })),
    line2: Type.Optional(Type.String({ maxLength: 200 })),
    city: Type.Optional(Type.String({ maxLength: 100 })),
    state: Type.Optional(Type.String({ maxLength: 100 })),
    postal_code: Type.Optional(Type.String({ maxLength: 20 })),
    country: Type.Optional(Type.String({ pattern: '^$|^[A-Za-z]{2}$', description: 'a two-letter ISO 3166-1 country code' })),
  },
  { additionalProperties: false },
);
export const BillingDetails = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 256 })),
    email: Type.Optional(Type.String({ maxLength: 512, pattern: '^$|^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' })),
    phone: Type.Optional(Type.String({ maxLength: 40 })),
    address: Type.Optional(Address),
  },
  { additionalProperties: false, description: 'the cardholder as the merchant knows them' },
);
export const CardInput = Type.Object(
  {
    number: Type.String({ pattern: '^\\d{12,19}$', description: '12 to 19 digits' }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2199, description: 'four digits' }),
    cvc: Type.Optional(Type.String({ pattern: '^\\d{3,4}$', description: '3 or 4 digits, checked for form and never kept' })),
  },
  { additionalProperties: false },
);
const CreatePaymentMethod = Type.Object(
  {
    type: Type.Literal('card', { description: 'card (the one type offered)' }),
    card: CardInput,
    billing_details: Type.Optional(BillingDetails),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreatePaymentMethod = Static<typeof CreatePaymentMethod>;
const UpdatePaymentMethod = Type.Object(
  {
    billing_details: Type.Optional(BillingDetails),
    card: Type.Optional(
      Type.Object(
        { exp_month: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })), exp_year: Type.Optional(Type.Integer({ minimum: 2000, maximum: 2199 })) },
        { additionalProperties: false },
      ),
    ),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type UpdatePaymentMethod = Static<typeof UpdatePaymentMethod>;
const Attach = Type.Object({ customer: Type.String({ maxLength: 80, description: 'the customer (cus_…)' }), expand: Expand }, { additionalProperties: false });
const Detach = Type.Object({ expand: Expand }, { additionalProperties: false });
const ListPaymentMethods = Type.Object(
  {
    ...listParams,
    customer: Type.Optional(Type.String({ maxLength: 80, description: 'only this customer’s (cus_…)' })),
    type: Type.Optional(Type.Literal('card')),
  },
  { additionalProperties: false },
);

const PaymentMethodObject = Type.Object(
  {
    id: Type.String({ description: 'pm_…' }),
    object: Type.Literal('payment_method'),
    type: Type.Literal('card'),
    card: Type.Object({}, { description: 'brand, last4, exp_month, exp_year, fingerprint, funding, checks; never the number' }),
    billing_details: Type.Object({}),
    customer: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    livemode: Type.Boolean(),
    created: Type.Integer({ description: 'Unix seconds' }),
  },
  { description: 'A card kept in the vault.' },
);

// ---- the object -------------------------------------------------------------------------

/** card-validator's brand names → the family's. */
const BRAND: Readonly<Record<string, string>> = {
  visa: 'visa',
  mastercard: 'mastercard',
  'american-express': 'amex',
  discover: 'discover',
  jcb: 'jcb',
  'diners-club': 'diners',
  unionpay: 'unionpay',
};

const addressOf = (a: Record<string, unknown> | undefined) => ({
  city: (a?.city as string) || null,
  country: (a?.country as string)?.toUpperCase() || null,
  line1: (a?.line1 as string) || null,
  line2: (a?.line2 as string) || null,
  postal_code: (a?.postal_code as string) || null,
  state: (a?.state as string) || null,
});

/** The wire object: the card by brand, last four and expiry only; its fingerprint one-way and per account. */
export function paymentMethodObject(row: PaymentMethodRow, card: CardRow): Record<string, unknown> {
  const billing = JSON.parse(row.billing_details || '{}') as Record<string, unknown>;
  const brand = BRAND[card.brand] ?? 'unknown';
  return {
    id: row.id,
    object: 'payment_method',
    allow_redisplay: 'unspecified',
    billing_details: {
      address: addressOf(billing.address as Record<string, unknown> | undefined),
      email: (billing.email as string) || null,
      name: (billing.name as string) || null,
      phone: (billing.phone as string) || null,
      tax_id: null,
    },
    card: {
      brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: 'unchecked' },
      country: null,
      display_brand: brand,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      fingerprint: createHash('sha256').update(`${row.account_id}:${card.fingerprint}`).digest('base64url').slice(0, 16),
      funding: 'unknown',
      generated_from: null,
      last4: card.last4,
      networks: { available: [brand], preferred: null },
      regulated_status: null,
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: unixSeconds(row.created_at),
    customer: row.customer_id || null,
    customer_account: null,
    livemode: row.livemode === 1,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    type: 'card',
  };
}

// ---- the vault --------------------------------------------------------------------------

/** The family's card errors for a card that cannot be kept: 402 `card_error` naming the field. */
const cardError = (code: string, param: string, message: string) => new GenericError(402, { type: 'card_error', code, param, message });

type VaultExtra = { billing_details?: unknown; metadata?: MetadataInput };

/** A new PaymentMethod of `card`, vaulted: the number encrypted, the security code only checked for its length. */
export async function vault(deps: Deps, caller: KeyCaller, card: Static<typeof CardInput>, extra: VaultExtra) {
  const made = vaultRows(deps, caller, card, extra);
  await deps.store.transaction(async (tx) => {
    await tx.insertInto('cards').values(made.card).execute();
    await tx.insertInto('payment_methods').values(made.row).execute();
  });
  return made;
}

/**
 * The rows of a new PaymentMethod of `card` (the card checked: number, expiry, security code's
 * length; 402 naming the field), not written: `vault` writes them, and a PaymentIntent's confirm
 * writes them with its payment (src/generic/payment-intents.ts).
 */
export function vaultRows(deps: Deps, caller: KeyCaller, card: Static<typeof CardInput>, extra: VaultExtra): { row: PaymentMethodRow; card: CardRow } {
  const facts = cardFacts(card.number);
  if (!facts.valid) throw cardError('incorrect_number', 'card[number]', 'Your card number is incorrect.');
  const now = deps.now();
  if (isExpired(card.exp_month, card.exp_year, now)) throw cardError('invalid_expiry_year', 'card[exp_year]', 'Your card’s expiration year is in the past.');
  if (card.cvc !== undefined && card.cvc.length !== facts.security_code_length)
    throw cardError('invalid_cvc', 'card[cvc]', `Your card’s security code is ${facts.security_code_length} digits.`);
  const { keyring } = deps;
  const cardRow: CardRow = {
    card_id: newId('stored_card', now),
    account_id: caller.creds.account.account_id,
    token_hash: null,
    pan_enc: keyring.encrypt(card.number),
    key_id: keyring.active.id,
    fingerprint: keyring.fingerprint(card.number),
    brand: facts.brand,
    bin: card.number.slice(0, 6),
    last4: card.number.slice(-4),
    exp_month: card.exp_month,
    exp_year: card.exp_year,
    created_at: now,
  };
  const row: PaymentMethodRow = {
    id: newId('payment_method', now),
    account_id: caller.creds.account.account_id,
    livemode: caller.livemode ? 1 : 0,
    card_id: cardRow.card_id,
    customer_id: '',
    detached: 0,
    billing_details: JSON.stringify(extra.billing_details ?? {}),
    metadata: JSON.stringify(newMetadata(extra.metadata)),
    created_at: now,
    updated_at: now,
  };
  return { row, card: cardRow };
}

/** The card number of the family's test PaymentMethod `id` on a test key (undefined: not one, or a live key). */
export function testCardOf(caller: KeyCaller, id: string): string | undefined {
  // Own keys only: an id such as `constructor` or `__proto__` is no test PaymentMethod (the fuzz found one read off the prototype).
  return !caller.livemode && Object.hasOwn(TEST_PAYMENT_METHODS, id) ? TEST_PAYMENT_METHODS[id] : undefined;
}

/** A test PaymentMethod's card as the vault takes it: expiring in December three years on, no security code. */
export function testCardInput(deps: Deps, number: string): Static<typeof CardInput> {
  return { number, exp_month: 12, exp_year: new Date(deps.now()).getUTCFullYear() + 3 };
}

/**
 * The PaymentMethod `id` names for this caller: its own, or (`opts.test`, on a test key) a new one
 * of the family's test PaymentMethod of that name. Not found: `resource_missing` on `param`.
 */
export async function resolvePaymentMethod(
  deps: Deps,
  caller: KeyCaller,
  id: string,
  param = 'id',
  opts: { test?: boolean } = {},
): Promise<{ row: PaymentMethodRow; card: CardRow }> {
  // Only where the family makes one of a test name (attach, a payment's payment_method): a retrieve,
  // update or detach names an existing PaymentMethod, and a read never writes.
  const test = opts.test ? testCardOf(caller, id) : undefined;
  if (test !== undefined) return vault(deps, caller, testCardInput(deps, test), {});
  const row = await deps.store.db
    .selectFrom('payment_methods')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', caller.creds.account.account_id)
    .where('livemode', '=', caller.livemode ? 1 : 0)
    .executeTakeFirst();
  if (!row) throw noSuch('PaymentMethod', id, param);
  const card = await deps.store.db.selectFrom('cards').selectAll().where('card_id', '=', row.card_id).executeTakeFirstOrThrow();
  return { row, card };
}

// ---- handlers ---------------------------------------------------------------------------

/** `expand[]` on PaymentMethods: `customer` (docs/contract.md §24). */
function pmExpanders(deps: Deps, request: FastifyRequest): ExpandersOf<'payment_method'> {
  const caller = callerOf(request);
  return {
    customer: async (id) => {
      const row = await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, id);
      return row ? customerObject(row) : undefined;
    },
  };
}

/** A PaymentMethod answered, `expand[]` applied. */
async function sendPaymentMethod(deps: Deps, request: FastifyRequest, reply: FastifyReply, value: Record<string, unknown>) {
  return sendObject(request, reply, await expanded(request, value, pmExpanders(deps, request)));
}

type IdRequest<B = unknown> = FastifyRequest<{ Params: { id: string }; Body: B }>;

async function createPaymentMethod(deps: Deps, request: FastifyRequest<{ Body: CreatePaymentMethod }>, reply: FastifyReply) {
  const b = request.body;
  const made = await vault(deps, callerOf(request), b.card, { billing_details: b.billing_details, metadata: b.metadata as MetadataInput | undefined });
  return sendPaymentMethod(deps, request, reply, paymentMethodObject(made.row, made.card));
}

async function retrievePaymentMethod(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const pm = await resolvePaymentMethod(deps, callerOf(request), request.params.id);
  return sendPaymentMethod(deps, request, reply, paymentMethodObject(pm.row, pm.card));
}

/**
 * One compare-and-set on the PaymentMethod (its `updated_at` as read), with the card's new
 * expiry if any, in one transaction: two updates never lose each other's change.
 */
async function changePaymentMethod(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  pm: { row: PaymentMethodRow; card: CardRow },
  patch: Partial<PaymentMethodRow>,
  expiry?: { exp_month: number; exp_year: number },
) {
  const set = { ...patch, updated_at: Math.max(deps.now(), Number(pm.row.updated_at) + 1) };
  const moved = await deps.store.transaction(async (tx) => {
    const r = await tx.updateTable('payment_methods').set(set).where('id', '=', pm.row.id).where('updated_at', '=', pm.row.updated_at).executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    if (expiry) await tx.updateTable('cards').set(expiry).where('card_id', '=', pm.card.card_id).execute();
    return true;
  });
  if (!moved)
    throw new GenericError(409, {
      type: 'invalid_request_error',
      code: 'lock_timeout',
      message: 'The PaymentMethod changed while this request ran; retry it.',
    });
  return sendPaymentMethod(deps, request, reply, paymentMethodObject({ ...pm.row, ...set }, { ...pm.card, ...(expiry ?? {}) }));
}

async function updatePaymentMethod(deps: Deps, request: IdRequest<UpdatePaymentMethod>, reply: FastifyReply) {
  const b = request.body;
  const pm = await resolvePaymentMethod(deps, callerOf(request), request.params.id);
  let expiry: { exp_month: number; exp_year: number } | undefined;
  if (b.card) {
    expiry = { exp_month: b.card.exp_month ?? pm.card.exp_month, exp_year: b.card.exp_year ?? pm.card.exp_year };
    if (isExpired(expiry.exp_month, expiry.exp_year, deps.now()))
      throw cardError('invalid_expiry_year', 'card[exp_year]', 'Your card’s expiration date is in the past.');
  }
  const patch = {
    ...(b.billing_details !== undefined ? { billing_details: JSON.stringify({ ...JSON.parse(pm.row.billing_details), ...b.billing_details }) } : {}),
    metadata: JSON.stringify(mergeMetadata(pm.row.metadata, b.metadata as MetadataInput | undefined)),
  };
  return changePaymentMethod(deps, request, reply, pm, patch, expiry);
}

async function attachPaymentMethod(deps: Deps, request: IdRequest<{ customer: string }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const customer = await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, request.body.customer);
  if (!customer) throw noSuch('customer', request.body.customer, 'customer');
  const pm = await resolvePaymentMethod(deps, caller, request.params.id, 'id', { test: true });
  const { row } = pm;
  if (row.detached === 1 || (row.customer_id !== '' && row.customer_id !== customer.id))
    throw unexpectedState(
      row.detached === 1
        ? 'This PaymentMethod was detached from a customer and may not be used again.'
        : 'This PaymentMethod is attached to another customer; detach it first.',
    );
  return changePaymentMethod(deps, request, reply, pm, { customer_id: customer.id });
}

async function detachPaymentMethod(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const pm = await resolvePaymentMethod(deps, callerOf(request), request.params.id);
  if (pm.row.customer_id === '') throw unexpectedState('The PaymentMethod is not attached to a customer.');
  return changePaymentMethod(deps, request, reply, pm, { customer_id: '', detached: 1 });
}

const unexpectedState = (message: string) => new GenericError(400, { type: 'invalid_request_error', code: 'payment_method_unexpected_state', message });

async function listPaymentMethods(
  deps: Deps,
  request: FastifyRequest<{ Querystring: ListQuery & { customer?: string } }>,
  reply: FastifyReply,
  customer?: string,
) {
  const caller = callerOf(request);
  const who = customer ?? request.query.customer;
  if (who !== undefined && !(await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, who)))
    throw noSuch('customer', who, customer ? 'id' : 'customer');
  const scoped = () => {
    let q = deps.store.db
      .selectFrom('payment_methods')
      .selectAll()
      .where('account_id', '=', caller.creds.account.account_id)
      .where('livemode', '=', caller.livemode ? 1 : 0);
    if (who !== undefined) q = q.where('customer_id', '=', who);
    return q;
  };
  const page = await listPage<PaymentMethodRow>(request.query, 'PaymentMethod', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  const cards = page.rows.length
    ? await deps.store.db
        .selectFrom('cards')
        .selectAll()
        .where(
          'card_id',
          'in',
          page.rows.map((r) => r.card_id),
        )
        .execute()
    : [];
  const byId = new Map(cards.map((c) => [c.card_id, c]));
  const url = customer ? `/v1/customers/${customer}/payment_methods` : '/v1/payment_methods';
  return sendObject(
    request,
    reply,
    listObject(
      url,
      page,
      page.rows.map((r) => paymentMethodObject(r, byId.get(r.card_id) as CardRow)),
    ),
  );
}

// ---- routes -----------------------------------------------------------------------------

const doc = () => ({ tags: [CUSTOMERS_TAG], security: [{ bearer: [] }] });

const answers = (description: string, errors: number[]) => ({ ...objectAnswers(PaymentMethodObject, description), ...errorAnswers(errors) });
const routeSchema = (operationId: string, summary: string, description: string, rest: Record<string, unknown>, errors: number[]) => ({
  operationId,
  summary,
  description,
  ...doc(),
  ...rest,
  response: answers(summary, errors),
});
const listSchema = (operationId: string, summary: string, rest: Record<string, unknown>) => ({
  operationId,
  summary,
  description: 'Newest first.',
  ...doc(),
  ...rest,
  response: {
    ...objectAnswers(ListEnvelope(PaymentMethodObject, 'A page of PaymentMethods.'), 'A page of PaymentMethods.'),
    ...errorAnswers([400, 401, 403, 404, 429]),
  },
});

/** The schemas of the routes, built per app (Fastify normalises a route's schema in place). */
const SCHEMAS = {
  create: () =>
    routeSchema(
      'createPaymentMethod',
      'Create a PaymentMethod',
      'Keeps a card in the vault: the number encrypted, the security code checked for its length and never kept. A number that fails its check, or a past expiry, is a 402 `card_error` naming the field.',
      { body: CreatePaymentMethod },
      [400, 401, 402, 429],
    ),
  retrieve: () =>
    routeSchema(
      'retrievePaymentMethod',
      'Retrieve a PaymentMethod',
      'One of your PaymentMethods (a test name such as `pm_card_visa` is none: attach one, or name it as a PaymentIntent’s `payment_method`).',
      { params: IdParams('pm_'), querystring: RetrieveQuery },
      [401, 403, 404, 429],
    ),
  update: () =>
    routeSchema(
      'updatePaymentMethod',
      'Update a PaymentMethod',
      'Billing details (merged), the card’s expiry, metadata (merged).',
      { params: IdParams('pm_'), body: UpdatePaymentMethod },
      [400, 401, 402, 404, 429],
    ),
  attach: () =>
    routeSchema(
      'attachPaymentMethod',
      'Attach a PaymentMethod to a customer',
      'A detached PaymentMethod, or one of another customer, is refused (`payment_method_unexpected_state`); on a test key a test name (`pm_card_visa`, …) attaches a new PaymentMethod of that card.',
      { params: IdParams('pm_'), body: Attach },
      [400, 401, 404, 429],
    ),
  detach: () =>
    routeSchema(
      'detachPaymentMethod',
      'Detach a PaymentMethod from its customer',
      'It may not be used or attached again afterwards.',
      { params: IdParams('pm_'), body: Detach },
      [400, 401, 404, 429],
    ),
  list: () => listSchema('listPaymentMethods', 'List PaymentMethods (of a customer with `customer`)', { querystring: ListPaymentMethods }),
  listCustomer: () =>
    listSchema('listCustomerPaymentMethods', 'List a customer’s PaymentMethods', {
      params: IdParams('cus_'),
      querystring: Type.Object({ ...listParams, type: Type.Optional(Type.Literal('card')) }, { additionalProperties: false }),
    }),
};

type Id = { Params: { id: string } };

export function registerPaymentMethodObjectRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  const with_ = (schema: () => object) => ({ ...opts, schema: schema() });
  app.post<{ Body: CreatePaymentMethod }>('/v1/payment_methods', with_(SCHEMAS.create), (rq, rp) => createPaymentMethod(deps, rq, rp));
  app.get<Id>('/v1/payment_methods/:id', with_(SCHEMAS.retrieve), (rq, rp) => retrievePaymentMethod(deps, rq as IdRequest, rp));
  app.post<Id & { Body: UpdatePaymentMethod }>('/v1/payment_methods/:id', with_(SCHEMAS.update), (rq, rp) => updatePaymentMethod(deps, rq, rp));
  app.post<Id & { Body: { customer: string } }>('/v1/payment_methods/:id/attach', with_(SCHEMAS.attach), (rq, rp) => attachPaymentMethod(deps, rq, rp));
  app.post<Id>('/v1/payment_methods/:id/detach', with_(SCHEMAS.detach), (rq, rp) => detachPaymentMethod(deps, rq as IdRequest, rp));
  app.get<{ Querystring: ListQuery & { customer?: string } }>('/v1/payment_methods', with_(SCHEMAS.list), (rq, rp) => listPaymentMethods(deps, rq, rp));
  app.get<Id & { Querystring: ListQuery }>('/v1/customers/:id/payment_methods', with_(SCHEMAS.listCustomer), (rq, rp) =>
    listPaymentMethods(deps, rq, rp, rq.params.id),
  );
}
