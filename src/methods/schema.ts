// POST /v1/paymentmethods: the request and answer schemas (docs/style.md §2), which validate,
// type and document the endpoint.
import { type Static, Type } from 'typebox';
import { oneOf, ReturnMessage, ReturnStatus, Signature, SignedIdentity, text } from '../web/route-schema.js';

export const PaymentMethodsBody = Type.Object(
  {
    ...SignedIdentity,
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'a three-letter uppercase ISO 4217 currency code' }),
    amount: Type.String({
      pattern: '^\\d{1,16}(\\.\\d{1,4})?$',
      maxLength: 21,
      description: 'a decimal string with the currency’s minor digits, such as "10.00"',
    }),
    billing_country: Type.String({ pattern: '^[A-Z]{2}$', description: 'a two-letter uppercase ISO 3166-1 country code' }),
    card_bin: Type.Optional(
      Type.String({ pattern: '^\\d{6,8}$', description: 'the first 6 to 8 digits of the shopper’s card: only that card brand is ranked' }),
    ),
    device_type: Type.Optional(Type.String({ maxLength: 32, description: 'the shopper’s device kind, up to 32 characters' })),
  },
  { additionalProperties: false },
);

export type PaymentMethodsInput = Static<typeof PaymentMethodsBody>;

export const RankedMethodItem = Type.Object({
  payment_method: text('a card brand (`visa`, `mastercard`, `american-express`, `discover`, `jcb`, …) or an alternative method (`pix`, `boleto`, `ideal`)'),
  type: oneOf(['card', 'apm'], '`card` a card brand, `apm` an alternative payment method'),
  approval_rate: Type.String({
    pattern: '^(0\\.\\d{4}|1\\.0000)$',
    description: 'expected approval, 0 to 1 with four decimals: your recent approvals with this method, weighed with a prior when there are few',
  }),
  sample_size: Type.String({ pattern: '^\\d+$', description: 'how many of your recent payments with this method were counted' }),
  recommended: oneOf(['0', '1'], '`1` for the best method and any within one percentage point of it'),
});

export const PaymentMethodsAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  currency: text('as sent'),
  amount: text('as sent'),
  billing_country: text('as sent'),
  payment_methods: Type.Array(RankedMethodItem, { description: 'the methods that apply, highest expected approval first' }),
  encryption_data: Signature,
});
