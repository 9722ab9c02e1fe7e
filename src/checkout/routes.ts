// Routes of the hosted checkout (docs/contract.md §14):
//   POST /v1/checkout          signed, from the merchant's page via the shopper's browser: the loading page
//   POST /v1/checkout/:id      the loading page's form (signInfo binds it to the session): 303 to the payment page
//   GET  /pay/:id              the payment page while the session is open; its result after
//   POST /pay/:id              the card form: the direct payment's own authorisation (risk, 3-D Secure, ledger, events)
//   POST /pay/:id/apm          an alternative method: its issuer page
//   POST /pay/:id/cancel       "Cancel": 303 to cancel_url with the signed result (order_status 0)
//   GET  /pay/:id/return       303 to return_url (cancel_url when cancelled) with the signed result
// Each route only parses, calls CheckoutService / AuthoriseService / ApmService and answers a
// page (src/pages) or a redirect. The session id is the shopper's credential; the pages'
// forms also carry a token bound to it.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkoutApmTermsOf } from '../apm/acquiring.js';
import type { ApmPaymentCommand } from '../apm/command.js';
import { ApmService } from '../apm/service.js';
import { paymentTermsOf } from '../authorise/acquiring.js';
import { AuthoriseService } from '../authorise/authorise.js';
import type { CardPaymentCommand } from '../authorise/command.js';
import { cardFacts, fourDigitYear, isExpired } from '../cards/card.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { ApmMethod } from '../methods/catalogue.js';
import { apmMethod } from '../methods/catalogue.js';
import { rankedPaymentMethods } from '../methods/service.js';
import { formatMoney, frameOriginsOf, type Lang, type PageContent, sendPage, sendRedirect, standardMessage } from '../pages/index.js';
import { expireIfDue } from '../payments/expiry.js';
import { originOf, paymentLang } from '../payments/shopper-pages.js';
import { signedReturnUrl } from '../payments/shopper-return.js';
import type { RiskEngine } from '../risk/index.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { ApiError, resultText } from '../web/errors.js';
import { asApiError } from '../web/outcomes.js';
import { pageTime, paymentAccount } from '../web/request-time.js';
import { answersAreStrings } from '../web/route-schema.js';
import { checkoutResult, type FormErrors, type LoadingInputs, loadingPage, type PayView, payPage } from './pages.js';
import { cancelSchema, checkoutSchema, forwardSchema, pageSchema, payApmSchema, payCardSchema, returnSchema } from './route-schemas.js';
import { type ApmForm, type CardForm, type Checkout, CheckoutBody } from './schema.js';
import { CheckoutService, isOpen, SESSION_ID, type Session } from './service.js';

/** The request fields' camel-case aliases the loading page carries (interface.md "Create a redirect payment"). */
const ALIASES: ReadonlyArray<readonly [alias: string, field: string]> = [
  ['merNo', 'merchant_id'],
  ['gatewayNo', 'account_id'],
  ['orderNo', 'order_no'],
  ['orderCurrency', 'currency'],
  ['orderAmount', 'amount'],
  ['itemTotal', 'item_total'],
  ['taxTotal', 'tax_total'],
  ['shipFee', 'shipping'],
  ['shippingDiscount', 'shipping_discount'],
  ['goodsInfo', 'items'],
  ['firstName', 'first_name'],
  ['lastName', 'last_name'],
  ['phone', 'shopper_phone'],
  ['email', 'shopper_email'],
  ['address', 'billing_address'],
  ['city', 'billing_city'],
  ['state', 'billing_state'],
  ['zip', 'billing_postal_code'],
  ['country', 'billing_country'],
  ['shipFirstName', 'delivery_firstname'],
  ['shipLastName', 'delivery_lastname'],
  ['shipCountry', 'delivery_country'],
  ['shipState', 'delivery_state'],
  ['shipCity', 'delivery_city'],
  ['shipAddress', 'delivery_address'],
  ['shipZip', 'delivery_postal_code'],
  ['remark', 'note'],
  ['shopperId', 'shopper_id'],
  ['shopperLevel', 'shopper_level'],
  ['returnUrl', 'return_url'],
  ['cancelUrl', 'cancel_url'],
  ['notifyUrl', 'notify_url'],
  ['isOpen3D', 'open3d'],
  ['token', 'token_id'],
  ['paymentToken', 'token_id'],
  ['defaultLang', 'default_lang'],
];

/** Aliases with no request field behind them: sent empty (or `0`), as the spec lists them. */
const FIXED_ALIASES: ReadonlyArray<readonly [string, string]> = [
  ['cardType', ''],
  ['card_type', ''],
  ['merSendLogoNo', ''],
  ['logo_name', ''],
  ['verifyBillingAddress', '0'],
  ['verify_billing_address', '0'],
  ['APMType', ''],
];

/** A value as form fields in bracket notation (`cart_items[0][quantity]`), as the gateway reads forms back. */
function flatten(value: unknown, prefix: string, out: Array<[string, string]>): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value))
    value.forEach((v, i) => {
      flatten(v, `${prefix}[${i}]`, out);
    });
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}[${k}]` : k, out);
  else out.push([prefix, String(value)]);
}

/** What the loading page's script appends: the request's fields, the aliases, the source fields and allParams. */
export function loadingFields(request: Record<string, unknown>, source_ip: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  flatten(request, '', out);
  const scalar = (k: string) => (typeof request[k] === 'string' || typeof request[k] === 'number' ? String(request[k]) : '');
  for (const [alias, f] of ALIASES) out.push([alias, scalar(f)]);
  if (request.cancel_url === undefined) out.push(['cancel_url', '']);
  if (request.default_lang === undefined) out.push(['default_lang', '']);
  out.push(...FIXED_ALIASES.map(([k, v]) => [k, v] as [string, string]));
  out.push(['source_request_ip', source_ip], ['source_notify_url', scalar('notify_url')]);
  out.push(['allParams', new URLSearchParams(out).toString()]);
  return out;
}

const outcomeOf = (p: PaymentRow): 'approved' | 'declined' | 'pending' | 'cancelled' | 'expired' => {
  switch (p.status) {
    case 'authorised':
    case 'captured':
    case 'partially_refunded':
    case 'refunded':
      return 'approved';
    case 'declined':
      return 'declined';
    case 'cancelled':
      return 'cancelled';
    case 'expired':
      return 'expired';
    default:
      return 'pending'; // a 3-D Secure challenge or an issuer page is still open, or a review holds it
  }
};

/** The form fields of a refused card form, and the message each shows. */
const CARD_FIELD_OF: Readonly<Record<string, string>> = {
  card: 'card_number',
  expiration_month: 'expiry_month',
  expiration_year: 'expiry_year',
  security_code: 'security_code',
};

/** What every handler shares: the app's dependencies, the services behind the pages and the frame-origin reader. */
interface CheckoutContext {
  deps: Deps;
  checkout: CheckoutService;
  authorise: AuthoriseService;
  apm: ApmService;
  frames: ReturnType<typeof frameOriginsOf>;
}

/** A refused form shown again: which method failed, the message of each field, and the values to keep. */
type FormAgain = { failed: string; errors: FormErrors; values: Record<string, string> };

const merchantName = (ctx: CheckoutContext, merchant_id: string) => ctx.deps.merchants.displayName(merchant_id);

/** The amount as the page's language writes it (`59,90 €`, `$42.00`). */
const amountOf = (lang: Lang, p: PaymentRow) => formatMoney(lang, p.amount_minor, p.currency);

async function show(
  ctx: CheckoutContext,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  s: Session | null,
  content: (lang: Lang) => PageContent,
) {
  const frameAncestors = s ? await ctx.frames.list(s.payment.account_id) : [];
  const target = s ? originOf(s.session.cancel_url) : '';
  return sendPage(reply, { ...content(paymentLang(request, s?.payment.details)), status, frameAncestors, formTargets: target ? [target] : [] });
}

const notFound = (ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) =>
  show(ctx, request, reply, 404, null, (lang) => standardMessage(lang, 'not_found'));
const forbidden = (ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply, s: Session) =>
  show(ctx, request, reply, 403, s, (lang) => standardMessage(lang, 'forbidden'));
const toPage = (reply: FastifyReply, s: Session) => sendRedirect(reply, `/pay/${s.session.session_id}`);

/** The session, its lapsed payment expired on sight (the job does it too, every 30 s). */
async function load(ctx: CheckoutContext, id: string): Promise<Session | null> {
  const { deps, checkout } = ctx;
  const s = await checkout.load(id);
  if (!s) return null;
  const p = s.payment;
  if (p.status === 'pending' && p.expires_at !== null && Number(p.expires_at) <= deps.now()) {
    await expireIfDue(deps, p.transaction_id, deps.now());
    return checkout.load(id);
  }
  return s;
}

async function credsOf(ctx: CheckoutContext, s: Session): Promise<AccountCredentials> {
  const creds = await ctx.deps.merchants.credentials(s.payment.merchant_id, s.payment.account_id);
  if (!creds) throw new ApiError('0404', 'the session’s account no longer exists');
  return creds;
}

/** The payment page, or the session's result once a method was chosen or it ended. */
async function view(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply, s: Session, form?: FormAgain) {
  const { deps, checkout } = ctx;
  const p = s.payment;
  const merchant_name = await merchantName(ctx, p.merchant_id);
  if (!isOpen(p)) {
    return show(ctx, request, reply, 200, s, (lang) =>
      checkoutResult(lang, { outcome: outcomeOf(p), order_no: p.order_no, merchant_name, amount: amountOf(lang, p), session_id: s.session.session_id }),
    );
  }
  const creds = await credsOf(ctx, s);
  const billing_country = (checkout.requestOf(s).billing_country as string | undefined) ?? '';
  const ranked = await rankedPaymentMethods(deps.store.db, creds.account, { currency: p.currency, billing_country }, deps.now());
  const methods: Array<PayView['methods'][number]> = [];
  for (const m of ranked) {
    if (m.type === 'card') {
      if (!methods.some((x) => x.kind === 'card')) methods.push({ kind: 'card' }); // brands collapse into one card form, at its best brand's rank
    } else {
      const method = apmMethod(m.payment_method);
      if (method) methods.push({ kind: 'apm', method });
    }
  }
  const v: PayView = {
    session_id: s.session.session_id,
    form_token: checkout.formToken(s.session.session_id),
    merchant_name,
    amount: '',
    order_no: p.order_no,
    test_mode: creds.account.mode === 'test',
    methods,
    ...(form ?? {}),
  };
  return show(ctx, request, reply, form ? 400 : 200, s, (lang) => payPage(lang, { ...v, amount: amountOf(lang, p) }));
}

/** POST /v1/checkout: the loading page of a new (or the same) session, or `1011` for a used order_no. */
async function createCheckout(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const { deps, checkout } = ctx;
  const creds = request.account!;
  const body = request.body as Checkout;
  if (!deps.processorFor(creds.account)) throw new ApiError('1016', 'this account is in live mode and no processor is configured for it');
  const created = await checkout.create(creds, body, request.ip);
  if (created.kind === 'duplicate') {
    return sendSigned(request, reply, {
      merchant_id: body.merchant_id,
      account_id: body.account_id,
      order_no: body.order_no,
      amount: body.amount,
      currency: body.currency,
      transaction_id: '',
      order_status: '0',
      result_info: resultText('1011'),
    });
  }
  const { session, payment } = created;
  const request_fields = JSON.parse(session.request) as Record<string, unknown>;
  const name = await merchantName(ctx, payment.merchant_id);
  const fixed: LoadingInputs = {
    gbc_id: session.session_id,
    connector_code: deps.processorFor(creds.account)?.name ?? '',
    account_name: name,
    webSite: typeof body.website === 'string' ? body.website : '',
    pm_id: '',
    apm_type: '',
    descriptor: name,
    orderprefix: '',
    rrtimezone: 'UTC',
    ordernumlength: String(payment.order_no.length),
    sendbgoods: body.items ? '1' : '0',
    replacename: '0',
    send_bank_website: '0',
    replace_up_id: '',
    replace_match_address: '0',
    to_pass_page: '1',
  };
  const s: Session = { session, payment };
  return show(ctx, request, reply, 200, s, (lang) =>
    loadingPage(lang, {
      session_id: session.session_id,
      fixed,
      signInfo: checkout.signInfo(session.session_id),
      fields: loadingFields(request_fields, session.source_ip),
    }),
  );
}

/** POST /v1/checkout/:id: the loading page's form, on to the payment page. */
async function forwardToPage(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const { checkout } = ctx;
  const { id } = request.params as { id: string };
  const s = await checkout.load(id);
  if (!s) return notFound(ctx, request, reply);
  const { signInfo } = request.body as { signInfo: string };
  if (!CheckoutService.same(signInfo, checkout.signInfo(id))) return forbidden(ctx, request, reply, s);
  // Open: on to the payment page. Ended (the loading page again, by the back button): its result.
  return isOpen(s.payment) ? toPage(reply, s) : view(ctx, request, reply, s);
}

/** GET /pay/:id: the payment page, or the session's result. */
async function showPayPage(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const s = await load(ctx, (request.params as { id: string }).id);
  if (!s) return notFound(ctx, request, reply);
  return view(ctx, request, reply, s);
}

type CardErrorKey = 'checkout.error.card_number' | 'checkout.error.expiry' | 'checkout.error.security_code' | 'checkout.error.holder';

/** The card form's fields checked before anything is charged; `values` are what the form shows again (never the card number or code). */
function readCardForm(form: CardForm, now_ms: number) {
  const pan = form.card_number.replace(/[\s-]/g, '');
  const facts = /^\d{12,19}$/.test(pan) ? cardFacts(pan) : null;
  const errors: Record<string, CardErrorKey> = {};
  if (!facts?.valid) errors.card_number = 'checkout.error.card_number';
  const month = /^(0?[1-9]|1[0-2])$/.test(form.expiry_month.trim()) ? Number(form.expiry_month) : 0;
  const yearText = form.expiry_year.trim();
  const year = /^(\d{2}|\d{4})$/.test(yearText) ? fourDigitYear(yearText) : 0;
  // The error goes under the field that is wrong: a year already past under the year (issue 36
  // item 10: it showed under the month), a month past in this year under the month.
  if (!month) errors.expiry_month = 'checkout.error.expiry';
  else if (!year || year < new Date(now_ms).getUTCFullYear()) errors.expiry_year = 'checkout.error.expiry';
  else if (isExpired(month, year, now_ms)) errors.expiry_month = 'checkout.error.expiry';
  const cvc = form.security_code.trim();
  if (!/^\d{3,4}$/.test(cvc) || (facts?.valid && cvc.length !== facts.security_code_length)) errors.security_code = 'checkout.error.security_code';
  const holder = (form.holder ?? '').trim();
  const values = { expiry_month: form.expiry_month, expiry_year: form.expiry_year, holder }; // never the card number or code
  return { pan, month, year, cvc, values, errors };
}

/** POST /pay/:id: the card form, paid through the direct payment's own authorisation. */
async function payByCard(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const { deps, checkout, authorise } = ctx;
  const form = request.body as CardForm;
  const s = await load(ctx, (request.params as { id: string }).id);
  if (!s) return notFound(ctx, request, reply);
  if (!CheckoutService.same(form.form_token, checkout.formToken(s.session.session_id))) return forbidden(ctx, request, reply, s);
  if (!isOpen(s.payment)) return view(ctx, request, reply, s); // paid, cancelled or expired: the result, nothing charged

  const { pan, month, year, cvc, values, errors } = readCardForm(form, deps.now());
  if (Object.keys(errors).length > 0) return view(ctx, request, reply, s, { failed: 'card', errors, values });

  const stored = checkout.requestOf(s);
  // The session's payment: its amount and request fingerprint, the card from the form.
  const cmd: CardPaymentCommand = {
    ...paymentTermsOf(stored),
    order_no: stored.order_no,
    amount_minor: s.payment.amount_minor,
    card: { kind: 'card', pan, exp_month: month, exp_year: year, security_code: cvc },
    request_hash: s.payment.request_hash,
  };
  try {
    const paid = await authorise.payCheckout(await credsOf(ctx, s), cmd, s.payment);
    if (!paid) return view(ctx, request, reply, (await load(ctx, s.session.session_id)) ?? s); // another tab paid it first: its result
    if (paid.threeds_url) return sendRedirect(reply, paid.threeds_url);
    return toPage(reply, s);
  } catch (e) {
    const api = asApiError(e);
    const field = api?.code === '0400' && api.field ? CARD_FIELD_OF[api.field] : undefined;
    if (!field) throw e;
    return view(ctx, request, reply, s, {
      failed: 'card',
      errors: {
        [field]: field === 'card_number' ? 'checkout.error.card_number' : field === 'security_code' ? 'checkout.error.security_code' : 'checkout.error.expiry',
      },
      values,
    });
  }
}

/** POST /pay/:id/apm: an alternative method started on the session's payment, on to its issuer page. */
async function payByApm(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const { checkout, apm } = ctx;
  const form = request.body as ApmForm;
  const s = await load(ctx, (request.params as { id: string }).id);
  if (!s) return notFound(ctx, request, reply);
  if (!CheckoutService.same(form.form_token, checkout.formToken(s.session.session_id))) return forbidden(ctx, request, reply, s);
  if (!isOpen(s.payment)) return view(ctx, request, reply, s);
  const person = Object.fromEntries(
    Object.entries(form.person ?? {})
      .filter(([, v]) => typeof v === 'string' && v.trim() !== '')
      .map(([k, v]) => [k, (v as string).trim()]),
  );
  const values: Record<string, string> = Object.fromEntries(Object.entries(person).map(([k, v]) => [`person.${k}`, v]));
  if (form.bank_code) values.bank_code = form.bank_code;
  try {
    // The session's payment: its order_no, amount and request fingerprint; the method and its fields from the form.
    const stored = checkout.requestOf(s);
    const cmd: ApmPaymentCommand = {
      ...checkoutApmTermsOf(stored, { payment_method: form.payment_method, person, bank_code: form.bank_code }),
      order_no: stored.order_no,
      amount_minor: s.payment.amount_minor,
      request_hash: s.payment.request_hash,
    };
    const started = await apm.startOnCheckout(await credsOf(ctx, s), cmd, s.payment);
    return started.kind === 'started' ? sendRedirect(reply, started.issuer_url) : view(ctx, request, reply, (await load(ctx, s.session.session_id)) ?? s);
  } catch (thrown) {
    const e = asApiError(thrown);
    if (!e || (e.code !== '0400' && e.code !== '0404')) throw thrown;
    const method: ApmMethod | undefined = apmMethod(form.payment_method);
    const known = method?.required.some((r) => r.path === e.field);
    const errors: FormErrors =
      e.code === '0404' || !known || !e.field
        ? { payment_method: 'checkout.error.method' }
        : { [e.field]: /is required/.test(e.message) ? 'checkout.error.required' : 'checkout.error.invalid' };
    return view(ctx, request, reply, s, { failed: form.payment_method, errors, values });
  }
}

/** POST /pay/:id/cancel: the shopper's "Cancel", back to cancel_url with the signed result. */
async function cancelCheckout(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const { checkout } = ctx;
  const form = request.body as { form_token: string };
  const s = await load(ctx, (request.params as { id: string }).id);
  if (!s) return notFound(ctx, request, reply);
  if (!CheckoutService.same(form.form_token, checkout.formToken(s.session.session_id))) return forbidden(ctx, request, reply, s);
  const cancelled = await checkout.cancel(s);
  if (!cancelled) return view(ctx, request, reply, (await load(ctx, s.session.session_id)) ?? s); // it had ended: its result
  const creds = await credsOf(ctx, s);
  return sendRedirect(reply, signedReturnUrl(s.session.cancel_url, cancelled, creds.signing_secret));
}

/** GET /pay/:id/return: back to the merchant with the signed result. */
async function returnToMerchant(ctx: CheckoutContext, request: FastifyRequest, reply: FastifyReply) {
  const s = await load(ctx, (request.params as { id: string }).id);
  if (!s) return notFound(ctx, request, reply);
  if (isOpen(s.payment)) return view(ctx, request, reply, s);
  const creds = await credsOf(ctx, s);
  const url = s.payment.status === 'cancelled' ? s.session.cancel_url : s.payment.return_url;
  return sendRedirect(reply, signedReturnUrl(url, s.payment, creds.signing_secret));
}

export function registerCheckoutRoutes(app: FastifyInstance, deps: Deps, risk: RiskEngine): void {
  const ctx: CheckoutContext = {
    deps,
    checkout: new CheckoutService(deps),
    authorise: new AuthoriseService(deps, risk),
    apm: new ApmService(deps),
    frames: frameOriginsOf(deps.store),
  };
  // A session of a test account with a moved clock lives on the clock's time (docs/contract.md §16).
  const sessionAccount = async (id: string) =>
    SESSION_ID.test(id)
      ? paymentAccount(
          await deps.store.db
            .selectFrom('checkout_sessions')
            .innerJoin('payments', 'payments.transaction_id', 'checkout_sessions.transaction_id')
            .select(['payments.account_id', 'payments.livemode'])
            .where('checkout_sessions.session_id', '=', id)
            .executeTakeFirst(),
        )
      : null;
  const page = { config: { answer: 'html' as const }, ...answersAreStrings, ...pageTime(deps, sessionAccount) };
  app.post(
    '/v1/checkout',
    { schema: checkoutSchema(), config: { answer: 'xml', page: true }, ...answersAreStrings, ...acquiringHooks(deps, CheckoutBody) },
    (request, reply) => createCheckout(ctx, request, reply),
  );
  app.post('/v1/checkout/:id', { schema: forwardSchema(), ...page }, (request, reply) => forwardToPage(ctx, request, reply));
  app.get('/pay/:id', { schema: pageSchema(), ...page }, (request, reply) => showPayPage(ctx, request, reply));
  app.post('/pay/:id', { schema: payCardSchema(), ...page }, (request, reply) => payByCard(ctx, request, reply));
  app.post('/pay/:id/apm', { schema: payApmSchema(), ...page }, (request, reply) => payByApm(ctx, request, reply));
  app.post('/pay/:id/cancel', { schema: cancelSchema(), ...page }, (request, reply) => cancelCheckout(ctx, request, reply));
  app.get('/pay/:id/return', { schema: returnSchema(), ...page }, (request, reply) => returnToMerchant(ctx, request, reply));
}
