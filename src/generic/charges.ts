// `/v1/charges` of the generic interface (docs/contract.md §24; issue 33): every card payment of
// the account (whichever interface made it) as the platform family's charge `ch_<transaction_id>`.
// A PaymentIntent's confirms are its charges (`payment_intent` names it); a payment of
// `/v1/payments` or of the acquiring interface is a charge without one. Read only: charges are
// made by confirming a PaymentIntent (or by any other payment path), never created here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Tx as Db } from '../db/store.js';
import type { CardRow, PaymentRow } from '../db/tables/payments.js';
import { modePayment, modePaymentsQuery } from '../payments/reader.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { declineOf } from './payments.js';
import {
  type ExpandersOf,
  expanded,
  IdParams,
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

export const CHARGE_ID_PREFIX = 'ch_';
export const chargeId = (transaction_id: string): string => `${CHARGE_ID_PREFIX}${transaction_id}`;
export const transactionOfCharge = (id: string): string | null => (id.startsWith(CHARGE_ID_PREFIX) ? id.slice(CHARGE_ID_PREFIX.length) : null);

/** What a charge names beside its payment: its PaymentIntent (and that intent's customer and PaymentMethod), its card's expiry. */
export interface ChargeContext {
  intent: { id: string; customer_id: string; payment_method_id: string } | null;
  card: Pick<CardRow, 'exp_month' | 'exp_year' | 'fingerprint'> | null;
  /** The payment has a dispute (docs/contract.md §22). */
  disputed?: boolean;
}

/** The contexts of `rows`, in two queries whatever their number. */
export async function chargeContexts(db: Db, rows: readonly PaymentRow[]): Promise<Map<string, ChargeContext>> {
  const out = new Map<string, ChargeContext>();
  if (rows.length === 0) return out;
  const tids = rows.map((r) => r.transaction_id);
  const cardIds = [...new Set(rows.map((r) => r.card_id).filter((c): c is string => !!c))];
  const [links, cards, disputes] = await Promise.all([
    db
      .selectFrom('payment_intent_charges')
      .innerJoin('payment_intents', 'payment_intents.id', 'payment_intent_charges.intent_id')
      .select(['payment_intent_charges.transaction_id', 'payment_intents.id', 'payment_intents.customer_id', 'payment_intents.payment_method_id'])
      .where('payment_intent_charges.transaction_id', 'in', tids)
      .execute(),
    cardIds.length === 0
      ? Promise.resolve([])
      : db.selectFrom('cards').select(['card_id', 'exp_month', 'exp_year', 'fingerprint']).where('card_id', 'in', cardIds).execute(),
    db.selectFrom('disputes').select('transaction_id').where('transaction_id', 'in', tids).execute(),
  ]);
  const disputedTids = new Set(disputes.map((d) => d.transaction_id));
  const linkOf = new Map(links.map((l) => [l.transaction_id, l]));
  const cardOf = new Map(cards.map((c) => [c.card_id, c]));
  for (const r of rows) {
    const l = linkOf.get(r.transaction_id);
    out.set(r.transaction_id, {
      intent: l ? { id: l.id, customer_id: l.customer_id, payment_method_id: l.payment_method_id } : null,
      card: (r.card_id && cardOf.get(r.card_id)) || null,
      disputed: disputedTids.has(r.transaction_id),
    });
  }
  return out;
}

const PAID: ReadonlySet<PaymentRow['status']> = new Set(['authorised', 'captured', 'partially_refunded', 'refunded']);

/** The charge's status: `succeeded` once authorised (a released authorisation stays so, refunded), `pending` while undecided, else `failed`. */
function chargeStatus(row: PaymentRow): 'succeeded' | 'pending' | 'failed' {
  if (PAID.has(row.status)) return 'succeeded';
  if (row.status === 'pending' || row.status === 'processing' || row.status === 'review') return 'pending';
  // Released after an approval (its result stays 0000; the release zeroes authorised_minor), not a payment never approved.
  if ((row.status === 'cancelled' || row.status === 'expired') && row.result_code === '0000') return 'succeeded';
  return 'failed';
}

const emptyAddress = () => ({ city: null, country: null, line1: null, line2: null, postal_code: null, state: null });

/** The charge's `outcome`: the network's answer and the risk engine's score in the family's words. */
function chargeOutcome(row: PaymentRow, status: 'succeeded' | 'pending' | 'failed', decline: ReturnType<typeof declineOf> | null) {
  const score = row.risk_score === null ? null : Number(row.risk_score);
  return {
    advice_code: null,
    network_advice_code: null,
    network_decline_code: null,
    network_status: status === 'succeeded' ? 'approved_by_network' : decline ? 'declined_by_network' : null,
    reason: decline ? decline.decline_code : null,
    risk_level: score === null ? 'not_assessed' : score >= 75 ? 'highest' : score >= 65 ? 'elevated' : 'normal',
    risk_score: score,
    seller_message: status === 'succeeded' ? 'Payment complete.' : decline ? 'The bank did not return any further details with this decline.' : null,
    type: status === 'succeeded' ? 'authorized' : decline ? 'issuer_declined' : 'manual_review',
  };
}

/** `payment_method_details`: the card by brand, last four and expiry (the family's members Tollgate has nothing for are null), or an APM's type. */
function methodDetails(row: PaymentRow, ctx: ChargeContext): Record<string, unknown> | null {
  const masked = row.card_masked ?? '';
  if (row.kind === 'apm' || masked === '') return row.card_brand ? { type: row.card_brand.toLowerCase() } : null;
  const brand = row.card_brand ? row.card_brand.toLowerCase() : 'unknown';
  return {
    card: {
      amount_authorized: Number(row.authorised_minor) || null,
      brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: null },
      country: null,
      exp_month: ctx.card?.exp_month ?? null,
      exp_year: ctx.card?.exp_year ?? null,
      extended_authorization: { status: 'disabled' },
      fingerprint: null,
      funding: 'unknown',
      incremental_authorization: { status: 'unavailable' },
      installments: null,
      last4: masked.slice(-4),
      mandate: null,
      multicapture: { status: 'unavailable' },
      network: brand,
      network_token: { used: false },
      overcapture: { maximum_amount_capturable: Number(row.authorised_minor), status: 'unavailable' },
      authorization_code: null,
      regulated_status: null,
      network_transaction_id: null,
      transaction_link_id: null,
      three_d_secure: row.threeds_result
        ? { authentication_flow: null, result: Number(row.is3ds) === 1 ? 'authenticated' : 'failed', result_reason: null, version: '2.2.0' }
        : null,
      wallet: null,
    },
    type: 'card',
  };
}

/** The wire object of a payment as a charge: the card by brand, BIN-less last four and expiry only. */
export function chargeObject(row: PaymentRow, ctx: ChargeContext): Record<string, unknown> {
  const details = JSON.parse(row.details || '{}') as Record<string, unknown>;
  const status = chargeStatus(row);
  const released = (row.status === 'cancelled' || row.status === 'expired') && status === 'succeeded';
  const captured = Number(row.captured_minor);
  const refunded = released ? Number(row.amount_minor) : Number(row.refunded_minor);
  const decline = row.status === 'declined' ? declineOf(row) : null;
  const email = typeof details.shopper_email === 'string' && details.shopper_email !== '' ? details.shopper_email : null;
  return {
    id: chargeId(row.transaction_id),
    object: 'charge',
    amount: Number(row.amount_minor),
    amount_captured: captured,
    amount_refunded: refunded,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: null,
    billing_details: { address: emptyAddress(), email, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: typeof details.statement_descriptor === 'string' ? details.statement_descriptor : null,
    captured: captured > 0,
    created: unixSeconds(row.created_at),
    currency: lower(row.currency),
    customer: ctx.intent?.customer_id || null,
    description: typeof details.note === 'string' && details.note !== '' ? details.note : null,
    disputed: ctx.disputed === true,
    failure_balance_transaction: null,
    failure_code: decline ? 'card_declined' : null,
    failure_message: decline ? decline.message : null,
    fraud_details: {},
    livemode: Number(row.livemode) === 1,
    metadata: (details.metadata as Record<string, string> | undefined) ?? {},
    on_behalf_of: null,
    outcome: chargeOutcome(row, status, decline),
    paid: status === 'succeeded',
    payment_intent: ctx.intent?.id ?? null,
    payment_method: ctx.intent?.payment_method_id || null,
    payment_method_details: methodDetails(row, ctx),
    receipt_email: email,
    receipt_number: null,
    receipt_url: null,
    refunded: refunded > 0 && refunded >= (released ? Number(row.amount_minor) : captured),
    refunds: { object: 'list', data: [], has_more: false, url: `/v1/charges/${chargeId(row.transaction_id)}/refunds` },
    review: null,
    shipping: null,
    source_transfer: null,
    statement_descriptor: typeof details.statement_descriptor === 'string' ? details.statement_descriptor : null,
    statement_descriptor_suffix: null,
    status,
    transfer_data: null,
    transfer_group: null,
  };
}

/** A payment of this caller as a charge, or a 404 naming `param`. */
export async function findCharge(deps: Deps, request: FastifyRequest, id: string, param = 'id'): Promise<PaymentRow> {
  const caller = callerOf(request);
  const tid = transactionOfCharge(id);
  const row = tid ? await modePayment(deps.store.db, caller.creds.account.account_id, caller.livemode ? 1 : 0, tid) : undefined;
  if (!row) throw noSuch('charge', id, param);
  return row;
}

/** `rows` as charges, in order. */
export async function chargeObjects(db: Db, rows: readonly PaymentRow[]): Promise<Record<string, unknown>[]> {
  const ctx = await chargeContexts(db, rows);
  return rows.map((r) => chargeObject(r, ctx.get(r.transaction_id) as ChargeContext));
}

const ChargeObject = Type.Object(
  {
    id: Type.String({ description: 'ch_…' }),
    object: Type.Literal('charge'),
    amount: Type.Integer(),
    amount_captured: Type.Integer(),
    amount_refunded: Type.Integer(),
    captured: Type.Boolean(),
    created: Type.Integer({ description: 'Unix seconds' }),
    currency: Type.String(),
    paid: Type.Boolean(),
    payment_intent: Type.Union([Type.String(), Type.Null()]),
    refunded: Type.Boolean(),
    status: Type.String({ enum: ['succeeded', 'pending', 'failed'] }),
  },
  {
    additionalProperties: true,
    description:
      'A payment as the platform family’s charge: `succeeded` once authorised (a released authorisation stays `succeeded`, refunded in full), `pending` while the shopper or the processor is awaited, `failed` when declined.',
  },
);

const ListCharges = Type.Object(
  {
    ...listParams,
    payment_intent: Type.Optional(Type.String({ maxLength: 80, description: 'only the charges of this PaymentIntent (pi_…)' })),
  },
  { additionalProperties: false },
);

/** `expand[]` on charges: `payment_intent`. */
export type IntentExpander = (request: FastifyRequest, id: string) => Promise<Record<string, unknown> | undefined>;

export function registerChargeRoutes(app: FastifyInstance, deps: Deps, intentOf: IntentExpander): void {
  const opts = genericRouteOptions(deps);
  const expanders = (request: FastifyRequest): ExpandersOf<'charge'> => ({ payment_intent: (id) => intentOf(request, id) });
  const doc = { tags: [PAYMENTS_TAG], security: [{ bearer: [] }] };
  app.get<{ Params: { id: string } }>(
    '/v1/charges/:id',
    {
      ...opts,
      schema: {
        operationId: 'retrieveCharge',
        summary: 'Retrieve a charge',
        description: 'Any payment of your account and mode as a charge (`ch_<transaction_id>`); `expand[]=payment_intent`.',
        ...doc,
        params: IdParams(CHARGE_ID_PREFIX),
        querystring: RetrieveQuery,
        response: { ...objectAnswers(ChargeObject, 'The charge.'), ...errorAnswers([401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const row = await findCharge(deps, request, request.params.id);
      const [charge] = await chargeObjects(deps.store.db, [row]);
      return sendObject(request, reply, await expanded(request, charge as Record<string, unknown>, expanders(request)));
    },
  );
  app.get<{ Querystring: ListQuery & { payment_intent?: string } }>(
    '/v1/charges',
    {
      ...opts,
      schema: {
        operationId: 'listCharges',
        summary: 'List charges',
        description: 'Every payment of your account and mode as a charge, newest first; `payment_intent` keeps that intent’s confirms.',
        ...doc,
        querystring: ListCharges,
        response: { ...objectAnswers(ListEnvelope(ChargeObject, 'A page of charges.'), 'A page of charges.'), ...errorAnswers([400, 401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const account_id = caller.creds.account.account_id;
      const livemode = caller.livemode ? 1 : 0;
      const pi = request.query.payment_intent;
      if (pi !== undefined && !(await intentOf(request, pi))) throw noSuch('payment_intent', pi, 'payment_intent');
      const scoped = () => {
        let q = modePaymentsQuery(deps.store.db, account_id, livemode);
        if (pi !== undefined)
          q = q.where('transaction_id', 'in', deps.store.db.selectFrom('payment_intent_charges').select('transaction_id').where('intent_id', '=', pi));
        return q;
      };
      const page = await listPage<PaymentRow>(
        request.query,
        'charge',
        scoped,
        async (id) => {
          const tid = transactionOfCharge(id);
          const r = tid ? await scoped().where('transaction_id', '=', tid).executeTakeFirst() : undefined;
          return r ? { created_at: r.created_at, id: r.transaction_id } : undefined;
        },
        { created: 'created_at', id: 'transaction_id' },
      );
      const list = listObject('/v1/charges', page, await chargeObjects(deps.store.db, page.rows));
      return sendObject(request, reply, await expanded(request, list, expanders(request)));
    },
  );
}
