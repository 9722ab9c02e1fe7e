// API keys of the generic interface (docs/contract.md §18; issue 13): per account, `sk_test_…` for
// a test account and `sk_live_…` for a live one, shown once, stored only as a keyed hash,
// found by an indexed prefix and compared in constant time, several active at once,
// revocable (a revoked key stops working at once in this process and within
// CACHE_TTL_MS in others).
import { timingSafeEqual } from 'node:crypto';
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { AccountCredentials, MerchantService } from '../merchants/service.js';
import type { ApiKeyRow } from './tables.js';

/** Characters after `sk_<mode>_`: 48 of 62 is 285 bits. */
const SECRET_CHARS = 48;
/** The first characters of those, indexed: the lookup, not the proof. */
const LOOKUP_CHARS = 12;
export const KEY_SHAPE = /^sk_(test|live)_([A-Za-z0-9]{48})$/;
const CACHE_TTL_MS = 10_000;
const CACHE_MAX = 10_000;
/** At most this many keys per account (active and revoked kept for the listing). */
export const MAX_KEYS_PER_ACCOUNT = 100;

export class ApiKeyError extends Error {}

export interface CreatedKey {
  key_id: string;
  /** Shown once; never stored. */
  secret: string;
  livemode: boolean;
}

export interface KeyCaller {
  key_id: string;
  creds: AccountCredentials;
  livemode: boolean;
}

export class ApiKeyService {
  private cache = new Map<string, { at: number; row: ApiKeyRow | null }>();

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly merchants: MerchantService,
  ) {}

  async create(account_id: string, name = '', now_ms = Date.now()): Promise<CreatedKey> {
    if (name.length > 100) throw new ApiKeyError('--name must be at most 100 characters');
    const account = await this.store.db.selectFrom('accounts').selectAll().where('account_id', '=', account_id).executeTakeFirst();
    if (!account) throw new ApiKeyError(`account ${account_id} does not exist`);
    const livemode = account.mode === 'live';
    const secret = newId(livemode ? 'secret_key_live' : 'secret_key_test');
    const body = secret.slice(-SECRET_CHARS);
    const key_id = newId('api_key', now_ms);
    await this.store.transaction(async (tx) => {
      const { n } = await tx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', account_id)
        .executeTakeFirstOrThrow();
      if (Number(n) >= MAX_KEYS_PER_ACCOUNT) throw new ApiKeyError(`account ${account_id} already has ${MAX_KEYS_PER_ACCOUNT} keys`);
      await tx
        .insertInto('api_keys')
        .values({
          key_id,
          account_id,
          merchant_id: account.merchant_id,
          livemode: livemode ? 1 : 0,
          lookup: body.slice(0, LOOKUP_CHARS),
          secret_hash: this.keyring.fingerprint(secret),
          last4: body.slice(-4),
          name,
          status: 'active',
          created_at: now_ms,
          revoked_at: null,
        })
        .execute();
    });
    return { key_id, secret, livemode };
  }

  async list(account_id: string): Promise<ApiKeyRow[]> {
    return this.store.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', account_id)
      .orderBy('created_at', 'desc')
      .orderBy('key_id', 'desc')
      .execute();
  }

  /** Revokes a key of the account; false when there is no such active key. */
  async revoke(account_id: string, key_id: string, now_ms = Date.now()): Promise<boolean> {
    const n = await this.store.transaction(async (tx) => {
      const r = await tx
        .updateTable('api_keys')
        .set({ status: 'revoked', revoked_at: now_ms })
        .where('key_id', '=', key_id)
        .where('account_id', '=', account_id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
    this.cache.clear();
    return n === 1;
  }

  /**
   * The caller a presented key belongs to, or null (unknown shape, unknown or revoked key,
   * or an account that lost its credentials). Never says which of these it was.
   */
  async authenticate(presented: string): Promise<KeyCaller | null> {
    const m = KEY_SHAPE.exec(presented);
    if (!m) return null;
    const lookup = (m[2] as string).slice(0, LOOKUP_CHARS);
    const row = await this.byLookup(lookup);
    if (row?.status !== 'active') return null;
    const want = Buffer.from(row.secret_hash);
    const got = Buffer.from(this.keyring.fingerprint(presented));
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    // The prefix says the mode; it must agree with the key's account (docs/contract.md §18).
    if ((m[1] === 'live') !== (row.livemode === 1)) return null;
    const creds = await this.merchants.credentials(row.merchant_id, row.account_id);
    if (!creds || (creds.account.mode === 'live') !== (row.livemode === 1)) return null;
    return { key_id: row.key_id, creds, livemode: row.livemode === 1 };
  }

  private async byLookup(lookup: string): Promise<ApiKeyRow | null> {
    const now = Date.now();
    const hit = this.cache.get(lookup);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.row;
    const row = (await this.store.db.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst()) ?? null;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(lookup, { at: now, row });
    return row;
  }
}
