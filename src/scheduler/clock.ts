// Test clocks (docs/contract.md §16): a test account's time moves forward on demand, and every job
// of that account due on the way (subscription deductions and their retries) runs as of its
// own due time, in time order, with the account's expiry and settlement sweeps run at each
// of those moments and at the end. A run of `runDue` for one account at one moment is the
// same code path the live loop takes, so what a merchant tests is what production does.
//
// The clock's position is kept per account (`test_clocks`), so `--by 35d` twice moves it 70
// days, and a move that stops half way (a crash) resumes from where it got to. Requests on the
// account are answered as of its clock too (src/web/request-time.ts: card expiry, deadlines,
// created times, subscription schedules). The notifications of what an advance ran are sent
// at once, not when the real time reaches the clock.
import type { Store } from '../db/store.js';
import { clockMoved, eventsDueNow, storedClock } from '../web/request-time.js';
import type { Scheduler } from './scheduler.js';

/** Job moments one advance runs at most (docs/style.md §9): ten years of daily deductions fit. */
export const MAX_STEPS = 10_000;
/** Jobs one moment runs at most (a moment with more is run again until it has none). */
const BATCH = 100;

export class ClockError extends Error {}

export interface AdvanceReport {
  account_id: string;
  from_ms: number;
  to_ms: number;
  /** Distinct moments at which due jobs ran. */
  moments: number;
  /** Jobs run (done, retried or failed). */
  jobs: number;
}

/** Where the account's clock stands: its moved time, or the real time when never moved (or behind). */
export async function clockOf(store: Store, account_id: string, real_now_ms: number): Promise<number> {
  const clock = await storedClock(store, account_id);
  return clock === null ? real_now_ms : Math.max(clock, real_now_ms);
}

/**
 * Moves a test account's clock to `to_ms` and runs everything of the account due by then, in
 * order. Refused for a live account (live accounts use real time) and for a move backwards.
 */
export async function advanceClock(store: Store, scheduler: Scheduler, account_id: string, to_ms: number, real_now_ms: number): Promise<AdvanceReport> {
  const account = await store.db.selectFrom('accounts').select(['mode']).where('account_id', '=', account_id).executeTakeFirst();
  if (!account) throw new ClockError(`no account ${account_id}`);
  if (account.mode !== 'test')
    throw new ClockError(`account ${account_id} is a live account: live accounts use real time; only test accounts have a clock to move`);
  if (!Number.isSafeInteger(to_ms)) throw new ClockError('the target time is not a time');
  const from_ms = await clockOf(store, account_id, real_now_ms);
  if (to_ms < from_ms) throw new ClockError(`the clock only moves forward: account ${account_id} is at ${new Date(from_ms).toISOString()} already`);

  const report: AdvanceReport = { account_id, from_ms, to_ms, moments: 0, jobs: 0 };
  let at = from_ms;
  for (let step = 0; ; step++) {
    if (step >= MAX_STEPS)
      throw new ClockError(`more than ${MAX_STEPS} moments with due jobs before ${new Date(to_ms).toISOString()}: advance in smaller steps`);
    const next = await store.db
      .selectFrom('scheduled_jobs')
      .select('due_at')
      .where('account_id', '=', account_id)
      .where('status', '=', 'due')
      .where('due_at', '<=', to_ms)
      .orderBy('due_at')
      .limit(1)
      .executeTakeFirst();
    if (!next) break;
    at = Math.max(at, Number(next.due_at));
    // The account's sweeps first (a lapsed 3-D Secure challenge or hold ends before a later job), then its jobs of this moment.
    await scheduler.runSweeps(at, account_id);
    for (;;) {
      const r = await scheduler.runDue(at, BATCH, { account_id, concurrency: 1 });
      report.jobs += r.done + r.again + r.retried + r.failed;
      if (r.claimed < BATCH) break;
    }
    report.moments++;
    await save(store, account_id, at);
  }
  await scheduler.runSweeps(to_ms, account_id);
  await save(store, account_id, to_ms);
  // What the advance caused was recorded as of the clock's time, so its events would wait for
  // the real time to reach the clock (a month, for a monthly deduction): they are due now.
  await eventsDueNow(store, account_id, real_now_ms);
  return report;
}

async function save(store: Store, account_id: string, now_ms: number): Promise<void> {
  await store.transaction(async (tx) => {
    await tx
      .insertInto('test_clocks')
      .values({ account_id, now_ms, updated_at: Date.now() })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ now_ms, updated_at: Date.now() }))
      .execute();
  });
  clockMoved(store);
}

/** `35d`, `12h`, `1w2d`, `90m`, `30s` → milliseconds; null when it is not such a duration. */
export function parseDuration(text: string): number | null {
  const units: Record<string, number> = { w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 };
  if (!/^(?:\d{1,6}[wdhms])+$/.test(text)) return null;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([wdhms])/g)) ms += Number(n) * (units[unit as string] as number);
  return ms > 0 ? ms : null;
}

/** `2027-03-01`, `2027-03-01T12:00:00Z`, `2027-03-01T12:00:00+02:00` → milliseconds; null otherwise. A bare date is midnight UTC. */
export function parseInstant(text: string): number | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`);
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? null : ms;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
