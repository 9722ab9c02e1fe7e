// A dispute as a processor's webhook reports it (docs/processors.md "Disputes"; issue 34 item 2):
// what a connector reads from its own notification, before anything is looked up. The hooks
// (src/attempts/dispute-hooks.ts) find the payment and the dispute and move it by the core's
// table (src/disputes/states.ts), so a repeated or reordered notification changes nothing twice.

/**
 * What the notification asks of the dispute:
 * - `open`: nothing beyond opening it (`opens` says as what);
 * - `announce`: as `open`, and a chargeback is on its way (Adyen's NOTIFICATION_OF_CHARGEBACK): the
 *   defence given from here answers it, so its `escalate` leaves a defence under review;
 * - `escalate`: an inquiry becomes a chargeback (the money leaves now); nothing for a chargeback;
 * - `submit`, `win`, `lose`, `reopen`: the core's moves (`reopen` waits while the dispute is still open);
 * - `lose_unanswered`: the defence period ended: lost if the chargeback is still unanswered;
 * - `win_inquiry`: the issuer let an inquiry go (no money moved): won; nothing for a chargeback;
 * - `note`: kept, moves nothing.
 */
export type DisputeAction = 'open' | 'announce' | 'escalate' | 'submit' | 'win' | 'lose' | 'reopen' | 'lose_unanswered' | 'win_inquiry' | 'note';

export interface DisputeNotification {
  /** The processor's id of this notification: a repeat of it changes nothing. */
  id: string;
  /** The processor's name of the event (`CHARGEBACK`, `charge.dispute.closed`). */
  event: string;
  action: DisputeAction;
  /** The processor's id of the dispute (Adyen: the dispute's pspReference; Stripe: `dp_…`). */
  processor_ref: string;
  /** The disputed payment's reference at the processor (Adyen: originalReference; Stripe: the PaymentIntent). */
  payment_ref?: string;
  /** Our transaction id, when the processor echoes it (Adyen: merchantReference). */
  object_id?: string;
  /** When no dispute exists yet, this notification opens it as this kind; absent: it waits for one that does. */
  opens?: 'inquiry' | 'chargeback';
  amount_minor?: number;
  currency?: string;
  /** The family's reason words (`fraudulent`, `product_not_received`, `general`, …). */
  reason?: string;
  evidence_due_by?: number;
  /** When the processor says it happened (epoch ms). */
  occurred_at: number;
  /** The notification as it came (no card data is in a dispute notification): kept when it matches nothing. */
  raw: string;
}
