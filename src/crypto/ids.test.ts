// Every kind of id the gateway makes, with the format clients and tests rely on (issue 30
// item 3): a kind added to the registry without a row here, or a format that drifts, fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ID_KINDS, type IdKind, newId } from './ids.js';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const B64URL = (n: number) => `[A-Za-z0-9_-]{${n}}`;

const FORMATS: Record<IdKind, RegExp> = {
  payment: new RegExp(`^${ULID}$`),
  payout: new RegExp(`^${ULID}$`),
  request: new RegExp(`^${ULID}$`),
  delivery_attempt: new RegExp(`^${ULID}$`),
  signing_key: new RegExp(`^${ULID}$`),
  audit_entry: new RegExp(`^${ULID}$`),
  event: new RegExp(`^evt_${ULID}$`),
  posting: new RegExp(`^pst_${ULID}$`),
  idempotency_record: new RegExp(`^idk_${ULID}$`),
  stored_card: new RegExp(`^card_${ULID}$`),
  api_key: new RegExp(`^key_${ULID}$`),
  portal_user: new RegExp(`^usr_${ULID}$`),
  transfer: new RegExp(`^tr_${ULID}$`),
  transfer_reversal: new RegExp(`^trr_${ULID}$`),
  customer: new RegExp(`^cus_${ULID}$`),
  payment_method: new RegExp(`^pm_${ULID}$`),
  payment_intent: new RegExp(`^pi_${ULID}$`),
  dispute: new RegExp(`^dp_${ULID}$`),
  dispute_evidence: new RegExp(`^dpe_${ULID}$`),
  processor_attempt: new RegExp(`^att_${ULID}$`),
  processor: new RegExp(`^prc_${ULID}$`),
  webhook_endpoint: new RegExp(`^we_${ULID}$`),
  reconciliation_run: new RegExp(`^rcn_${ULID}$`),
  settlement_batch: new RegExp(`^stl_${ULID}$`),
  connected_account: /^acct_[A-Za-z0-9]{16}$/,
  checkout_session: new RegExp(`^cs_${B64URL(32)}$`),
  card_token: new RegExp(`^tok_${B64URL(24)}$`),
  subscription: new RegExp(`^rec_${B64URL(24)}$`),
  beneficiary: /^ben_[0-9a-f]{24}$/,
  payout_reference: /^P261127-[ABCDEFGHJKMNPQRSTVWXYZ23456789]{8}$/,
  threeds_challenge: new RegExp(`^${B64URL(32)}$`),
  apm_page: new RegExp(`^${B64URL(32)}$`),
  merchant_secret: /^[0-9a-f]{48}$/,
  webhook_secret: /^whsec_[A-Za-z0-9+/]{32}$/,
  secret_key_test: /^sk_test_[A-Za-z0-9]{48}$/,
  secret_key_live: /^sk_live_[A-Za-z0-9]{48}$/,
  payment_intent_secret: /^[A-Za-z0-9]{24}$/,
  portal_session: new RegExp(`^${B64URL(43)}$`),
  portal_user_link: new RegExp(`^${B64URL(43)}$`),
  form_token: new RegExp(`^${B64URL(32)}$`),
  portal_form_token: new RegExp(`^${B64URL(22)}$`),
  portal_csrf: new RegExp(`^${B64URL(32)}$`),
  lease_token: new RegExp(`^${B64URL(16)}$`),
  page_nonce: new RegExp(`^${B64URL(22)}$`),
  portal_nonce: new RegExp(`^${B64URL(32)}$`),
  threeds_cavv: /^[A-Za-z0-9+/]{27}=$/,
  threeds_ds_trans_id: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
};

/** 2026-11-27T08:00:00Z: the payout reference carries the date. */
const NOW_MS = Date.UTC(2026, 10, 27, 8);

test('every kind of id is in the table, and every kind keeps its format (200 draws each)', () => {
  assert.deepEqual([...ID_KINDS].sort(), Object.keys(FORMATS).sort());
  for (const kind of ID_KINDS) {
    for (let i = 0; i < 200; i++) {
      const id = newId(kind, NOW_MS);
      assert.match(id, FORMATS[kind], `${kind}: ${id}`);
    }
  }
});

test('time-ordered kinds sort by creation time, and two ids of one millisecond differ', () => {
  const earlier = newId('event', NOW_MS);
  const later = newId('event', NOW_MS + 1);
  assert.ok(earlier < later);
  assert.notEqual(newId('payment', NOW_MS), newId('payment', NOW_MS));
  // The time part is the ULID layout: 10 Crockford characters of the milliseconds.
  assert.equal(newId('payment', 0).slice(0, 10), '0000000000');
  assert.equal(newId('payment', NOW_MS).slice(0, 10), newId('posting', NOW_MS).slice(4, 14));
});

test('random kinds do not repeat', () => {
  for (const kind of ['checkout_session', 'beneficiary', 'secret_key_live', 'lease_token', 'connected_account'] as const) {
    const seen = new Set(Array.from({ length: 1000 }, () => newId(kind)));
    assert.equal(seen.size, 1000, kind);
  }
});
