// Routes of the refunds capability: parse, call the domain, answer.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Refusal, refuse } from '../core/outcomes.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { parseAmount } from '../money/currency.js';
import { eachItem, guardItem, resolveItem } from '../payments/lifecycle.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { IP_REFUSAL, withIpAllowList } from '../web/ip-allow.js';
import { acquiringMessage } from '../web/outcomes.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';
import { toRefundResultItem } from './record.js';
import { makeRefund, type RefundItem } from './refund.js';
import { RefundAnswer, RefundBody, RefundSearchAnswer } from './schema.js';

// The body schema lives in schema.ts with the answers; importers of the route module keep it.
export { RefundBody };

import { RefundSearchBody, type RefundSearchInput, searchRefunds } from './search.js';

const refundSchema = () => ({
  operationId: 'refund',
  summary: 'Refund captured payments',
  description:
    'At most 50 refunds. Several partial refunds may be made up to the captured amount, under any concurrency. `refund_status` `1` refunded, `0` failed (`refund_message` says why), `2` pending.',
  tags: ['refunds'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: RefundBody,
  response: answers({ media: 'json', ok: RefundAnswer, ok_description: 'One result per refund item, signed.', refusals: SIGNED_REFUSALS }),
});

const retrievalRefundSchema = () => ({
  operationId: 'retrievalRefund',
  summary: 'Search refunds',
  description:
    'Select by `refund_reference_ids`, `transaction_ids` or `order_nos` (at most 100 ids together), or by `start_date` and `end_date` over `refund_date`; at most 100 refunds per answer, `next_cursor` when there are more. A requested id that matches no refund is answered with `query_result` `0`. Only IP addresses registered for the account may call it.',
  tags: ['refunds'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: RefundSearchBody,
  response: answers({
    media: 'json',
    ok: RefundSearchAnswer,
    ok_description: 'The matching refunds, signed.',
    refusals: { ...SIGNED_REFUSALS, ...IP_REFUSAL },
  }),
});

/** The answer for an item that made no refund. */
function refused(item: RefundItem, r: Refusal): Record<string, string> {
  return {
    transaction_id: item.transaction_id ?? '',
    order_no: item.order_no ?? '',
    currency: item.currency ?? '',
    amount: item.amount ?? '',
    refund_amount: item.refund_amount ?? '',
    refund_reason: item.refund_reason ?? '',
    refund_reference: '',
    refund_reference_id: '',
    refund_status: '0',
    refund_message: acquiringMessage(r),
  };
}

/** The item's refund_amount in the payment currency's minor units: sent, a decimal amount, above zero. */
export function refundAmountOf(item: RefundItem, currency: string): { ok: true; minor: number } | Refusal {
  if (!item.refund_amount) return refuse('invalid_input', 'refund_amount is required');
  const parsed = parseAmount(item.refund_amount, currency);
  if (!parsed.ok) return refuse('invalid_input', `refund_amount ${parsed.problem}`);
  if (parsed.minor <= 0) return refuse('invalid_input', 'refund_amount must be greater than zero');
  return { ok: true, minor: parsed.minor };
}

/**
 * One refund item: read and matched to its payment (amount = the original order amount), its
 * refund_amount read, then the refund command. `idempotency_ref` (`<key id>:<item index>`) is
 * given when the request carries an Idempotency-Key.
 */
async function refundItem(deps: Deps, log: FastifyBaseLogger, account: AccountRow, item: RefundItem, idempotency_ref: string | null) {
  const resolved = await guardItem(log, () => resolveItem(deps.store.db, account.account_id, item, 'original'));
  if (!resolved.ok) return refused(item, resolved);
  const amount = refundAmountOf(item, resolved.row.currency);
  if (!amount.ok) return refused(item, amount);
  const cmd = {
    account,
    transaction_id: resolved.row.transaction_id,
    amount_minor: amount.minor,
    reason: item.refund_reason ?? '',
    idempotency_ref,
    metadata: '{}',
  };
  const outcome = await makeRefund(deps, log, cmd);
  return outcome.ok ? toRefundResultItem(outcome.refund, resultText(outcome.refund.result_code as ResultCode)) : refused(item, outcome);
}

/** POST /v1/refund */
async function refundRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const items = (request.body as { refund_orders: RefundItem[] }).refund_orders;
  const idem = request.idempotency?.id;
  const results = await eachItem(deps.store, items, (item, i) => refundItem(deps, request.log, creds.account, item, idem ? `${idem}:${i}` : null));
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    refund_orders: results,
  });
}

/** POST /v1/retrievalRefund */
async function retrievalRefundRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const { refunds, next_cursor } = await searchRefunds(deps.store, creds.account.account_id, request.body as RefundSearchInput);
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    refund_orders: refunds,
    ...(next_cursor ? { next_cursor } : {}),
  });
}

export function registerRefundRoutes(app: FastifyInstance, deps: Deps): void {
  app.post('/v1/refund', { schema: refundSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, RefundBody) }, (request, reply) =>
    refundRoute(deps, request, reply),
  );
  app.post(
    '/v1/retrievalRefund',
    { schema: retrievalRefundSchema(), config: { answer: 'json' }, ...answersAreStrings, ...withIpAllowList(acquiringHooks(deps, RefundSearchBody)) },
    (request, reply) => retrievalRefundRoute(deps, request, reply),
  );
}
