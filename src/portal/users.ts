// Portal users (docs/contract.md §19): created by the operator with a one-time set-password link,
// signed in by merchant number, e-mail and password, with TOTP and recovery codes. Ten
// failures (wrong passwords and wrong second-factor codes alike) lock the user for 30
// minutes. Every write is a compare-and-set on the row, so two racing sign-ins cannot both
// use one TOTP step or one recovery code.
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.js';
import type { PortalRole, PortalUserRow } from './tables.js';
import { PORTAL_ROLES } from './tables.js';
import { newRecoveryCode, newTotpSecret, normaliseRecoveryCode, RECOVERY_CODES, totpStep } from './totp.js';

export const MAX_FAILED_LOGINS = 10;
export const LOCKOUT_MS = 30 * 60_000;
/** How long a set-password link stays good. */
export const SETUP_LINK_MS = 72 * 3600_000;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{2,63}$/;

export class PortalUserError extends Error {}

export type SignIn =
  | { kind: 'ok'; user: PortalUserRow }
  /** `user`: the user the e-mail names, when there is one (for the audit log; never shown to the caller). */
  | { kind: 'bad'; user?: PortalUserRow; now_locked?: boolean }
  /** Only with the right password: a wrong one while locked is 'bad', like any other (issue 29). */
  | { kind: 'locked'; until_ms: number; user: PortalUserRow }
  | { kind: 'disabled'; user: PortalUserRow };

export type SecondFactor = { kind: 'ok'; used: 'totp' | 'recovery' } | { kind: 'bad' } | { kind: 'locked' };

export type ChangePassword = { kind: 'ok' } | { kind: 'wrong' } | { kind: 'weak'; problem: string } | { kind: 'locked' };

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class PortalUsers {
  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
  ) {}

  private tokenHash(kind: string, token: string): string {
    return this.keyring.fingerprint(`portal ${kind}:${token}`);
  }

  /** A new user with an open set-password link; returns the link's token (shown once). */
  async create(input: { merchant_id: string; email: string; role: string }, now_ms: number): Promise<{ user: PortalUserRow; token: string }> {
    const email = normaliseEmail(input.email);
    if (!EMAIL.test(email)) throw new PortalUserError(`not an e-mail address: ${JSON.stringify(input.email)}`);
    if (!PORTAL_ROLES.includes(input.role as PortalRole)) throw new PortalUserError(`--role must be one of ${PORTAL_ROLES.join(', ')}`);
    const merchant = await this.store.db.selectFrom('merchants').select('merchant_id').where('merchant_id', '=', input.merchant_id).executeTakeFirst();
    if (!merchant) throw new PortalUserError(`no merchant ${JSON.stringify(input.merchant_id)}`);
    const token = newId('portal_user_link');
    const user: PortalUserRow = {
      user_id: newId('portal_user', now_ms),
      merchant_id: input.merchant_id,
      email,
      role: input.role as PortalRole,
      status: 'invited',
      password_hash: null,
      failed_logins: 0,
      locked_until: 0,
      totp_secret_enc: null,
      totp_enrolled_at: null,
      totp_last_step: 0,
      setup_hash: this.tokenHash('setup', token),
      setup_expires_at: now_ms + SETUP_LINK_MS,
      created_at: now_ms,
      updated_at: now_ms,
    };
    const inserted = await this.store.transaction(async (tx) => {
      const r = await tx
        .insertInto('portal_users')
        .values(user)
        .onConflict((oc) => oc.columns(['merchant_id', 'email']).doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
    });
    // Only this merchant's own users are searched: an address used at another merchant is no one's business here.
    if (!inserted) throw new PortalUserError(`this merchant has a user with the e-mail ${email} already`);
    return { user, token };
  }

  list(merchant_id: string): Promise<PortalUserRow[]> {
    return this.store.db.selectFrom('portal_users').selectAll().where('merchant_id', '=', merchant_id).orderBy('email').execute();
  }

  byId(user_id: string): Promise<PortalUserRow | undefined> {
    return this.store.db.selectFrom('portal_users').selectAll().where('user_id', '=', user_id).executeTakeFirst();
  }

  /** E-mail is unique per merchant only (issue 29), so a user is named by both. */
  byEmail(merchant_id: string, email: string): Promise<PortalUserRow | undefined> {
    return this.store.db
      .selectFrom('portal_users')
      .selectAll()
      .where('merchant_id', '=', merchant_id.trim())
      .where('email', '=', normaliseEmail(email))
      .executeTakeFirst();
  }

  /** The user whose set-password link this is, while it is open. */
  async bySetupToken(token: string, now_ms: number): Promise<PortalUserRow | undefined> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
    const u = await this.store.db.selectFrom('portal_users').selectAll().where('setup_hash', '=', this.tokenHash('setup', token)).executeTakeFirst();
    if (!u || u.status === 'disabled' || Number(u.setup_expires_at ?? 0) <= now_ms) return undefined;
    return u;
  }

  /** Sets the password through the link (which closes it); the user is active from then on. */
  async setPassword(token: string, password: string, now_ms: number): Promise<PortalUserRow> {
    const user = await this.bySetupToken(token, now_ms);
    if (!user) throw new PortalUserError('this link is not valid any more; ask your administrator for a new one');
    const problem = passwordProblem(password, user.email);
    if (problem) throw new PortalUserError(problem);
    const password_hash = await hashPassword(password);
    const n = await this.store.transaction(async (tx) => {
      const r = await tx
        .updateTable('portal_users')
        .set({ password_hash, status: 'active', setup_hash: null, setup_expires_at: null, failed_logins: 0, locked_until: 0, updated_at: now_ms })
        .where('user_id', '=', user.user_id)
        .where('setup_hash', '=', user.setup_hash)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
    if (n !== 1) throw new PortalUserError('this link is not valid any more; ask your administrator for a new one');
    return { ...user, password_hash, status: 'active', setup_hash: null };
  }

  /**
   * Merchant number, e-mail and password. Every refusal takes the same path (one Argon2
   * verification, the same answer) whether the merchant, the address or the password is
   * wrong, so no one learns that an address is a user; a lock is told only to whoever
   * gives the right password. Counts failures and locks after MAX_FAILED_LOGINS.
   */
  async signIn(merchant_id: string, email: string, password: string, now_ms: number): Promise<SignIn> {
    const user = await this.byEmail(merchant_id, email);
    if (!user?.password_hash) {
      await verifyPassword(await decoyHash(), password); // the same time as a real check
      return { kind: 'bad' };
    }
    const ok = await verifyPassword(user.password_hash, password);
    if (Number(user.locked_until) > now_ms) return ok ? { kind: 'locked', until_ms: Number(user.locked_until), user } : { kind: 'bad', user };
    if (ok) {
      if (user.status === 'disabled') return { kind: 'disabled', user };
      // With a second factor the count is cleared only after it (secondFactor): a known
      // password must not reset the lock that wrong codes are building up.
      if (user.failed_logins !== 0 && user.totp_enrolled_at === null) await this.clearFailures(user.user_id);
      return { kind: 'ok', user };
    }
    return { kind: 'bad', user, now_locked: await this.recordFailure(user.user_id, now_ms) };
  }

  /** Whether the user is locked now (by failed passwords or codes). */
  async lockedUntil(user_id: string, now_ms: number): Promise<number | null> {
    const u = await this.byId(user_id);
    return u && Number(u.locked_until) > now_ms ? Number(u.locked_until) : null;
  }

  /**
   * One failed password or second-factor code, persisted on the user row (not a per-process
   * counter, so restarts and other processes do not reset it); true when it locked the user.
   */
  async recordFailure(user_id: string, now_ms: number): Promise<boolean> {
    // One transaction: concurrent failures all count, and the tenth locks.
    return this.store.transaction(async (tx) => {
      await tx
        .updateTable('portal_users')
        .set((eb) => ({ failed_logins: eb('failed_logins', '+', 1), updated_at: now_ms }))
        .where('user_id', '=', user_id)
        .execute();
      const r = await tx
        .updateTable('portal_users')
        .set({ failed_logins: 0, locked_until: now_ms + LOCKOUT_MS })
        .where('user_id', '=', user_id)
        .where('failed_logins', '>=', MAX_FAILED_LOGINS)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    });
  }

  private async clearFailures(user_id: string): Promise<void> {
    await this.store.transaction((tx) => tx.updateTable('portal_users').set({ failed_logins: 0 }).where('user_id', '=', user_id).execute());
  }

  /**
   * A signed-in user's own change (issue 29): the current password first (a wrong one counts
   * towards the lock, so a borrowed session cannot guess it), then the same policy as the
   * set-password link. A compare-and-set on the old hash: two racing changes cannot both win.
   */
  async changePassword(user: PortalUserRow, current: string, next: string, now_ms: number): Promise<ChangePassword> {
    if (!user.password_hash || Number(user.locked_until) > now_ms) return { kind: 'locked' };
    if (!(await verifyPassword(user.password_hash, current))) {
      return (await this.recordFailure(user.user_id, now_ms)) ? { kind: 'locked' } : { kind: 'wrong' };
    }
    const problem = next === current ? 'the new password must differ from the current one' : passwordProblem(next, user.email);
    if (problem) return { kind: 'weak', problem };
    const password_hash = await hashPassword(next);
    const n = await this.store.transaction(async (tx) => {
      const r = await tx
        .updateTable('portal_users')
        .set({ password_hash, failed_logins: 0, updated_at: now_ms })
        .where('user_id', '=', user.user_id)
        .where('password_hash', '=', user.password_hash)
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    });
    return n === 1 ? { kind: 'ok' } : { kind: 'wrong' };
  }

  /**
   * Every user of a merchant with a live account must use TOTP (docs/contract.md §19, amended in
   * issue 29): operators capture and refund, viewers see shoppers' data; all of it is live.
   */
  async totpRequired(user: PortalUserRow): Promise<boolean> {
    const live = await this.store.db
      .selectFrom('accounts')
      .select('account_id')
      .where('merchant_id', '=', user.merchant_id)
      .where('mode', '=', 'live')
      .executeTakeFirst();
    return live !== undefined;
  }

  /** A fresh secret to enrol (replacing one not yet confirmed); returns it in base32. */
  async beginTotp(user_id: string, now_ms: number): Promise<string> {
    const secret = newTotpSecret();
    await this.store.transaction((tx) =>
      tx
        .updateTable('portal_users')
        .set({ totp_secret_enc: this.keyring.encrypt(secret), updated_at: now_ms })
        .where('user_id', '=', user_id)
        .where('totp_enrolled_at', 'is', null)
        .execute(),
    );
    return secret;
  }

  /** The secret being enrolled (not yet confirmed), to show again after a wrong code. */
  pendingTotp(user: PortalUserRow): string | null {
    return user.totp_enrolled_at === null && user.totp_secret_enc ? this.keyring.decrypt(user.totp_secret_enc) : null;
  }

  /** Confirms enrolment with a code; returns the recovery codes (shown once), or null for a wrong code. */
  async confirmTotp(user: PortalUserRow, code: string, now_ms: number): Promise<string[] | null> {
    const secret = this.pendingTotp(user);
    if (!secret) return null;
    const step = totpStep(secret, user.email, code, now_ms);
    if (step === null) return null;
    const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
    const ok = await this.store.transaction(async (tx) => {
      const r = await tx
        .updateTable('portal_users')
        .set({ totp_enrolled_at: now_ms, totp_last_step: step, updated_at: now_ms })
        .where('user_id', '=', user.user_id)
        .where('totp_enrolled_at', 'is', null)
        .where('totp_secret_enc', '=', user.totp_secret_enc)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) return false;
      await tx.deleteFrom('portal_recovery_codes').where('user_id', '=', user.user_id).execute();
      await tx
        .insertInto('portal_recovery_codes')
        .values(codes.map((c) => ({ user_id: user.user_id, code_hash: this.tokenHash('recovery', c), used_at: null })))
        .execute();
      return true;
    });
    return ok ? codes : null;
  }

  /**
   * A TOTP code or a recovery code, each good once. A wrong one counts towards the same
   * lock as a wrong password (issue 29: a per-process bucket let through 7,200 a day).
   */
  async secondFactor(user: PortalUserRow, code: string, now_ms: number): Promise<SecondFactor> {
    if (Number(user.locked_until) > now_ms) return { kind: 'locked' };
    const used = await this.checkSecondFactor(user, code, now_ms);
    if (used) {
      if (user.failed_logins !== 0) await this.clearFailures(user.user_id);
      return { kind: 'ok', used };
    }
    return (await this.recordFailure(user.user_id, now_ms)) ? { kind: 'locked' } : { kind: 'bad' };
  }

  private async checkSecondFactor(user: PortalUserRow, code: string, now_ms: number): Promise<'totp' | 'recovery' | null> {
    if (!user.totp_secret_enc || user.totp_enrolled_at === null) return null;
    const step = totpStep(this.keyring.decrypt(user.totp_secret_enc), user.email, code, now_ms);
    if (step !== null) {
      const used = await this.store.transaction(async (tx) => {
        const r = await tx
          .updateTable('portal_users')
          .set({ totp_last_step: step })
          .where('user_id', '=', user.user_id)
          .where('totp_last_step', '<', step)
          .executeTakeFirst();
        return Number(r.numUpdatedRows) === 1;
      });
      return used ? 'totp' : null;
    }
    const recovery = normaliseRecoveryCode(code);
    if (!recovery) return null;
    const used = await this.store.transaction(async (tx) => {
      const r = await tx
        .updateTable('portal_recovery_codes')
        .set({ used_at: now_ms })
        .where('user_id', '=', user.user_id)
        .where('code_hash', '=', this.tokenHash('recovery', recovery))
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    });
    return used ? 'recovery' : null;
  }

  async recoveryCodesLeft(user_id: string): Promise<number> {
    const r = await this.store.db
      .selectFrom('portal_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', user_id)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Disables (or enables again) a user; a disabled user's sessions end. */
  async setDisabled(user_id: string, disabled: boolean, now_ms: number): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      let q = tx.updateTable('portal_users').where('user_id', '=', user_id);
      // Enabling again: back to active when a password is set, else to invited (the link stays).
      q = disabled
        ? q.set({ status: 'disabled', updated_at: now_ms }).where('status', '!=', 'disabled')
        : q
            .set((eb) => ({
              status: eb
                .case()
                .when('password_hash', 'is', null)
                .then('invited' as const)
                .else('active' as const)
                .end(),
              updated_at: now_ms,
            }))
            .where('status', '=', 'disabled');
      const r = await q.executeTakeFirst();
      if (disabled) await tx.deleteFrom('portal_sessions').where('user_id', '=', user_id).execute();
      return Number(r.numUpdatedRows) === 1;
    });
  }

  /**
   * The operator's reset: the password is cleared, a new set-password link opened, the lock
   * lifted and every session ended; with `totp` the second factor is removed too (a lost phone).
   */
  async reset(user_id: string, opts: { totp: boolean }, now_ms: number): Promise<string> {
    const token = newId('portal_user_link');
    await this.store.transaction(async (tx) => {
      await tx
        .updateTable('portal_users')
        .set({
          password_hash: null,
          status: 'invited',
          setup_hash: this.tokenHash('setup', token),
          setup_expires_at: now_ms + SETUP_LINK_MS,
          failed_logins: 0,
          locked_until: 0,
          updated_at: now_ms,
          ...(opts.totp ? { totp_secret_enc: null, totp_enrolled_at: null, totp_last_step: 0 } : {}),
        })
        .where('user_id', '=', user_id)
        .execute();
      if (opts.totp) await tx.deleteFrom('portal_recovery_codes').where('user_id', '=', user_id).execute();
      await tx.deleteFrom('portal_sessions').where('user_id', '=', user_id).execute();
    });
    return token;
  }

  async setRole(user_id: string, role: PortalRole, now_ms: number): Promise<void> {
    await this.store.transaction((tx) => tx.updateTable('portal_users').set({ role, updated_at: now_ms }).where('user_id', '=', user_id).execute());
  }
}
