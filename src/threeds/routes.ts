// The sandbox issuer's challenge page (docs/contract.md §10): GET shows it, POST takes the
// shopper's answer. Shopper-facing pages, not signed acquiring routes, so no
// acquiringHooks; the unguessable id and the single-use form token are the credentials.
// Pages go out through the shared page layer (src/pages): the payment's language, and
// framable only by the account's registered frame origins (docs/contract.md §14).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PaymentRow } from '../db/tables/payments.js';
import { frameOriginsOf, type Lang, type PageContent, sendPage, sendRedirect } from '../pages/index.js';
import { htmlPage, originOf, paymentLang, SHOPPER_PAGE } from '../payments/shopper-pages.js';
import type { Deps } from '../web/context.js';
import { pageTime, paymentAccount } from '../web/request-time.js';
import { answersAreStrings, refusal } from '../web/route-schema.js';
import { challengePage, forwardPage, refusalPage, resultPage } from './page.js';
import { CHALLENGE_ID, ChallengeService, hashId, type PageOutcome } from './service.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64, description: 'the challenge id from `threeds_url`' }) });
const Answer = Type.Object(
  {
    form_token: Type.String({ maxLength: 64, description: 'the single-use token of the page’s form' }),
    outcome: Type.Union([Type.Literal('complete'), Type.Literal('fail')], { description: 'complete or fail' }),
  },
  { additionalProperties: false },
);

type Payer = Pick<PaymentRow, 'account_id' | 'details'>;

const page = htmlPage;
/** Shopper pages answer HTML; a request that breaks the schema gets the JSON refusal record. */
const PAGE_ANSWERS = {
  403: page('The form is not valid (a used or wrong form token).'),
  404: page('No such challenge.'),
  410: page('The challenge was used already, or it expired.'),
};

const shopperPage = SHOPPER_PAGE;

const pageSchema = () => ({
  operationId: 'threedsChallengePage',
  summary: 'The sandbox issuer’s 3-D Secure challenge page',
  description: 'Where `threeds_url` sends the shopper: shows the payment and lets the shopper complete or fail the challenge (test accounts).',
  ...shopperPage,
  params: Params,
  response: { 200: page('The challenge page.'), ...PAGE_ANSWERS, 400: refusal(400, 'json', 'The id is too long.') },
});

const answerSchema = () => ({
  operationId: 'threedsChallengeAnswer',
  summary: 'The shopper’s answer to the challenge page',
  description:
    'Sent by the page’s form. Authorises the payment with the 3-D Secure result (or declines it with `1009`), sends the notification, and redirects the shopper to the payment’s `return_url` with the signed result, or shows the result when there is none.',
  ...shopperPage,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: Answer,
  response: {
    200: page('The result page (the payment has no `return_url`).'),
    303: {
      type: 'null',
      description:
        'To `return_url` with `merchant_id`, `account_id`, `order_no`, `transaction_id`, `order_status`, `result_info`, `threeds_result` and `encryption_data` signing them.',
      headers: { location: Type.String({ description: 'the merchant’s return_url with the result fields' }) },
    },
    ...PAGE_ANSWERS,
    400: refusal(400, 'json', 'The form fields are missing or invalid.'),
  },
});

/** What both handlers share: the app's dependencies, the challenges and the frame-origin reader. */
interface ThreedsContext {
  deps: Deps;
  challenges: ChallengeService;
  frames: ReturnType<typeof frameOriginsOf>;
}

/** The payment behind a challenge id, for the pages that end a challenge without one in hand. */
async function payerOf(ctx: ThreedsContext, id: string): Promise<Payer | null> {
  if (!CHALLENGE_ID.test(id)) return null;
  const row = await ctx.deps.store.db
    .selectFrom('threeds_challenges')
    .innerJoin('payments', 'payments.transaction_id', 'threeds_challenges.transaction_id')
    .select(['payments.account_id', 'payments.details'])
    .where('threeds_challenges.id_hash', '=', hashId(id))
    .executeTakeFirst();
  return row ?? null;
}

function langOf(request: FastifyRequest, payer: Payer | null): Lang {
  return paymentLang(request, payer?.details);
}

async function show(
  ctx: ThreedsContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  payer: Payer | null,
  page: (lang: Lang) => PageContent,
  formTarget = '',
) {
  const frameAncestors = payer ? await ctx.frames.list(payer.account_id) : [];
  return sendPage(reply, { ...page(langOf(request, payer)), status, frameAncestors, formTargets: formTarget ? [formTarget] : [] });
}

async function answer(ctx: ThreedsContext, request: FastifyRequest, reply: FastifyReply, id: string, o: PageOutcome): Promise<FastifyReply> {
  switch (o.kind) {
    case 'not_found':
      return show(ctx, request, reply, 404, null, (lang) => refusalPage(lang, 'not_found'));
    case 'used':
      return show(ctx, request, reply, 410, await payerOf(ctx, id), (lang) => refusalPage(lang, 'used'));
    case 'forbidden':
      return show(ctx, request, reply, 403, await payerOf(ctx, id), (lang) => refusalPage(lang, 'forbidden'));
    case 'done':
      if (o.redirect) return sendRedirect(reply, o.redirect);
      return show(ctx, request, reply, 200, o.payment, (lang) => resultPage(lang, o.payment));
    case 'show':
      return show(
        ctx,
        request,
        reply,
        200,
        o.payment,
        (lang) => challengePage(lang, { id, form_token: o.challenge.form_token, merchant_name: o.merchant_name, payment: o.payment }),
        originOf(o.payment.return_url),
      );
    case 'forward':
      // A processor's own challenge: the browser goes there (GET), or posts its fields there.
      if (o.action.method === 'GET') return sendRedirect(reply, o.action.url);
      return show(ctx, request, reply, 200, o.payment, (lang) => forwardPage(lang, o.action), originOf(o.action.url));
  }
}

/** GET /threeds/:id: the challenge page, or why there is none. */
async function showChallenge(ctx: ThreedsContext, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  return answer(ctx, request, reply, id, await ctx.challenges.view(id));
}

/** POST /threeds/:id: the shopper's answer. */
async function takeChallengeAnswer(ctx: ThreedsContext, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  const body = request.body as { form_token: string; outcome: 'complete' | 'fail' };
  return answer(ctx, request, reply, id, await ctx.challenges.decide(id, body.form_token, body.outcome));
}

const ReturnParams = Type.Object({ attempt_id: Type.String({ maxLength: 100, description: 'the authorise attempt the processor’s challenge belongs to' }) });
/** What a processor puts on its return (Adyen: `redirectResult`, or `MD` and `PaRes`; Stripe: `payment_intent`…): strings, read as given. */
const field = (description: string) => Type.Optional(Type.String({ maxLength: 20_000, description }));
const ReturnFields = Type.Object({
  redirectResult: field('Adyen: the result to send to `/payments/details`'),
  MD: field('Adyen, 3-D Secure 1: merchant data'),
  PaRes: field('Adyen, 3-D Secure 1: the issuer’s answer'),
  payment_intent: field('Stripe: the PaymentIntent (not trusted: the authorisation’s own is read)'),
  payment_intent_client_secret: field('Stripe: not used'),
  redirect_status: field('Stripe: not trusted; the PaymentIntent is read'),
});

const returnSchema = (method: 'GET' | 'POST') => ({
  operationId: method === 'GET' ? 'threedsProcessorReturn' : 'threedsProcessorReturnPost',
  summary: 'Back from a processor’s own 3-D Secure challenge',
  description:
    'Where a processor that runs 3-D Secure itself (Adyen, Stripe on live accounts) sends the shopper after its challenge. The processor is asked for the result (a recorded attempt); the payment is authorised or declined (`1009` when authentication failed) as after the sandbox challenge, the notification goes out, and the shopper goes to `return_url` with the signed result.',
  ...shopperPage,
  params: ReturnParams,
  ...(method === 'GET' ? { querystring: ReturnFields } : { consumes: ['application/x-www-form-urlencoded'], body: ReturnFields }),
  response: {
    200: page('The result page (the payment has no `return_url`).'),
    303: { type: 'null', description: 'To `return_url` with the signed result, or back to the hosted checkout.' },
    404: page('No processor challenge waits for this attempt.'),
    410: page('The challenge expired.'),
    400: refusal(400, 'json', 'The fields are not strings, or too long.'),
  },
});

/** GET or POST /threeds/return/:attempt_id: the shopper back from the processor's challenge. */
async function takeProcessorReturn(ctx: ThreedsContext, request: FastifyRequest, reply: FastifyReply) {
  const { attempt_id } = request.params as { attempt_id: string };
  const fields = ((request.method === 'POST' ? request.body : request.query) ?? {}) as Record<string, string>;
  return answer(ctx, request, reply, '', await ctx.challenges.returned(attempt_id, fields));
}

export function registerThreedsRoutes(app: FastifyInstance, deps: Deps): void {
  const ctx: ThreedsContext = { deps, challenges: new ChallengeService(deps), frames: frameOriginsOf(deps.store) };
  // A challenge of a test account with a moved clock lapses on the clock's time (docs/contract.md §16).
  const challengeAccount = async (id: string) =>
    CHALLENGE_ID.test(id)
      ? paymentAccount(
          await deps.store.db
            .selectFrom('threeds_challenges')
            .innerJoin('payments', 'payments.transaction_id', 'threeds_challenges.transaction_id')
            .select(['payments.account_id', 'payments.livemode'])
            .where('threeds_challenges.id_hash', '=', hashId(id))
            .executeTakeFirst(),
        )
      : null;
  const options = { config: { answer: 'html' as const }, ...answersAreStrings, ...pageTime(deps, challengeAccount) };
  app.get('/threeds/:id', { schema: pageSchema(), ...options }, (request, reply) => showChallenge(ctx, request, reply));
  app.post('/threeds/:id', { schema: answerSchema(), ...options }, (request, reply) => takeChallengeAnswer(ctx, request, reply));
  const returned = { config: { answer: 'html' as const }, ...answersAreStrings };
  app.get('/threeds/return/:attempt_id', { schema: returnSchema('GET'), ...returned }, (request, reply) => takeProcessorReturn(ctx, request, reply));
  app.post('/threeds/return/:attempt_id', { schema: returnSchema('POST'), ...returned }, (request, reply) => takeProcessorReturn(ctx, request, reply));
}
