// `/v1/events` of the generic interface (docs/contract.md §24; issue 33 item 5): the platform
// family's event objects, one per platform event the outbox wrote with the change it reports
// (src/notifications/platform.ts), of the caller's account and mode (with `Stripe-Account`,
// those about one of its connected accounts). List (newest first;
// `type` exact or `prefix.*`, `types[]`, `created`) and retrieve. The same JSON is the body
// sent to webhook endpoints (`platformEventBodies`, handed to the delivery worker).
//
// `data.object` is built from the object's row by `platformObjectOf`, the one place that knows
// which object each platform type carries. It is stored at the first send, so every retry
// and every later read answers the same object; an event never sent answers its object as
// it stands now.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { type Static, Type } from 'typebox';
import type { Store } from '../db/store.js';
import type { PayoutRow } from '../db/tables/payouts.js';
import type { PlatformEventRow } from '../db/tables/webhooks.js';
import type { PlatformBodies } from '../notifications/worker.js';
import { accountPayment } from '../payments/reader.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { chargeObjects } from './charges.js';
import { disputeEventObject } from './disputes.js';
import { errorAnswers, objectAnswers, WEBHOOKS_TAG } from './docs.js';
import { intentObjectById, intentObjectOfPayment } from './payment-intents.js';
import { refundObject } from './refunds.js';
import {
  IdParams,
  invalidParam,
  ListEnvelope,
  type ListQuery,
  listObject,
  listPage,
  listParams,
  lower,
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from './wire.js';

// ---- data.object ------------------------------------------------------------------------

type Db = Store['db'];

const PAYOUT_STATUS: Record<PayoutRow['status'], string> = {
  SCHEDULED: 'pending',
  PROCESSING: 'in_transit',
  COMPLETED: 'paid',
  FAILED: 'failed',
  CANCELLED: 'canceled',
};
const PAYOUT_FAILURE: Record<string, string> = {
  INSUFFICIENT_FUNDS: 'insufficient_funds',
  INVALID_ACCOUNT: 'invalid_account_number',
  RETURNED: 'declined',
  PROCESSOR_ERROR: 'could_not_process',
};

/** A payout in the family's `payout` shape (the event's object; there is no /v1/payouts route yet). */
export function payoutObject(row: PayoutRow): Record<string, unknown> {
  const failed = row.status === 'FAILED';
  return {
    id: `po_${row.transaction_id}`,
    object: 'payout',
    amount: Number(row.amount_beneficiary_receives),
    arrival_date: unixSeconds(Date.parse(`${row.payment_date}T00:00:00Z`) || row.dispatch_at),
    automatic: false,
    balance_transaction: null,
    created: unixSeconds(row.created_at),
    currency: lower(row.payment_currency),
    description: null,
    destination: null,
    failure_code: failed ? (PAYOUT_FAILURE[row.failure_type] ?? null) : null,
    failure_message: failed && row.failure_reason !== '' ? row.failure_reason : null,
    livemode: row.livemode === 1,
    metadata: {},
    method: 'standard',
    source_type: 'card',
    statement_descriptor: null,
    status: PAYOUT_STATUS[row.status],
    type: 'bank_account',
  };
}

/**
 * THE place that says what an event's `data.object` is, by its platform type: `charge.*` the
 * payment as a charge (src/generic/charges.ts), `payment_intent.*` the PaymentIntent whose
 * confirm made the payment (or the intent itself: created, or cancelled with no payment to
 * release), `refund.*` the refund, `payout.*` the payout, `charge.dispute.*` the dispute
 * (src/generic/disputes.ts: its evidence text withheld). The object is read in the event's
 * account only.
 */
/**
 * The objects of platform events that live above this folder (a connected account's transfers
 * and the account itself, src/connect/events.ts), handed in by the app's assembly and the
 * background work (src/http/generic-routes.ts, src/cli/background.ts): undefined when not theirs.
 */
export type MoreObjects = (db: Db, event: PlatformEventRow) => Promise<Record<string, unknown> | undefined>;

export async function platformObjectOf(db: Db, event: PlatformEventRow, now: number = Date.now(), more?: MoreObjects): Promise<Record<string, unknown>> {
  const livemode = event.livemode === 1;
  const prefix = event.type.slice(0, event.type.indexOf('.'));
  if (event.type.startsWith('charge.dispute.')) {
    // The dispute (its outbox object), its evidence text withheld: src/generic/disputes.ts.
    const dispute = await disputeEventObject(db, event.account_id, event.object_id);
    if (dispute) return dispute;
    return { id: event.object_id, object: 'dispute' };
  }
  if (prefix === 'charge') {
    // charge.refunded reports a refund (its outbox object is the refund): the object is its payment.
    let transaction_id = event.object_id;
    if (event.type === 'charge.refunded') {
      const r = await db
        .selectFrom('refunds')
        .select('transaction_id')
        .where('refund_reference_id', '=', event.object_id)
        .where('account_id', '=', event.account_id)
        .executeTakeFirst();
      if (r) transaction_id = r.transaction_id;
    }
    const row = await accountPayment(db, event.account_id, transaction_id);
    if (row) return (await chargeObjects(db, [row]))[0] as Record<string, unknown>;
  } else if (prefix === 'payment_intent') {
    // Of a payment an intent's confirm made, or (created; cancelled with no payment to release) of the intent itself.
    const intent =
      (await intentObjectOfPayment(db, now, event.account_id, event.object_id)) ?? (await intentObjectById(db, now, event.account_id, event.object_id));
    if (intent) return intent;
  } else if (prefix === 'refund') {
    const r = await db
      .selectFrom('refunds')
      .selectAll()
      .where('refund_reference_id', '=', event.object_id)
      .where('account_id', '=', event.account_id)
      .executeTakeFirst();
    if (r) {
      const link = await db.selectFrom('payment_intent_charges').select('intent_id').where('transaction_id', '=', r.transaction_id).executeTakeFirst();
      return refundObject(r, livemode, link?.intent_id ?? null);
    }
  } else if (prefix === 'payout') {
    const p = await db
      .selectFrom('payouts')
      .selectAll()
      .where('transaction_id', '=', event.object_id)
      .where('account_id', '=', event.account_id)
      .executeTakeFirst();
    if (p) return payoutObject(p);
  }
  const theirs = more ? await more(db, event) : undefined;
  if (theirs) return theirs;
  // Rows are never deleted, so this is an event whose object the account cannot read: its id only.
  return { id: event.object_id, object: prefix };
}

/** The event object (`pending_webhooks`: deliveries still to make), with its `data.object` as stored or as built now. */
async function eventObject(db: Db, event: PlatformEventRow, pending: number, more?: MoreObjects): Promise<Record<string, unknown>> {
  const object = event.data_object !== null ? (JSON.parse(event.data_object) as Record<string, unknown>) : await platformObjectOf(db, event, Date.now(), more);
  return {
    id: event.id,
    object: 'event',
    api_version: null,
    created: unixSeconds(event.created_at),
    data: { object },
    livemode: event.livemode === 1,
    pending_webhooks: pending,
    request: { id: null, idempotency_key: null },
    type: event.type,
  };
}

async function pendingCounts(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['platform_event_id', (eb) => eb.fn.countAll<string | number>().as('n')])
    .where('platform_event_id', 'in', ids)
    .where('status', '=', 'pending')
    .groupBy('platform_event_id')
    .execute();
  return new Map(rows.map((r) => [r.platform_event_id, Number(r.n)]));
}

/**
 * What the delivery worker sends to endpoints (src/notifications/worker.ts): the event's JSON,
 * its `data.object` stored at the first send (a compare-and-set on "not stored yet", so two
 * workers store one) so every attempt and every later read carries the same object.
 */
export function platformEventBodies(store: Store, more?: MoreObjects): PlatformBodies {
  return {
    async body(event) {
      let stored = event;
      if (event.data_object === null) {
        const object = JSON.stringify(await platformObjectOf(store.db, event, Date.now(), more));
        await store.transaction((tx) =>
          tx.updateTable('platform_events').set({ data_object: object }).where('id', '=', event.id).where('data_object', 'is', null).execute(),
        );
        stored = (await store.db.selectFrom('platform_events').selectAll().where('id', '=', event.id).executeTakeFirst()) ?? { ...event, data_object: object };
      }
      const pending = (await pendingCounts(store.db, [event.id])).get(event.id) ?? 0;
      return JSON.stringify(await eventObject(store.db, stored, pending, more));
    },
  };
}

// ---- parameters -------------------------------------------------------------------------

const TYPE_PATTERN = '^(\\*|[a-z0-9_]+(\\.[a-z0-9_]+)*(\\.\\*)?)$';
const ListEvents = Type.Object(
  {
    ...listParams,
    type: Type.Optional(
      Type.String({ maxLength: 100, pattern: TYPE_PATTERN, description: 'one event type (`charge.succeeded`), or a group ending in `.*` (`charge.*`)' }),
    ),
    types: Type.Optional(
      Type.Array(Type.String({ maxLength: 100, pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)*$' }), {
        minItems: 1,
        maxItems: 20,
        description: 'up to 20 exact event types',
      }),
    ),
  },
  { additionalProperties: false },
);
type ListEventsQuery = ListQuery & Static<typeof ListEvents>;

const EventHeaders = Type.Object({
  'stripe-account': Type.Optional(
    Type.String({ description: 'the id (acct_…) of one of your connected accounts: the events about it (its account.updated, the transfers it received)' }),
  ),
});

const EventObject = Type.Object(
  {
    id: Type.String({ description: 'evt_…' }),
    object: Type.Literal('event'),
    api_version: Type.Null(),
    created: Type.Integer({ description: 'Unix seconds' }),
    data: Type.Object({
      object: Type.Object({}, { additionalProperties: true, description: 'the payment (charge.*), refund (refund.*) or payout (payout.*)' }),
    }),
    livemode: Type.Boolean(),
    pending_webhooks: Type.Integer({ description: 'endpoint deliveries of this event not yet acknowledged' }),
    request: Type.Object({ id: Type.Null(), idempotency_key: Type.Null() }),
    type: Type.String({ description: 'the platform family’s event type' }),
  },
  { description: 'Something that happened in your account, in the platform family’s event shape.' },
);

// ---- handlers ---------------------------------------------------------------------------

/** Whose events a request reads: the caller's account and mode, and with `Stripe-Account` one of its connected accounts. */
interface EventScope {
  account_id: string;
  livemode: number;
  /** The connected account (`acct_…`) of `Stripe-Account`, or undefined. */
  connected: string | undefined;
}

/** The request's scope; `Stripe-Account` naming anything but one of the caller's connected accounts (of its mode, not deleted) is 404 on it. */
async function scopeOf(db: Db, request: FastifyRequest): Promise<EventScope> {
  const caller = callerOf(request);
  const scope = { account_id: caller.creds.account.account_id, livemode: caller.livemode ? 1 : 0, connected: undefined };
  const as = request.headers['stripe-account'];
  if (as === undefined) return scope;
  const id = Array.isArray(as) ? String(as[0]) : as;
  const row = await db
    .selectFrom('connected_accounts')
    .select('id')
    .where('id', '=', id)
    .where('platform_account_id', '=', scope.account_id)
    .where('livemode', '=', scope.livemode)
    .where('deleted', '=', 0)
    .executeTakeFirst();
  if (!row) throw noSuch('account', id, 'Stripe-Account');
  return { ...scope, connected: row.id };
}

/**
 * The platform events of the scope. A connected account's (docs/contract.md §24) are those about
 * it: its `account.updated`, and the transfers it received (`transfer.*`: Tollgate makes no
 * destination payment, the family's object for them on the connected account). They are the
 * platform's events, told to the platform's endpoints; read this way they name the account.
 */
function eventsOf(db: Db, scope: EventScope) {
  const q = db.selectFrom('platform_events').selectAll().where('account_id', '=', scope.account_id).where('livemode', '=', scope.livemode);
  const connected = scope.connected;
  if (connected === undefined) return q;
  return q.where((eb) =>
    eb.or([
      eb.and([eb('type', '=', 'account.updated'), eb('object_id', '=', connected)]),
      eb.and([
        eb('type', 'in', ['transfer.created', 'transfer.reversed']),
        eb('object_id', 'in', eb.selectFrom('transfers').select('id').where('platform_account_id', '=', scope.account_id).where('destination', '=', connected)),
      ]),
    ]),
  );
}

/** The event object as read in `scope`: with `Stripe-Account`, `account` names the connected account, as the family's events of a connected account do. */
async function scopedEventObject(db: Db, scope: EventScope, event: PlatformEventRow, pending: number, more?: MoreObjects) {
  const object = await eventObject(db, event, pending, more);
  return scope.connected === undefined ? object : { ...object, account: scope.connected };
}

/** GET /v1/events/:id */
async function retrieveEvent(store: Store, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, more?: MoreObjects) {
  const scope = await scopeOf(store.db, request);
  const row = await eventsOf(store.db, scope).where('id', '=', request.params.id).executeTakeFirst();
  if (!row) throw noSuch('event', request.params.id);
  const pending = (await pendingCounts(store.db, [row.id])).get(row.id) ?? 0;
  return sendObject(request, reply, await scopedEventObject(store.db, scope, row, pending, more));
}

/** GET /v1/events */
async function listEvents(store: Store, request: FastifyRequest<{ Querystring: ListEventsQuery }>, reply: FastifyReply, more?: MoreObjects) {
  const q = request.query;
  if (q.type !== undefined && q.types !== undefined) throw invalidParam('types', 'You may only specify one of these parameters: type, types.');
  const scope = await scopeOf(store.db, request);
  const scoped = () => {
    let query = eventsOf(store.db, scope);
    if (q.type !== undefined && q.type !== '*') {
      if (q.type.endsWith('.*')) {
        // A group: the prefix up to the dot, as LIKE with its wildcards escaped (`_` is one).
        const prefix = q.type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
        query = query.where(sql<boolean>`type like ${`${prefix}%`} escape '\\'`);
      } else query = query.where('type', '=', q.type);
    }
    if (q.types !== undefined) query = query.where('type', 'in', q.types);
    return query;
  };
  const page = await listPage<PlatformEventRow>(q, 'event', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  const pending = await pendingCounts(
    store.db,
    page.rows.map((r) => r.id),
  );
  const data = await Promise.all(page.rows.map((r) => scopedEventObject(store.db, scope, r, pending.get(r.id) ?? 0, more)));
  return sendObject(request, reply, listObject('/v1/events', page, data));
}

// ---- routes -----------------------------------------------------------------------------

export function registerEventRoutes(app: FastifyInstance, deps: Parameters<typeof genericRouteOptions>[0], more?: MoreObjects): void {
  const opts = genericRouteOptions(deps);
  const doc = () => ({ tags: [WEBHOOKS_TAG], security: [{ bearer: [] }] });
  app.get<{ Params: { id: string } }>(
    '/v1/events/:id',
    {
      ...opts,
      schema: {
        operationId: 'retrieveEvent',
        summary: 'Retrieve an event',
        description:
          'Another account’s id or one of the other mode is 404. With `Stripe-Account`, only an event about that connected account (`account` names it).',
        ...doc(),
        headers: EventHeaders,
        params: IdParams('evt_'),
        querystring: RetrieveQuery,
        response: { ...objectAnswers(EventObject, 'The event.'), ...errorAnswers([401, 403, 404, 429]) },
      },
    },
    (request, reply) => retrieveEvent(deps.store, request, reply, more),
  );
  app.get<{ Querystring: ListEventsQuery }>(
    '/v1/events',
    {
      ...opts,
      schema: {
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'Newest first. `type` keeps one type or a group (`charge.*`); `types[]` up to 20 exact types (not with `type`); `created` a time or range. With `Stripe-Account`, the events about that connected account of yours: its `account.updated` and the transfers it received.',
        ...doc(),
        headers: EventHeaders,
        querystring: ListEvents,
        response: { ...objectAnswers(ListEnvelope(EventObject, 'A page of events.'), 'A page of events.'), ...errorAnswers([400, 401, 403, 429]) },
      },
    },
    (request, reply) => listEvents(deps.store, request, reply, more),
  );
}
