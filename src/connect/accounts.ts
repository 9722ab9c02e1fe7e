// `/v1/accounts` (docs/contract.md §12, §18; issue 13): connected accounts created under the calling
// (platform) account, in its mode. Create, retrieve, update, delete, list. The object keeps
// the platform family's field names, so its official client library reads it unchanged.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { newId } from '../crypto/ids.js';
import type { Tx } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { callerOf, genericRouteOptions } from '../generic/auth.js';
import { CONNECT_TAG, errorAnswers, objectAnswers } from '../generic/docs.js';
import {
  Expand,
  IdParams,
  invalidParam,
  ListEnvelope,
  type ListQuery,
  listObject,
  listPage,
  listParams,
  lower,
  Metadata,
  type MetadataInput,
  mergeMetadata,
  newMetadata,
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from '../generic/wire.js';
import { accountBalances } from '../ledger/balances.js';
import { checkCountry as checkIsoCountry, requireCurrency } from '../payments/validate.js';
import type { Deps } from '../web/context.js';
import { recordConnectEvent } from './events.js';
import { deleteAccount } from './states.js';
import type { ConnectedAccountRow } from './tables.js';

export const ACCOUNT_TYPES = ['custom', 'express', 'standard'] as const;
const CAPABILITIES = ['card_payments', 'transfers'] as const;

const Email = Type.String({ maxLength: 254, pattern: '^$|^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' });
const Country = Type.String({ pattern: '^[A-Za-z]{2}$', description: 'a two-letter ISO 3166-1 country code' });

const BusinessProfile = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    industry: Type.Optional(Type.String({ maxLength: 100 })),
    mcc: Type.Optional(Type.String({ pattern: '^$|^\\d{4}$', description: 'a four-digit merchant category code' })),
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    product_description: Type.Optional(Type.String({ maxLength: 1000 })),
    support_email: Type.Optional(Email),
    support_phone: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false, description: 'how the business presents itself' },
);

const CapabilityRequest = Type.Object(
  { requested: Type.Boolean({ description: 'true to turn the capability on, false to turn it off' }) },
  { additionalProperties: false },
);
const Capabilities = Type.Object(
  { card_payments: Type.Optional(CapabilityRequest), transfers: Type.Optional(CapabilityRequest) },
  { additionalProperties: false, description: 'capabilities to request' },
);

const CreateAccount = Type.Object(
  {
    type: Type.Optional(Type.String({ enum: [...ACCOUNT_TYPES], description: 'custom, express or standard (default custom)' })),
    country: Type.Optional(Country),
    email: Type.Optional(Email),
    default_currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'a three-letter ISO 4217 code' })),
    business_type: Type.Optional(Type.String({ enum: ['individual', 'company', 'non_profit', 'government_entity'] })),
    business_profile: Type.Optional(BusinessProfile),
    capabilities: Type.Optional(Capabilities),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreateAccount = Static<typeof CreateAccount>;

const UpdateAccount = Type.Object(
  {
    email: Type.Optional(Email),
    default_currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'a three-letter ISO 4217 code' })),
    business_type: Type.Optional(Type.String({ enum: ['individual', 'company', 'non_profit', 'government_entity'] })),
    business_profile: Type.Optional(BusinessProfile),
    capabilities: Type.Optional(Capabilities),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type UpdateAccount = Static<typeof UpdateAccount>;

const ListAccounts = Type.Object(listParams, { additionalProperties: false });

const AccountObject = Type.Object(
  {
    id: Type.String({ description: 'acct_…' }),
    object: Type.Literal('account'),
    type: Type.String({ enum: [...ACCOUNT_TYPES] }),
    country: Type.Union([Type.String({ description: 'two-letter uppercase country code' }), Type.Null()], {
      description: 'null for your own account (`GET /v1/account`)',
    }),
    email: Type.Union([Type.String(), Type.Null()]),
    default_currency: Type.Union([Type.String({ description: 'lowercase ISO 4217: as set, else the country’s' }), Type.Null()]),
    business_type: Type.Union([Type.String(), Type.Null()]),
    business_profile: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])),
    capabilities: Type.Record(Type.String(), Type.String({ enum: ['active', 'inactive'] })),
    charges_enabled: Type.Boolean(),
    payouts_enabled: Type.Boolean(),
    details_submitted: Type.Boolean(),
    controller: Type.Object({ type: Type.String({ enum: ['application', 'account'] }), is_controller: Type.Optional(Type.Boolean()) }),
    requirements: Type.Object({}, { description: 'nothing is ever due: Tollgate does not verify accounts (every list empty)' }),
    future_requirements: Type.Object({}, { description: 'as requirements' }),
    settings: Type.Object({}, { description: 'dashboard name, no statement descriptors, manual payouts' }),
    tos_acceptance: Type.Object({}, { description: 'date, ip and user_agent, all null' }),
    external_accounts: Type.Object({}, { description: 'an empty list: bank accounts are payout beneficiaries here' }),
    company: Type.Null(),
    individual: Type.Null(),
    metadata: Type.Record(Type.String(), Type.String()),
    livemode: Type.Boolean(),
    created: Type.Integer({ description: 'Unix seconds' }),
  },
  { description: 'A connected account of the calling platform account.' },
);

const DeletedAccount = Type.Object(
  { id: Type.String(), object: Type.Literal('account'), deleted: Type.Literal(true) },
  { description: 'The account is deleted.' },
);

/** A country's currency, for an account that named none (the platform family always answers one). */
const COUNTRY_CURRENCY: Readonly<Record<string, string>> = {
  US: 'usd',
  GB: 'gbp',
  CA: 'cad',
  AU: 'aud',
  NZ: 'nzd',
  JP: 'jpy',
  CH: 'chf',
  SE: 'sek',
  NO: 'nok',
  DK: 'dkk',
  PL: 'pln',
  CZ: 'czk',
  HU: 'huf',
  RO: 'ron',
  BG: 'bgn',
  SG: 'sgd',
  HK: 'hkd',
  MX: 'mxn',
  BR: 'brl',
  IN: 'inr',
  AE: 'aed',
  MY: 'myr',
  TH: 'thb',
  ID: 'idr',
  PH: 'php',
  AT: 'eur',
  BE: 'eur',
  CY: 'eur',
  DE: 'eur',
  EE: 'eur',
  ES: 'eur',
  FI: 'eur',
  FR: 'eur',
  GR: 'eur',
  HR: 'eur',
  IE: 'eur',
  IT: 'eur',
  LT: 'eur',
  LU: 'eur',
  LV: 'eur',
  MT: 'eur',
  NL: 'eur',
  PT: 'eur',
  SI: 'eur',
  SK: 'eur',
};

/** Nothing is due: Tollgate does not verify accounts (docs/interface.md lists what is not offered). */
const NOTHING_DUE = {
  alternatives: [],
  current_deadline: null,
  currently_due: [],
  disabled_reason: null,
  errors: [],
  eventually_due: [],
  past_due: [],
  pending_verification: [],
};

/**
 * The platform family's account members Tollgate has nothing for, empty as the family shows
 * them empty (docs/contract.md §24): requirements, settings, terms acceptance, bank accounts.
 */
function emptyAccountParts(id: string, name: string | null) {
  return {
    requirements: NOTHING_DUE,
    future_requirements: NOTHING_DUE,
    settings: {
      bacs_debit_payments: null,
      branding: null,
      card_issuing: null,
      card_payments: null,
      dashboard: { display_name: name, timezone: 'Etc/UTC' },
      invoices: null,
      payments: {
        statement_descriptor: null,
        statement_descriptor_kana: null,
        statement_descriptor_kanji: null,
        statement_descriptor_prefix_kana: null,
        statement_descriptor_prefix_kanji: null,
      },
      payouts: { debit_negative_balances: false, schedule: { delay_days: 1, interval: 'manual' }, statement_descriptor: null },
      sepa_debit_payments: null,
    },
    tos_acceptance: { date: null, ip: null, user_agent: null },
    external_accounts: { object: 'list', data: [], has_more: false, total_count: 0, url: `/v1/accounts/${id}/external_accounts` },
    company: null,
    individual: null,
  };
}

/** The members of `business_profile` Tollgate does not keep, null as the family shows them unset. */
const PROFILE_UNSET = {
  annual_revenue: null,
  estimated_worker_count: null,
  minority_owned_business_designation: null,
  support_address: null,
  support_url: null,
};

/** The wire object of a connected account. */
export function accountObject(row: ConnectedAccountRow): Record<string, unknown> {
  const profile = JSON.parse(row.business_profile) as Record<string, string>;
  const caps = JSON.parse(row.capabilities) as Record<string, string>;
  const currency = row.default_currency || COUNTRY_CURRENCY[row.country] || null;
  return {
    id: row.id,
    object: 'account',
    type: row.type,
    country: row.country,
    email: row.email || null,
    default_currency: currency,
    business_type: row.business_type || null,
    business_profile: {
      ...PROFILE_UNSET,
      name: profile.name ?? null,
      industry: profile.industry ?? null,
      mcc: profile.mcc ?? null,
      url: profile.url ?? null,
      product_description: profile.product_description ?? null,
      support_email: profile.support_email ?? null,
      support_phone: profile.support_phone ?? null,
    },
    capabilities: caps,
    charges_enabled: caps.card_payments === 'active',
    payouts_enabled: caps.transfers === 'active',
    details_submitted: true,
    controller: { type: 'application', is_controller: true },
    ...emptyAccountParts(row.id, profile.name ?? null),
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    livemode: row.livemode === 1,
    created: unixSeconds(row.created_at),
  };
}

/** The generic id of a platform account itself (its number after the family's prefix). */
export const ownAccountId = (account_id: string): string => `acct_${account_id}`;

/**
 * The calling account itself, in the same shape (`GET /v1/account`): its merchant's name,
 * card payments on when it has a processor; no country, e-mail or verification data, which
 * Tollgate does not keep for its merchants.
 */
export function ownAccountObject(a: AccountRow, merchant_name: string, charges_enabled: boolean): Record<string, unknown> {
  const id = ownAccountId(a.account_id);
  return {
    id,
    object: 'account',
    type: 'standard',
    country: null,
    email: null,
    default_currency: null,
    business_type: null,
    business_profile: {
      ...PROFILE_UNSET,
      name: merchant_name || null,
      industry: null,
      mcc: null,
      url: null,
      product_description: null,
      support_email: null,
      support_phone: null,
    },
    capabilities: { card_payments: charges_enabled ? 'active' : 'inactive', transfers: 'active' },
    charges_enabled,
    payouts_enabled: true,
    details_submitted: true,
    controller: { type: 'account' },
    ...emptyAccountParts(id, merchant_name || null),
    metadata: {},
    livemode: a.mode === 'live',
    created: unixSeconds(a.created_at),
  };
}

function capabilitiesAfter(current: Record<string, string>, given: CreateAccount['capabilities']): Record<string, string> {
  const out = { ...current };
  for (const c of CAPABILITIES) {
    const r = given?.[c];
    if (r) out[c] = r.requested ? 'active' : 'inactive';
  }
  return out;
}

function checkCountry(country: string | undefined): string {
  const c = (country ?? 'US').toUpperCase();
  checkIsoCountry('country', c);
  return c;
}

function checkCurrency(currency: string | undefined): string {
  if (currency === undefined || currency === '') return '';
  requireCurrency('default_currency', currency.toUpperCase());
  return lower(currency);
}

/** A connected account of this platform account and mode, not deleted, in a transaction or not. */
export async function findAccount(
  db: Tx | Deps['store']['db'],
  platform_account_id: string,
  livemode: boolean,
  id: string,
): Promise<ConnectedAccountRow | undefined> {
  return db
    .selectFrom('connected_accounts')
    .selectAll()
    .where('id', '=', id)
    .where('platform_account_id', '=', platform_account_id)
    .where('livemode', '=', livemode ? 1 : 0)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

/** What every account route's schema carries besides its own parts (new objects per registration). */
const doc = () => ({ tags: [CONNECT_TAG], security: [{ bearer: [] }] });

const createAccountSchema = () => ({
  operationId: 'createAccount',
  summary: 'Create a connected account',
  description: 'A connected account under your (platform) account, in your key’s mode. Capabilities requested become `active`. Answers the account object.',
  ...doc(),
  body: CreateAccount,
  response: { ...objectAnswers(AccountObject, 'The new connected account.'), ...errorAnswers([400, 401, 409, 429]) },
});

const retrieveAccountSchema = () => ({
  operationId: 'retrieveAccount',
  summary: 'Retrieve a connected account',
  description: 'One of your connected accounts; another account’s id, a deleted one or one of the other mode is 404.',
  ...doc(),
  params: IdParams('acct_'),
  querystring: RetrieveQuery,
  response: { ...objectAnswers(AccountObject, 'The connected account.'), ...errorAnswers([401, 403, 404, 429]) },
});

const retrieveOwnAccountSchema = () => ({
  operationId: 'retrieveOwnAccount',
  summary: 'Retrieve your own account',
  description:
    'The account the API key belongs to, in the connected accounts’ shape (`acct_` and its number); with the `Stripe-Account` header, that connected account of yours (as `GET /v1/accounts/:id`).',
  ...doc(),
  headers: Type.Object({
    'stripe-account': Type.Optional(Type.String({ description: 'the id (acct_…) of one of your connected accounts: that account instead of yours' })),
  }),
  querystring: RetrieveQuery,
  response: { ...objectAnswers(AccountObject, 'Your account.'), ...errorAnswers([401, 403, 404, 429]) },
});

const updateAccountSchema = () => ({
  operationId: 'updateAccount',
  summary: 'Update a connected account',
  description: 'Changes the given fields; `metadata` keys are merged (a key set to an empty string is removed).',
  ...doc(),
  params: IdParams('acct_'),
  body: UpdateAccount,
  response: { ...objectAnswers(AccountObject, 'The connected account after the update.'), ...errorAnswers([400, 401, 404, 409, 429]) },
});

const deleteAccountSchema = () => ({
  operationId: 'deleteAccount',
  summary: 'Delete a connected account',
  description:
    'Only an account whose balance is zero in every currency can be deleted (reverse its transfers first): money is never left in an account nobody can reach. Its transfers stay listed.',
  ...doc(),
  params: IdParams('acct_'),
  response: { ...objectAnswers(DeletedAccount, 'The account is deleted.'), ...errorAnswers([400, 401, 404, 429]) },
});

const listAccountsSchema = () => ({
  operationId: 'listAccounts',
  summary: 'List connected accounts',
  description: 'Newest first; `limit` (1 to 100, default 10), `starting_after` / `ending_before` cursors, `created` filter.',
  ...doc(),
  querystring: ListAccounts,
  response: {
    ...objectAnswers(ListEnvelope(AccountObject, 'A page of connected accounts, newest first.'), 'A page of connected accounts.'),
    ...errorAnswers([400, 401, 403, 429]),
  },
});

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/** POST /v1/accounts */
async function createConnectedAccount(deps: Deps, request: FastifyRequest<{ Body: CreateAccount }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const now = deps.now();
  const row: ConnectedAccountRow = {
    id: newId('connected_account'),
    platform_account_id: caller.creds.account.account_id,
    merchant_id: caller.creds.account.merchant_id,
    livemode: caller.livemode ? 1 : 0,
    type: b.type ?? 'custom',
    country: checkCountry(b.country),
    email: b.email ?? '',
    default_currency: checkCurrency(b.default_currency),
    business_profile: JSON.stringify(b.business_profile ?? {}),
    capabilities: JSON.stringify(capabilitiesAfter({ card_payments: 'inactive', transfers: 'inactive' }, b.capabilities)),
    metadata: JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined)),
    business_type: b.business_type ?? '',
    deleted: 0,
    created_at: now,
    updated_at: now,
  };
  await deps.store.transaction((tx) => tx.insertInto('connected_accounts').values(row).execute());
  return sendObject(request, reply, accountObject(row));
}

/** GET /v1/account: the calling account itself (docs/contract.md §24). */
async function retrieveOwnAccount(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const caller = callerOf(request);
  const account = caller.creds.account;
  const as = request.headers['stripe-account'];
  if (as !== undefined) {
    // The platform acting for one of its connected accounts (docs/contract.md §24): that account.
    const id = Array.isArray(as) ? String(as[0]) : as;
    const row = await findAccount(deps.store.db, account.account_id, caller.livemode, id);
    if (!row) throw noSuch('account', id, 'Stripe-Account');
    return sendObject(request, reply, accountObject(row));
  }
  const merchant = await deps.store.db.selectFrom('merchants').select('name').where('merchant_id', '=', account.merchant_id).executeTakeFirst();
  const charges = deps.processorFor(account) !== null;
  return sendObject(request, reply, ownAccountObject(account, merchant?.name ?? '', charges));
}

/** GET /v1/accounts/:id */
async function retrieveConnectedAccount(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const caller = callerOf(request);
  const row = await findAccount(deps.store.db, caller.creds.account.account_id, caller.livemode, request.params.id);
  if (!row) throw noSuch('account', request.params.id);
  return sendObject(request, reply, accountObject(row));
}

/** POST /v1/accounts/:id */
async function updateConnectedAccount(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Body: UpdateAccount }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const updated = await deps.store.transaction(async (tx) => {
    // Lock the row first (a no-op update), then read and merge: concurrent updates are
    // never lost on PostgreSQL, and one that finds it deleted is a 404.
    const locked = await tx
      .updateTable('connected_accounts')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', request.params.id)
      .where('platform_account_id', '=', caller.creds.account.account_id)
      .where('livemode', '=', caller.livemode ? 1 : 0)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    const row = Number(locked.numUpdatedRows) === 1 ? await findAccount(tx, caller.creds.account.account_id, caller.livemode, request.params.id) : undefined;
    if (!row) throw noSuch('account', request.params.id);
    const profile = b.business_profile ? { ...(JSON.parse(row.business_profile) as object), ...b.business_profile } : JSON.parse(row.business_profile);
    const next: ConnectedAccountRow = {
      ...row,
      email: b.email ?? row.email,
      default_currency: b.default_currency !== undefined ? checkCurrency(b.default_currency) : row.default_currency,
      business_profile: JSON.stringify(profile),
      capabilities: JSON.stringify(capabilitiesAfter(JSON.parse(row.capabilities), b.capabilities)),
      metadata: JSON.stringify(mergeMetadata(row.metadata, b.metadata as MetadataInput | undefined)),
      business_type: b.business_type ?? row.business_type,
      updated_at: deps.now(),
    };
    const { id, platform_account_id, merchant_id, livemode, created_at, deleted, ...patch } = next;
    await tx.updateTable('connected_accounts').set(patch).where('id', '=', id).where('deleted', '=', 0).execute();
    await recordConnectEvent(tx, { merchant_id, account_id: platform_account_id }, 'account.updated', id, { account_id: id, deleted: false }, deps.now());
    return next;
  });
  return sendObject(request, reply, accountObject(updated));
}

/** DELETE /v1/accounts/:id */
async function deleteConnectedAccount(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const caller = callerOf(request);
  await deps.store.transaction(async (tx) => {
    // Mark it deleted first: the update locks the row until commit, so a transfer to it
    // (which locks the same row) either committed before and shows in the balance read
    // next, or waits and then finds it deleted. A refusal rolls the mark back.
    const owner = { platform_account_id: caller.creds.account.account_id, livemode: caller.livemode ? 1 : 0 };
    const marked = await deleteAccount(tx, request.params.id, owner, deps.now());
    if (!marked) throw noSuch('account', request.params.id);
    const held = (await accountBalances(tx, marked.id)).filter((x) => x.available_minor !== 0 || x.pending_minor !== 0);
    const first = held[0];
    if (first) {
      throw invalidParam(
        'id',
        `The account still holds a balance in ${lower(first.currency)}; reverse its transfers before deleting it.`,
        'balance_insufficient',
      );
    }
  });
  return sendObject(request, reply, { id: request.params.id, object: 'account', deleted: true });
}

/** GET /v1/accounts */
async function listConnectedAccounts(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const platform = caller.creds.account.account_id;
  const livemode = caller.livemode ? 1 : 0;
  const scoped = () =>
    deps.store.db
      .selectFrom('connected_accounts')
      .selectAll()
      .where('platform_account_id', '=', platform)
      .where('livemode', '=', livemode)
      .where('deleted', '=', 0);
  const page = await listPage<ConnectedAccountRow>(request.query, 'account', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  return sendObject(request, reply, listObject('/v1/accounts', page, page.rows.map(accountObject)));
}

export function registerAccountRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  app.post<{ Body: CreateAccount }>('/v1/accounts', { ...opts, schema: createAccountSchema() }, (request, reply) =>
    createConnectedAccount(deps, request, reply),
  );
  app.get<{ Params: { id: string } }>('/v1/accounts/:id', { ...opts, schema: retrieveAccountSchema() }, (request, reply) =>
    retrieveConnectedAccount(deps, request, reply),
  );
  app.post<{ Params: { id: string }; Body: UpdateAccount }>('/v1/accounts/:id', { ...opts, schema: updateAccountSchema() }, (request, reply) =>
    updateConnectedAccount(deps, request, reply),
  );
  app.delete<{ Params: { id: string } }>('/v1/accounts/:id', { ...opts, schema: deleteAccountSchema() }, (request, reply) =>
    deleteConnectedAccount(deps, request, reply),
  );
  app.get<{ Querystring: ListQuery }>('/v1/accounts', { ...opts, schema: listAccountsSchema() }, (request, reply) =>
    listConnectedAccounts(deps, request, reply),
  );
  app.get('/v1/account', { ...opts, schema: retrieveOwnAccountSchema() }, (request, reply) => retrieveOwnAccount(deps, request, reply));
}
