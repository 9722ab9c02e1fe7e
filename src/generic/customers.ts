// `/v1/customers` of the generic interface (docs/contract.md §24; issue 33): the platform family's
// customer object, per account and mode. Create, retrieve, update, delete, list (newest first,
// `email` and `created` filters). A deleted customer answers 404 afterwards; its row stays for
// the payments that name it. Its one transition (deleting it) is a compare-and-set on
// `deleted`, as a connected account's is (src/connect/states.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { apply, type Machine, type Transitions } from '../core/machine.js';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import type { CustomerRow } from '../db/tables/customers.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { CUSTOMERS_TAG, errorAnswers, objectAnswers } from './docs.js';
import {
  CreatedFilter,
  Expand,
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

// ---- the transition table -----------------------------------------------------------------

type CustomerStatus = 0 | 1;
const LIVE: CustomerStatus = 0;
const DELETED: CustomerStatus = 1;

const CUSTOMER_TRANSITIONS = { delete: { from: [LIVE], to: DELETED } } as const satisfies Transitions<CustomerStatus, 'delete'>;

const CUSTOMER_MACHINE: Machine<CustomerRow, CustomerStatus, 'delete'> = {
  noun: 'customer',
  table: 'customers' satisfies keyof DB,
  key: 'id',
  status: 'deleted',
  stamp: 'updated_at',
  events: CUSTOMER_TRANSITIONS,
};

// ---- parameters -------------------------------------------------------------------------

const Text = (max: number, description: string) => Type.String({ maxLength: max, description });
const Email = Type.String({ maxLength: 512, pattern: '^$|^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' });
const Address = Type.Object(
  {
    line1: Type.Optional(Text(200, 'street')),
    line2: Type.Optional(Text(200, 'more of the street')),
    city: Type.Optional(Text(100, 'city')),
    state: Type.Optional(Text(100, 'state, county or province')),
    postal_code: Type.Optional(Text(20, 'postal code')),
    country: Type.Optional(Type.String({ pattern: '^$|^[A-Za-z]{2}$', description: 'a two-letter ISO 3166-1 country code' })),
  },
  { additionalProperties: false, description: 'a postal address' },
);
const Shipping = Type.Object(
  { name: Text(200, 'the recipient'), phone: Type.Optional(Text(40, 'a phone number')), address: Address },
  { additionalProperties: false, description: 'where to ship' },
);

const fields = {
  name: Type.Optional(Text(256, 'the full name or business name')),
  email: Type.Optional(Email),
  description: Type.Optional(Text(350, 'your own note on the customer')),
  phone: Type.Optional(Text(40, 'a phone number')),
  address: Type.Optional(Type.Union([Address, Type.Literal('')], { description: 'a postal address ("" removes it)' })),
  shipping: Type.Optional(Type.Union([Shipping, Type.Literal('')], { description: 'where to ship ("" removes it)' })),
  preferred_locales: Type.Optional(Type.Array(Type.String({ maxLength: 16 }), { maxItems: 10, description: 'languages, most preferred first' })),
  metadata: Type.Optional(Metadata),
  expand: Expand,
};
const CreateCustomer = Type.Object(fields, { additionalProperties: false });
type CreateCustomer = Static<typeof CreateCustomer>;
const UpdateCustomer = CreateCustomer;

const ListCustomers = Type.Object(
  {
    ...listParams,
    email: Type.Optional(Type.String({ maxLength: 512, description: 'only customers with this e-mail address (case-sensitive)' })),
    created: CreatedFilter,
  },
  { additionalProperties: false },
);

const CustomerObject = Type.Object(
  {
    id: Type.String({ description: 'cus_…' }),
    object: Type.Literal('customer'),
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    phone: Type.Union([Type.String(), Type.Null()]),
    address: Type.Union([Type.Object({}), Type.Null()]),
    shipping: Type.Union([Type.Object({}), Type.Null()]),
    preferred_locales: Type.Array(Type.String()),
    balance: Type.Integer({ description: 'always 0: Tollgate keeps no customer balance' }),
    currency: Type.Null(),
    default_source: Type.Null(),
    delinquent: Type.Boolean(),
    discount: Type.Null(),
    invoice_prefix: Type.Null(),
    invoice_settings: Type.Object({}, { description: 'custom_fields, default_payment_method, footer and rendering_options, all null' }),
    next_invoice_sequence: Type.Integer(),
    tax_exempt: Type.Literal('none'),
    test_clock: Type.Null(),
    metadata: Type.Record(Type.String(), Type.String()),
    livemode: Type.Boolean(),
    created: Type.Integer({ description: 'Unix seconds' }),
  },
  { description: 'A customer of your account.' },
);
const DeletedCustomer = Type.Object(
  { id: Type.String(), object: Type.Literal('customer'), deleted: Type.Literal(true) },
  { description: 'The customer is deleted.' },
);

// ---- the object -------------------------------------------------------------------------

const orNull = (s: string): string | null => (s === '' ? null : s);
const jsonOrNull = (s: string): Record<string, unknown> | null => {
  const v = JSON.parse(s || '{}') as Record<string, unknown>;
  return Object.keys(v).length === 0 ? null : v;
};

/** A stored address with every member the family answers (null where not given). */
function addressOf(a: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!a) return null;
  const pick = (k: string) => (typeof a[k] === 'string' && a[k] !== '' ? a[k] : null);
  return { city: pick('city'), country: pick('country'), line1: pick('line1'), line2: pick('line2'), postal_code: pick('postal_code'), state: pick('state') };
}

export function customerObject(row: CustomerRow): Record<string, unknown> {
  const shipping = jsonOrNull(row.shipping);
  return {
    id: row.id,
    object: 'customer',
    address: addressOf(jsonOrNull(row.address)),
    balance: 0,
    created: unixSeconds(row.created_at),
    currency: null,
    default_source: null,
    delinquent: false,
    description: orNull(row.description),
    discount: null,
    email: orNull(row.email),
    invoice_prefix: null,
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: row.livemode === 1,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    name: orNull(row.name),
    next_invoice_sequence: 1,
    phone: orNull(row.phone),
    preferred_locales: JSON.parse(row.preferred_locales) as string[],
    shipping: shipping
      ? { name: shipping.name ?? null, phone: shipping.phone ?? null, address: addressOf((shipping.address as Record<string, unknown>) ?? null) }
      : null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

/** A live customer of this account and mode, or undefined. */
export function findCustomer(db: Deps['store']['db'], account_id: string, livemode: boolean, id: string): Promise<CustomerRow | undefined> {
  return db
    .selectFrom('customers')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', account_id)
    .where('livemode', '=', livemode ? 1 : 0)
    .where('deleted', '=', LIVE)
    .executeTakeFirst();
}

/** The stored form of an optional object parameter: '' (or absent on create) is none. */
const stored = (v: unknown): string => (v === undefined || v === '' ? '{}' : JSON.stringify(v));

// ---- handlers ---------------------------------------------------------------------------

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/** POST /v1/customers */
async function createCustomer(deps: Deps, request: FastifyRequest<{ Body: CreateCustomer }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const now = deps.now();
  const row: CustomerRow = {
    id: newId('customer', now),
    account_id: caller.creds.account.account_id,
    livemode: caller.livemode ? 1 : 0,
    name: b.name ?? '',
    email: b.email ?? '',
    description: b.description ?? '',
    phone: b.phone ?? '',
    address: stored(b.address),
    shipping: stored(b.shipping),
    preferred_locales: JSON.stringify(b.preferred_locales ?? []),
    metadata: JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined)),
    deleted: LIVE,
    created_at: now,
    updated_at: now,
  };
  await deps.store.transaction((tx) => tx.insertInto('customers').values(row).execute());
  return sendObject(request, reply, customerObject(row));
}

/** GET /v1/customers/:id */
async function retrieveCustomer(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const caller = callerOf(request);
  const row = await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, request.params.id);
  if (!row) throw noSuch('customer', request.params.id);
  return sendObject(request, reply, customerObject(row));
}

/** POST /v1/customers/:id: the given fields change; metadata keys merge. */
async function updateCustomer(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Body: CreateCustomer }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const now = deps.now();
  const updated = await deps.store.transaction(async (tx) => {
    // Lock the row first (a no-op update), then read and merge: concurrent updates are never
    // lost on PostgreSQL, and one that finds it deleted is a 404 (as connected accounts do).
    const locked = await tx
      .updateTable('customers')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', request.params.id)
      .where('account_id', '=', caller.creds.account.account_id)
      .where('livemode', '=', caller.livemode ? 1 : 0)
      .where('deleted', '=', LIVE)
      .executeTakeFirst();
    const row =
      Number(locked.numUpdatedRows) === 1 ? await tx.selectFrom('customers').selectAll().where('id', '=', request.params.id).executeTakeFirst() : undefined;
    if (!row) throw noSuch('customer', request.params.id);
    const patch: Partial<CustomerRow> = {
      ...(b.name !== undefined ? { name: b.name } : {}),
      ...(b.email !== undefined ? { email: b.email } : {}),
      ...(b.description !== undefined ? { description: b.description } : {}),
      ...(b.phone !== undefined ? { phone: b.phone } : {}),
      ...(b.address !== undefined ? { address: stored(b.address) } : {}),
      ...(b.shipping !== undefined ? { shipping: stored(b.shipping) } : {}),
      ...(b.preferred_locales !== undefined ? { preferred_locales: JSON.stringify(b.preferred_locales) } : {}),
      metadata: JSON.stringify(mergeMetadata(row.metadata, b.metadata as MetadataInput | undefined)),
      updated_at: now,
    };
    await tx.updateTable('customers').set(patch).where('id', '=', row.id).execute();
    return { ...row, ...patch };
  });
  return sendObject(request, reply, customerObject(updated));
}

/** DELETE /v1/customers/:id */
async function deleteCustomer(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const caller = callerOf(request);
  const owner = { account_id: caller.creds.account.account_id, livemode: caller.livemode ? 1 : 0 };
  const gone = await deps.store.transaction((tx) => apply(tx, CUSTOMER_MACHINE, request.params.id, 'delete', LIVE, {}, deps.now(), { where: owner }));
  if (!gone) throw noSuch('customer', request.params.id);
  return sendObject(request, reply, { id: request.params.id, object: 'customer', deleted: true });
}

/** GET /v1/customers */
async function listCustomers(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery & { email?: string } }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const q = request.query;
  const scoped = () => {
    let query = deps.store.db
      .selectFrom('customers')
      .selectAll()
      .where('account_id', '=', caller.creds.account.account_id)
      .where('livemode', '=', caller.livemode ? 1 : 0)
      .where('deleted', '=', LIVE);
    if (q.email !== undefined) query = query.where('email', '=', q.email);
    return query;
  };
  const page = await listPage<CustomerRow>(q, 'customer', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  return sendObject(request, reply, listObject('/v1/customers', page, page.rows.map(customerObject)));
}

// ---- routes -----------------------------------------------------------------------------

const doc = () => ({ tags: [CUSTOMERS_TAG], security: [{ bearer: [] }] });
const answers = (description: string, errors: number[]) => ({ ...objectAnswers(CustomerObject, description), ...errorAnswers(errors) });

/** The schemas of the routes, built per app (Fastify normalises a route's schema in place). */
const SCHEMAS = {
  create: () => ({
    operationId: 'createCustomer',
    summary: 'Create a customer',
    description: 'A customer of your account in your key’s mode; every field is optional. Card data is never kept here.',
    ...doc(),
    body: CreateCustomer,
    response: answers('The new customer.', [400, 401, 429]),
  }),
  retrieve: () => ({
    operationId: 'retrieveCustomer',
    summary: 'Retrieve a customer',
    description: 'Another account’s id, a deleted one or one of the other mode is 404.',
    ...doc(),
    params: IdParams('cus_'),
    querystring: RetrieveQuery,
    response: answers('The customer.', [401, 403, 404, 429]),
  }),
  update: () => ({
    operationId: 'updateCustomer',
    summary: 'Update a customer',
    description: 'Changes the given fields; `metadata` keys are merged (a key set to an empty string is removed).',
    ...doc(),
    params: IdParams('cus_'),
    body: UpdateCustomer,
    response: answers('The customer as changed.', [400, 401, 404, 429]),
  }),
  delete: () => ({
    operationId: 'deleteCustomer',
    summary: 'Delete a customer',
    description: 'Answered 404 afterwards; the payments that name it keep the name.',
    ...doc(),
    params: IdParams('cus_'),
    response: { ...objectAnswers(DeletedCustomer, 'The customer is deleted.'), ...errorAnswers([401, 404, 429]) },
  }),
  list: () => ({
    operationId: 'listCustomers',
    summary: 'List customers',
    description: 'Newest first; `email` keeps those with that address.',
    ...doc(),
    querystring: ListCustomers,
    response: { ...objectAnswers(ListEnvelope(CustomerObject, 'A page of customers.'), 'A page of customers.'), ...errorAnswers([400, 401, 403, 429]) },
  }),
};

type Id = { Params: { id: string } };

export function registerCustomerRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  const with_ = (schema: () => object) => ({ ...opts, schema: schema() });
  app.post<{ Body: CreateCustomer }>('/v1/customers', with_(SCHEMAS.create), (rq, rp) => createCustomer(deps, rq, rp));
  app.get<Id>('/v1/customers/:id', with_(SCHEMAS.retrieve), (rq, rp) => retrieveCustomer(deps, rq, rp));
  app.post<Id & { Body: CreateCustomer }>('/v1/customers/:id', with_(SCHEMAS.update), (rq, rp) => updateCustomer(deps, rq, rp));
  app.delete<Id>('/v1/customers/:id', with_(SCHEMAS.delete), (rq, rp) => deleteCustomer(deps, rq, rp));
  app.get<{ Querystring: ListQuery & { email?: string } }>('/v1/customers', with_(SCHEMAS.list), (rq, rp) => listCustomers(deps, rq, rp));
}
