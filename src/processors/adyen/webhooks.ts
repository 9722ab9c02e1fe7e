// Adyen standard notifications (Webhooks v1, vendor/webhooks-v1.json): JSON
// `{live, notificationItems: [{NotificationRequestItem}]}`, each item signed by HMAC-SHA256
// in `additionalData.hmacSignature` as Adyen documents it (over pspReference,
// originalReference, merchantAccountCode, merchantReference, value, currency, eventCode and
// success joined by `:`, with the hex-decoded HMAC key, base64). Every item is checked
// before anything is read into a notification: one bad signature refuses the whole
// delivery (401) and nothing changes. Adyen expects the reply `[accepted]`.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AttemptOperation } from '../../db/tables/attempts.js';
import type { DisputeNotification } from '../dispute-notices.js';
import type { AuthoriseOutcome, OperationOutcome, ProcessorNotification, WebhookParse, WebhookRequest } from '../types.js';
import { disputeNoticeOf } from './disputes.js';
import { declineCodeOf } from './wire.js';

export interface NotificationRequestItem {
  pspReference?: string;
  originalReference?: string;
  merchantAccountCode?: string;
  merchantReference?: string;
  amount?: { currency?: string; value?: number };
  eventCode?: string;
  eventDate?: string;
  success?: string;
  reason?: string;
  additionalData?: Record<string, unknown>;
  [field: string]: unknown;
}

/** The string Adyen signs for one item. */
export function signedString(n: NotificationRequestItem): string {
  return [
    n.pspReference ?? '',
    n.originalReference ?? '',
    n.merchantAccountCode ?? '',
    n.merchantReference ?? '',
    n.amount?.value ?? '',
    n.amount?.currency ?? '',
    n.eventCode ?? '',
    n.success ?? '',
  ].join(':');
}

/** The item's signature with `hmac_key` (hex, as Adyen's Customer Area shows it). */
export function signItem(hmac_key: string, n: NotificationRequestItem): string {
  return createHmac('sha256', Buffer.from(hmac_key, 'hex')).update(signedString(n), 'utf8').digest('base64');
}

function validSignature(hmac_key: string, n: NotificationRequestItem): boolean {
  const given = n.additionalData?.hmacSignature;
  if (typeof given !== 'string' || given.length > 200) return false;
  const a = Buffer.from(signItem(hmac_key, n));
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Events that report an attempt's outcome; disputes are read by disputes.ts; any other (reports, …) is acknowledged and ignored. */
const OPERATIONS: Readonly<Record<string, AttemptOperation>> = {
  AUTHORISATION: 'authorise',
  CAPTURE: 'capture',
  CAPTURE_FAILED: 'capture',
  CANCELLATION: 'cancel',
  CANCEL_OR_REFUND: 'cancel',
  REFUND: 'refund',
  REFUND_FAILED: 'refund',
};

const cut = (s: unknown, n: number) => (typeof s === 'string' ? s.slice(0, n) : '');

/** One item's outcome: `success` true approves; false declines (an authorisation by the refusal table). A FAILED event is a decline. */
function outcomeOf(n: NotificationRequestItem, operation: AttemptOperation): AuthoriseOutcome | OperationOutcome {
  const reference = cut(n.pspReference, 100);
  const failedEvent = n.eventCode === 'CAPTURE_FAILED' || n.eventCode === 'REFUND_FAILED';
  if (n.success === 'true' && !failedEvent) return { kind: 'approved', reference };
  if (operation === 'authorise') return { kind: 'declined', code: declineCodeOf(n.additionalData?.refusalReasonCode, n.reason), reference };
  // The reason is Adyen's words about the refusal (never card data): kept short.
  return { kind: 'declined', code: '1002', reason: `Adyen ${n.eventCode}: ${cut(n.reason, 80) || 'refused'}`, reference };
}

function occurredAt(n: NotificationRequestItem, fallback: number): number {
  const t = typeof n.eventDate === 'string' ? Date.parse(n.eventDate) : Number.NaN;
  return Number.isFinite(t) ? t : fallback;
}

export function parseAdyenWebhook(hmac_key: string, req: WebhookRequest, now_ms: number): WebhookParse {
  let body: { notificationItems?: unknown };
  try {
    body = JSON.parse(req.raw.toString('utf8')) as typeof body;
  } catch {
    return { kind: 'refused', status: 400, message: 'the body is not JSON' };
  }
  const list = body?.notificationItems;
  if (!Array.isArray(list) || list.length > 1_000) return { kind: 'refused', status: 400, message: 'notificationItems must be a list of at most 1000' };
  const items: NotificationRequestItem[] = [];
  for (const wrapper of list) {
    const n = (wrapper as { NotificationRequestItem?: unknown })?.NotificationRequestItem as NotificationRequestItem | undefined;
    if (!n || typeof n !== 'object' || typeof n.pspReference !== 'string' || typeof n.eventCode !== 'string')
      return { kind: 'refused', status: 400, message: 'a NotificationRequestItem lacks pspReference or eventCode' };
    items.push(n);
  }
  // All or nothing: a delivery with one forged item changes nothing.
  if (!items.every((n) => validSignature(hmac_key, n))) return { kind: 'refused', status: 401, message: 'bad HMAC signature' };
  const notifications: ProcessorNotification[] = [];
  const disputes: DisputeNotification[] = [];
  for (const n of items) {
    const dispute = disputeNoticeOf(n, now_ms);
    if (dispute) disputes.push(dispute);
    const operation = OPERATIONS[n.eventCode as string];
    if (!operation) continue;
    const psp = cut(n.pspReference, 100);
    notifications.push({
      id: `${psp}:${n.eventCode}:${n.success === 'true' ? 'true' : 'false'}`,
      operation,
      ...(n.merchantReference ? { object_id: cut(n.merchantReference, 100) } : {}),
      reference: cut(n.originalReference, 100) || psp,
      outcome: outcomeOf(n, operation),
      occurred_at: occurredAt(n, now_ms),
    });
  }
  return { kind: 'accepted', notifications, disputes, reply: { status: 200, content_type: 'text/plain', body: '[accepted]' } };
}
