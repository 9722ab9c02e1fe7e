// Per-account REVIEW and REJECT thresholds (docs/contract.md §10) and blocklists, managed by the
// operator (src/risk/cli.ts). Card entries are stored only as the keyed fingerprint.
import type { Kysely } from 'kysely';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { normaliseEmail, normaliseIp } from './normalise.js';
import { DEFAULT_THRESHOLDS, type Thresholds } from './rules.js';
import type { BlocklistType } from './tables.js';

export const BLOCKLIST_TYPES: readonly BlocklistType[] = ['card', 'email', 'ip', 'bin'];

export async function thresholdsFor(db: Kysely<DB>, account_id: string): Promise<Thresholds> {
  const row = await db.selectFrom('risk_settings').select(['review_threshold', 'reject_threshold']).where('account_id', '=', account_id).executeTakeFirst();
  return row ? { review: Number(row.review_threshold), reject: Number(row.reject_threshold) } : DEFAULT_THRESHOLDS;
}

/** Thresholds change rarely (an operator command): a process keeps them a few seconds. */
export class ThresholdCache {
  static readonly TTL_MS = 5_000;
  private readonly entries = new Map<string, { at: number; t: Thresholds }>();
  constructor(private readonly db: Kysely<DB>) {}

  async get(account_id: string): Promise<Thresholds> {
    const now = Date.now(); // wall time on purpose: how stale a cache is, not payment time
    const hit = this.entries.get(account_id);
    if (hit && now - hit.at < ThresholdCache.TTL_MS) return hit.t;
    const t = await thresholdsFor(this.db, account_id);
    if (this.entries.size >= 10_000) this.entries.clear();
    this.entries.set(account_id, { at: now, t });
    return t;
  }
}

export async function setThresholds(store: Store, account_id: string, t: Thresholds, now_ms: number): Promise<void> {
  for (const [name, v] of [
    ['--review', t.review],
    ['--reject', t.reject],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 101) throw new Error(`${name} must be a whole number from 0 to 101 (101: never)`);
  }
  if (t.review > t.reject) throw new Error('--review must not be above --reject');
  await requireAccount(store, account_id);
  await store.transaction(async (tx) => {
    await tx
      .insertInto('risk_settings')
      .values({ account_id, review_threshold: t.review, reject_threshold: t.reject, updated_at: now_ms })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ review_threshold: t.review, reject_threshold: t.reject, updated_at: now_ms }))
      .execute();
  });
}

async function requireAccount(store: Store, account_id: string): Promise<void> {
  const row = await store.db.selectFrom('accounts').select('account_id').where('account_id', '=', account_id).executeTakeFirst();
  if (!row) throw new Error(`account ${account_id} does not exist`);
}

/** The stored form of a blocklist value; card numbers become their keyed fingerprint. */
export function blocklistValue(keyring: Keyring, type: BlocklistType, raw: string): string {
  const v = raw.trim();
  switch (type) {
    case 'card':
      if (!/^\d{12,19}$/.test(v)) throw new Error('a card value must be a card number of 12 to 19 digits');
      return keyring.fingerprint(v);
    case 'email':
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) throw new Error(`"${v}" is not an e-mail address`);
      return normaliseEmail(v);
    case 'ip': {
      const ip = normaliseIp(v);
      if (!ip) throw new Error(`"${v}" is not an IP address`);
      return ip;
    }
    case 'bin':
      if (!/^\d{6,8}$/.test(v)) throw new Error('a BIN is 6 to 8 digits');
      return v;
  }
}

export function parseBlocklistType(t: string | undefined): BlocklistType {
  if (!t || !BLOCKLIST_TYPES.includes(t as BlocklistType)) throw new Error(`--type must be one of ${BLOCKLIST_TYPES.join(', ')}`);
  return t as BlocklistType;
}

export async function addToBlocklist(store: Store, keyring: Keyring, account_id: string, type: BlocklistType, raw: string, now_ms: number): Promise<string> {
  const value = blocklistValue(keyring, type, raw);
  await requireAccount(store, account_id);
  await store.transaction(async (tx) => {
    await tx
      .insertInto('risk_blocklist')
      .values({ account_id, type, value, created_at: now_ms })
      .onConflict((oc) => oc.columns(['account_id', 'type', 'value']).doNothing())
      .execute();
  });
  return value;
}

export async function removeFromBlocklist(store: Store, keyring: Keyring, account_id: string, type: BlocklistType, raw: string): Promise<boolean> {
  const value = blocklistValue(keyring, type, raw);
  return store.transaction(async (tx) => {
    const r = await tx.deleteFrom('risk_blocklist').where('account_id', '=', account_id).where('type', '=', type).where('value', '=', value).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  });
}

export async function listBlocklist(store: Store, account_id: string, type?: BlocklistType) {
  let q = store.db.selectFrom('risk_blocklist').selectAll().where('account_id', '=', account_id);
  if (type) q = q.where('type', '=', type);
  return q.orderBy('type').orderBy('value').limit(10_000).execute();
}
