// The portal's audit log (docs/contract.md §19; PCI DSS 10.2): every sign-in (success and failure)
// and every action, with user, action, target, outcome, time and IP. Written in its own
// transaction after the action (an action's own rows are the proof it happened; the audit
// line says who asked), and for refusals too.
import { newId } from '../crypto/ids.js';
import type { Store } from '../db/store.js';
import type { PortalAuditRow } from './tables.js';

export type AuditEntry = Omit<PortalAuditRow, 'audit_id' | 'at' | 'detail'> & { detail?: string };

export async function audit(store: Store, e: AuditEntry, now_ms: number): Promise<void> {
  await store.transaction((tx) =>
    tx
      .insertInto('portal_audit')
      .values({
        ...e,
        detail: (e.detail ?? '').slice(0, 500),
        target: e.target.slice(0, 200),
        email: e.email.slice(0, 320),
        audit_id: newId('audit_entry', now_ms),
        at: now_ms,
      })
      .execute(),
  );
}

export interface AuditPage {
  rows: PortalAuditRow[];
  /** The audit_id to continue after, when there are more. */
  next: string | null;
}

/** A merchant's audit log, newest first, keyset-paginated by audit_id (time-ordered). */
export async function auditLog(
  store: Store,
  merchant_id: string,
  o: { before?: string; limit: number; user_id?: string; action?: string },
): Promise<AuditPage> {
  let q = store.db.selectFrom('portal_audit').selectAll().where('merchant_id', '=', merchant_id);
  if (o.before) q = q.where('audit_id', '<', o.before);
  if (o.user_id) q = q.where('user_id', '=', o.user_id);
  if (o.action) q = q.where('action', '=', o.action);
  const rows = await q
    .orderBy('audit_id', 'desc')
    .limit(o.limit + 1)
    .execute();
  const more = rows.length > o.limit;
  const page = more ? rows.slice(0, o.limit) : rows;
  return { rows: page, next: more ? (page[page.length - 1]?.audit_id ?? null) : null };
}
