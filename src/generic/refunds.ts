// `/v1/refunds` of the generic interface (docs/contract.md §18; issue 13): the acquiring interface's
// refund aggregate in the card-platform shape. Create calls `makeRefund`, the one refund
// path (the cap by compare-and-set, postings, event), with the request's Idempotency-Key as
// its `idempotency_ref`, so a re-run after a crash finds the refund it already made.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { PaymentRow } from '../db/tables/payments.js';
import type { RefundRow } from '../db/tables/refunds.js';
import { describeStatus } from '../payments/lifecycle.js';
import { makeRefund } from '../refunds/refund.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { chargeId, chargeObjects, findCharge } from './charges.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { genericRefusal } from './outcomes.js';
import { intentById, intentIdsOf, latestPaymentOfIntent } from './payment-intents.js';
import { findPayment, paymentId, paymentObject } from './payments.js';
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
  lower,
  Metadata,
  type MetadataInput,
  mergeMetadata,
  missingParam,
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

/** The refund's wire object; `intent` is the PaymentIntent whose charge it refunds (null when the payment was not one's). */
export function refundObject(r: RefundRow, livemode: boolean, intent: string | null): Record<string, unknown> {
  const reason = (REASONS as readonly string[]).includes(r.refund_reason) ? r.refund_reason : null;
  return {
    id: refundId(r.refund_reference_id),
    object: 'refund',
    amount: Number(r.refund_amount_minor),
    balance_transaction: null,
    charge: chargeId(r.transaction_id),
    created: unixSeconds(r.created_at),
    currency: lower(r.currency),
    customer: null,
    customer_account: null,
    destination_details: { card: { type: 'refund' }, type: 'card' },
    livemode,
    metadata: JSON.parse(r.metadata || '{}') as Record<string, string>,
    payment: paymentId(r.transaction_id),
    payment_intent: intent,
    payment_method: null,
    reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: r.status,
    transfer_reversal: null,
    refund_reference_id: r.refund_reference_id,
    result_code: r.result_code,
  };
}

/** `rows` as refund objects, their PaymentIntents read in one query. */
async function refundObjects(deps: Deps, rows: readonly RefundRow[], livemode: boolean): Promise<Record<string, unknown>[]> {
  const intents = await intentIdsOf(deps, [...new Set(rows.map((r) => r.transaction_id))]);
  return rows.map((r) => refundObject(r, livemode, intents.get(r.transaction_id) ?? null));
}

const CreateRefund = Type.Object(
  {
    payment_intent: Type.Optional(Type.String({ maxLength: 80, description: 'the PaymentIntent to refund (pi_…): its latest charge' })),
    charge: Type.Optional(Type.String({ maxLength: 80, description: 'the charge to refund (ch_…)' })),
    payment: Type.Optional(Type.String({ maxLength: 80, description: 'the payment to refund (pay_…); send one of payment_intent, charge, payment' })),
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'minor units; default: all that is left to refund' })),
    reason: Type.Optional(Type.String({ enum: [...REASONS] })),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
const UpdateRefund = Type.Object({ metadata: Type.Optional(Metadata), expand: Expand }, { additionalProperties: false });
const ListRefunds = Type.Object(
  {
    ...listParams,
    payment_intent: Type.Optional(Type.String({ maxLength: 80, description: 'only the refunds of this PaymentIntent’s charges (pi_…)' })),
    charge: Type.Optional(Type.String({ maxLength: 80, description: 'only the refunds of this charge (ch_…)' })),
    payment: Type.Optional(Type.String({ maxLength: 80, description: 'only the refunds of this payment (pay_…)' })),
  },
  { additionalProperties: false },
);

const RefundObject = Type.Object(
  {
    id: Type.String({ description: 're_…' }),
    object: Type.Literal('refund'),
    amount: Type.Integer(),
    currency: Type.String(),
    payment: Type.String({ description: 'pay_…' }),
    charge: Type.String({ description: 'ch_…: the same payment as a charge' }),
    payment_intent: Type.Union([Type.String({ description: 'pi_…' }), Type.Null()]),
    status: Type.String({ enum: ['succeeded', 'pending', 'failed'] }),
    reason: Type.Union([Type.String({ enum: [...REASONS] }), Type.Null()]),
    created: Type.Integer(),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    refund_reference_id: Type.String({ description: 'the acquiring interface’s refund_reference_id' }),
    result_code: Type.String(),
  },
  { additionalProperties: true, description: 'A refund of (part of) a payment.' },
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
  app.get<{ Querystring: ListQuery & RefundFilters }>('/v1/refunds', { ...opts, schema: listSchema() }, (request, reply) => listRefunds(deps, request, reply));
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
  const payment = await refundedPayment(deps, request, b);
  const named = (b.payment_intent ?? b.charge ?? b.payment) as string;
  const n = b.amount ?? Number(payment.captured_minor) - Number(payment.refunded_minor);
  // Refunded in full already (whatever amount is asked), unless this is the re-run of the request that did it.
  const full = payment.status === 'refunded' || (Number(payment.refunded_minor) > 0 && Number(payment.refunded_minor) >= Number(payment.captured_minor));
  if (n <= 0 || (full && !request.idempotency?.rerun)) {
    throw full
      ? new GenericError(400, {
          type: 'invalid_request_error',
          code: 'charge_already_refunded',
          message: `Charge ${chargeId(payment.transaction_id)} has already been refunded in full.`,
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
  if (!outcome.ok) throw genericRefusal(outcome, { what: 'payment', id: named, amountParam: 'amount' });
  const [refund] = await refundObjects(deps, [outcome.refund], caller.livemode);
  return sendObject(request, reply, await expanded(request, refund as Record<string, unknown>, refundExpanders(deps, request)));
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
  const [refund] = await refundObjects(deps, [await findRefund(deps, request, request.params.id)], callerOf(request).livemode);
  return sendObject(request, reply, await expanded(request, refund as Record<string, unknown>, refundExpanders(deps, request)));
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
  const [refund] = await refundObjects(deps, [updated], callerOf(request).livemode);
  return sendObject(request, reply, await expanded(request, refund as Record<string, unknown>, refundExpanders(deps, request)));
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

type RefundFilters = { payment?: string; charge?: string; payment_intent?: string };

async function listRefunds(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery & RefundFilters }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const account_id = caller.creds.account.account_id;
  const livemode = caller.livemode ? 1 : 0;
  const { payment, charge, payment_intent } = request.query;
  // A payment, charge or intent that is not this key's is "no such …", as on its own route.
  const tid = payment !== undefined || charge !== undefined ? (await refundedPayment(deps, request, { payment, charge })).transaction_id : null;
  if (payment_intent !== undefined && !(await intentById(deps, request, payment_intent))) throw noSuch('payment_intent', payment_intent, 'payment_intent');
  const scoped = () => {
    let q = deps.store.db
      .selectFrom('refunds')
      .innerJoin('payments', 'payments.transaction_id', 'refunds.transaction_id')
      .selectAll('refunds')
      .where('refunds.account_id', '=', account_id)
      .where('payments.livemode', '=', livemode);
    if (tid !== null) q = q.where('refunds.transaction_id', '=', tid);
    if (payment_intent !== undefined)
      q = q.where(
        'refunds.transaction_id',
        'in',
        deps.store.db.selectFrom('payment_intent_charges').select('transaction_id').where('intent_id', '=', payment_intent),
      );
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
  const list = listObject('/v1/refunds', page, await refundObjects(deps, page.rows, caller.livemode));
  return sendObject(request, reply, await expanded(request, list, refundExpanders(deps, request)));
}

/** `expand[]` on refunds: `payment`, `charge` (the payment refunded) and `payment_intent` (docs/contract.md §24). */
function refundExpanders(deps: Deps, request: FastifyRequest): ExpandersOf<'refund'> {
  return {
    payment: async (id) => paymentObject(await findPayment(deps, request, id)),
    charge: async (id) => (await chargeObjects(deps.store.db, [await findCharge(deps, request, id)]))[0],
    payment_intent: (id) => intentById(deps, request, id),
  };
}

/**
 * The payment a refund (or a refund list) names: by `payment_intent` (its latest charge), `charge`
 * or `payment`, exactly one of them on create. Another account's or mode's is "no such …" on
 * the parameter that named it.
 */
async function refundedPayment(deps: Deps, request: FastifyRequest, b: RefundFilters): Promise<PaymentRow> {
  const given = (['payment_intent', 'charge', 'payment'] as const).filter((k) => b[k] !== undefined);
  if (given.length === 0) throw missingParam('payment_intent');
  if (given.length > 1)
    throw new GenericError(400, {
      type: 'invalid_request_error',
      code: 'parameters_exclusive',
      message: `You may only specify one of these parameters: ${given.join(', ')}.`,
      param: given[1],
    });
  if (b.payment_intent !== undefined) return latestPaymentOfIntent(deps, callerOf(request), b.payment_intent, 'payment_intent');
  if (b.charge !== undefined) return findCharge(deps, request, b.charge, 'charge');
  const id = b.payment as string;
  return findPayment(deps, request, id).catch((e: unknown) => {
    throw e instanceof GenericError && e.http === 404 ? noSuch('payment', id, 'payment') : e;
  });
}
