// The delivery worker (docs/contract.md §11): claims due events with a lease, sends each with
// bounded concurrency, then records the attempt and the event's next state.
//
// Claim: one short transaction. PostgreSQL locks the chosen rows `FOR UPDATE SKIP LOCKED`,
// so several workers on one database never take the same row, and re-checks the lease on
// the newest row version; SQLite has one writer, so the same conditional UPDATE is enough.
// Outcome: a second transaction, applied only while this worker still holds the lease.
// A crash between the two leaves the lease to run out and the event is sent again:
// at least once, never lost. Receivers deduplicate by `webhook-id` (= event_id).
// The same worker, with the same claim, lease, schedule and attempt log, sends the platform
// family's events to webhook endpoints (platform.ts: one `webhook_deliveries` row per platform
// event and endpoint, written with the event), signed with `Stripe-Signature`; receivers
// deduplicate by the platform event's `id`.
// The worker has no loop of its own: the scheduler runs `tick` as a process-local task
// (src/notifications/tasks.ts), and `wake` asks it for the next tick at once.
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store, Tx } from '../db/store.js';
import type { PlatformEventRow, WebhookDeliveryRow } from '../db/tables/webhooks.js';
import type { MerchantService } from '../merchants/service.js';
import { stripeSignature } from './platform.js';
import { type SendResult, send } from './sender.js';
import { type SignedDelivery, signDelivery } from './signing.js';
import { checkTarget, type Resolver } from './ssrf.js';
import type { EventAttemptRow, EventRow } from './tables.js';

/**
 * Delays after attempt 1, 2, …: exponential-ish, ~3 days in all (docs/contract.md §11), then the
 * event is failed. 13 attempts; TOLLGATE_WEBHOOK_SCHEDULE_MS replaces it (tests compress it).
 */
export const DEFAULT_SCHEDULE_MS: readonly number[] = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 50_400_000, 72_000_000, 86_400_000,
];

/** ±10% jitter so a merchant coming back up is not hit by every retry at once. */
const JITTER = 0.1;

export interface WorkerOptions {
  store: Store;
  merchants: Pick<MerchantService, 'credentials'>;
  allow_private: boolean;
  schedule_ms?: readonly number[];
  timeout_ms: number;
  /** Deliveries in flight at most. */
  concurrency?: number;
  /** Called when a delivery ends (a slot is free): the task running `tick` should run it again now. */
  wake?: () => void;
  now?: () => number;
  resolver?: Resolver;
  /** Test hook: jitter source in [0, 1). */
  random?: () => number;
  log?: (msg: string, err?: unknown) => void;
  /**
   * Webhook endpoint deliveries (platform.ts): the keyring that opens endpoint secrets and the
   * platform event's body. Without them the worker sends notify_url deliveries only.
   */
  platform?: { keyring: Keyring; bodies: PlatformBodies };
  /** Told of every attempt once its outcome is recorded (the process's log line and metrics). */
  observe?: (attempt: AttemptReport) => void;
}

/** One recorded attempt, as operators see it: no body, no URL, no secret. */
export interface AttemptReport {
  event_id: string;
  event_type: string;
  account_id: string;
  attempt_no: number;
  outcome: Outcome;
  /** The receiver's HTTP status, or null when there was no answer. */
  status_code: number | null;
  error: string;
  latency_ms: number;
  /** When the next attempt is due (a retry), else the attempt's end. */
  next_attempt_at: number;
}

export type Outcome = EventAttemptRow['outcome'];

/** The platform event's JSON as sent to endpoints and answered by `GET /v1/events/:id` (built by the generic interface). */
export interface PlatformBodies {
  body(event: PlatformEventRow): Promise<string>;
}

/** A claimed delivery: an outbox event to its notify_url, or a platform event to a webhook endpoint. */
type Claimed = { kind: 'notify'; row: EventRow } | { kind: 'endpoint'; row: WebhookDeliveryRow };

/** An attempt's result; `final` when the target is gone (a deleted or disabled endpoint): no retry. */
type AttemptResult = SendResult & { final?: boolean; event_type?: string };

/** The pure decision after an attempt: delivered, retry at a time, or failed. */
export function nextStep(
  result: Pick<SendResult, 'status_code' | 'retry_after_ms'>,
  attempt_no: number,
  schedule_ms: readonly number[],
  now_ms: number,
  random: () => number,
): { outcome: Outcome; next_attempt_at: number } {
  const code = result.status_code;
  if (code !== null && code >= 200 && code < 300) return { outcome: 'delivered', next_attempt_at: now_ms };
  // 410 Gone: the merchant asks us to stop (field-facts: notifications).
  if (code === 410) return { outcome: 'failed', next_attempt_at: now_ms };
  const base = schedule_ms[attempt_no - 1];
  if (base === undefined) return { outcome: 'failed', next_attempt_at: now_ms };
  let delay = Math.round(base * (1 - JITTER + 2 * JITTER * random()));
  if (result.retry_after_ms !== null) {
    // Retry-After is honoured, capped by the longest step of the schedule.
    const cap = Math.max(...schedule_ms);
    delay = Math.min(Math.max(result.retry_after_ms, 0), cap);
  }
  return { outcome: 'retry', next_attempt_at: now_ms + delay };
}

export class DeliveryWorker {
  private readonly schedule: readonly number[];
  private readonly concurrency: number;
  private readonly lease_ms: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly inflight = new Set<Promise<void>>();
  /** Which table is claimed first this round: the two take turns, so neither starves the other. */
  private endpointsFirst = false;

  constructor(private readonly opts: WorkerOptions) {
    this.schedule = opts.schedule_ms && opts.schedule_ms.length > 0 ? opts.schedule_ms : DEFAULT_SCHEDULE_MS;
    this.concurrency = Math.max(1, Math.min(opts.concurrency ?? 32, 1024));
    // Longer than any attempt can take, so a live attempt never loses its lease.
    this.lease_ms = 2 * opts.timeout_ms + 1_000;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  /** Claims due events into the free slots and starts their deliveries. Returns how many. */
  async pump(): Promise<number> {
    const free = this.concurrency - this.inflight.size;
    if (free <= 0) return 0;
    const rows = await this.claimBoth(free);
    for (const row of rows) {
      const p: Promise<void> = this.deliver(row)
        .catch((e) => this.opts.log?.('notification delivery failed', e))
        .finally(() => {
          this.inflight.delete(p);
          this.opts.wake?.();
        });
      this.inflight.add(p);
    }
    return rows.length;
  }

  /** Delivers everything due now, retries due meanwhile included; for tests and tools. */
  async drain(max_rounds = 10_000): Promise<number> {
    let total = 0;
    for (let i = 0; i < max_rounds; i++) {
      const n = await this.pump();
      total += n;
      if (n === 0 && this.inflight.size === 0) return total;
      if (this.inflight.size > 0) await Promise.race(this.inflight);
    }
    return total;
  }

  /**
   * One step of the background task. Returns true when it should run again at once: it
   * claimed events and has free slots left (more may be due). A failed claim is logged and
   * the next tick tries again.
   */
  async tick(): Promise<boolean> {
    let claimed = 0;
    try {
      // Claim only when a quarter of the slots is free, so a busy worker batches claims.
      const free = this.concurrency - this.inflight.size;
      if (this.inflight.size === 0 || free >= Math.ceil(this.concurrency / 4)) claimed = await this.pump();
    } catch (e) {
      this.opts.log?.('claiming notifications failed', e);
    }
    return claimed > 0 && this.inflight.size < this.concurrency;
  }

  /** Waits for the attempts in flight (each bounded by the timeout) to finish and record their outcome. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }

  private async claimBoth(limit: number): Promise<Claimed[]> {
    const notify = async (n: number): Promise<Claimed[]> => (n > 0 ? (await this.claim(n)).map((row) => ({ kind: 'notify' as const, row })) : []);
    const endpoint = async (n: number): Promise<Claimed[]> =>
      n > 0 && this.opts.platform ? (await this.claimDeliveries(n)).map((row) => ({ kind: 'endpoint' as const, row })) : [];
    this.endpointsFirst = !this.endpointsFirst;
    const first = await (this.endpointsFirst ? endpoint : notify)(limit);
    const second = await (this.endpointsFirst ? notify : endpoint)(limit - first.length);
    return [...first, ...second];
  }

  /** `claim` over webhook_deliveries: the same cheap read first, the same lease. */
  private async claimDeliveries(limit: number): Promise<WebhookDeliveryRow[]> {
    const { store } = this.opts;
    const now = this.now();
    const due = await store.db
      .selectFrom('webhook_deliveries')
      .select('platform_event_id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where('lease_until', '<=', now)
      .limit(1)
      .executeTakeFirst();
    if (!due) return [];
    const token = newId('lease_token');
    return store.transaction(async (tx) => {
      let pick = tx
        .selectFrom('webhook_deliveries')
        .select(['platform_event_id', 'endpoint_id'])
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where('lease_until', '<=', now)
        .orderBy('next_attempt_at')
        .limit(limit);
      if (store.engine === 'postgres') pick = pick.forUpdate().skipLocked();
      const keys = await pick.execute();
      if (keys.length === 0) return [];
      return tx
        .updateTable('webhook_deliveries')
        .set({ lease_until: now + this.lease_ms, lease_token: token })
        .where((eb) => eb.or(keys.map((k) => eb.and([eb('platform_event_id', '=', k.platform_event_id), eb('endpoint_id', '=', k.endpoint_id)]))))
        .where('status', '=', 'pending')
        .where('lease_until', '<=', now)
        .returningAll()
        .execute();
    });
  }

  private async claim(limit: number): Promise<EventRow[]> {
    const { store } = this.opts;
    const now = this.now();
    // A cheap read first: an idle worker costs no write transaction (and no fsync).
    const due = await store.db
      .selectFrom('events')
      .select('event_id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where('lease_until', '<=', now)
      .limit(1)
      .executeTakeFirst();
    if (!due) return [];
    const token = newId('lease_token');
    return store.transaction(async (tx) => {
      let pick = tx
        .selectFrom('events')
        .select('event_id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where('lease_until', '<=', now)
        .orderBy('next_attempt_at')
        .limit(limit);
      if (store.engine === 'postgres') pick = pick.forUpdate().skipLocked();
      const ids = (await pick.execute()).map((r) => r.event_id);
      if (ids.length === 0) return [];
      return tx
        .updateTable('events')
        .set({ lease_until: now + this.lease_ms, lease_token: token })
        .where('event_id', 'in', ids)
        .where('status', '=', 'pending')
        .where('lease_until', '<=', now)
        .returningAll()
        .execute();
    });
  }

  private async attempt(row: EventRow): Promise<SendResult> {
    const creds = await this.opts.merchants.credentials(row.merchant_id, row.account_id);
    if (!creds) return failure('the account no longer exists');
    let target: Awaited<ReturnType<typeof checkTarget>>;
    try {
      // Checked again at every send: DNS may have changed since the payment arrived.
      target = await checkTarget(row.notify_url, { allow_private: this.opts.allow_private, resolver: this.opts.resolver });
    } catch (e) {
      return failure(`notify_url refused: ${(e as Error).message}`);
    }
    // webhook-timestamp is wall-clock time: receivers compare it with their own clock.
    const delivery = signDelivery(row.payload, creds, Date.now());
    return send(target, delivery, this.opts.timeout_ms);
  }

  /** One attempt of a platform event to a webhook endpoint: the endpoint as it is now, its URL checked again, `Stripe-Signature`. */
  private async attemptEndpoint(row: WebhookDeliveryRow): Promise<AttemptResult> {
    const platform = this.opts.platform;
    if (!platform) return failure('webhook endpoint deliveries are not configured in this process');
    const db = this.opts.store.db;
    const event = await db.selectFrom('platform_events').selectAll().where('id', '=', row.platform_event_id).executeTakeFirst();
    if (!event) return { ...failure('the event no longer exists'), final: true };
    const endpoint = await db
      .selectFrom('webhook_endpoints')
      .select(['url', 'secret_enc', 'disabled', 'deleted'])
      .where('id', '=', row.endpoint_id)
      .where('account_id', '=', row.account_id)
      .executeTakeFirst();
    if (!endpoint || endpoint.deleted === 1) return { ...failure('the webhook endpoint was deleted'), final: true, event_type: event.type };
    if (endpoint.disabled === 1) return { ...failure('the webhook endpoint is disabled'), final: true, event_type: event.type };
    let target: Awaited<ReturnType<typeof checkTarget>>;
    try {
      target = await checkTarget(endpoint.url, { allow_private: this.opts.allow_private, resolver: this.opts.resolver });
    } catch (e) {
      return { ...failure(`url refused: ${(e as Error).message}`), event_type: event.type };
    }
    const body = await platform.bodies.body(event);
    const timestamp_s = Math.floor(Date.now() / 1000);
    const delivery: SignedDelivery = {
      body,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'Tollgate-Webhooks/1',
        'stripe-signature': stripeSignature(platform.keyring.decrypt(endpoint.secret_enc), timestamp_s, body),
      },
    };
    return { ...(await send(target, delivery, this.opts.timeout_ms)), event_type: event.type };
  }

  private async deliver(claimed: Claimed): Promise<void> {
    const started_at = this.now();
    let result: AttemptResult;
    try {
      result = claimed.kind === 'notify' ? await this.attempt(claimed.row) : await this.attemptEndpoint(claimed.row);
    } catch (e) {
      result = failure(`internal error: ${(e as Error).message}`);
    }
    const finished = this.now();
    const row = claimed.row;
    const attempt_no = row.attempts + 1;
    const step = result.final ? { outcome: 'failed' as const, next_attempt_at: finished } : nextStep(result, attempt_no, this.schedule, finished, this.random);
    const event_id = claimed.kind === 'notify' ? claimed.row.event_id : claimed.row.platform_event_id;
    const recorded = await this.opts.store.transaction(async (tx) => {
      await tx
        .insertInto('event_attempts')
        .values({
          attempt_id: newId('delivery_attempt', started_at),
          event_id,
          delivery: claimed.kind === 'notify' ? '' : claimed.row.endpoint_id,
          attempt_no,
          started_at,
          latency_ms: result.latency_ms,
          status_code: result.status_code,
          error: result.error.slice(0, 500),
          response_excerpt: result.response_excerpt,
          outcome: step.outcome,
        })
        .execute();
      // Only the lease holder moves the event on; a worker whose lease ran out keeps its log line only.
      const next = {
        status: step.outcome === 'retry' ? ('pending' as const) : step.outcome,
        attempts: attempt_no,
        next_attempt_at: step.next_attempt_at,
        lease_until: 0,
        lease_token: null,
        delivered_at: step.outcome === 'delivered' ? finished : null,
        last_error: result.error.slice(0, 500),
        updated_at: finished,
      };
      return moveOn(tx, claimed, next);
    });
    // Reported once per event and attempt: a worker whose lease ran out reports nothing.
    if (recorded)
      this.opts.observe?.({
        event_id,
        event_type: claimed.kind === 'notify' ? claimed.row.event_type : (result.event_type ?? 'platform'),
        account_id: row.account_id,
        attempt_no,
        outcome: step.outcome,
        status_code: result.status_code,
        error: result.error.slice(0, 500),
        latency_ms: result.latency_ms,
        next_attempt_at: step.next_attempt_at,
      });
  }
}

/** The claimed row moved to its next state, only while this worker still holds its lease: whether it did. */
async function moveOn(tx: Tx, claimed: Claimed, next: Partial<EventRow> & Partial<WebhookDeliveryRow>): Promise<boolean> {
  const moved =
    claimed.kind === 'notify'
      ? await tx
          .updateTable('events')
          .set(next)
          .where('event_id', '=', claimed.row.event_id)
          .where('lease_token', '=', claimed.row.lease_token as string)
          .executeTakeFirst()
      : await tx
          .updateTable('webhook_deliveries')
          .set(next)
          .where('platform_event_id', '=', claimed.row.platform_event_id)
          .where('endpoint_id', '=', claimed.row.endpoint_id)
          .where('lease_token', '=', claimed.row.lease_token as string)
          .executeTakeFirst();
  return (moved.numUpdatedRows ?? 0n) > 0n;
}

function failure(error: string): SendResult {
  return { status_code: null, latency_ms: 0, error, response_excerpt: '', retry_after_ms: null };
}
