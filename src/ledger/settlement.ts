// Settlement (README.md): captured money waits in merchant_pending for a settlement delay,
// then a scheduled job moves it to merchant_available. Each run is bounded.

import type { Store } from '../db/store.js';
import { post } from './postings.js';

/** Default delay between a capture and its settlement (T+1). */
export const DEFAULT_SETTLEMENT_DELAY_MS = 24 * 3600 * 1000;
/** Entries settled per run at most. */
export const SETTLEMENT_BATCH = 1000;

export function settlementDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TOLLGATE_SETTLEMENT_DELAY_MS;
  if (raw === undefined || raw === '') return DEFAULT_SETTLEMENT_DELAY_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`TOLLGATE_SETTLEMENT_DELAY_MS must be a non-negative integer, got "${raw}"`);
  return n;
}

class SettledElsewhere extends Error {}

/** Settles merchant_pending entries older than the delay; returns how many entries moved. */
export async function settleDue(store: Store, now_ms: number, delay_ms: number, limit = SETTLEMENT_BATCH, account_id?: string): Promise<number> {
  let q = store.db
    .selectFrom('ledger_entries')
    .select(['entry_id', 'account_id', 'currency', 'amount_minor'])
    .where('ledger_account', '=', 'merchant_pending')
    .where('settled', '=', 0)
    .where('created_at', '<=', now_ms - delay_ms);
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  const due = await q.orderBy('created_at').limit(limit).execute();
  const groups = new Map<string, { account_id: string; currency: string; ids: string[]; total: number }>();
  for (const e of due) {
    const k = `${e.account_id}/${e.currency}`;
    const g = groups.get(k) ?? { account_id: e.account_id, currency: e.currency, ids: [], total: 0 };
    g.ids.push(e.entry_id);
    g.total += Number(e.amount_minor);
    groups.set(k, g);
  }
  let moved = 0;
  for (const g of groups.values()) {
    try {
      await store.transaction(async (tx) => {
        // Compare-and-set: another settler that took any of these entries first wins.
        const r = await tx.updateTable('ledger_entries').set({ settled: 1 }).where('entry_id', 'in', g.ids).where('settled', '=', 0).executeTakeFirst();
        if (Number(r.numUpdatedRows) !== g.ids.length) throw new SettledElsewhere();
        await post(
          tx,
          {
            account_id: g.account_id,
            currency: g.currency,
            reason: 'settlement',
            settled: true,
            entries: [
              { ledger_account: 'merchant_pending', amount_minor: -g.total },
              { ledger_account: 'merchant_available', amount_minor: g.total },
            ],
          },
          now_ms,
        );
      });
      moved += g.ids.length;
    } catch (e) {
      if (!(e instanceof SettledElsewhere)) throw e;
    }
  }
  return moved;
}
