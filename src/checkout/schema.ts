// The hosted checkout's request (docs/contract.md §14): the redirect-payment (C) fields of a
// direct payment, without the card fields, plus where the shopper returns.
import { type Static, Type } from 'typebox';
import { cardPaymentFields, commonPaymentFields, Url } from '../payments/schema.js';

export const CheckoutBody = Type.Object(
  {
    ...commonPaymentFields,
    ...cardPaymentFields,
    return_url: Url,
    cancel_url: Type.Optional(Url),
  },
  { additionalProperties: false, description: 'A hosted checkout: the payment fields without card data, and where the shopper returns.' },
);

export type Checkout = Static<typeof CheckoutBody>;

/** The loading page's form, posted back by the shopper's browser: `signInfo` is what counts. */
export const LoadingFormBody = Type.Object(
  { signInfo: Type.String({ maxLength: 128, description: 'the session’s form signature, as the loading page carries it' }) },
  { additionalProperties: true, description: 'The loading page’s form: its fixed inputs, the request fields and aliases, and signInfo.' },
);

/** The payment page's card form. */
export const CardFormBody = Type.Object(
  {
    form_token: Type.String({ maxLength: 128 }),
    card_number: Type.String({ maxLength: 64, description: 'the card number; spaces and dashes are ignored' }),
    expiry_month: Type.String({ maxLength: 8 }),
    expiry_year: Type.String({ maxLength: 8 }),
    security_code: Type.String({ maxLength: 8 }),
    holder: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
);
export type CardForm = Static<typeof CardFormBody>;

const FormText = Type.String({ maxLength: 255 });

/** A payment page's alternative-method form: the method and the fields it asks the shopper for. */
export const ApmFormBody = Type.Object(
  {
    form_token: Type.String({ maxLength: 128 }),
    payment_method: Type.String({ maxLength: 32 }),
    bank_code: Type.Optional(Type.String({ maxLength: 32 })),
    person: Type.Optional(
      Type.Object(
        {
          document_number: Type.Optional(FormText),
          email: Type.Optional(FormText),
          address_street: Type.Optional(FormText),
          address_number: Type.Optional(FormText),
          address_postal_code: Type.Optional(FormText),
          address_city: Type.Optional(FormText),
          address_state: Type.Optional(FormText),
          address_country: Type.Optional(FormText),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ApmForm = Static<typeof ApmFormBody>;

export const FormTokenBody = Type.Object({ form_token: Type.String({ maxLength: 128 }) }, { additionalProperties: false });
