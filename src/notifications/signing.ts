// What a notification carries (docs/contract.md §11): the JSON body with `encryption_data`
// (docs/contract.md §2, the account's signing key) and the Standard Webhooks headers signed with
// the account's `whsec_` secret, so the public Standard Webhooks libraries verify it.
import { createHmac } from 'node:crypto';
import { sign } from '../crypto/signature.js';

export interface SignedDelivery {
  body: string;
  headers: Record<string, string>;
}

/** HMAC key of a `whsec_<base64>` secret (Standard Webhooks: base64-decoded after the prefix). */
export function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function webhookSignature(secret: string, id: string, timestamp_s: number, body: string): string {
  const mac = createHmac('sha256', webhookKey(secret)).update(`${id}.${timestamp_s}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/**
 * Builds one attempt. `webhook-id` is the event id, the same on every retry so the
 * merchant can deduplicate; `webhook-timestamp` is this attempt's time.
 */
export function signDelivery(payload: string, secrets: { signing_secret: string; webhook_secret: string }, now_ms: number): SignedDelivery {
  const object = JSON.parse(payload) as Record<string, unknown> & { event_id: string };
  const body = JSON.stringify({ ...object, encryption_data: sign(object, secrets.signing_secret) });
  const timestamp_s = Math.floor(now_ms / 1000);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Tollgate-Webhooks/1',
      'webhook-id': object.event_id,
      'webhook-timestamp': String(timestamp_s),
      'webhook-signature': webhookSignature(secrets.webhook_secret, object.event_id, timestamp_s, body),
    },
  };
}
