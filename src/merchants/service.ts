// Merchants, accounts, their signing keys and IP allow-lists (docs/contract.md §2, §3).
import ipaddr from 'ipaddr.js';
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store, Tx } from '../db/store.js';
import type { AccountRow } from './tables.js';

export interface NewMerchant {
  name: string;
  mode?: 'test' | 'live';
  allow_ips?: string[];
  capture_method?: 'automatic' | 'manual';
}

export interface CreatedMerchant {
  merchant_id: string;
  account_id: string;
  mode: 'test' | 'live';
  secret_key: string;
  webhook_secret: string;
  allowed_ips: string[];
}

/** Validates and normalises a CIDR ("10.0.0.0/8", "::1/128") or a single address. */
export function normaliseCidr(text: string): string {
  const t = text.trim();
  try {
    if (t.includes('/')) {
      const [addr, len] = ipaddr.parseCIDR(t);
      const base = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(t) : ipaddr.IPv6.networkAddressFromCIDR(t);
      return `${base.toString()}/${len}`;
    }
    const addr = ipaddr.parse(t);
    return `${addr.toString()}/${addr.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    throw new Error(`"${text}" is not an IP address or CIDR range`);
  }
}

export function ipAllowed(ip: string, cidrs: readonly string[]): boolean {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip); // IPv4-mapped IPv6 becomes IPv4
  } catch {
    return false;
  }
  for (const cidr of cidrs) {
    try {
      const range = ipaddr.parseCIDR(cidr);
      if (addr.kind() === range[0].kind() && addr.match(range)) return true;
    } catch {
      // a malformed stored entry never matches
    }
  }
  return false;
}

async function nextNumber(tx: Tx, name: 'merchant' | 'account'): Promise<string> {
  const row = await tx
    .updateTable('sequences')
    .set((eb) => ({ value: eb('value', '+', 1) }))
    .where('name', '=', name)
    .returning('value')
    .executeTakeFirstOrThrow();
  return String(row.value);
}

function newSecret(): string {
  return newId('merchant_secret');
}

function newWebhookSecret(): string {
  return newId('webhook_secret');
}

export interface AccountCredentials {
  account: AccountRow;
  /** Every secret that verifies (active first). */
  secrets: string[];
  /** The secret that signs answers. */
  signing_secret: string;
  webhook_secret: string;
  allowed_ips: string[];
}

const CACHE_TTL_MS = 10_000;

export class MerchantService {
  private cache = new Map<string, { at: number; creds: AccountCredentials | null }>();

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
  ) {}

  async createMerchant(input: NewMerchant, now_ms = Date.now()): Promise<CreatedMerchant> {
    const name = input.name.trim();
    if (name === '' || name.length > 200) throw new Error('--name must be 1 to 200 characters');
    const mode = input.mode ?? 'test';
    const cidrs = (input.allow_ips ?? []).map(normaliseCidr);
    const secret = newSecret();
    const webhookSecret = newWebhookSecret();
    const ids = await this.store.transaction(async (tx) => {
      const merchant_id = await nextNumber(tx, 'merchant');
      const account_id = await nextNumber(tx, 'account');
      await tx.insertInto('merchants').values({ merchant_id, name, created_at: now_ms }).execute();
      await tx
        .insertInto('accounts')
        .values({
          account_id,
          merchant_id,
          mode,
          capture_method: input.capture_method ?? 'automatic',
          webhook_secret_enc: this.keyring.encrypt(webhookSecret),
          created_at: now_ms,
        })
        .execute();
      await tx
        .insertInto('account_keys')
        .values({ key_id: newId('signing_key', now_ms), account_id, secret_enc: this.keyring.encrypt(secret), status: 'active', created_at: now_ms })
        .execute();
      for (const cidr of new Set(cidrs)) {
        await tx.insertInto('account_ips').values({ account_id, cidr, created_at: now_ms }).execute();
      }
      return { merchant_id, account_id };
    });
    return { ...ids, mode, secret_key: secret, webhook_secret: webhookSecret, allowed_ips: [...new Set(cidrs)] };
  }

  /** Loads an account's credentials, cached briefly; `fresh` bypasses the cache. */
  async credentials(merchant_id: string, account_id: string, fresh = false): Promise<AccountCredentials | null> {
    const key = `${merchant_id}/${account_id}`;
    const hit = this.cache.get(key);
    const now = Date.now();
    if (!fresh && hit && now - hit.at < CACHE_TTL_MS) return hit.creds;
    const account = await this.store.db
      .selectFrom('accounts')
      .selectAll()
      .where('account_id', '=', account_id)
      .where('merchant_id', '=', merchant_id)
      .executeTakeFirst();
    let creds: AccountCredentials | null = null;
    if (account) {
      const keys = await this.store.db
        .selectFrom('account_keys')
        .select(['secret_enc', 'status'])
        .where('account_id', '=', account_id)
        .orderBy('created_at', 'desc')
        .execute();
      const active = keys.filter((k) => k.status === 'active').map((k) => this.keyring.decrypt(k.secret_enc));
      const retiring = keys.filter((k) => k.status === 'retiring').map((k) => this.keyring.decrypt(k.secret_enc));
      const ips = await this.store.db.selectFrom('account_ips').select('cidr').where('account_id', '=', account_id).execute();
      const signing = active[0];
      if (signing) {
        creds = {
          account,
          secrets: [...active, ...retiring],
          signing_secret: signing,
          webhook_secret: this.keyring.decrypt(account.webhook_secret_enc),
          allowed_ips: ips.map((r) => r.cidr),
        };
      }
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(key, { at: now, creds });
    return creds;
  }

  invalidate(): void {
    this.cache.clear();
  }

  /** Who owns an account and in which mode, or null: for explaining a refused signature. */
  /** The merchant's name as shopper pages show it ('' when the merchant is gone). */
  async displayName(merchant_id: string): Promise<string> {
    const m = await this.store.db.selectFrom('merchants').select('name').where('merchant_id', '=', merchant_id).executeTakeFirst();
    return m?.name ?? '';
  }

  async accountOwner(account_id: string): Promise<{ merchant_id: string; mode: 'test' | 'live' } | null> {
    const row = await this.store.db.selectFrom('accounts').select(['merchant_id', 'mode']).where('account_id', '=', account_id).executeTakeFirst();
    return row ? { merchant_id: row.merchant_id, mode: row.mode as 'test' | 'live' } : null;
  }

  /** The modes of a merchant's accounts, or null when there is no such merchant. */
  async merchantModes(merchant_id: string): Promise<Array<'test' | 'live'> | null> {
    const merchant = await this.store.db.selectFrom('merchants').select('merchant_id').where('merchant_id', '=', merchant_id).executeTakeFirst();
    if (!merchant) return null;
    const rows = await this.store.db.selectFrom('accounts').select('mode').where('merchant_id', '=', merchant_id).execute();
    return rows.map((r) => r.mode as 'test' | 'live');
  }

  private async requireAccount(account_id: string): Promise<AccountRow> {
    const account = await this.store.db.selectFrom('accounts').selectAll().where('account_id', '=', account_id).executeTakeFirst();
    if (!account) throw new Error(`account ${account_id} does not exist`);
    return account;
  }

  /**
   * Starts a rotation: a new active key; the old active key keeps verifying ("retiring")
   * until `retireKeys` (docs/contract.md §2). Returns the new secret, shown once.
   */
  async rotateKey(account_id: string, now_ms = Date.now()): Promise<string> {
    await this.requireAccount(account_id);
    const secret = newSecret();
    await this.store.transaction(async (tx) => {
      await tx.updateTable('account_keys').set({ status: 'retiring' }).where('account_id', '=', account_id).where('status', '=', 'active').execute();
      await tx
        .insertInto('account_keys')
        .values({ key_id: newId('signing_key', now_ms), account_id, secret_enc: this.keyring.encrypt(secret), status: 'active', created_at: now_ms })
        .execute();
    });
    this.invalidate();
    return secret;
  }

  /** Ends a rotation: retiring keys stop verifying. Returns how many were retired. */
  async retireKeys(account_id: string): Promise<number> {
    await this.requireAccount(account_id);
    const n = await this.store.transaction(async (tx) => {
      const r = await tx.deleteFrom('account_keys').where('account_id', '=', account_id).where('status', '=', 'retiring').executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    this.invalidate();
    return n;
  }

  async rotateWebhookSecret(account_id: string): Promise<string> {
    await this.requireAccount(account_id);
    const secret = newWebhookSecret();
    await this.store.transaction(async (tx) => {
      await tx
        .updateTable('accounts')
        .set({ webhook_secret_enc: this.keyring.encrypt(secret) })
        .where('account_id', '=', account_id)
        .execute();
    });
    this.invalidate();
    return secret;
  }

  async addIp(account_id: string, cidrText: string, now_ms = Date.now()): Promise<string> {
    await this.requireAccount(account_id);
    const cidr = normaliseCidr(cidrText);
    await this.store.transaction(async (tx) => {
      await tx
        .insertInto('account_ips')
        .values({ account_id, cidr, created_at: now_ms })
        .onConflict((oc) => oc.columns(['account_id', 'cidr']).doNothing())
        .execute();
    });
    this.invalidate();
    return cidr;
  }

  async removeIp(account_id: string, cidrText: string): Promise<boolean> {
    await this.requireAccount(account_id);
    const cidr = normaliseCidr(cidrText);
    const n = await this.store.transaction(async (tx) => {
      const r = await tx.deleteFrom('account_ips').where('account_id', '=', account_id).where('cidr', '=', cidr).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    this.invalidate();
    return n > 0;
  }

  async listIps(account_id: string): Promise<string[]> {
    await this.requireAccount(account_id);
    const rows = await this.store.db.selectFrom('account_ips').select('cidr').where('account_id', '=', account_id).orderBy('cidr').execute();
    return rows.map((r) => r.cidr);
  }

  async listMerchants(): Promise<Array<{ merchant_id: string; name: string; account_id: string; mode: string }>> {
    return this.store.db
      .selectFrom('merchants')
      .innerJoin('accounts', 'accounts.merchant_id', 'merchants.merchant_id')
      .select(['merchants.merchant_id', 'merchants.name', 'accounts.account_id', 'accounts.mode'])
      .orderBy('merchants.merchant_id')
      .execute();
  }
}
