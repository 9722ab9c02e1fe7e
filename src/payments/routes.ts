// Routes of the payments capability: each only parses, calls the domain and answers.
import type { FastifyInstance } from 'fastify';
import { acquiringHooks, sendSigned } from '../http/acquiring.js';
import type { Deps } from '../http/context.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../http/route-schema.js';
import { createRiskEngine } from '../risk/engine.js';
import { basicRiskEngine, type RiskEngine } from '../risk/index.js';
import { AuthoriseService } from './authorise.js';
import { checkIpAllowed, QueryBody, type QueryInput, queryOrders } from './query.js';
import { AuthoriseAnswer, type AuthoriseDirect, AuthoriseDirectBody, QueryAnswer } from './schema.js';

export function registerPaymentRoutes(
  app: FastifyInstance,
  deps: Deps,
  risk: RiskEngine = deps.settings.risk_rules ? createRiskEngine(deps.store.db) : basicRiskEngine,
): void {
  const authorise = new AuthoriseService(deps, risk);

  app.post(
    '/v1/authorise',
    {
      schema: {
        operationId: 'authorise',
        summary: 'Create a direct card payment',
        description:
          'Send `card`, `expiration_month`, `expiration_year` and `security_code`, or a `token_id` from an earlier payment of the account. Answers XML, root `respon`: `result_info` carries the outcome (`0000:Success` is success; declines are answered with HTTP 200 too). The same body sent again gets the original answer; another body with a used `order_no` gets `1011:Duplicate order`.',
        tags: ['payments'],
        security: SIGNED,
        consumes: REQUEST_MEDIA_TYPES,
        body: AuthoriseDirectBody,
        response: answers({
          media: 'xml',
          ok: AuthoriseAnswer,
          ok_description: 'The payment’s outcome, signed (also for declines, risk refusals and duplicates).',
          refusals: { ...SIGNED_REFUSALS, 403: '`1016:No processor configured for live mode`: a live account without a processor.' },
        }),
      },
      config: { answer: 'xml' },
      ...answersAreStrings,
      ...acquiringHooks(deps, AuthoriseDirectBody),
    },
    async (request, reply) => {
      const { record } = await authorise.authorise(request.account!, request.body as AuthoriseDirect);
      return sendSigned(request, reply, record);
    },
  );

  app.post(
    '/v1/retrievalTrans',
    {
      schema: {
        operationId: 'retrievalTrans',
        summary: 'Query transactions',
        description:
          'Select by `order_nos` and/or `transaction_ids` (at most 100 ids together), or by `start_date` and `end_date` with `cursor`. Only IP addresses registered for the account may call it. An id the account does not have is answered with `query_result` `0`.',
        tags: ['payments'],
        security: SIGNED,
        consumes: REQUEST_MEDIA_TYPES,
        body: QueryBody,
        response: answers({
          media: 'json',
          ok: QueryAnswer,
          ok_description: 'The order records, signed.',
          refusals: { ...SIGNED_REFUSALS, 403: '`0403:IP not allowed`: the caller’s IP address is not registered for the account.' },
        }),
      },
      config: { answer: 'json' },
      ...answersAreStrings,
      ...acquiringHooks(deps, QueryBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      checkIpAllowed(creds, request.ip);
      const { orders, next_cursor } = await queryOrders(deps.store, creds, request.body as QueryInput);
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        orders_list: orders,
        ...(next_cursor ? { next_cursor } : {}),
      });
    },
  );
}
