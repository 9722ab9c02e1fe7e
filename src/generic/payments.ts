// `/v1/payments` of the generic interface (docs/contract.md §12, §18; issue 13): the acquiring
// interface's card payment in the card-platform shape. One domain path: create calls
// `AuthoriseService.authorise` (validation, risk, 3-D Secure, processor, vault, ledger,
// event), capture and cancel call `capturePayment` / `cancelPayment`, and every payment of
// the account (whichever interface made it) reads back through `paymentObject`.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { KeyCaller } from '../apikeys/service.js';
import { requestHash } from '../authorise/acquiring.js';
import { AuthoriseService } from '../authorise/authorise.js';
import type { CardPaymentCommand, CardPaymentResult } from '../authorise/command.js';
import { Refused } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { currencyExponent, formatAmount } from '../money/currency.js';
import { cancelPayment } from '../payments/cancel.js';
import { capturePayment } from '../payments/capture.js';
import { modePayment, modePaymentsQuery, requirePayment } from '../payments/reader.js';
import type { PaymentStatus } from '../payments/states.js';
import type { RiskEngine } from '../risk/index.js';
import type { Deps } from '../web/context.js';
import { RESULT_CODES, type ResultCode } from '../web/errors.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { genericRefusal } from './outcomes.js';
import {
  CurrencyParam,
  Expand,
  GenericError,
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
} from './wire.js';

/** The generic statuses of §18 (`processing` for a payment held for risk review or pending at the processor, §20). */
export type GenericPaymentStatus = 'requires_action' | 'requires_capture' | 'processing' | 'succeeded' | 'canceled' | 'failed';

const STATUS: Readonly<Record<PaymentStatus, GenericPaymentStatus>> = {
  pending: 'requires_action',
  processing: 'processing',
  authorised: 'requires_capture',
  review: 'processing',
  captured: 'succeeded',
  partially_refunded: 'succeeded',
  refunded: 'succeeded',
  cancelled: 'canceled',
  expired: 'canceled',
  declined: 'failed',
};

/** Result codes of a declined payment → the platform family's card error (docs/contract.md §18: code card_declined and a decline_code). */
const DECLINE: Partial<Record<ResultCode, { decline_code: string; param?: string }>> = {
  '1001': { decline_code: 'insufficient_funds' },
  '1002': { decline_code: 'generic_decline' },
  '1003': { decline_code: 'lost_card' },
  '1004': { decline_code: 'stolen_card' },
  '1005': { decline_code: 'expired_card', param: 'payment_method[card][exp_year]' },
  '1006': { decline_code: 'incorrect_cvc', param: 'payment_method[card][cvc]' },
  '1007': { decline_code: 'processing_error' },
  '1008': { decline_code: 'fraudulent' },
  '1009': { decline_code: 'authentication_required' },
  '1010': { decline_code: 'incorrect_number', param: 'payment_method[card][number]' },
  '1017': { decline_code: 'do_not_honor' },
  '1018': { decline_code: 'expired_payment' },
  '1019': { decline_code: 'canceled_by_shopper' },
};

/** Acquiring field names of the shared validation → the generic parameters they came from. */
const ACQUIRING_TO_GENERIC: Readonly<Record<string, string>> = {
  amount: 'amount',
  currency: 'currency',
  card: 'payment_method[card][number]',
  expiration_month: 'payment_method[card][exp_month]',
  expiration_year: 'payment_method[card][exp_year]',
  security_code: 'payment_method[card][cvc]',
  note: 'description',
  shopper_email: 'receipt_email',
  return_url: 'return_url',
};

export const PAYMENT_ID_PREFIX = 'pay_';
export const paymentId = (transaction_id: string): string => `${PAYMENT_ID_PREFIX}${transaction_id}`;
const transactionIdOf = (id: string): string | null => (id.startsWith(PAYMENT_ID_PREFIX) ? id.slice(PAYMENT_ID_PREFIX.length) : null);

/** A declined payment's decline in the family's terms: `decline_code`, the message, the parameter at fault if any. */
export function declineOf(row: PaymentRow): { decline_code: string; message: string; param?: string } {
  const code = row.result_code as ResultCode;
  const d = DECLINE[code] ?? { decline_code: 'generic_decline' };
  return { ...d, message: `The card was declined: ${RESULT_CODES[code]?.text ?? 'declined'}.` };
}

/** A declined payment's `last_payment_error` (null when not declined). */
export function lastError(row: PaymentRow): Record<string, unknown> | null {
  if (row.status !== 'declined') return null;
  const d = declineOf(row);
  return { type: 'card_error', code: 'card_declined', decline_code: d.decline_code, message: d.message, ...(d.param ? { param: d.param } : {}) };
}

/** The wire object of any payment of the account (card, checkout, APM, deduction): the generic interface's one payment shape (the acquiring shapes are in src/authorise/answer.ts). */
export function paymentObject(row: PaymentRow): Record<string, unknown> {
  const details = JSON.parse(row.details || '{}') as Record<string, unknown>;
  const answer = row.answer ? (JSON.parse(row.answer) as Record<string, unknown>) : {};
  const status = STATUS[row.status];
  const threeds_url = typeof answer.threeds_url === 'string' ? answer.threeds_url : '';
  const masked = row.card_masked ?? '';
  const isCard = row.kind !== 'apm' && masked !== '';
  return {
    id: paymentId(row.transaction_id),
    object: 'payment',
    amount: Number(row.amount_minor),
    amount_capturable: row.status === 'authorised' ? Number(row.authorised_minor) : 0,
    amount_received: Number(row.captured_minor),
    amount_refunded: Number(row.refunded_minor),
    capture_method: row.capture_method,
    created: unixSeconds(row.created_at),
    currency: lower(row.currency),
    description: typeof details.note === 'string' && details.note !== '' ? details.note : null,
    livemode: Number(row.livemode) === 1,
    metadata: (details.metadata as Record<string, string> | undefined) ?? {},
    status,
    next_action:
      status === 'requires_action' && threeds_url
        ? { type: 'redirect_to_url', redirect_to_url: { url: threeds_url, return_url: row.return_url || null } }
        : null,
    last_payment_error: lastError(row),
    payment_method: isCard
      ? { type: 'card', card: { brand: row.card_brand.toLowerCase(), bin: masked.slice(0, 6), last4: masked.slice(-4) } }
      : row.card_brand
        ? { type: row.card_brand.toLowerCase() }
        : null,
    receipt_email: typeof details.shopper_email === 'string' && details.shopper_email !== '' ? details.shopper_email : null,
    return_url: row.return_url || null,
    order_no: row.order_no,
    transaction_id: row.transaction_id,
    result_code: row.result_code,
    risk: { action: row.risk_action || null, score: row.risk_score === null ? null : Number(row.risk_score) },
    threeds_result: row.threeds_result || null,
  };
}

const Card = Type.Object(
  {
    number: Type.String({ pattern: '^\\d{12,19}$', description: '12 to 19 digits' }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12 }),
    exp_year: Type.Integer({ minimum: 2000, maximum: 2199, description: 'four digits' }),
    cvc: Type.Optional(Type.String({ pattern: '^\\d{3,4}$', description: '3 or 4 digits' })),
  },
  { additionalProperties: false },
);

const CreatePayment = Type.Object(
  {
    amount: Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'in minor units (1000 is 10.00 USD, 1000 JPY)' }),
    currency: CurrencyParam,
    payment_method: Type.Object(
      { type: Type.Literal('card', { description: 'card' }), card: Card },
      { additionalProperties: false, description: 'the card to charge; its number is stored encrypted and answered as BIN and last four only' },
    ),
    capture_method: Type.Optional(
      Type.String({
        enum: ['automatic', 'automatic_async', 'manual'],
        description: 'manual authorises only (capture within 7 days); default: the account’s setting',
      }),
    ),
    confirm: Type.Optional(Type.Boolean({ description: 'payments are confirmed when created: true, or leave it out' })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    receipt_email: Type.Optional(Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' })),
    return_url: Type.Optional(Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'where the shopper returns after 3-D Secure' })),
    statement_descriptor: Type.Optional(Type.String({ maxLength: 22 })),
    payment_method_options: Type.Optional(
      Type.Object(
        {
          card: Type.Optional(
            Type.Object(
              {
                request_three_d_secure: Type.Optional(
                  Type.String({
                    enum: ['automatic', 'any', 'challenge'],
                    description: 'any or challenge: always authenticate the shopper; automatic: when the risk or the issuer asks',
                  }),
                ),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreatePayment = Static<typeof CreatePayment>;

/** The body of a capture: of a payment here, of a PaymentIntent (src/generic/payment-intents.ts). */
export const CapturePayment = Type.Object(
  {
    amount_to_capture: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'at most the authorised amount; the rest is released (default: all)' }),
    ),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
/** The body of a cancel: of a payment here, of a PaymentIntent. */
export const CancelPayment = Type.Object(
  {
    cancellation_reason: Type.Optional(Type.String({ enum: ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] })),
    expand: Expand,
  },
  { additionalProperties: false },
);
const UpdatePayment = Type.Object(
  { metadata: Type.Optional(Metadata), description: Type.Optional(Type.String({ maxLength: 1000 })), expand: Expand },
  { additionalProperties: false },
);
const ListPayments = Type.Object(listParams, { additionalProperties: false });

const PaymentObject = Type.Object(
  {
    id: Type.String({ description: 'pay_…' }),
    object: Type.Literal('payment'),
    amount: Type.Integer(),
    amount_capturable: Type.Integer(),
    amount_received: Type.Integer(),
    amount_refunded: Type.Integer(),
    capture_method: Type.String(),
    created: Type.Integer({ description: 'Unix seconds' }),
    currency: Type.String({ description: 'lowercase ISO 4217' }),
    description: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    status: Type.String({ enum: Object.values(STATUS).filter((v, i, a) => a.indexOf(v) === i) }),
    next_action: Type.Union([
      Type.Object({
        type: Type.Literal('redirect_to_url'),
        redirect_to_url: Type.Object({ url: Type.String(), return_url: Type.Union([Type.String(), Type.Null()]) }),
      }),
      Type.Null(),
    ]),
    last_payment_error: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    payment_method: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    receipt_email: Type.Union([Type.String(), Type.Null()]),
    return_url: Type.Union([Type.String(), Type.Null()]),
    order_no: Type.String({ description: 'the order number the acquiring interface (and /v1/retrievalTrans) knows the payment by' }),
    transaction_id: Type.String({ description: 'the acquiring interface’s transaction_id' }),
    result_code: Type.String({ description: 'the result code of the catalogue (0000 approved, 1001…)' }),
    risk: Type.Object({ action: Type.Union([Type.String(), Type.Null()]), score: Type.Union([Type.Number(), Type.Null()]) }),
    threeds_result: Type.Union([Type.String(), Type.Null()]),
  },
  {
    description:
      'A payment. `status`: `succeeded` (captured; refunds do not change it), `requires_capture` (authorised, manual capture), `requires_action` (the shopper must authenticate: follow `next_action.redirect_to_url.url`), `processing` (held for risk review), `canceled` (cancelled or expired), `failed` (declined).',
  },
);

export async function findPayment(deps: Deps, request: FastifyRequest, id: string): Promise<PaymentRow> {
  const caller = callerOf(request);
  const tid = transactionIdOf(id);
  const row = tid ? await modePayment(deps.store.db, caller.creds.account.account_id, caller.livemode ? 1 : 0, tid) : undefined;
  if (!row) throw noSuch('payment', id);
  return row;
}

type IdRoute = { Params: { id: string } };
const tags = () => [PAYMENTS_TAG];
const security = () => [{ bearer: [] }];

/** The routes of /v1/payments, in their order in the OpenAPI document; each schema is built per app (Fastify normalises a route's schema in place). */
export function registerGenericPaymentRoutes(app: FastifyInstance, deps: Deps, risk: RiskEngine): void {
  const opts = genericRouteOptions(deps);
  const authorise = new AuthoriseService(deps, risk);
  app.post<{ Body: CreatePayment }>('/v1/payments', { ...opts, schema: createSchema() }, (request, reply) => createPayment(deps, authorise, request, reply));
  app.get<IdRoute>('/v1/payments/:id', { ...opts, schema: retrieveSchema() }, (request, reply) => retrievePayment(deps, request, reply));
  app.post<IdRoute & { Body: Static<typeof UpdatePayment> }>('/v1/payments/:id', { ...opts, schema: updateSchema() }, (request, reply) =>
    updatePayment(deps, request, reply),
  );
  app.post<IdRoute & { Body: Static<typeof CapturePayment> }>('/v1/payments/:id/capture', { ...opts, schema: captureSchema() }, (request, reply) =>
    captureGenericPayment(deps, request, reply),
  );
  app.post<IdRoute & { Body: Static<typeof CancelPayment> }>('/v1/payments/:id/cancel', { ...opts, schema: cancelSchema() }, (request, reply) =>
    cancelGenericPayment(deps, request, reply),
  );
  app.get<{ Querystring: ListQuery }>('/v1/payments', { ...opts, schema: listSchema() }, (request, reply) => listPayments(deps, request, reply));
}

function createSchema() {
  return {
    operationId: 'createPayment',
    summary: 'Create a card payment',
    description:
      'Charges a card through the same path as `/v1/authorise`: risk rules, 3-D Secure, the processor, the ledger and the `payment.*` events. Approved: `succeeded` (or `requires_capture` with manual capture). The shopper must authenticate: `requires_action` with `next_action.redirect_to_url`. Declined: HTTP 402, `error.type` `card_error`, `error.code` `card_declined`, `error.decline_code`, and the failed payment in `error.payment`. Send an `Idempotency-Key` to make retries safe.',
    tags: tags(),
    security: security(),
    body: CreatePayment,
    response: { ...objectAnswers(PaymentObject, 'The payment.'), ...errorAnswers([400, 401, 402, 409, 429]) },
  };
}

async function createPayment(deps: Deps, authorise: AuthoriseService, request: FastifyRequest<{ Body: CreatePayment }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  if (b.confirm === false) throw invalidParam('confirm', 'Payments are confirmed when they are created: send confirm=true or leave it out.');
  // Under an Idempotency-Key the id comes from the key's row: a re-run after a crash (or a
  // lapsed lease) finds its own order_no and answers the payment it made, never a second charge.
  const idem = request.idempotency?.id;
  const transaction_id = idem ? idem.replace(/^idk_/, '') : newId('payment', deps.now());
  const order_no = paymentId(transaction_id);
  const cmd = cardCommandOf(deps, caller, b, order_no);
  const details: Record<string, unknown> = { api: 'generic', metadata: newMetadata(b.metadata as MetadataInput | undefined) };
  if (b.statement_descriptor) details.statement_descriptor = b.statement_descriptor;
  let result: CardPaymentResult;
  try {
    result = await authorise.authorise(caller.creds, cmd, { transaction_id, details });
  } catch (e) {
    // The core's refusals name the acquiring field; say the generic parameter.
    if (e instanceof Refused && e.refusal.outcome === 'invalid_input') {
      const field = String(e.refusal.facts?.field ?? '');
      throw invalidParam(ACQUIRING_TO_GENERIC[field] ?? (field || 'body'), e.refusal.detail ? `Invalid ${e.refusal.detail}` : 'Invalid input.');
    }
    throw e;
  }
  // A re-run under the same key finds the payment its first run made (or, while that run is
  // at the processor, its snapshot): answer that payment.
  const row = result.kind === 'duplicate' ? await findPayment(deps, request, order_no) : result.row;
  const object = paymentObject(row);
  if (row.status === 'declined') {
    const e = lastError(row) as Record<string, string>;
    return sendObject(request, reply, { error: { ...e, message: e.message, payment: object } }, 402);
  }
  return sendObject(request, reply, object);
}

/** The card payment the generic create describes; refuses an unknown currency and a missing cvc. */
function cardCommandOf(deps: Deps, caller: KeyCaller, b: CreatePayment, order_no: string): CardPaymentCommand {
  const currency = b.currency.toUpperCase();
  if (currencyExponent(currency) === null) throw invalidParam('currency', `Invalid currency: ${b.currency} is not a supported ISO 4217 currency.`);
  const card = b.payment_method.card;
  if (card.cvc === undefined)
    throw new GenericError(400, {
      type: 'invalid_request_error',
      code: 'parameter_missing',
      message: 'Missing required param: payment_method[card][cvc].',
      param: 'payment_method[card][cvc]',
    });
  const tds = b.payment_method_options?.card?.request_three_d_secure;
  // In the order of KEPT_FIELDS, as the details have always listed them.
  const kept: CardPaymentCommand['kept'] = {};
  if (b.receipt_email) kept.shopper_email = b.receipt_email;
  if (b.description) kept.note = b.description;
  return {
    order_no,
    amount_minor: b.amount,
    currency,
    card: { kind: 'card', pan: card.number, exp_month: card.exp_month, exp_year: card.exp_year, security_code: card.cvc },
    capture_method: b.capture_method ? (b.capture_method === 'manual' ? 'manual' : 'automatic') : null,
    threeds: { request: tds === 'any' || tds === 'challenge' ? 'always' : 'on_risk', mpi: () => null },
    keep_token: false,
    shopper: { shopper_email: b.receipt_email || undefined },
    return_url: b.return_url || undefined,
    subscription: null,
    kept,
    request_hash: requestHash(deps.keyring, fingerprintRecord(caller, b, order_no, currency)),
  };
}

/**
 * The acquiring body this interface once built for a payment: payments' stored request hashes
 * were computed from it, so a re-run's replay is recognised only with these fields, in this
 * order, with these spellings.
 */
function fingerprintRecord(caller: KeyCaller, b: CreatePayment, order_no: string, currency: string): Record<string, unknown> {
  const card = b.payment_method.card;
  const tds = b.payment_method_options?.card?.request_three_d_secure;
  return {
    merchant_id: caller.creds.account.merchant_id,
    account_id: caller.creds.account.account_id,
    order_no,
    currency,
    amount: formatAmount(b.amount, currency),
    card: card.number,
    expiration_month: String(card.exp_month).padStart(2, '0'),
    expiration_year: String(card.exp_year),
    ...(card.cvc !== undefined ? { security_code: card.cvc } : {}),
    ...(b.capture_method ? { capture_method: b.capture_method === 'manual' ? 'manual' : 'automatic' } : {}),
    ...(b.description ? { note: b.description } : {}),
    ...(b.receipt_email ? { shopper_email: b.receipt_email } : {}),
    ...(b.return_url ? { return_url: b.return_url } : {}),
    ...(tds === 'any' || tds === 'challenge' ? { open3d: '1' } : {}),
  };
}

function retrieveSchema() {
  return {
    operationId: 'retrievePayment',
    summary: 'Retrieve a payment',
    description: 'Any payment of your account and mode, whichever interface made it (a checkout or APM payment too).',
    tags: tags(),
    security: security(),
    params: IdParams(PAYMENT_ID_PREFIX),
    querystring: RetrieveQuery,
    response: { ...objectAnswers(PaymentObject, 'The payment.'), ...errorAnswers([401, 403, 404, 429]) },
  };
}

async function retrievePayment(deps: Deps, request: FastifyRequest<IdRoute>, reply: FastifyReply) {
  return sendObject(request, reply, paymentObject(await findPayment(deps, request, request.params.id)));
}

function updateSchema() {
  return {
    operationId: 'updatePayment',
    summary: 'Update a payment’s metadata or description',
    description: 'Only `metadata` (merged; a key set to an empty string is removed) and `description` change; money never moves here.',
    tags: tags(),
    security: security(),
    params: IdParams(PAYMENT_ID_PREFIX),
    body: UpdatePayment,
    response: { ...objectAnswers(PaymentObject, 'The payment after the update.'), ...errorAnswers([400, 401, 404, 409, 429]) },
  };
}

async function updatePayment(deps: Deps, request: FastifyRequest<IdRoute & { Body: Static<typeof UpdatePayment> }>, reply: FastifyReply) {
  const row = await findPayment(deps, request, request.params.id);
  const b = request.body;
  const updated = await deps.store.transaction(async (tx) => {
    // Lock the row first (PostgreSQL), then read and merge: a concurrent write of the
    // details (another update, a subscription's recurring_id) is never lost.
    await tx.updateTable('payments').set({ updated_at: deps.now() }).where('transaction_id', '=', row.transaction_id).execute();
    const current = await requirePayment(tx, row.transaction_id);
    const details = JSON.parse(current.details || '{}') as Record<string, unknown>;
    details.metadata = mergeMetadata(JSON.stringify(details.metadata ?? {}), b.metadata as MetadataInput | undefined);
    if (b.description !== undefined) details.note = b.description;
    const text = JSON.stringify(details);
    await tx.updateTable('payments').set({ details: text }).where('transaction_id', '=', row.transaction_id).execute();
    return { ...current, details: text };
  });
  return sendObject(request, reply, paymentObject(updated));
}

function captureSchema() {
  return {
    operationId: 'capturePayment',
    summary: 'Capture an authorised payment',
    description: 'Captures `amount_to_capture` (default: all) of a `requires_capture` payment, once; a smaller amount releases the rest of the hold.',
    tags: tags(),
    security: security(),
    params: IdParams(PAYMENT_ID_PREFIX),
    body: CapturePayment,
    response: { ...objectAnswers(PaymentObject, 'The payment, now `succeeded`.'), ...errorAnswers([400, 401, 404, 409, 429]) },
  };
}

async function captureGenericPayment(deps: Deps, request: FastifyRequest<IdRoute & { Body: Static<typeof CapturePayment> }>, reply: FastifyReply) {
  const row = await findPayment(deps, request, request.params.id);
  const n = request.body.amount_to_capture ?? Number(row.authorised_minor || row.amount_minor);
  const outcome = await capturePayment(deps, request.log, { account_id: row.account_id, transaction_id: row.transaction_id, amount_minor: n });
  if (!outcome.ok) {
    // A re-run of a capture whose answer was lost: it happened, so answer it.
    const now = await findPayment(deps, request, request.params.id);
    if (request.idempotency?.rerun && outcome.outcome === 'invalid_state' && now.status !== 'authorised' && Number(now.captured_minor) === n)
      return sendObject(request, reply, paymentObject(now));
    throw genericRefusal(outcome, { what: 'payment', id: request.params.id, amountParam: 'amount_to_capture' });
  }
  return sendObject(request, reply, paymentObject(outcome.payment));
}

function cancelSchema() {
  return {
    operationId: 'cancelPayment',
    summary: 'Cancel a payment',
    description: 'Cancels a `requires_capture` or `requires_action` payment and releases its hold; a `succeeded` one must be refunded instead.',
    tags: tags(),
    security: security(),
    params: IdParams(PAYMENT_ID_PREFIX),
    body: CancelPayment,
    response: { ...objectAnswers(PaymentObject, 'The payment, now `canceled`.'), ...errorAnswers([400, 401, 404, 409, 429]) },
  };
}

async function cancelGenericPayment(deps: Deps, request: FastifyRequest<IdRoute & { Body: Static<typeof CancelPayment> }>, reply: FastifyReply) {
  const row = await findPayment(deps, request, request.params.id);
  const outcome = await cancelPayment(deps, request.log, { account_id: row.account_id, transaction_id: row.transaction_id });
  if (!outcome.ok) {
    // A re-run of a cancel whose answer was lost: it happened, so answer it.
    const now = await findPayment(deps, request, request.params.id);
    if (request.idempotency?.rerun && now.status === 'cancelled') return sendObject(request, reply, paymentObject(now));
    throw genericRefusal(outcome, { what: 'payment', id: request.params.id, amountParam: 'id' });
  }
  return sendObject(request, reply, paymentObject(outcome.payment));
}

function listSchema() {
  return {
    operationId: 'listPayments',
    summary: 'List payments',
    description: 'Every payment of your account and mode, newest first; `limit` (1 to 100, default 10), `starting_after` / `ending_before`, `created`.',
    tags: tags(),
    security: security(),
    querystring: ListPayments,
    response: {
      ...objectAnswers(ListEnvelope(PaymentObject, 'A page of payments, newest first.'), 'A page of payments.'),
      ...errorAnswers([400, 401, 403, 429]),
    },
  };
}

async function listPayments(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const account_id = caller.creds.account.account_id;
  const livemode = caller.livemode ? 1 : 0;
  const scoped = () => modePaymentsQuery(deps.store.db, account_id, livemode);
  const page = await listPage<PaymentRow>(
    request.query,
    'payment',
    scoped,
    async (id) => {
      const tid = transactionIdOf(id);
      const r = tid ? await scoped().where('transaction_id', '=', tid).executeTakeFirst() : undefined;
      return r ? { created_at: r.created_at, id: r.transaction_id } : undefined;
    },
    { created: 'created_at', id: 'transaction_id' },
  );
  return sendObject(request, reply, listObject('/v1/payments', page, page.rows.map(paymentObject)));
}
