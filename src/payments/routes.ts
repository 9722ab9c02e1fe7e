// Routes of the payments capability: each only parses, calls the domain and answers.
import type { FastifyInstance } from 'fastify';
import { acquiringHooks, sendSigned } from '../http/acquiring.js';
import type { Deps } from '../http/context.js';
import { createRiskEngine } from '../risk/engine.js';
import { basicRiskEngine, type RiskEngine } from '../risk/index.js';
import { AuthoriseService } from './authorise.js';
import { checkIpAllowed, QueryBody, type QueryInput, queryOrders } from './query.js';
import { type AuthoriseDirect, AuthoriseDirectBody } from './schema.js';

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
        summary: 'Create a direct card payment',
        description: 'Answers XML with root `respon`. `result_info` carries the outcome; `0000:Success` is success.',
        tags: ['payments'],
        body: AuthoriseDirectBody,
      },
      config: { answer: 'xml' },
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
        summary: 'Query transactions',
        description:
          'Select by `order_nos` and/or `transaction_ids` (at most 100), or by `start_date` and `end_date` with `cursor`. Only registered IP addresses may call it.',
        tags: ['payments'],
        body: QueryBody,
      },
      config: { answer: 'json' },
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
