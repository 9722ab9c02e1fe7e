// The gateway's payment-method catalogue: the card brands (type `card`) and the alternative
// methods the connectors declare (type `apm`). Today the sandbox declares every APM; a real
// APM provider adds its rows here as a new connector, with no new code path.
import type { ApmMethod } from '../processors/apm.js';
import { SANDBOX_APM_METHODS } from '../processors/sandbox/apm.js';

export type { ApmFlow, ApmMethod, FieldRule, RequiredField } from '../processors/apm.js';

/**
 * Card brands listed without a `card_bin`, by the names `src/cards/card.ts` gives them (the
 * brands of the sandbox's success cards). A BIN of another brand the card checks know
 * (diners-club, unionpay, elo, …) is ranked under that brand's own name.
 */
export const CARD_BRANDS: readonly string[] = ['visa', 'mastercard', 'american-express', 'discover', 'jcb'];

/** Every alternative method, in catalogue order (the order pages list them before ranking). */
export const APM_METHODS: readonly ApmMethod[] = SANDBOX_APM_METHODS;

const BY_NAME = new Map(APM_METHODS.map((m) => [m.payment_method, m]));
// Card brands and APM names share one namespace: the ranking counts a payment under either.
if (BY_NAME.size !== APM_METHODS.length) throw new Error('two catalogue rows share a payment_method');
for (const brand of CARD_BRANDS) if (BY_NAME.has(brand)) throw new Error(`the APM "${brand}" is named like a card brand`);

export function apmMethod(payment_method: string): ApmMethod | undefined {
  return BY_NAME.get(payment_method);
}

/** Whether a method takes this currency and serves this billing country. */
export function appliesTo(method: ApmMethod, currency: string, billing_country: string): boolean {
  return method.currencies.includes(currency) && method.countries.includes(billing_country);
}
