// The hosted-checkout session's transition table (docs/contract.md §14).
//
// A session's state is not a column: it is derived from its payment by one function,
// `checkoutSessionState` (src/payments/states.ts), and every write that needs the session
// open is a payment transition whose compare-and-set also requires `card_brand = ''`
// (UNCLAIMED). Why not a column of its own: each of these moves already writes the payment
// row (its status, result and method), in the same statement that decides the race; a
// second status on `checkout_sessions` would be the same fact stored twice, to be written in
// the same unit by every one of them (the card payment's among them, which runs in
// authorise's write unit), and a session and its payment could then disagree. Derived, they
// cannot. The states:
// - open: the shopper may pay by card, start another method, or cancel; the deadline may end it;
// - claimed: a method was chosen and the shopper is away (3-D Secure challenge, issuer's page);
// - ended: the payment's own status is the session's result.
import { allows, type Transitions } from '../core/machine.js';
import { type CheckoutSessionState, checkoutSessionState } from '../payments/states.js';

export { type CheckoutSessionState, checkoutSessionState };

export const SESSION_STATES: readonly CheckoutSessionState[] = ['open', 'claimed', 'ended'];

export type SessionEvent =
  | 'pay_card' // the card form (the payment's checkout_pay): ended, or claimed for a 3-D Secure challenge
  | 'start_method' // another method: the shopper goes to the issuer's page (checkout_pay, still pending)
  | 'cancel' // "Cancel" on the payment page
  | 'expire' // the session's deadline, or the chosen method's
  | 'finish'; // the challenge's end or the issuer's answer

export const SESSION_TRANSITIONS = {
  pay_card: { from: ['open'], to: ['claimed', 'ended'] },
  start_method: { from: ['open'], to: 'claimed' },
  cancel: { from: ['open'], to: 'ended' },
  expire: { from: ['open', 'claimed'], to: 'ended' },
  finish: { from: ['claimed'], to: 'ended' },
} as const satisfies Transitions<CheckoutSessionState, SessionEvent>;

export function canApplySession(event: SessionEvent, from: CheckoutSessionState): boolean {
  return allows<CheckoutSessionState, SessionEvent>(SESSION_TRANSITIONS, event, from);
}
