// Routes of capture and cancel: parse, run each item, answer in request order.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Refusal } from '../core/outcomes.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { acquiringMessage } from '../web/outcomes.js';
import {
  answers,
  answersAreStrings,
  batchItem,
  ItemError,
  oneOf,
  REQUEST_MEDIA_TYPES,
  ReturnMessage,
  ReturnStatus,
  SIGNED,
  SIGNED_REFUSALS,
  Signature,
  SignedIdentity,
  text,
} from '../web/route-schema.js';
import { cancelPayment } from './cancel.js';
import { capturePayment } from './capture.js';
import { eachItem, guardItem, MAX_CANCEL_ITEMS, MAX_CAPTURE_ITEMS, ORDER_ITEM_REQUIRED, type OrderItem, OrderItemFields, resolveItem } from './lifecycle.js';
import { accountPaymentColumns } from './reader.js';

const batch = (max: number, what: string) =>
  Type.Array(batchItem(OrderItemFields, ORDER_ITEM_REQUIRED, 'An item missing a required field fails alone with `0400`; the others still run.'), {
    minItems: 1,
    maxItems: max,
    description: `1 to ${max} orders; each is ${what} and answered on its own`,
  });

/** An answer item: the item as sent, its status and why it failed. */
const answerItem = (status: 'capture_status' | 'cancel_status') =>
  Type.Object({
    amount: text('as sent'),
    [status]: oneOf(
      ['0', '1', '2'],
      '`1` success, `0` failure (`error_message` says why), `2` sent to the processor and not yet confirmed (its outcome follows as a notification)',
    ),
    currency: text('as sent'),
    error_message: ItemError,
    order_no: text('as sent'),
    transaction_id: text('as sent'),
  });

const batchAnswer = (field: 'capture_orders' | 'cancel_orders', status: 'capture_status' | 'cancel_status') =>
  Type.Object({
    merchant_id: text('your merchant_id'),
    account_id: text('your account_id'),
    return_status: ReturnStatus,
    return_message: ReturnMessage,
    [field]: Type.Array(answerItem(status), { description: 'one result per item, in request order' }),
    encryption_data: Signature,
  });

export const CaptureBody = Type.Object(
  { ...SignedIdentity, capture_orders: batch(MAX_CAPTURE_ITEMS, 'captured (amount = the amount to capture, at most the authorised amount)') },
  { additionalProperties: false },
);
export const CancelBody = Type.Object(
  { ...SignedIdentity, cancel_orders: batch(MAX_CANCEL_ITEMS, 'cancelled (amount = the original order amount)') },
  { additionalProperties: false },
);

const captureSchema = () => ({
  operationId: 'capture',
  summary: 'Capture authorised payments',
  description:
    'At most 50 orders. `amount` is the amount to capture, at most the authorised amount; a payment is captured once and a partial capture releases the rest of the authorisation. `capture_status` `1` success, `0` failure with `error_message`, `2` pending at the processor: the final outcome comes as `payment.captured` and in every query.',
  tags: ['payments'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: CaptureBody,
  response: answers({
    media: 'json',
    ok: batchAnswer('capture_orders', 'capture_status'),
    ok_description: 'One result per order, signed.',
    refusals: SIGNED_REFUSALS,
  }),
});

const cancelSchema = () => ({
  operationId: 'cancel',
  summary: 'Cancel authorised or pending payments',
  description:
    'At most 50 orders; `amount` is the original order amount. Releases the authorisation hold. A captured payment must be refunded instead. `cancel_status` `1` success, `0` failure with `error_message`, `2` pending at the processor: the final outcome comes as `payment.cancelled` and in every query.',
  tags: ['payments'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: CancelBody,
  response: answers({
    media: 'json',
    ok: batchAnswer('cancel_orders', 'cancel_status'),
    ok_description: 'One result per order, signed.',
    refusals: SIGNED_REFUSALS,
  }),
});

/** An answer item: the item as sent, `status` 1 or 0 and the acquiring message of a refusal. */
type ItemAnswer<S extends string> = { amount: string; currency: string; error_message: string; order_no: string; transaction_id: string } & Record<
  S,
  '0' | '1' | '2'
>;

function answer<S extends 'capture_status' | 'cancel_status'>(status: S, item: OrderItem, outcome: { ok: true | 'pending' } | Refusal): ItemAnswer<S> {
  return {
    amount: item.amount ?? '',
    [status]: outcome.ok === 'pending' ? '2' : outcome.ok ? '1' : '0',
    currency: item.currency ?? '',
    error_message: outcome.ok ? '' : acquiringMessage(outcome),
    order_no: item.order_no ?? '',
    transaction_id: item.transaction_id ?? '',
  } as ItemAnswer<S>;
}

/** One capture item: read and matched to its payment (amount = the amount to capture), then the capture command. */
async function captureItem(deps: Deps, log: FastifyBaseLogger, account_id: string, item: OrderItem, rerun = false) {
  const resolved = await guardItem(log, () => resolveItem(deps.store.db, account_id, item, 'to_capture'));
  if (!resolved.ok) return answer('capture_status', item, resolved);
  const { amount_minor, row } = resolved;
  const outcome = await capturePayment(deps, log, { account_id, transaction_id: row.transaction_id, amount_minor });
  // A re-run under an Idempotency-Key whose first attempt lost its answer (a storage fault at
  // COMMIT): if that attempt captured this amount, this item succeeded (issue 17).
  if (rerun && !outcome.ok && outcome.outcome === 'invalid_state') {
    const now = await accountPaymentColumns(deps.store.db, account_id, row.transaction_id, ['status', 'captured_minor']);
    if (now && now.status !== 'authorised' && Number(now.captured_minor) === amount_minor) return answer('capture_status', item, { ok: true });
  }
  return answer('capture_status', item, outcome);
}

/** One cancel item: read and matched (amount = the original order amount), then the cancel command. */
async function cancelItem(deps: Deps, log: FastifyBaseLogger, account_id: string, item: OrderItem, rerun = false) {
  const resolved = await guardItem(log, () => resolveItem(deps.store.db, account_id, item, 'original'));
  if (!resolved.ok) return answer('cancel_status', item, resolved);
  const transaction_id = resolved.row.transaction_id;
  const outcome = await cancelPayment(deps, log, { account_id, transaction_id });
  // A re-run whose first attempt cancelled it and lost the answer (issue 17): it succeeded.
  if (rerun && !outcome.ok && outcome.outcome === 'invalid_state') {
    const now = await accountPaymentColumns(deps.store.db, account_id, transaction_id, ['status']);
    if (now?.status === 'cancelled') return answer('cancel_status', item, { ok: true });
  }
  return answer('cancel_status', item, outcome);
}

/** POST /v1/capture */
async function captureRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const items = (request.body as { capture_orders: OrderItem[] }).capture_orders;
  const results = await eachItem(deps.store, items, (item) =>
    captureItem(deps, request.log, creds.account.account_id, item, request.idempotency?.rerun === true),
  );
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    capture_orders: results,
  });
}

/** POST /v1/cancel */
async function cancelRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const items = (request.body as { cancel_orders: OrderItem[] }).cancel_orders;
  const results = await eachItem(deps.store, items, (item) =>
    cancelItem(deps, request.log, creds.account.account_id, item, request.idempotency?.rerun === true),
  );
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    cancel_orders: results,
  });
}

export function registerLifecycleRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/capture',
    { schema: captureSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, CaptureBody) },
    (request, reply) => captureRoute(deps, request, reply),
  );
  app.post('/v1/cancel', { schema: cancelSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, CancelBody) }, (request, reply) =>
    cancelRoute(deps, request, reply),
  );
}
