// The sandbox issuer's challenge page (decisions §10): GET shows it, POST takes the
// shopper's answer. Shopper-facing pages, not signed acquiring routes, so no
// acquiringHooks; the unguessable id and the single-use form token are the credentials.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../http/context.js';
import { challengePage, messagePage, type Page, resultPage } from './page.js';
import { ChallengeService, type PageOutcome } from './service.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });
const Answer = Type.Object(
  {
    form_token: Type.String({ maxLength: 64 }),
    outcome: Type.Union([Type.Literal('complete'), Type.Literal('fail')]),
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

export function registerThreedsRoutes(app: FastifyInstance, deps: Deps): void {
  const challenges = new ChallengeService(deps);

  app.get('/threeds/:id', { schema: { hide: true, params: Params }, config: { answer: 'html' } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const o = await challenges.view(id);
    if (o.kind !== 'show') return answer(reply, o);
    const page = challengePage({ id, form_token: o.challenge.form_token, merchant_name: o.merchant_name, payment: o.payment });
    return send(reply, 200, page, originOf(o.payment.return_url));
  });

  app.post('/threeds/:id', { schema: { hide: true, params: Params, body: Answer }, config: { answer: 'html' } }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const body = request.body as { form_token: string; outcome: 'complete' | 'fail' };
    return answer(reply, await challenges.decide(id, body.form_token, body.outcome));
  });
}
