// Verifying a notification posted to notify_url (docs/contract.md §11): first the Standard
// Webhooks headers (webhook-id, webhook-timestamp within the tolerance, webhook-signature
// under the account's `whsec_` secret), then the body's `encryption_data` under the
// account key. Both must hold: the first proves freshness and origin of these exact bytes,
// the second that the event is the account's own.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { NotificationEvent } from './types.js';
import { verifySignature } from './wire.js';

/** Standard Webhooks' default: five minutes either way. */
export const DEFAULT_WEBHOOK_TOLERANCE_S = 300;

/** A Fetch `Headers`, or Node's `IncomingHttpHeaders` / any record of header names. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface NotificationKeys {
  /** The account's `whsec_…` notification secret. */
  webhook_secret: string;
  /** The account's secret key(s) that sign `encryption_data`. */
  secrets: readonly string[];
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(' ') : v;
  }
  return undefined;
}

/** HMAC key of a `whsec_<base64>` secret: the bytes after the prefix, base64-decoded. */
function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * Verifies one delivery and returns its event. `rawBody` must be the bytes as received
 * (before any JSON parsing): the signature covers them exactly. Throws
 * WebhookVerificationError saying which check failed.
 */
export function verifyNotification(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  keys: NotificationKeys,
  opts: { now_ms?: number; tolerance_s?: number } = {},
): NotificationEvent {
  const body = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError('missing_header', 'webhook-id, webhook-timestamp and webhook-signature are all required');
  }
  const tolerance_s = opts.tolerance_s ?? DEFAULT_WEBHOOK_TOLERANCE_S;
  const now_s = Math.floor((opts.now_ms ?? Date.now()) / 1000);
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now_s - Number(timestamp)) > tolerance_s) {
    throw new WebhookVerificationError('timestamp', `webhook-timestamp ${timestamp.slice(0, 20)} is not within ${tolerance_s} s of now (${now_s})`);
  }
  const expected = createHmac('sha256', webhookKey(keys.webhook_secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest();
  let matched = false;
  // Several space-separated `v1,<base64>` entries may be sent (secret rotation); any may match.
  for (const entry of signatures.split(' ').slice(0, 10)) {
    const [version, mac] = entry.split(',', 2);
    if (version !== 'v1' || !mac) continue;
    const given = Buffer.from(mac, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('signature', 'webhook-signature does not match the body under the webhook secret');
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('body', 'the body is not JSON');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new WebhookVerificationError('body', 'the body is not a JSON object');
  const e = event as Record<string, unknown>;
  if (e.event_id !== id) throw new WebhookVerificationError('body', 'the body event_id differs from webhook-id');
  if (!verifySignature(e, keys.secrets)) throw new WebhookVerificationError('encryption_data', "the body's encryption_data does not match the account key");
  return event as NotificationEvent;
}
