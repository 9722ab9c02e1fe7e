// `/v1/refunds` of the generic interface (docs/contract.md §18; issue 13): the acquiring interface's
// refund aggregate in the card-platform shape. Create calls `makeRefund`, the one refund
// path (the cap by compare-and-set, postings, event), with the request's Idempotency-Key as
// its `idempotency_ref`, so a re-run after a crash finds the refund it already made.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { RefundRow } from '../db/tables/refunds.js';
import { describeStatus } from '../payments/lifecycle.js';
import { makeRefund } from '../refunds/refund.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { genericRefusal } from './outcomes.js';
import { findPayment, paymentId, paymentObject } from './payments.js';
import {
  Expand,
  type Expanders,
  expanded,
  GenericError,
  IdParams,
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
} from './wire.js';

export const REFUND_ID_PREFIX = 're_';
const refundId = (ref: string): string => `${REFUND_ID_PREFIX}${ref}`;
const refOf = (id: string): string | null => (id.startsWith(REFUND_ID_PREFIX) ? id.slice(REFUND_ID_PREFIX.length) : null);

const REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;

export function refundObject(r: RefundRow, livemode: boolean): Record<string, unknown> {
  const reason = (REASONS as readonly string[]).includes(r.refund_reason) ? r.refund_reason : null;
  return {
    id: refundId(r.refund_reference_id),
    object: 'refund',
    amount: Number(r.refund_amount_minor),
    currency: lower(r.currency),
    payment: paymentId(r.transaction_id),
    status: r.status,
    reason,
    created: unixSeconds(r.created_at),
    livemode,
    metadata: JSON.parse(r.metadata || '{}') as Record<string, string>,
    refund_reference_id: r.refund_reference_id,
    result_code: r.result_code,
  };
}

const CreateRefund = Type.Object(
  {
    payment: Type.String({ maxLength: 80, description: 'the id of the payment to refund (pay_…)' }),
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'minor units; default: all that is left to refund' })),
    reason: Type.Optional(Type.String({ enum: [...REASONS] })),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
const UpdateRefund = Type.Object({ metadata: Type.Optional(Metadata), expand: Expand }, { additionalProperties: false });
const ListRefunds = Type.Object(
  { ...listParams, payment: Type.Optional(Type.String({ maxLength: 80, description: 'only the refunds of this payment (pay_…)' })) },
  { additionalProperties: false },
);

const RefundObject = Type.Object(
  {
    id: Type.String({ description: 're_…' }),
    object: Type.Literal('refund'),
    amount: Type.Integer(),
    currency: Type.String(),
    payment: Type.String({ description: 'pay_…' }),
    status: Type.String({ enum: ['succeeded', 'pending', 'failed'] }),
    reason: Type.Union([Type.String({ enum: [...REASONS] }), Type.Null()]),
    created: Type.Integer(),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    refund_reference_id: Type.String({ description: 'the acquiring interface’s refund_reference_id' }),
    result_code: Type.String(),
  },
  { description: 'A refund of (part of) a payment.' },
);

async function findRefund(deps: Deps, request: FastifyRequest, id: string): Promise<RefundRow> {
  const caller = callerOf(request);
  const ref = refOf(id);
  const row = ref
    ? await deps.store.db
        .selectFrom('refunds')
        .innerJoin('payments', 'payments.transaction_id', 'refunds.transaction_id')
        .selectAll('refunds')
        .where('refunds.refund_reference_id', '=', ref)
        .where('refunds.account_id', '=', caller.creds.account.account_id)
        .where('payments.livemode', '=', caller.livemode ? 1 : 0)
        .executeTakeFirst()
    : undefined;
  if (!row) throw noSuch('refund', id);
  return row;
}

type IdRoute = { Params: { id: string } };
const tags = () => [PAYMENTS_TAG];
const security = () => [{ bearer: [] }];

/** The routes of /v1/refunds, in their order in the OpenAPI document; each schema is built per app (Fastify normalises a route's schema in place). */
export function registerGenericRefundRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  app.post<{ Body: Static<typeof CreateRefund> }>('/v1/refunds', { ...opts, schema: createSchema() }, (request, reply) => createRefund(deps, request, reply));
  app.get<IdRoute>('/v1/refunds/:id', { ...opts, schema: retrieveSchema() }, (request, reply) => retrieveRefund(deps, request, reply));
  app.post<IdRoute & { Body: Static<typeof UpdateRefund> }>('/v1/refunds/:id', { ...opts, schema: updateSchema() }, (request, reply) =>
    updateRefund(deps, request, reply),
  );
  app.get<{ Querystring: ListQuery & { payment?: string } }>('/v1/refunds', { ...opts, schema: listSchema() }, (request, reply) =>
    listRefunds(deps, request, reply),
  );
}

function createSchema() {
  return {
    operationId: 'createRefund',
    summary: 'Refund a payment',
    description:
      'Refunds `amount` (default: what is left) of a `succeeded` payment; several partial refunds up to the captured amount, never more under any concurrency. Fees are not given back.',
    tags: tags(),
    security: security(),
    body: CreateRefund,
    response: { ...objectAnswers(RefundObject, 'The refund.'), ...errorAnswers([400, 401, 404, 409, 429]) },
  };
}

async function createRefund(deps: Deps, request: FastifyRequest<{ Body: Static<typeof CreateRefund> }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const payment = await findPayment(deps, request, b.payment).catch((e: unknown) => {
    throw e instanceof GenericError && e.http === 404 ? noSuch('payment', b.payment, 'payment') : e;
  });
  const n = b.amount ?? Number(payment.captured_minor) - Number(payment.refunded_minor);
  if (n <= 0) {
    throw payment.status === 'refunded'
      ? new GenericError(400, {
          type: 'invalid_request_error',
          code: 'charge_already_refunded',
          message: `Payment ${b.payment} has already been refunded in full.`,
        })
      : new GenericError(400, {
          type: 'invalid_request_error',
          code: 'payment_intent_unexpected_state',
          message: `Cannot refund a payment that is ${describeStatus(payment.status)}.`,
        });
  }
  const idem = request.idempotency?.id;
  const metadata = JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined));
  const cmd = {
    account: caller.creds.account,
    transaction_id: payment.transaction_id,
    amount_minor: n,
    reason: b.reason ?? '',
    idempotency_ref: idem ? `${idem}:0` : null,
    metadata,
  };
  const outcome = await makeRefund(deps, request.log, cmd);
  if (!outcome.ok) throw genericRefusal(outcome, { what: 'payment', id: b.payment, amountParam: 'amount' });
  return sendObject(request, reply, await expanded(request, refundObject(outcome.refund, caller.livemode), refundExpanders(deps, request)));
}

function retrieveSchema() {
  return {
    operationId: 'retrieveRefund',
    summary: 'Retrieve a refund',
    description: 'Any refund of your account and mode (made here or through `/v1/refund`).',
    tags: tags(),
    security: security(),
    params: IdParams(REFUND_ID_PREFIX),
    querystring: RetrieveQuery,
    response: { ...objectAnswers(RefundObject, 'The refund.'), ...errorAnswers([401, 403, 404, 429]) },
  };
}

async function retrieveRefund(deps: Deps, request: FastifyRequest<IdRoute>, reply: FastifyReply) {
  const refund = refundObject(await findRefund(deps, request, request.params.id), callerOf(request).livemode);
  return sendObject(request, reply, await expanded(request, refund, refundExpanders(deps, request)));
}

function updateSchema() {
  return {
    operationId: 'updateRefund',
    summary: 'Update a refund’s metadata',
    description: '`metadata` is merged; a key set to an empty string is removed.',
    tags: tags(),
    security: security(),
    params: IdParams(REFUND_ID_PREFIX),
    body: UpdateRefund,
    response: { ...objectAnswers(RefundObject, 'The refund after the update.'), ...errorAnswers([400, 401, 404, 409, 429]) },
  };
}

async function updateRefund(deps: Deps, request: FastifyRequest<IdRoute & { Body: Static<typeof UpdateRefund> }>, reply: FastifyReply) {
  const row = await findRefund(deps, request, request.params.id);
  const updated = await deps.store.transaction(async (tx) => {
    // Lock, then read and merge (a concurrent update is never lost on PostgreSQL).
    await tx.updateTable('refunds').set({ updated_at: deps.now() }).where('refund_reference_id', '=', row.refund_reference_id).execute();
    const current = await tx.selectFrom('refunds').selectAll().where('refund_reference_id', '=', row.refund_reference_id).executeTakeFirstOrThrow();
    const metadata = JSON.stringify(mergeMetadata(current.metadata, request.body.metadata as MetadataInput | undefined));
    await tx.updateTable('refunds').set({ metadata }).where('refund_reference_id', '=', row.refund_reference_id).execute();
    return { ...current, metadata };
  });
  return sendObject(request, reply, await expanded(request, refundObject(updated, callerOf(request).livemode), refundExpanders(deps, request)));
}

function listSchema() {
  return {
    operationId: 'listRefunds',
    summary: 'List refunds',
    description: 'Refunds of your account and mode, newest first; `payment` narrows to one payment.',
    tags: tags(),
    security: security(),
    querystring: ListRefunds,
    response: {
      ...objectAnswers(ListEnvelope(RefundObject, 'A page of refunds, newest first.'), 'A page of refunds.'),
      ...errorAnswers([400, 401, 403, 404, 429]),
    },
  };
}

async function listRefunds(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery & { payment?: string } }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const account_id = caller.creds.account.account_id;
  const livemode = caller.livemode ? 1 : 0;
  const payment = request.query.payment;
  // A payment that is not this key's is "no such payment", as on its own route.
  const tid =
    payment === undefined
      ? null
      : (
          await findPayment(deps, request, payment).catch((e: unknown) => {
            throw e instanceof GenericError && e.http === 404 ? noSuch('payment', payment, 'payment') : e;
          })
        ).transaction_id;
  const scoped = () => {
    let q = deps.store.db
      .selectFrom('refunds')
      .innerJoin('payments', 'payments.transaction_id', 'refunds.transaction_id')
      .selectAll('refunds')
      .where('refunds.account_id', '=', account_id)
      .where('payments.livemode', '=', livemode);
    if (tid !== null) q = q.where('refunds.transaction_id', '=', tid);
    return q;
  };
  const page = await listPage<RefundRow>(
    request.query,
    'refund',
    scoped,
    async (id) => {
      const ref = refOf(id);
      const r = ref ? await scoped().where('refunds.refund_reference_id', '=', ref).executeTakeFirst() : undefined;
      return r ? { created_at: r.created_at, id: r.refund_reference_id } : undefined;
    },
    { created: 'refunds.created_at', id: 'refunds.refund_reference_id' },
  );
  const list = listObject(
    '/v1/refunds',
    page,
    page.rows.map((r) => refundObject(r, caller.livemode)),
  );
  return sendObject(request, reply, await expanded(request, list, refundExpanders(deps, request)));
}

/** `expand[]` on refunds: `payment`, the payment refunded (docs/contract.md §24). */
function refundExpanders(deps: Deps, request: FastifyRequest): Expanders {
  return { payment: async (id) => paymentObject(await findPayment(deps, request, id)) };
}
