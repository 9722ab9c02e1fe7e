// Adyen's dispute notifications (Webhooks v1, ../shared/vendor/adyen/Webhooks-v1.json; docs/processors.md
// "Adyen", Disputes) read as dispute notices. Every notification of one dispute carries the
// dispute's own pspReference (the document's examples: NOTIFICATION_OF_CHARGEBACK, CHARGEBACK,
// CHARGEBACK_REVERSED, SECOND_CHARGEBACK and the pre-arbitration ones all name QFQTPCQ8HXSKGK82),
// so that is the dispute's processor_ref; the payment is named by `originalReference` (its
// pspReference) and `merchantReference` (our transaction id, the reference we sent), though
// the later stages' notifications may lack `originalReference`.
//
// What each event does (DISPUTE_EVENTS): the document says the funds are deducted at CHARGEBACK
// ("the funds were deducted from your account") and at SECOND_CHARGEBACK ("the disputed amount
// is deducted"), while NOTIFICATION_OF_CHARGEBACK only opens the dispute process ("you should
// investigate the dispute and supply the defense documents") and REQUEST_FOR_INFORMATION asks
// for documents. Money follows the processor (docs/contract.md §20), so those two open the
// dispute as an inquiry (`warning_needs_response`, no money) and CHARGEBACK escalates it (or
// opens it as a chargeback when it comes first or alone). Adyen books the CHARGEBACK whether or
// not the announced one was defended meanwhile: after a defence it takes the money and leaves the
// dispute under review (the core's `book`), where the defence job still sends the evidence.
// A chargeback lost and later reversed (CHARGEBACK_REVERSED after the defence period ended, an
// arbitration won after a lost pre-arbitration) is won again, the amount back (`reverse`).
import type { DisputeAction, DisputeNotification } from '../dispute-notices.js';
import type { NotificationRequestItem } from './webhooks.js';

/** eventCode → what it does to the dispute, and as what it opens one when none exists yet (docs/processors.md). */
export const DISPUTE_EVENTS: Readonly<Record<string, { action: DisputeAction; opens?: 'inquiry' | 'chargeback' }>> = {
  REQUEST_FOR_INFORMATION: { action: 'open', opens: 'inquiry' },
  // The chargeback to come: a defence given now answers it, and its CHARGEBACK (booked after the defence too) does not ask again.
  NOTIFICATION_OF_CHARGEBACK: { action: 'announce', opens: 'inquiry' },
  CHARGEBACK: { action: 'escalate', opens: 'chargeback' },
  INFORMATION_SUPPLIED: { action: 'submit' },
  // "Issuer accepted defense or did not respond": ends an inquiry; a chargeback's money comes back with CHARGEBACK_REVERSED.
  ISSUER_RESPONSE_TIMEFRAME_EXPIRED: { action: 'win_inquiry' },
  DISPUTE_DEFENSE_PERIOD_ENDED: { action: 'lose_unanswered' },
  CHARGEBACK_REVERSED: { action: 'win', opens: 'chargeback' },
  SECOND_CHARGEBACK: { action: 'reopen', opens: 'chargeback' },
  // The cardholder's bank contests the won chargeback again.
  PREARBITRATION_OPEN: { action: 'reopen', opens: 'chargeback' },
  PREARBITRATION_WON: { action: 'win', opens: 'chargeback' },
  PREARBITRATION_LOST: { action: 'lose', opens: 'chargeback' },
  PREARBITRATION_ISSUER_WITHDRAWN: { action: 'win', opens: 'chargeback' },
  // The merchant accepted the pre-arbitration case: liable.
  PREARBITRATION_ACCEPTED: { action: 'lose', opens: 'chargeback' },
  // Declined by the merchant, or escalated by the issuer to the scheme: still under way.
  PREARBITRATION_DECLINED: { action: 'note' },
  SCHEME_ARBITRATION: { action: 'note' },
  SCHEME_ARBITRATION_WON: { action: 'win', opens: 'chargeback' },
  SCHEME_ARBITRATION_LOST: { action: 'lose', opens: 'chargeback' },
  ISSUER_COMMENTS: { action: 'note' },
};

/**
 * Chargeback reason codes (Visa, Mastercard, American Express, Discover; Adyen's
 * dispute-reason-codes) onto the family's reason words; any other code is `general`.
 */
export const REASON_CODES: Readonly<Record<string, 'fraudulent' | 'product_not_received'>> = {
  // Visa 10.1–10.5 (EMV counterfeit, EMV lost or stolen, other fraud card present / absent, fraud monitoring)
  '10.1': 'fraudulent',
  '10.2': 'fraudulent',
  '10.3': 'fraudulent',
  '10.4': 'fraudulent',
  '10.5': 'fraudulent',
  // Mastercard: no cardholder authorisation, fraudulent processing, questionable merchant, not recognised, chip liability shifts
  '4837': 'fraudulent',
  '4840': 'fraudulent',
  '4849': 'fraudulent',
  '4863': 'fraudulent',
  '4870': 'fraudulent',
  '4871': 'fraudulent',
  // American Express: no card member authorisation, card not present, fraud full recourse, immediate chargeback programmes
  F24: 'fraudulent',
  F29: 'fraudulent',
  FR2: 'fraudulent',
  FR4: 'fraudulent',
  FR6: 'fraudulent',
  // Discover: fraud card present / not present, chip counterfeit, chip and PIN
  UA01: 'fraudulent',
  UA02: 'fraudulent',
  UA05: 'fraudulent',
  UA06: 'fraudulent',
  // Not received: Visa 13.1, Mastercard 4855, American Express C08, Discover 4755
  '13.1': 'product_not_received',
  '4855': 'product_not_received',
  C08: 'product_not_received',
  '4755': 'product_not_received',
};

export function reasonOfCode(code: unknown): string {
  return typeof code === 'string' ? (REASON_CODES[code.trim().toUpperCase()] ?? 'general') : 'general';
}

const cut = (s: unknown, n: number) => (typeof s === 'string' ? s.slice(0, n) : '');

function time(s: unknown): number | undefined {
  const t = typeof s === 'string' ? Date.parse(s) : Number.NaN;
  return Number.isFinite(t) ? t : undefined;
}

/** The dispute notice of one verified item, or undefined when its eventCode is not a dispute's. */
export function disputeNoticeOf(n: NotificationRequestItem, now_ms: number): DisputeNotification | undefined {
  const known = DISPUTE_EVENTS[n.eventCode as string];
  if (!known) return undefined;
  const psp = cut(n.pspReference, 100);
  const ad = n.additionalData ?? {};
  const value = n.amount?.value;
  // `success` false: the event did not happen (the document's words); kept, moves nothing.
  const happened = n.success === 'true';
  const { hmacSignature: _signature, ...additionalData } = ad;
  return {
    id: `dispute:${psp}:${n.eventCode}:${cut(n.eventDate, 40)}:${happened}`,
    event: n.eventCode as string,
    action: happened ? known.action : 'note',
    ...(happened && known.opens ? { opens: known.opens } : {}),
    processor_ref: psp,
    ...(n.originalReference ? { payment_ref: cut(n.originalReference, 100) } : {}),
    ...(n.merchantReference ? { object_id: cut(n.merchantReference, 100) } : {}),
    ...(Number.isSafeInteger(value) && (value as number) > 0 ? { amount_minor: value as number } : {}),
    ...(typeof n.amount?.currency === 'string' ? { currency: n.amount.currency.toUpperCase() } : {}),
    reason: reasonOfCode(ad.chargebackReasonCode ?? ad.rfiReasonCode ?? ad.nofReasonCode),
    ...(time(ad.defensePeriodEndsAt) !== undefined ? { evidence_due_by: time(ad.defensePeriodEndsAt) } : {}),
    occurred_at: time(n.eventDate) ?? now_ms,
    raw: JSON.stringify({ ...n, additionalData }).slice(0, 8_000),
  };
}
