// Operator tools over the outbox (docs/contract.md §11: attempts are kept and can be replayed).
// Used by the CLI now and the portal later.
import type { Store } from '../db/store.js';
import type { EventAttemptRow, EventRow } from './tables.js';

/** Most rows one listing or one bulk replay touches. */
export const MAX_LIST = 500;
export const MAX_REPLAY = 10_000;

export type EventSummary = Omit<EventRow, 'payload' | 'lease_token'>;

/**
 * A replayed event or delivery: due now on a fresh schedule, and no longer held by a worker
 * whose delivery may still be in flight. That worker's outcome then moves nothing (it no longer
 * holds the lease: src/notifications/worker.ts moveOn) and the replay is sent, possibly while the
 * other is still answered (the same event id twice, which receivers deduplicate). Keeping the
 * lease let the in-flight delivery's answer mark the replayed event delivered: the replay was
 * never sent (a flaky generic/webhooks.test on a loaded machine).
 */
const REPLAYED = (now_ms: number) => ({
  status: 'pending' as const,
  attempts: 0,
  next_attempt_at: now_ms,
  updated_at: now_ms,
  lease_until: 0,
  lease_token: null,
});

export class EventService {
  constructor(private readonly store: Store) {}

  /**
   * Events of an account, optionally of one order (by order_no or transaction_id). An
   * order's events are those about the payment and about its refunds
   * (`<transaction_id>-<nn>`, interface.md "Identifiers").
   */
  async listEvents(account_id: string, filter: { order_no?: string; transaction_id?: string } = {}): Promise<EventSummary[]> {
    let transaction_id = filter.transaction_id;
    if (filter.order_no !== undefined) {
      // The one read of `payments` outside src/payments/reader.ts but the ledger audit:
      // payments records its events through this folder, so this folder cannot import it.
      const p = await this.store.db
        .selectFrom('payments')
        .select('transaction_id')
        .where('account_id', '=', account_id)
        .where('order_no', '=', filter.order_no)
        .executeTakeFirst();
      if (!p) return [];
      transaction_id = p.transaction_id;
    }
    let q = this.store.db
      .selectFrom('events')
      .select([
        'event_id',
        'merchant_id',
        'account_id',
        'event_type',
        'object_id',
        'notify_url',
        'status',
        'attempts',
        'next_attempt_at',
        'lease_until',
        'delivered_at',
        'last_error',
        'created_at',
        'updated_at',
      ])
      .where('account_id', '=', account_id);
    if (transaction_id !== undefined) {
      const tid = transaction_id;
      q = q.where((eb) => eb.or([eb('object_id', '=', tid), eb('object_id', 'like', `${tid.replace(/[%_\\]/g, '')}-%`)]));
    }
    return q.orderBy('created_at', 'desc').orderBy('event_id', 'desc').limit(MAX_LIST).execute();
  }

  async getEvent(event_id: string): Promise<EventRow | undefined> {
    return this.store.db.selectFrom('events').selectAll().where('event_id', '=', event_id).executeTakeFirst();
  }

  async listAttempts(event_id: string): Promise<EventAttemptRow[]> {
    return this.store.db
      .selectFrom('event_attempts')
      .selectAll()
      .where('event_id', '=', event_id)
      .orderBy('started_at')
      .orderBy('attempt_id')
      .limit(MAX_LIST)
      .execute();
  }

  /**
   * Sends one event again, whatever its state (a merchant who lost it asks for it), with a
   * fresh retry schedule. Same event_id, so the merchant can deduplicate. An attempt in
   * flight loses its lease (REPLAYED): its answer is logged, the replay is still sent. Its platform events' deliveries to
   * webhook endpoints (platform.ts) are sent again too.
   */
  async replayEvent(event_id: string, now_ms: number): Promise<boolean> {
    return this.store.transaction(async (tx) => {
      const r = await tx.updateTable('events').set(REPLAYED(now_ms)).where('event_id', '=', event_id).where('status', '!=', 'no_target').executeTakeFirst();
      const d = await tx
        .updateTable('webhook_deliveries')
        .set(REPLAYED(now_ms))
        .where('platform_event_id', 'in', (eb) => eb.selectFrom('platform_events').select('id').where('event_id', '=', event_id))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) + Number(d.numUpdatedRows) > 0;
    });
  }

  /** Replays every failed event created at or after `since_ms` (optionally of one account). */
  async replayFailedSince(since_ms: number, now_ms: number, account_id?: string): Promise<number> {
    return this.store.transaction(async (tx) => {
      let pick = tx.selectFrom('events').select('event_id').where('status', '=', 'failed').where('created_at', '>=', since_ms);
      if (account_id) pick = pick.where('account_id', '=', account_id);
      const ids = (await pick.orderBy('created_at').limit(MAX_REPLAY).execute()).map((r) => r.event_id);
      let n = 0;
      // Bounded chunks keep each statement's parameter list small on both engines.
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const r = await tx
          .updateTable('events')
          .set({ status: 'pending', attempts: 0, next_attempt_at: now_ms, updated_at: now_ms })
          .where('event_id', 'in', chunk)
          .where('status', '=', 'failed')
          .executeTakeFirst();
        n += Number(r.numUpdatedRows);
      }
      // Webhook endpoint deliveries (platform.ts) that failed in the same window.
      let deliveries = tx
        .updateTable('webhook_deliveries')
        .set({ status: 'pending', attempts: 0, next_attempt_at: now_ms, updated_at: now_ms })
        .where('status', '=', 'failed')
        .where('created_at', '>=', since_ms);
      if (account_id) deliveries = deliveries.where('account_id', '=', account_id);
      n += Number((await deliveries.executeTakeFirst()).numUpdatedRows);
      return n;
    });
  }
}
