// The sandbox issuer's pages for alternative methods (docs/contract.md §15): GET shows the page
// behind `issuer_url`, POST takes the shopper's approve, decline or "pay the slip". Shopper
// pages, not signed routes: the unguessable id (stored only as its hash) and the page's
// single-use form token are the credentials. The outcome takes `completeApm`, the one path a
// real provider's report would take too; the shopper then goes back to the merchant with
// signed result fields (or to the hosted checkout's result page).
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PaymentRow } from '../db/tables/payments.js';
import { apmMethod } from '../methods/catalogue.js';
import { frameOriginsOf, type PageContent, sendPage, sendRedirect } from '../pages/index.js';
import { expireIfDue } from '../payments/expiry.js';
import { requirePayment } from '../payments/reader.js';
import { htmlPage, originOf, paymentLang, SHOPPER_PAGE, seeOther } from '../payments/shopper-pages.js';
import { shopperReturn } from '../payments/shopper-return.js';
import type { Deps } from '../web/context.js';
import { pageTime, paymentAccount } from '../web/request-time.js';
import { answersAreStrings, refusal } from '../web/route-schema.js';
import { issuerPage, issuerRefusal, issuerResult } from './issuer-pages.js';
import { completeApm, hashIssuerId, ISSUER_PAGE_ID } from './service.js';
import type { IssuerPageRow } from './tables.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64, description: 'the page id from `issuer_url`' }) });
const Answer = Type.Object(
  {
    form_token: Type.String({ maxLength: 64, description: 'the single-use token of the page’s form' }),
    outcome: Type.Union([Type.Literal('approve'), Type.Literal('decline')], {
      description: '`approve` (pay; the Boleto slip’s "pay" control) or `decline` (Pix and iDEAL only)',
    }),
  },
  { additionalProperties: false },
);

const PAGE_ANSWERS = {
  403: htmlPage('The form is not valid (a wrong form token, or decline on a slip).'),
  404: htmlPage('No such page.'),
  410: htmlPage('The page was used already, or its payment ended or expired.'),
};

type Found = { page: IssuerPageRow; payment: PaymentRow };
type Lang = ReturnType<typeof paymentLang>;

const PAGE_SCHEMA = {
  operationId: 'issuerPage',
  summary: 'The sandbox issuer’s page of an alternative-method payment',
  description:
    'Where `issuer_url` sends the shopper (test accounts): Pix and iDEAL show approve and decline; Boleto shows the slip with a "pay" control. Single use; gone once the payment ended or its method’s deadline passed.',
  ...SHOPPER_PAGE,
  params: Params,
  response: { 200: htmlPage('The issuer page.'), ...PAGE_ANSWERS, 400: refusal(400, 'json', 'The id is too long.') },
};

const ANSWER_SCHEMA = {
  operationId: 'issuerAnswer',
  summary: 'The shopper’s answer on the issuer page',
  description:
    'Sent by the page’s form. Approve moves the payment to `3000` (`2000` with manual capture), decline to `6000` (`1017`); the ledger and the notification follow. The shopper goes to the payment’s `return_url` with the signed result (to the hosted payment page for a checkout), or sees the result when there is none.',
  ...SHOPPER_PAGE,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: Answer,
  response: {
    200: htmlPage('The result page (the payment has no `return_url`).'),
    303: seeOther(
      'To `return_url` with `merchant_id`, `account_id`, `order_no`, `transaction_id`, `order_status`, `result_info`, `threeds_result` and `encryption_data` signing them; or to the hosted payment page.',
      'the merchant’s return_url with the result fields, or /pay/<session id>',
    ),
    ...PAGE_ANSWERS,
    400: refusal(400, 'json', 'The form fields are missing or invalid.'),
  },
};

/** What both handlers share: the app's dependencies and its frame-origin reader. */
interface IssuerContext {
  deps: Deps;
  frames: ReturnType<typeof frameOriginsOf>;
}

async function load(ctx: IssuerContext, id: string): Promise<Found | null> {
  if (!ISSUER_PAGE_ID.test(id)) return null;
  const db = ctx.deps.store.db;
  const page = await db.selectFrom('apm_issuer_pages').selectAll().where('id_hash', '=', hashIssuerId(id)).executeTakeFirst();
  if (!page) return null;
  const payment = await requirePayment(db, page.transaction_id);
  return { page, payment };
}

async function show(
  ctx: IssuerContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  payment: PaymentRow | null,
  content: (lang: Lang) => PageContent,
) {
  const frameAncestors = payment ? await ctx.frames.list(payment.account_id) : [];
  const target = payment ? originOf(payment.return_url) : '';
  return sendPage(reply, { ...content(paymentLang(request, payment?.details)), status, frameAncestors, formTargets: target ? [target] : [] });
}

/** The page is over: its payment ended, or its deadline passed (then the payment expires now). */
async function ended(ctx: IssuerContext, found: Found): Promise<boolean> {
  const { page, payment } = found;
  if (page.status !== 'open' || payment.status !== 'pending') return true;
  const now = ctx.deps.now();
  if (now < Number(page.expires_at) && (payment.expires_at === null || now < Number(payment.expires_at))) return false;
  await expireIfDue(ctx.deps, payment.transaction_id, now);
  return true;
}

/** GET /issuer/:id: the page, or why there is none. */
async function showIssuerPage(ctx: IssuerContext, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  const found = await load(ctx, id);
  if (!found) return show(ctx, request, reply, 404, null, (lang) => issuerRefusal(lang, 'not_found'));
  if (await ended(ctx, found)) return show(ctx, request, reply, 410, found.payment, (lang) => issuerRefusal(lang, 'used'));
  const method = apmMethod(found.page.payment_method);
  if (!method) return show(ctx, request, reply, 404, null, (lang) => issuerRefusal(lang, 'not_found'));
  const details = JSON.parse(found.payment.details || '{}') as { bank_code?: unknown };
  const merchant_name = await ctx.deps.merchants.displayName(found.payment.merchant_id);
  return show(ctx, request, reply, 200, found.payment, (lang) =>
    issuerPage(lang, {
      id,
      form_token: found.page.form_token,
      merchant_name,
      method,
      payment: found.payment,
      bank_code: typeof details.bank_code === 'string' ? details.bank_code : '',
    }),
  );
}

/** POST /issuer/:id: the shopper's answer, then back to the merchant (or the result page). */
async function takeIssuerAnswer(ctx: IssuerContext, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  const body = request.body as { form_token: string; outcome: 'approve' | 'decline' };
  const found = await load(ctx, id);
  if (!found) return show(ctx, request, reply, 404, null, (lang) => issuerRefusal(lang, 'not_found'));
  const a = Buffer.from(body.form_token);
  const b = Buffer.from(found.page.form_token);
  if (a.length !== b.length || !timingSafeEqual(a, b)) return show(ctx, request, reply, 403, found.payment, (lang) => issuerRefusal(lang, 'forbidden'));
  if (await ended(ctx, found)) return show(ctx, request, reply, 410, found.payment, (lang) => issuerRefusal(lang, 'used'));
  const method = apmMethod(found.page.payment_method);
  // A slip is paid or left to expire: the shopper has nothing to decline.
  if (!method || (method.flow === 'slip' && body.outcome === 'decline'))
    return show(ctx, request, reply, 403, found.payment, (lang) => issuerRefusal(lang, 'forbidden'));
  const outcome = { kind: body.outcome === 'approve' ? ('approved' as const) : ('declined' as const) };
  const after = await completeApm(ctx.deps, found.payment.transaction_id, outcome, found.page.id_hash);
  // A second submit, the merchant's cancel or the expiry job got there first.
  if (!after) return show(ctx, request, reply, 410, found.payment, (lang) => issuerRefusal(lang, 'used'));
  const back = await shopperReturn(ctx.deps, after);
  if (back) return sendRedirect(reply, back);
  const merchant_name = await ctx.deps.merchants.displayName(after.merchant_id);
  return show(ctx, request, reply, 200, after, (lang) => issuerResult(lang, after, merchant_name));
}

export function registerIssuerRoutes(app: FastifyInstance, deps: Deps): void {
  const ctx: IssuerContext = { deps, frames: frameOriginsOf(deps.store) };
  // An issuer page of a test account with a moved clock lives on the clock's time (docs/contract.md §16).
  const pageAccount = async (id: string) =>
    ISSUER_PAGE_ID.test(id)
      ? paymentAccount(
          await deps.store.db
            .selectFrom('apm_issuer_pages')
            .innerJoin('payments', 'payments.transaction_id', 'apm_issuer_pages.transaction_id')
            .select(['payments.account_id', 'payments.livemode'])
            .where('apm_issuer_pages.id_hash', '=', hashIssuerId(id))
            .executeTakeFirst(),
        )
      : null;
  const options = { config: { answer: 'html' as const }, ...answersAreStrings, ...pageTime(deps, pageAccount) };
  app.get('/issuer/:id', { schema: PAGE_SCHEMA, ...options }, (request, reply) => showIssuerPage(ctx, request, reply));
  app.post('/issuer/:id', { schema: ANSWER_SCHEMA, ...options }, (request, reply) => takeIssuerAnswer(ctx, request, reply));
}
