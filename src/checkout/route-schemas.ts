// The OpenAPI schemas of the hosted checkout's routes (docs/contract.md §14), one function per
// route: Fastify compiles a schema object into the app it registers on, so each registration
// gets its own objects, as it did when they were written inline in the registrar.
import { Type } from 'typebox';
import { htmlPage, SHOPPER_PAGE, seeOther } from '../payments/shopper-pages.js';
import { REQUEST_MEDIA_TYPES, refusal, SIGNED } from '../web/route-schema.js';
import { ApmFormBody, CardFormBody, CheckoutBody, FormTokenBody, LoadingFormBody } from './schema.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64, description: 'the session id (`cs_…`)' }) });

/** POST /v1/checkout */
export const checkoutSchema = () => ({
  operationId: 'checkout',
  summary: 'Create a redirect (iFrame) payment: the hosted checkout',
  description:
    'Post it from the shopper’s browser (a form on your page, or into an iFrame) with the payment fields of a direct payment but no card data, plus `return_url` and optionally `cancel_url`; signed like every request. Answers the loading page (HTML), which forwards the browser to the hosted payment page by itself (a button without JavaScript). The session lives 60 minutes; its order is `payment_status` `1000` until the shopper pays, and the shopper returns to `return_url` (or `cancel_url`) with signed `order_no`, `transaction_id`, `order_status`, `result_info` and `encryption_data`. The same body again shows the same session; another body with a used `order_no` is answered `1011:Duplicate order` (XML). Refusals are XML.',
  tags: ['payments'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: CheckoutBody,
  response: {
    200: {
      description: 'The loading page (HTML); or, for another body with a used `order_no`, the signed `1011:Duplicate order` (XML).',
      content: {
        'text/html': { schema: Type.String({ description: 'the loading page: title `Loading…`, a form to `/v1/checkout/<session id>`' }) },
        'application/xml': {
          schema: Type.Object(
            {
              merchant_id: Type.String(),
              account_id: Type.String(),
              order_no: Type.String(),
              amount: Type.String(),
              currency: Type.String(),
              transaction_id: Type.String({ description: 'empty' }),
              order_status: Type.String({ description: '`0`' }),
              result_info: Type.String({ description: '`1011:Duplicate order`' }),
              encryption_data: Type.String({ description: 'the answer’s signature' }),
            },
            { xml: { name: 'respon' } },
          ),
        },
      },
    },
    400: refusal(400, 'xml'),
    401: refusal(401, 'xml'),
    403: refusal(403, 'xml', '`1016:No processor configured for live mode`: a live account without a processor.'),
    409: refusal(409, 'xml'),
    413: refusal(413, 'xml'),
    500: refusal(500, 'xml'),
  },
});

/** POST /v1/checkout/:id */
export const forwardSchema = () => ({
  operationId: 'checkoutForward',
  summary: 'The loading page’s form: on to the payment page',
  description: 'Posted by the loading page (by its script, or its button without JavaScript). Only the session’s own `signInfo` is accepted.',
  ...SHOPPER_PAGE,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: LoadingFormBody,
  response: {
    200: htmlPage('The session had ended (the loading page posted again): its result.'),
    303: seeOther('To the payment page.', '/pay/<session id>'),
    403: htmlPage('`signInfo` is not this session’s.'),
    404: htmlPage('No such session.'),
    400: refusal(400, 'json', 'The form has no signInfo.'),
  },
});

/** GET /pay/:id */
export const pageSchema = () => ({
  operationId: 'checkoutPage',
  summary: 'The hosted payment page',
  description:
    'While the session is open: the amount, the merchant, a card form and the alternative methods the account offers for the currency and billing country, in the order `/v1/paymentmethods` ranks them, and "Cancel". Once a method was chosen or the session ended: its result, with the way back to the merchant.',
  ...SHOPPER_PAGE,
  params: Params,
  response: {
    200: htmlPage('The payment page, or the session’s result.'),
    404: htmlPage('No such session.'),
    400: refusal(400, 'json', 'The id is too long.'),
  },
});

/** POST /pay/:id */
export const payCardSchema = () => ({
  operationId: 'checkoutPayCard',
  summary: 'The payment page’s card form',
  description:
    'Pays the session by card through the direct payment’s own authorisation: risk, 3-D Secure, ledger and notification. Paid at most once: a second submit, a reload or another tab shows the result and charges nothing. A card number that fails its check, a past expiry or a wrong security-code length re-shows the form (400) and charges nothing.',
  ...SHOPPER_PAGE,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: CardFormBody,
  response: {
    200: htmlPage('The session was paid, cancelled or expired already (another tab, a reload): its result; nothing charged.'),
    303: seeOther('To the 3-D Secure challenge, or back to the payment page, which shows the result.', '/threeds/<id> or /pay/<session id>'),
    400: htmlPage('The form again, with the fields to correct (a form without its fields is refused as JSON).'),
    403: htmlPage('The form token is not this session’s.'),
    404: htmlPage('No such session.'),
  },
});

/** POST /pay/:id/apm */
export const payApmSchema = () => ({
  operationId: 'checkoutPayApm',
  summary: 'The payment page’s form of an alternative method',
  description:
    'Starts the chosen method on the session’s payment and sends the shopper to its issuer page. A missing or invalid field re-shows the form (400) naming it; a method the session does not offer is refused on the form.',
  ...SHOPPER_PAGE,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: ApmFormBody,
  response: {
    200: htmlPage('The session was paid, cancelled or expired already: its result.'),
    303: seeOther('To the issuer page.', 'the issuer_url'),
    400: htmlPage('The form again, with the field to correct (a form without its fields is refused as JSON).'),
    403: htmlPage('The form token is not this session’s.'),
    404: htmlPage('No such session.'),
  },
});

/** POST /pay/:id/cancel */
export const cancelSchema = () => ({
  operationId: 'checkoutCancel',
  summary: 'The payment page’s "Cancel"',
  description:
    'Cancels the open session (`payment_status` `5000`, `1019:Cancelled by the shopper`, notified) and sends the shopper to `cancel_url` with the signed result, `order_status` `0`. After a payment it only shows the result.',
  ...SHOPPER_PAGE,
  consumes: ['application/x-www-form-urlencoded'],
  params: Params,
  body: FormTokenBody,
  response: {
    200: htmlPage('The session had ended already (paid, cancelled or expired): its result.'),
    303: seeOther('To `cancel_url` with the signed result.', 'cancel_url with the result fields'),
    403: htmlPage('The form token is not this session’s.'),
    404: htmlPage('No such session.'),
    400: refusal(400, 'json', 'The form has no form_token.'),
  },
});

/** GET /pay/:id/return */
export const returnSchema = () => ({
  operationId: 'checkoutReturn',
  summary: 'Back to the merchant with the signed result',
  description:
    'The result page’s link (followed by itself after a few seconds): `303` to `return_url` (to `cancel_url` when the shopper cancelled) with `merchant_id`, `account_id`, `order_no`, `transaction_id`, `order_status`, `result_info`, `threeds_result` and `encryption_data` signing them. While the session is open it shows the payment page.',
  ...SHOPPER_PAGE,
  params: Params,
  response: {
    200: htmlPage('The session is still open: the payment page.'),
    303: seeOther('To the merchant with the signed result.', 'return_url or cancel_url with the result fields'),
    404: htmlPage('No such session.'),
    400: refusal(400, 'json', 'The id is too long.'),
  },
});
