// POST /v1/paymentmethods (docs/contract.md §8): the payment methods that apply to a purchase,
// ranked by the account's measured approval.
import type { FastifyInstance } from 'fastify';
import { cardFacts } from '../cards/card.js';
import { amountField, checkCountry, requireCurrency } from '../payments/validate.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { ApiError, invalid } from '../web/errors.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';
import { formatRate } from './ranking.js';
import { PaymentMethodsAnswer, PaymentMethodsBody, type PaymentMethodsInput } from './schema.js';
import { rankedPaymentMethods } from './service.js';

/** The checks the schema cannot make; returns the card brand of `card_bin`, if sent. */
function validate(body: PaymentMethodsInput): string | undefined {
  requireCurrency('currency', body.currency);
  if (amountField('amount', body.amount, body.currency) <= 0) throw invalid('amount', 'must be greater than zero');
  checkCountry('billing_country', body.billing_country);
  if (body.card_bin === undefined) return undefined;
  const brand = cardFacts(body.card_bin).brand;
  if (brand === 'unknown') throw invalid('card_bin', 'does not begin a card number of any brand the gateway knows');
  return brand;
}

export function registerPaymentMethodRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/paymentmethods',
    {
      schema: {
        operationId: 'paymentMethods',
        summary: 'Rank the payment methods for a purchase',
        description:
          'The card brands and the alternative methods your account offers for the currency and billing country, highest expected approval first. `approval_rate` is measured on your own payments of the last 30 days (at most the latest 1,000 per method) and weighed with a prior, so a method tried only a few times is not ranked on luck. With `card_bin`, only that card’s brand is ranked among the cards. The rates are measured over all of the account’s payments, whatever the `device_type`.',
        tags: ['payments'],
        security: SIGNED,
        consumes: REQUEST_MEDIA_TYPES,
        body: PaymentMethodsBody,
        response: answers({
          media: 'json',
          ok: PaymentMethodsAnswer,
          ok_description: 'The ranked methods, signed.',
          refusals: { ...SIGNED_REFUSALS, 403: '`1016:No processor configured for live mode`: a live account without a processor.' },
        }),
      },
      config: { answer: 'json' },
      ...answersAreStrings,
      ...acquiringHooks(deps, PaymentMethodsBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const body = request.body as PaymentMethodsInput;
      const card_brand = validate(body);
      // As for a payment: a live account without a processor can take none of these methods.
      if (!deps.processorFor(creds.account)) throw new ApiError('1016', 'this account is in live mode and no processor is configured for it');
      const ranked = await rankedPaymentMethods(
        deps.store.db,
        creds.account,
        { currency: body.currency, billing_country: body.billing_country, card_brand },
        deps.now(),
      );
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        currency: body.currency,
        amount: body.amount,
        billing_country: body.billing_country,
        payment_methods: ranked.map((m) => ({
          payment_method: m.payment_method,
          type: m.type,
          approval_rate: formatRate(m.approval_rate),
          sample_size: String(m.sample_size),
          recommended: m.recommended ? '1' : '0',
        })),
      });
    },
  );
}
