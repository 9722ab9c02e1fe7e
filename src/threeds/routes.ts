// The sandbox issuer's challenge page (decisions §10): GET shows it, POST takes the
// shopper's answer. Shopper-facing pages, not signed acquiring routes, so no
// acquiringHooks; the unguessable id and the single-use form token are the credentials.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../http/context.js';
import { answersAreStrings, refusal } from '../http/route-schema.js';
import { challengePage, messagePage, type Page, resultPage } from './page.js';
import { ChallengeService, type PageOutcome } from './service.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64, description: 'the challenge id from `threeds_url`' }) });
const Answer = Type.Object(
  {
    form_token: Type.String({ maxLength: 64, description: 'the single-use token of the page’s form' }),
    outcome: Type.Union([Type.Literal('complete'), Type.Literal('fail')], { description: 'complete or fail' }),
  },
  { additionalProperties: false },
);

function send(reply: FastifyReply, status: number, page: Page, formTarget = ''): FastifyReply {
  return reply
    .code(status)
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'nonce-${page.nonce}'; img-src 'none'; form-action 'self'${formTarget ? ` ${formTarget}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/** Origin of return_url: the form's 303 redirect goes there, and form-action covers redirects. */
function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : '';
  } catch {
    return '';
  }
}

function answer(reply: FastifyReply, o: PageOutcome): FastifyReply {
  switch (o.kind) {
    case 'not_found':
      return send(reply, 404, messagePage('Not found', 'This authentication page does not exist.'));
    case 'used':
      return send(reply, 410, messagePage('Already used', 'This authentication page has already been used or has expired.'));
    case 'forbidden':
      return send(reply, 403, messagePage('Not accepted', 'This form is not valid; open the authentication page again.'));
    case 'done':
      if (o.redirect) return reply.code(303).header('location', o.redirect).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
      return send(reply, 200, resultPage(o.payment));
    case 'show':
      throw new Error('unreachable');
  }
}

const Html = { 'text/html': { schema: Type.String({ description: 'an HTML page' }) } };
const page = (description: string) => ({ description, content: Html });
/** Shopper pages answer HTML; a request that breaks the schema gets the JSON refusal record. */
const PAGE_ANSWERS = {
  403: page('The form is not valid (a used or wrong form token).'),
  404: page('No such challenge.'),
  410: page('The challenge was used already, or it expired.'),
};

/** Shopper pages carry no signature: the unguessable id and the form token are the credentials. */
const shopperPage = { tags: ['shopper pages'], security: [] };

export function registerThreedsRoutes(app: FastifyInstance, deps: Deps): void {
  const challenges = new ChallengeService(deps);

  app.get(
    '/threeds/:id',
    {
      schema: {
        operationId: 'threedsChallengePage',
        summary: 'The sandbox issuer’s 3-D Secure challenge page',
        description: 'Where `threeds_url` sends the shopper: shows the payment and lets the shopper complete or fail the challenge (test accounts).',
        ...shopperPage,
        params: Params,
        response: { 200: page('The challenge page.'), ...PAGE_ANSWERS, 400: refusal(400, 'json', 'The id is too long.') },
      },
      config: { answer: 'html' },
      ...answersAreStrings,
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const o = await challenges.view(id);
      if (o.kind !== 'show') return answer(reply, o);
      const page = challengePage({ id, form_token: o.challenge.form_token, merchant_name: o.merchant_name, payment: o.payment });
      return send(reply, 200, page, originOf(o.payment.return_url));
    },
  );

  app.post(
    '/threeds/:id',
    {
      schema: {
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
      },
      config: { answer: 'html' },
      ...answersAreStrings,
    },
    async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = request.body as { form_token: string; outcome: 'complete' | 'fail' };
      return answer(reply, await challenges.decide(id, body.form_token, body.outcome));
    },
  );
}
