// The merchant portal's rows (docs/contract.md §19): users, their recovery codes, server-side
// sessions and the audit log. Secrets are never stored as given: passwords as Argon2id,
// setup links, session ids and recovery codes as keyed hashes, TOTP secrets encrypted.

export type PortalRole = 'owner' | 'admin' | 'operator' | 'viewer';
export const PORTAL_ROLES: readonly PortalRole[] = ['owner', 'admin', 'operator', 'viewer'];

export interface PortalUserRow {
  user_id: string;
  merchant_id: string;
  /** Lower-cased; unique over all merchants (sign-in is by e-mail alone). */
  email: string;
  role: PortalRole;
  /** invited: no password yet (the set-password link is open); disabled: cannot sign in. */
  status: 'invited' | 'active' | 'disabled';
  password_hash: string | null;
  failed_logins: number;
  /** Sign-in refused until then (ten failures lock for 30 minutes). */
  locked_until: number;
  totp_secret_enc: string | null;
  totp_enrolled_at: number | null;
  /** The last TOTP time step accepted: a code is good once. */
  totp_last_step: number;
  /** Keyed hash of the one-time set-password token, while one is open. */
  setup_hash: string | null;
  setup_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface PortalRecoveryCodeRow {
  user_id: string;
  code_hash: string;
  used_at: number | null;
}

export interface PortalSessionRow {
  /** Keyed hash of the cookie's value. */
  session_hash: string;
  user_id: string;
  merchant_id: string;
  /** password: signed in, second factor still to give; enrol: must enrol TOTP first; full: signed in. */
  stage: 'password' | 'enrol' | 'full';
  /** The account (and with it the mode) the pages show. */
  account_id: string;
  csrf_token: string;
  ip: string;
  created_at: number;
  last_seen_at: number;
}

export interface PortalAuditRow {
  audit_id: string;
  /** '' for a sign-in attempt with an unknown e-mail. */
  merchant_id: string;
  user_id: string;
  email: string;
  action: string;
  target: string;
  outcome: 'ok' | 'refused' | 'failed';
  detail: string;
  ip: string;
  at: number;
}

export interface PortalTables {
  portal_users: PortalUserRow;
  portal_recovery_codes: PortalRecoveryCodeRow;
  portal_sessions: PortalSessionRow;
  portal_audit: PortalAuditRow;
}
