// `/v1/transfers` and their reversals (docs/contract.md §12, §18; issue 13): a platform account
// moves AVAILABLE balance to one of its connected accounts, and takes it back. Every query
// is scoped by the caller's account and mode (another's id is "no such transfer").
//
// Money never goes below zero on the side it leaves (§18): a transfer is funded like a
// payout (src/payouts/service.ts), in one transaction that first upserts the platform's
// `payout_funding (account, currency)` row, so on PostgreSQL transfers and payouts of one
// balance are funded one after another (SQLite's single writer already is), then reads the
// available balance and refuses or posts. A reversal takes the connected account's own
// funding row the same way, and raises `reversed_minor` by a compare-and-set bounded by the
// transferred amount. Postings: src/connect/ledger.ts.
//
// Idempotency-Key is handled by src/idempotency; the key's row id is stored with what a
// request made (`idempotency_ref`, unique), so a re-run after a crash cut the answer off
// (the key's lease taken over) answers the transfer already made instead of a second one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { type Static, Type } from 'typebox';
import type { Outcome, Refusal } from '../core/outcomes.js';
import type { Tx } from '../db/store.js';
import { callerOf, genericRouteOptions } from '../generic/auth.js';
import { CONNECT_TAG, errorAnswers, objectAnswers } from '../generic/docs.js';
import {
  CurrencyParam,
  Expand,
  type ExpandersOf,
  expanded,
  GenericError,
  IdParams,
  invalidParam,
  ListEnvelope,
  type ListPage,
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
import { requireCurrency } from '../payments/validate.js';
import type { Deps } from '../web/context.js';
import { accountObject, findAccount } from './accounts.js';
import { registerBalanceRoute } from './balance.js';
import { transferState } from './states.js';
import type { TransferReversalRow, TransferRow } from './tables.js';
import { makeReversal, makeTransfer } from './transfer-commands.js';

/** Reversals embedded in a transfer object (the platform family's sublist size). */
const EMBEDDED_REVERSALS = 10;

const Amount = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
const Description = Type.String({ maxLength: 1000, description: 'free text for you; "" removes it on update' });

const CreateTransfer = Type.Object(
  {
    amount: Amount('how much to move, a positive integer in minor units of `currency` (cents for usd)'),
    currency: CurrencyParam,
    destination: Type.String({ maxLength: 80, description: 'the id (acct_…) of one of your connected accounts' }),
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
    transfer_group: Type.Optional(Type.String({ maxLength: 255, description: 'a label grouping related transfers (filter lists by it)' })),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreateTransfer = Static<typeof CreateTransfer>;

const UpdateTransfer = Type.Object(
  { description: Type.Optional(Description), metadata: Type.Optional(Metadata), expand: Expand },
  { additionalProperties: false },
);
type UpdateTransfer = Static<typeof UpdateTransfer>;

const ListTransfers = Type.Object(
  {
    ...listParams,
    destination: Type.Optional(Type.String({ maxLength: 80, description: 'only transfers to this connected account' })),
    transfer_group: Type.Optional(Type.String({ maxLength: 255, description: 'only transfers of this group' })),
  },
  { additionalProperties: false },
);
type ListTransfers = ListQuery & { destination?: string; transfer_group?: string };

const CreateReversal = Type.Object(
  {
    amount: Type.Optional(Amount('how much to take back, in minor units (default: all that is not reversed yet)')),
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
    refund_application_fee: Type.Optional(Type.Boolean({ description: 'accepted for compatibility and ignored: transfers carry no application fee' })),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreateReversal = Static<typeof CreateReversal>;

const UpdateReversal = Type.Object({ metadata: Type.Optional(Metadata), expand: Expand }, { additionalProperties: false });
type UpdateReversal = Static<typeof UpdateReversal>;

const ListReversals = Type.Object(listParams, { additionalProperties: false });

const ReversalParams = Type.Object(
  {
    id: Type.String({ maxLength: 80, description: 'the transfer’s id (tr_…)' }),
    reversal_id: Type.String({ maxLength: 80, description: 'the reversal’s id (trr_…)' }),
  },
  { additionalProperties: false },
);

const ReversalObject = Type.Object(
  {
    id: Type.String({ description: 'trr_…' }),
    object: Type.Literal('transfer_reversal'),
    amount: Type.Integer({ description: 'minor units' }),
    currency: Type.String({ description: 'lowercase ISO 4217' }),
    created: Type.Integer({ description: 'Unix seconds' }),
    transfer: Type.String({ description: 'the reversed transfer (tr_…)' }),
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    balance_transaction: Type.Null(),
    destination_payment_refund: Type.Null(),
    source_refund: Type.Null(),
  },
  { description: 'Money taken back from the connected account to the platform.' },
);

const TransferObject = Type.Object(
  {
    id: Type.String({ description: 'tr_…' }),
    object: Type.Literal('transfer'),
    amount: Type.Integer({ description: 'minor units' }),
    amount_reversed: Type.Integer({ description: 'minor units taken back by reversals' }),
    currency: Type.String({ description: 'lowercase ISO 4217' }),
    created: Type.Integer({ description: 'Unix seconds' }),
    description: Type.Union([Type.String(), Type.Null()]),
    destination: Type.String({ description: 'the connected account (acct_…)' }),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    reversals: ListEnvelope(ReversalObject, `The newest ${EMBEDDED_REVERSALS} reversals; the rest through their list.`),
    reversed: Type.Boolean({ description: 'true once the whole amount is reversed' }),
    transfer_group: Type.Union([Type.String(), Type.Null()]),
    balance_transaction: Type.Null(),
    source_transaction: Type.Null(),
    source_type: Type.Literal('card', { description: 'the balance it came from: Tollgate keeps one per currency, the one the family calls `card`' }),
  },
  { description: 'Available balance moved from your account to one of your connected accounts.' },
);

export function reversalObject(r: TransferReversalRow): Record<string, unknown> {
  return {
    id: r.id,
    object: 'transfer_reversal',
    amount: Number(r.amount_minor),
    currency: lower(r.currency),
    created: unixSeconds(r.created_at),
    transfer: r.transfer_id,
    description: r.description || null,
    metadata: JSON.parse(r.metadata) as Record<string, string>,
    balance_transaction: null,
    destination_payment_refund: null,
    source_refund: null,
  };
}

export function transferObject(t: TransferRow, reversals: ListPage<TransferReversalRow> = { rows: [], has_more: false }): Record<string, unknown> {
  const amount = Number(t.amount_minor);
  const reversed = Number(t.reversed_minor);
  return {
    id: t.id,
    object: 'transfer',
    amount,
    amount_reversed: reversed,
    currency: lower(t.currency),
    created: unixSeconds(t.created_at),
    description: t.description || null,
    destination: t.destination,
    livemode: t.livemode === 1,
    metadata: JSON.parse(t.metadata) as Record<string, string>,
    reversals: listObject(`/v1/transfers/${t.id}/reversals`, reversals, reversals.rows.map(reversalObject)),
    reversed: transferState(t) === 'reversed',
    transfer_group: t.transfer_group || null,
    balance_transaction: null,
    source_transaction: null,
    // One balance per currency (src/connect/balance.ts): the family's `card` balance.
    source_type: 'card',
  };
}

type Db = Tx | Deps['store']['db'];

/** The caller's scope: its (platform) account and mode. */
function scopeOf(request: FastifyRequest): { platform: string; merchant_id: string; livemode: number } {
  const c = callerOf(request);
  return { platform: c.creds.account.account_id, merchant_id: c.creds.account.merchant_id, livemode: c.livemode ? 1 : 0 };
}

function findTransfer(db: Db, platform: string, livemode: number, id: string): Promise<TransferRow | undefined> {
  return db
    .selectFrom('transfers')
    .selectAll()
    .where('id', '=', id)
    .where('platform_account_id', '=', platform)
    .where('livemode', '=', livemode)
    .executeTakeFirst();
}

/** The newest reversals of each transfer (a bounded sublist each), in one query. */
export async function embeddedReversals(db: Db, transfer_ids: string[]): Promise<Map<string, ListPage<TransferReversalRow>>> {
  const out = new Map<string, ListPage<TransferReversalRow>>();
  if (transfer_ids.length === 0) return out;
  const rows = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('transfer_reversals')
        .selectAll()
        .select(sql<number>`row_number() over (partition by transfer_id order by created_at desc, id desc)`.as('rn'))
        .where('transfer_id', 'in', transfer_ids)
        .as('r'),
    )
    .selectAll()
    .where('rn', '<=', EMBEDDED_REVERSALS + 1)
    .orderBy('transfer_id')
    .orderBy('rn')
    .execute();
  for (const r of rows) {
    const page = out.get(r.transfer_id) ?? { rows: [], has_more: false };
    if (page.rows.length < EMBEDDED_REVERSALS) page.rows.push(r);
    else page.has_more = true;
    out.set(r.transfer_id, page);
  }
  return out;
}

async function answerTransfers(db: Db, rows: TransferRow[]): Promise<Record<string, unknown>[]> {
  const reversals = await embeddedReversals(
    db,
    rows.filter((t) => Number(t.reversed_minor) > 0).map((t) => t.id),
  );
  return rows.map((t) => transferObject(t, reversals.get(t.id)));
}

/**
 * Takes the funding row of one balance (the payouts' row, src/payouts/service.ts): on
 * PostgreSQL its row lock makes every movement that may take that balance down (payouts,
 * transfers, reversals) check and debit it one after another; the available balance read
 * after it includes each of them committed before.
 */
function checkCurrency(given: string): string {
  const currency = given.toUpperCase();
  requireCurrency('currency', currency);
  return currency;
}

/**
 * The generic interface's table of the transfer commands' refusals, in the platform family's
 * words: an unknown destination is a 400 on the body parameter, the balance and the amount
 * are `amount` errors with their own codes.
 */
const TRANSFER_REFUSAL: Readonly<Partial<Record<Outcome, (f: Readonly<Record<string, string | number>>) => GenericError>>> = {
  not_found: (f) => noDestination(String(f.destination)),
  invalid_state: (f) =>
    new GenericError(400, {
      type: 'invalid_request_error',
      code: 'transfers_not_allowed',
      param: 'destination',
      message: `Account ${f.destination} does not have the transfers capability active: request it with capabilities[transfers][requested]=true.`,
    }),
  insufficient_funds: (f) =>
    invalidParam(
      'amount',
      `Insufficient funds: ${f.holder === 'platform' ? 'your account' : `connected account ${f.account}`} has ${f.available} ${lower(String(f.currency))} available (minor units), less than the ${f.asked} asked for.`,
      'balance_insufficient',
    ),
  amount_exceeds: (f) =>
    invalidParam(
      'amount',
      f.left === 0
        ? `Transfer ${f.transfer} is already fully reversed.`
        : `Amount ${f.asked} is more than the ${f.left} of transfer ${f.transfer} not reversed yet.`,
      'amount_too_large',
    ),
};

function transferRefusal(r: Refusal): GenericError {
  const word = TRANSFER_REFUSAL[r.outcome];
  if (!word || !r.facts) throw new Error(`a transfer command refused with ${r.outcome}, which its table does not word`);
  return word(r.facts);
}

/** The platform family answers an unknown destination with 400 (a body parameter), not 404. */
const noDestination = (id: string): GenericError => new GenericError(400, noSuch('destination', id, 'destination').body);

/** What every transfer route's schema carries besides its own parts (new objects per registration). */
const doc = () => ({ tags: [CONNECT_TAG], security: [{ bearer: [] }] });

const createTransferSchema = () => ({
  operationId: 'createTransfer',
  summary: 'Create a transfer',
  description:
    'Moves `amount` of your available balance in `currency` to one of your connected accounts, at once. Refused with `balance_insufficient` (nothing moves) when your available balance is smaller: it never goes below zero.',
  ...doc(),
  body: CreateTransfer,
  response: { ...objectAnswers(TransferObject, 'The transfer.'), ...errorAnswers([400, 401, 409, 429]) },
});

const retrieveTransferSchema = () => ({
  operationId: 'retrieveTransfer',
  summary: 'Retrieve a transfer',
  description: 'One of your transfers, with its newest reversals; another account’s id or one of the other mode is 404.',
  ...doc(),
  params: IdParams('tr_'),
  querystring: RetrieveQuery,
  response: { ...objectAnswers(TransferObject, 'The transfer.'), ...errorAnswers([401, 403, 404, 429]) },
});

const updateTransferSchema = () => ({
  operationId: 'updateTransfer',
  summary: 'Update a transfer',
  description: 'Changes `description` and `metadata` only (metadata keys are merged; a key set to an empty string is removed).',
  ...doc(),
  params: IdParams('tr_'),
  body: UpdateTransfer,
  response: { ...objectAnswers(TransferObject, 'The transfer after the update.'), ...errorAnswers([400, 401, 404, 409, 429]) },
});

const listTransfersSchema = () => ({
  operationId: 'listTransfers',
  summary: 'List transfers',
  description:
    'Newest first; `limit` (1 to 100, default 10), `starting_after` / `ending_before` cursors, `created`, `destination` and `transfer_group` filters.',
  ...doc(),
  querystring: ListTransfers,
  response: {
    ...objectAnswers(ListEnvelope(TransferObject, 'A page of transfers, newest first.'), 'A page of transfers.'),
    ...errorAnswers([400, 401, 403, 404, 429]),
  },
});

const createReversalSchema = () => ({
  operationId: 'createTransferReversal',
  summary: 'Reverse a transfer',
  description:
    'Takes `amount` (default: all that is not reversed yet) back from the connected account to your available balance. Several partial reversals may be made, never more than was transferred (`amount_too_large`), and never more than the connected account has available (`balance_insufficient`).',
  ...doc(),
  params: IdParams('tr_'),
  body: CreateReversal,
  response: { ...objectAnswers(ReversalObject, 'The reversal.'), ...errorAnswers([400, 401, 404, 409, 429]) },
});

const listReversalsSchema = () => ({
  operationId: 'listTransferReversals',
  summary: 'List the reversals of a transfer',
  description: 'Newest first; `limit` (1 to 100, default 10), `starting_after` / `ending_before` cursors, `created` filter.',
  ...doc(),
  params: IdParams('tr_'),
  querystring: ListReversals,
  response: {
    ...objectAnswers(ListEnvelope(ReversalObject, 'A page of reversals, newest first.'), 'A page of reversals.'),
    ...errorAnswers([400, 401, 403, 404, 429]),
  },
});

const retrieveReversalSchema = () => ({
  operationId: 'retrieveTransferReversal',
  summary: 'Retrieve a transfer reversal',
  description: 'One reversal of one of your transfers.',
  ...doc(),
  params: ReversalParams,
  querystring: RetrieveQuery,
  response: { ...objectAnswers(ReversalObject, 'The reversal.'), ...errorAnswers([401, 403, 404, 429]) },
});

const updateReversalSchema = () => ({
  operationId: 'updateTransferReversal',
  summary: 'Update a transfer reversal',
  description: 'Changes `metadata` only (keys are merged; a key set to an empty string is removed).',
  ...doc(),
  params: ReversalParams,
  body: UpdateReversal,
  response: { ...objectAnswers(ReversalObject, 'The reversal after the update.'), ...errorAnswers([400, 401, 404, 409, 429]) },
});

type IdRequest = FastifyRequest<{ Params: { id: string } }>;
type ReversalRequest = FastifyRequest<{ Params: { id: string; reversal_id: string } }>;

/** POST /v1/transfers */
async function createTransfer(deps: Deps, request: FastifyRequest<{ Body: CreateTransfer }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const b = request.body;
  const currency = checkCurrency(b.currency);
  if (!(await findAccount(deps.store.db, s.platform, s.livemode === 1, b.destination))) throw noDestination(b.destination);
  const outcome = await makeTransfer(
    deps.store,
    {
      platform_account_id: s.platform,
      merchant_id: s.merchant_id,
      livemode: s.livemode,
      destination: b.destination,
      currency,
      amount_minor: b.amount,
      description: b.description ?? '',
      transfer_group: b.transfer_group ?? '',
      metadata: JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined)),
      idempotency_ref: request.idempotency?.id ?? null,
    },
    deps.now(),
  );
  if (!outcome.ok) throw transferRefusal(outcome);
  const { row, made } = outcome;
  const [answer] = made ? await answerTransfers(deps.store.db, [row]) : [transferObject(row)];
  return sendObject(request, reply, await expanded(request, answer as Record<string, unknown>, transferExpanders(deps, request)));
}

/** `expand[]` on transfers: `destination`, the connected account (docs/contract.md §24). */
function transferExpanders(deps: Deps, request: FastifyRequest): ExpandersOf<'transfer'> {
  const s = scopeOf(request);
  return {
    destination: async (id) => {
      const row = await findAccount(deps.store.db, s.platform, s.livemode === 1, id);
      return row ? accountObject(row) : undefined;
    },
  };
}

/** `expand[]` on reversals: `transfer`. */
function reversalExpanders(deps: Deps, request: FastifyRequest): ExpandersOf<'transfer_reversal'> {
  const s = scopeOf(request);
  return {
    transfer: async (id) => {
      const row = await findTransfer(deps.store.db, s.platform, s.livemode, id);
      return row ? (await answerTransfers(deps.store.db, [row]))[0] : undefined;
    },
  };
}

/** GET /v1/transfers/:id */
async function retrieveTransfer(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const s = scopeOf(request);
  const row = await findTransfer(deps.store.db, s.platform, s.livemode, request.params.id);
  if (!row) throw noSuch('transfer', request.params.id);
  const [answer] = await answerTransfers(deps.store.db, [row]);
  return sendObject(request, reply, await expanded(request, answer as Record<string, unknown>, transferExpanders(deps, request)));
}

/** POST /v1/transfers/:id */
async function updateTransfer(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Body: UpdateTransfer }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const b = request.body;
  const now = deps.now();
  const updated = await deps.store.transaction(async (tx) => {
    // Locked first, then merged: concurrent metadata updates both land.
    const row = await tx
      .updateTable('transfers')
      .set({ updated_at: now })
      .where('id', '=', request.params.id)
      .where('platform_account_id', '=', s.platform)
      .where('livemode', '=', s.livemode)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw noSuch('transfer', request.params.id);
    const patch = {
      description: b.description ?? row.description,
      metadata: JSON.stringify(mergeMetadata(row.metadata, b.metadata as MetadataInput | undefined)),
    };
    await tx.updateTable('transfers').set(patch).where('id', '=', row.id).execute();
    return { ...row, ...patch };
  });
  const [answer] = await answerTransfers(deps.store.db, [updated]);
  return sendObject(request, reply, await expanded(request, answer as Record<string, unknown>, transferExpanders(deps, request)));
}

/** GET /v1/transfers */
async function listTransfers(deps: Deps, request: FastifyRequest<{ Querystring: ListTransfers }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const q = request.query;
  const mine = () => deps.store.db.selectFrom('transfers').selectAll().where('platform_account_id', '=', s.platform).where('livemode', '=', s.livemode);
  // A destination that is not one of the caller's accounts (deleted ones count) is "no such account".
  if (q.destination !== undefined) {
    const known = await deps.store.db
      .selectFrom('connected_accounts')
      .select('id')
      .where('id', '=', q.destination)
      .where('platform_account_id', '=', s.platform)
      .where('livemode', '=', s.livemode)
      .executeTakeFirst();
    if (!known) throw noSuch('account', q.destination, 'destination');
  }
  const filtered = () => {
    let query = mine();
    if (q.destination !== undefined) query = query.where('destination', '=', q.destination);
    if (q.transfer_group !== undefined) query = query.where('transfer_group', '=', q.transfer_group);
    return query;
  };
  // A cursor is any of the caller's transfers, filtered out or not.
  const page = await listPage<TransferRow>(q, 'transfer', filtered, (id) => mine().where('id', '=', id).executeTakeFirst());
  const list = listObject('/v1/transfers', page, await answerTransfers(deps.store.db, page.rows));
  return sendObject(request, reply, await expanded(request, list, transferExpanders(deps, request)));
}

/** POST /v1/transfers/:id/reversals */
async function createReversal(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Body: CreateReversal }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const b = request.body;
  const t = await findTransfer(deps.store.db, s.platform, s.livemode, request.params.id);
  if (!t) throw noSuch('transfer', request.params.id);
  const metadata = JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined));
  const cmd = { transfer: t, amount_minor: b.amount ?? null, description: b.description ?? '', metadata, idempotency_ref: request.idempotency?.id ?? null };
  const outcome = await makeReversal(deps.store, cmd, deps.now());
  if (!outcome.ok) throw transferRefusal(outcome);
  return sendObject(request, reply, await expanded(request, reversalObject(outcome.row), reversalExpanders(deps, request)));
}

/** GET /v1/transfers/:id/reversals */
async function listReversals(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Querystring: ListQuery }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const t = await findTransfer(deps.store.db, s.platform, s.livemode, request.params.id);
  if (!t) throw noSuch('transfer', request.params.id);
  const scoped = () => deps.store.db.selectFrom('transfer_reversals').selectAll().where('transfer_id', '=', t.id);
  const page = await listPage<TransferReversalRow>(request.query, 'transfer_reversal', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  const list = listObject(`/v1/transfers/${t.id}/reversals`, page, page.rows.map(reversalObject));
  return sendObject(request, reply, await expanded(request, list, reversalExpanders(deps, request)));
}

/** A reversal of one of the caller's transfers; both ids must match. */
async function findReversal(db: Db, request: ReversalRequest) {
  const s = scopeOf(request);
  const { id, reversal_id } = request.params;
  const row = await db
    .selectFrom('transfer_reversals')
    .selectAll()
    .where('id', '=', reversal_id)
    .where('transfer_id', '=', id)
    .where('platform_account_id', '=', s.platform)
    .where('livemode', '=', s.livemode)
    .executeTakeFirst();
  if (!row) throw noSuch('transfer_reversal', reversal_id);
  return row;
}

/** GET /v1/transfers/:id/reversals/:reversal_id */
async function retrieveReversal(deps: Deps, request: ReversalRequest, reply: FastifyReply) {
  return sendObject(request, reply, await expanded(request, reversalObject(await findReversal(deps.store.db, request)), reversalExpanders(deps, request)));
}

/** POST /v1/transfers/:id/reversals/:reversal_id */
async function updateReversal(deps: Deps, request: FastifyRequest<{ Params: { id: string; reversal_id: string }; Body: UpdateReversal }>, reply: FastifyReply) {
  const s = scopeOf(request);
  const now = deps.now();
  const updated = await deps.store.transaction(async (tx) => {
    // Locked first, then merged, as for transfers.
    const row = await tx
      .updateTable('transfer_reversals')
      .set({ updated_at: now })
      .where('id', '=', request.params.reversal_id)
      .where('transfer_id', '=', request.params.id)
      .where('platform_account_id', '=', s.platform)
      .where('livemode', '=', s.livemode)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw noSuch('transfer_reversal', request.params.reversal_id);
    const metadata = JSON.stringify(mergeMetadata(row.metadata, request.body.metadata as MetadataInput | undefined));
    await tx.updateTable('transfer_reversals').set({ metadata }).where('id', '=', row.id).execute();
    return { ...row, metadata };
  });
  return sendObject(request, reply, await expanded(request, reversalObject(updated), reversalExpanders(deps, request)));
}

export function registerTransferRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  app.post<{ Body: CreateTransfer }>('/v1/transfers', { ...opts, schema: createTransferSchema() }, (request, reply) => createTransfer(deps, request, reply));
  app.get<{ Params: { id: string } }>('/v1/transfers/:id', { ...opts, schema: retrieveTransferSchema() }, (request, reply) =>
    retrieveTransfer(deps, request, reply),
  );
  app.post<{ Params: { id: string }; Body: UpdateTransfer }>('/v1/transfers/:id', { ...opts, schema: updateTransferSchema() }, (request, reply) =>
    updateTransfer(deps, request, reply),
  );
  app.get<{ Querystring: ListTransfers }>('/v1/transfers', { ...opts, schema: listTransfersSchema() }, (request, reply) => listTransfers(deps, request, reply));
  app.post<{ Params: { id: string }; Body: CreateReversal }>('/v1/transfers/:id/reversals', { ...opts, schema: createReversalSchema() }, (request, reply) =>
    createReversal(deps, request, reply),
  );
  app.get<{ Params: { id: string }; Querystring: ListQuery }>('/v1/transfers/:id/reversals', { ...opts, schema: listReversalsSchema() }, (request, reply) =>
    listReversals(deps, request, reply),
  );
  app.get<{ Params: { id: string; reversal_id: string } }>(
    '/v1/transfers/:id/reversals/:reversal_id',
    { ...opts, schema: retrieveReversalSchema() },
    (request, reply) => retrieveReversal(deps, request, reply),
  );
  app.post<{ Params: { id: string; reversal_id: string }; Body: UpdateReversal }>(
    '/v1/transfers/:id/reversals/:reversal_id',
    { ...opts, schema: updateReversalSchema() },
    (request, reply) => updateReversal(deps, request, reply),
  );
  registerBalanceRoute(app, deps);
}
