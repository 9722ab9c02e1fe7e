// The acquiring payment routes (POST /v1/authorise for cards and APMs, /v1/retrievalTrans): each only
// parses (a card payment into its command: src/authorise/acquiring.ts; an APM into its own: src/apm/acquiring.ts), calls the domain (src/authorise/authorise.ts, src/apm/service.ts, src/payments/query.ts) and
// answers. It sits with the app assembly because it dispatches to two capabilities, above both.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { apmCommandOf } from '../apm/acquiring.js';
import { ApmService } from '../apm/service.js';
import { cardCommandOf } from '../authorise/acquiring.js';
import { apmDuplicateAnswer, cardDuplicateAnswer } from '../authorise/answer.js';
import { AuthoriseService } from '../authorise/authorise.js';
import type { Keyring } from '../crypto/keyring.js';
import { QueryBody, type QueryInput, queryOrders } from '../payments/query.js';
import { ApmAnswer, AuthoriseAnswer, type AuthoriseDirect, AuthoriseDirectBody, QueryAnswer } from '../payments/schema.js';
import { createRiskEngine } from '../risk/engine.js';
import { basicRiskEngine, type RiskEngine } from '../risk/index.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { IP_REFUSAL, withIpAllowList } from '../web/ip-allow.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';

const authoriseSchema = () => ({
  operationId: 'authorise',
  summary: 'Create a direct card payment, or an alternative-method payment',
  description:
    'Card: send `card`, `expiration_month`, `expiration_year` and `security_code`, or a `token_id` from an earlier payment of the account. Answers XML, root `respon`: `result_info` carries the outcome (`0000:Success` is success; declines are answered with HTTP 200 too). Alternative method: send `payment_method` (`pix`, `boleto`, `ideal`), its required fields and `return_url`, and no card fields; the answer carries `issuer_url` (send the shopper there) with `order_status` `2` and `0003:Pending shopper action`; a method that is unknown or not offered for the account, currency and billing country is `404`, a missing or invalid field `400` naming it. The same body sent again gets the original answer; another body with a used `order_no` gets `1011:Duplicate order`.',
  tags: ['payments'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: AuthoriseDirectBody,
  response: answers({
    media: 'xml',
    ok: Type.Union([AuthoriseAnswer, ApmAnswer], {
      xml: { name: 'respon' },
      description: 'A card payment’s answer, or an alternative-method payment’s (with `issuer_url`).',
    }),
    ok_description: 'The card payment’s outcome (also for declines, risk refusals and duplicates), or the alternative-method payment’s `issuer_url`; signed.',
    refusals: {
      ...SIGNED_REFUSALS,
      403: '`1016:No processor configured for live mode`: a live account without a processor.',
      404: '`0404:Record not found`: the `payment_method` is unknown, or not offered by the account for this currency and billing country.',
    },
  }),
});

const retrievalTransSchema = () => ({
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
    refusals: { ...SIGNED_REFUSALS, ...IP_REFUSAL },
  }),
});

/** The services behind POST /v1/authorise: a card payment or an alternative method. */
interface AuthoriseContext {
  authorise: AuthoriseService;
  apm: ApmService;
  /** For the request's fingerprint. */
  keyring: Keyring;
}

/** POST /v1/authorise */
async function authoriseRoute(ctx: AuthoriseContext, request: FastifyRequest, reply: FastifyReply) {
  const body = request.body as AuthoriseDirect;
  if (body.payment_method !== undefined) {
    const started = await ctx.apm.authorise(request.account!, apmCommandOf(body, ctx.keyring));
    return sendSigned(request, reply, started.kind === 'duplicate' ? apmDuplicateAnswer(body) : started.record);
  }
  const result = await ctx.authorise.authorise(request.account!, cardCommandOf(body, ctx.keyring));
  return sendSigned(request, reply, result.kind === 'duplicate' ? cardDuplicateAnswer(body) : result.record);
}

/** POST /v1/retrievalTrans */
async function retrievalTransRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const { orders, next_cursor } = await queryOrders(deps.store, creds, request.body as QueryInput);
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    orders_list: orders,
    ...(next_cursor ? { next_cursor } : {}),
  });
}

export function registerPaymentRoutes(
  app: FastifyInstance,
  deps: Deps,
  risk: RiskEngine = deps.settings.risk_rules ? createRiskEngine(deps.store.db) : basicRiskEngine,
): void {
  const ctx: AuthoriseContext = { authorise: new AuthoriseService(deps, risk), apm: new ApmService(deps), keyring: deps.keyring };
  app.post(
    '/v1/authorise',
    { schema: authoriseSchema(), config: { answer: 'xml' }, ...answersAreStrings, ...acquiringHooks(deps, AuthoriseDirectBody) },
    (request, reply) => authoriseRoute(ctx, request, reply),
  );
  app.post(
    '/v1/retrievalTrans',
    { schema: retrievalTransSchema(), config: { answer: 'json' }, ...answersAreStrings, ...withIpAllowList(acquiringHooks(deps, QueryBody)) },
    (request, reply) => retrievalTransRoute(deps, request, reply),
  );
}
