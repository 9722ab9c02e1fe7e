// Every identifier, secret and single-use token the gateway makes, from one table (issue 30
// item 3): a kind of id has one entry, with its exact format, and `newId(kind)` is the only
// way to make one. The formats are pinned by clients and tests (ids.test.ts lists each kind
// with the pattern it must keep); a new kind is a new row, never a format string at a call site.
import { randomBytes, randomUUID } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Time-ordered unguessable id (ULID layout: 48-bit ms time + 80 random bits, Crockford
 * base32). Time order keeps cursor pagination and index inserts cheap.
 */
export function timeOrderedId(now_ms: number = Date.now()): string {
  let out = '';
  let t = now_ms;
  const timeChars: string[] = [];
  for (let i = 0; i < 10; i++) {
    timeChars.push(CROCKFORD[t % 32] as string);
    t = Math.floor(t / 32);
  }
  out = timeChars.reverse().join('');
  const rnd = randomChunk(16);
  for (let i = 0; i < 16; i++) out += CROCKFORD[(rnd[i] as number) % 32];
  return out;
}

// One randomBytes call per 256 ids instead of one per id (the payment hot path makes several).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let at = POOL_BYTES;

function randomChunk(n: number): Buffer {
  if (at + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    at = 0;
  }
  const out = pool.subarray(at, at + n);
  at += n;
  return out;
}

/** Random url-safe token: `bytes` random bytes, base64url (4 characters per 3 bytes). */
export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** `n` characters drawn uniformly from `alphabet` (rejection sampling: no modulo bias). */
function randomChars(alphabet: string, n: number): string {
  const unbiased = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < unbiased && out.length < n) out += alphabet[b % alphabet.length];
    }
  }
  return out;
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** A payout's reference is read out and typed by people: no 0/O, 1/I/L, U. */
const REFERENCE_ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';

/** `PYYMMDD-XXXXXXXX`: the payout date in UTC, then 8 characters (the modulo bias is kept: the format is pinned). */
function payoutReference(now_ms: number): string {
  const d = new Date(now_ms).toISOString();
  let tail = '';
  for (const b of randomBytes(8)) tail += REFERENCE_ALPHABET[b % REFERENCE_ALPHABET.length];
  return `P${d.slice(2, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${tail}`;
}

const ulid = (prefix: string) => (now_ms: number) => `${prefix}${timeOrderedId(now_ms)}`;
const token = (prefix: string, bytes: number) => () => `${prefix}${randomToken(bytes)}`;

/**
 * One row per kind: how it is made from the current time (ignored by random kinds). Ids
 * named by a time-ordered id sort by creation; the others are random because they are
 * guessable otherwise (a page id, a secret) or because their format came from outside.
 */
const ID_MAKERS = {
  // Time-ordered, no prefix: the acquiring interface's transaction ids and internal rows.
  payment: ulid(''),
  payout: ulid(''),
  request: ulid(''),
  delivery_attempt: ulid(''),
  signing_key: ulid(''),
  audit_entry: ulid(''),
  // Time-ordered with a prefix naming the object.
  event: ulid('evt_'),
  posting: ulid('pst_'),
  idempotency_record: ulid('idk_'),
  stored_card: ulid('card_'),
  api_key: ulid('key_'),
  portal_user: ulid('usr_'),
  transfer: ulid('tr_'),
  transfer_reversal: ulid('trr_'),
  customer: ulid('cus_'),
  payment_method: ulid('pm_'),
  payment_intent: ulid('pi_'),
  dispute: ulid('dp_'),
  dispute_evidence: ulid('dpe_'),
  processor_attempt: ulid('att_'),
  processor: ulid('prc_'),
  webhook_endpoint: ulid('we_'),
  reconciliation_run: ulid('rcn_'),
  settlement_batch: ulid('stl_'),
  // Random, with a prefix naming the object.
  connected_account: () => `acct_${randomToken(12).replace(/[-_]/g, 'x')}`,
  checkout_session: token('cs_', 24),
  card_token: token('tok_', 18),
  subscription: token('rec_', 18),
  beneficiary: () => `ben_${randomBytes(12).toString('hex')}`,
  payout_reference: payoutReference,
  // Random page addresses: knowing one is the right to use the page.
  threeds_challenge: token('', 24),
  apm_page: token('', 24),
  // Secrets, shown once.
  merchant_secret: () => randomBytes(24).toString('hex'),
  webhook_secret: () => `whsec_${randomBytes(24).toString('base64')}`,
  secret_key_test: () => `sk_test_${randomChars(ALPHANUMERIC, 48)}`,
  secret_key_live: () => `sk_live_${randomChars(ALPHANUMERIC, 48)}`,
  payment_intent_secret: () => randomChars(ALPHANUMERIC, 24),
  portal_session: token('', 32),
  portal_user_link: token('', 32),
  // Single-use tokens of a form or a claim.
  form_token: token('', 24),
  portal_form_token: token('', 16),
  portal_csrf: token('', 24),
  lease_token: token('', 12),
  page_nonce: token('', 16),
  portal_nonce: token('', 24),
  // What the sandbox issuer's access control server returns, in EMV 3-D Secure's formats.
  threeds_cavv: () => randomBytes(20).toString('base64'),
  threeds_ds_trans_id: () => randomUUID(),
} satisfies Record<string, (now_ms: number) => string>;

export type IdKind = keyof typeof ID_MAKERS;
export const ID_KINDS = Object.keys(ID_MAKERS) as IdKind[];

/** A new id of `kind`; `now_ms` is the creation time that time-ordered kinds carry. */
export function newId(kind: IdKind, now_ms: number = Date.now()): string {
  return ID_MAKERS[kind](now_ms);
}
