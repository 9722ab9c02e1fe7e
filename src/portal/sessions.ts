// Server-side portal sessions (docs/contract.md §19): the cookie holds 256 random bits, the table
// a keyed hash of them, so a copy of the database cannot sign anyone in. A session ends
// after 15 idle minutes or 12 hours in all, at logout, and for every session of a user at
// "sign out everywhere", a reset or a disable. Sign-in makes a new session (and the second
// factor another one): an id seen before sign-in is never the signed-in one.
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { PortalSessionRow } from './tables.js';

export const IDLE_MS = 15 * 60_000;
export const ABSOLUTE_MS = 12 * 3600_000;
/** last_seen_at is written at most this often (a page view is not a write each time). */
const TOUCH_EVERY_MS = 30_000;

export class PortalSessions {
  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
  ) {}

  private hashOf(token: string): string {
    return this.keyring.fingerprint(`portal session:${token}`);
  }

  /** A new session; returns the cookie value. `replacing` (the pre-sign-in or password-stage session) ends in the same transaction. */
  async create(
    s: Pick<PortalSessionRow, 'user_id' | 'merchant_id' | 'stage' | 'account_id' | 'ip'>,
    now_ms: number,
    replacing?: string,
  ): Promise<{ token: string; row: PortalSessionRow }> {
    const token = newId('portal_session');
    const row: PortalSessionRow = { ...s, session_hash: this.hashOf(token), csrf_token: newId('portal_csrf'), created_at: now_ms, last_seen_at: now_ms };
    await this.store.transaction(async (tx) => {
      if (replacing) await tx.deleteFrom('portal_sessions').where('session_hash', '=', this.hashOf(replacing)).execute();
      // Bounded: a user keeps at most 20 sessions; the oldest go first.
      const old = await tx
        .selectFrom('portal_sessions')
        .select('session_hash')
        .where('user_id', '=', s.user_id)
        .orderBy('created_at', 'desc')
        .offset(19)
        .limit(1000)
        .execute();
      if (old.length) {
        await tx
          .deleteFrom('portal_sessions')
          .where(
            'session_hash',
            'in',
            old.map((o) => o.session_hash),
          )
          .execute();
      }
      await tx.insertInto('portal_sessions').values(row).execute();
    });
    return { token, row };
  }

  /** The live session of a cookie value, or null (unknown, idle too long, too old). */
  async load(token: string, now_ms: number): Promise<PortalSessionRow | null> {
    if (!/^[A-Za-z0-9_-]{40,64}$/.test(token)) return null;
    const hash = this.hashOf(token);
    const row = await this.store.db.selectFrom('portal_sessions').selectAll().where('session_hash', '=', hash).executeTakeFirst();
    if (!row) return null;
    if (now_ms - Number(row.last_seen_at) > IDLE_MS || now_ms - Number(row.created_at) > ABSOLUTE_MS) {
      await this.store.transaction((tx) => tx.deleteFrom('portal_sessions').where('session_hash', '=', hash).execute());
      return null;
    }
    if (now_ms - Number(row.last_seen_at) > TOUCH_EVERY_MS) {
      await this.store.transaction((tx) => tx.updateTable('portal_sessions').set({ last_seen_at: now_ms }).where('session_hash', '=', hash).execute());
      row.last_seen_at = now_ms;
    }
    return row;
  }

  async setAccount(token: string, account_id: string): Promise<void> {
    await this.store.transaction((tx) => tx.updateTable('portal_sessions').set({ account_id }).where('session_hash', '=', this.hashOf(token)).execute());
  }

  async end(token: string): Promise<void> {
    await this.store.transaction((tx) => tx.deleteFrom('portal_sessions').where('session_hash', '=', this.hashOf(token)).execute());
  }

  async endAll(user_id: string): Promise<number> {
    return this.store.transaction(async (tx) => {
      const r = await tx.deleteFrom('portal_sessions').where('user_id', '=', user_id).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }

  /** Every session of the user but `keep` (a password change keeps the session it was made in). */
  async endOthers(user_id: string, keep: string): Promise<number> {
    return this.store.transaction(async (tx) => {
      const r = await tx.deleteFrom('portal_sessions').where('user_id', '=', user_id).where('session_hash', '!=', this.hashOf(keep)).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
  }

  /** Removes sessions past their idle or absolute limit; bounded per run. */
  async purge(now_ms: number, limit = 1000): Promise<number> {
    const rows = await this.store.db
      .selectFrom('portal_sessions')
      .select('session_hash')
      .where((eb) => eb.or([eb('last_seen_at', '<', now_ms - IDLE_MS), eb('created_at', '<', now_ms - ABSOLUTE_MS)]))
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    await this.store.transaction((tx) =>
      tx
        .deleteFrom('portal_sessions')
        .where(
          'session_hash',
          'in',
          rows.map((r) => r.session_hash),
        )
        .execute(),
    );
    return rows.length;
  }
}
