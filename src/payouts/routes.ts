// `POST /v1/payout`, `/v1/cancelpayout`, `/v1/retrievalPayout` (interface.md "Payout record";
// docs/contract.md §17): any body format, signed JSON answers. Only parses, calls the domain and answers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { invalid, resultText } from '../web/errors.js';
import { IP_REFUSAL, withIpAllowList } from '../web/ip-allow.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';
import { normaliseRequestId } from './command.js';
import { payoutRecord } from './record.js';
import { requestPayout } from './request.js';
import {
  CancelPayoutAnswer,
  CancelPayoutBody,
  type CancelPayoutInput,
  PayoutAnswer,
  PayoutBody,
  type PayoutRequest,
  RetrievalPayoutAnswer,
  RetrievalPayoutBody,
  type RetrievalPayoutInput,
} from './schema.js';
import { searchPayouts } from './search.js';
import { cancelPayout } from './service.js';

const createPayoutSchema = () => ({
  operationId: 'createPayout',
  summary: 'Create a payout',
  description:
    'Pays a beneficiary from the available balance of `source_currency`: `amount_payer_pays` + `fee_amount` are reserved in the same transaction as the payout, or it is `FAILED` with `failure_type` `INSUFFICIENT_FUNDS`. Due today, it is dispatched at once (the sandbox completes `LOCAL` payouts at once and `SWIFT` ones after `TOLLGATE_SANDBOX_SWIFT_DELAY_MS`); a later `payment_date` makes it `SCHEDULED`. `request_id` is the idempotency key: the same body answers the same payout (in its current status), another body is refused with 409.',
  tags: ['payouts'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: PayoutBody,
  response: answers({
    media: 'json',
    ok: PayoutAnswer,
    ok_description: 'The payout record, signed.',
    refusals: { ...SIGNED_REFUSALS, 403: 'A live account without a payout connector (`1016`).', 409: 'The `request_id` was used with another body.' },
  }),
});

const cancelPayoutSchema = () => ({
  operationId: 'cancelPayout',
  summary: 'Cancel a scheduled payout',
  description:
    'Cancels a `SCHEDULED` payout named by `request_id` or `transaction_id`: it becomes `CANCELLED` and its reserved funds are available again (`payout.cancelled`). Cancelling a cancelled payout answers `cancel_status` `1` again; one already dispatched answers `0` with `1012`; an unknown one `0` with `0404`.',
  tags: ['payouts'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: CancelPayoutBody,
  response: answers({ media: 'json', ok: CancelPayoutAnswer, ok_description: 'The outcome, signed.', refusals: SIGNED_REFUSALS }),
});

const retrievalPayoutSchema = () => ({
  operationId: 'retrievalPayout',
  summary: 'Search payouts',
  description:
    'Select by `request_ids`, `transaction_ids` or `short_reference_ids` (at most 100 ids together), or by `start_date` and `end_date` over the creation time; at most 100 payouts per answer, `next_cursor` when there are more. A requested id that matches no payout is answered with `query_result` `0`. Only IP addresses registered for the account may call it.',
  tags: ['payouts'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: RetrievalPayoutBody,
  response: answers({
    media: 'json',
    ok: RetrievalPayoutAnswer,
    ok_description: 'The matching payouts, signed.',
    refusals: { ...SIGNED_REFUSALS, ...IP_REFUSAL },
  }),
});

/** POST /v1/payout */
async function createPayoutRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const { row, replayed } = await requestPayout(deps, request.account!.account, request.body as PayoutRequest, deps.now());
  if (replayed) reply.header('idempotent-replayed', 'true');
  return sendSigned(request, reply, payoutRecord(row));
}

/** POST /v1/cancelpayout */
async function cancelPayoutRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const body = request.body as CancelPayoutInput;
  if (body.request_id === undefined && body.transaction_id === undefined) throw invalid('request_id', 'or transaction_id must name the payout');
  const sel = {
    ...(body.request_id !== undefined ? { request_id: body.request_id } : {}),
    ...(body.transaction_id !== undefined ? { transaction_id: body.transaction_id } : {}),
  };
  const out = await cancelPayout(deps.store, creds.account.account_id, sel, deps.now());
  const row = out.kind === 'not_found' ? undefined : out.row;
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    request_id: row?.request_id ?? (body.request_id !== undefined ? normaliseRequestId(body.request_id) : ''),
    transaction_id: row?.transaction_id ?? body.transaction_id ?? '',
    cancel_status: out.kind === 'cancelled' || out.kind === 'already' ? '1' : '0',
    status: row?.status ?? '',
    error_message:
      out.kind === 'not_found'
        ? resultText('0404')
        : out.kind === 'too_late'
          ? `${resultText('1012')}: the payout is ${out.row.status}; only a SCHEDULED payout can be cancelled`
          : '',
  });
}

/** POST /v1/retrievalPayout */
async function retrievalPayoutRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const { payouts, next_cursor } = await searchPayouts(deps.store, creds.account.account_id, request.body as RetrievalPayoutInput);
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    payouts,
    ...(next_cursor ? { next_cursor } : {}),
  });
}

export function registerPayoutRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/payout',
    { schema: createPayoutSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, PayoutBody) },
    (request, reply) => createPayoutRoute(deps, request, reply),
  );
  app.post(
    '/v1/cancelpayout',
    { schema: cancelPayoutSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, CancelPayoutBody) },
    (request, reply) => cancelPayoutRoute(deps, request, reply),
  );
  app.post(
    '/v1/retrievalPayout',
    { schema: retrievalPayoutSchema(), config: { answer: 'json' }, ...answersAreStrings, ...withIpAllowList(acquiringHooks(deps, RetrievalPayoutBody)) },
    (request, reply) => retrievalPayoutRoute(deps, request, reply),
  );
}
