// The shared scheduler (issue 11): every timed job of the gateway (expiries, purges,
// settlement, deductions and their retries) is a row of `scheduled_jobs`, written by
// `enqueueJob` in the transaction of the change that makes it due, claimed with a lease,
// run in bounded batches, and finished only by the holder of its lease.
//
// Claim: one short transaction. PostgreSQL picks the rows `FOR UPDATE SKIP LOCKED`, so
// processes on one database neither wait on nor take each other's rows, and the UPDATE
// re-checks the claim condition on the newest row version; SQLite has one writer
// (`BEGIN IMMEDIATE`), so the same select and conditional update are serialised.
// Crash: a process killed mid-batch leaves its rows `running`; once `lease_until` has
// passed, another process (or the restarted one) takes them over. Every claim counts as an
// attempt, so a job that kills each process running it ends `failed` instead of looping.
//
// What a handler may rely on:
// - `register`: AT LEAST ONCE. The handler runs outside any transaction (it may call the
//   network) and its outcome is recorded afterwards; a crash or a lapsed lease in between
//   runs it again. It must be idempotent: a compare-and-set on the state it moves, a unique
//   key on what it creates (every sweep of the gateway is written that way).
// - `registerTx`: EXACTLY ONCE for database effects. The handler gets the transaction in
//   which the job is marked done; that transaction first proves the lease is still this
//   claim's (on PostgreSQL the row stays locked until commit), so the effect commits with
//   the done mark or not at all. Such a handler touches the database only through `tx`
//   and waits on nothing else (SQLite group commit, src/db/store.ts).
// Leases run on the wall clock (`clock`: is the process alive?); what is due runs on the
// `now_ms` given to `runDue` (the business clock, which a test clock may move).
//
// Beside the rows, the Scheduler holds process-local recurring tasks (`local`, src/scheduler/
// local.ts): the polling of these rows is one of them, notification delivery and the
// idempotency repair are others (src/cli/background.ts lists them). `start`/`stop` run them.
import type { Updateable } from 'kysely';
import { newId } from '../crypto/ids.js';
import type { Store, Tx } from '../db/store.js';
import { type LocalStep, type LocalTaskOptions, LocalTasks, type StepErrorReport } from './local.js';
import type { ScheduledJobRow } from './tables.js';

/** A job as its handler sees it. */
export interface Job {
  job_key: string;
  kind: string;
  account_id: string;
  due_at: number;
  /** Claims so far, this one included. */
  attempts: number;
  /** The payload given to `enqueueJob`, parsed. */
  payload: unknown;
}

export interface JobSpec {
  kind: string;
  /** Dedupe key: a second enqueue of the same key does nothing (while its row is kept). */
  job_key: string;
  /** '' (the default) for gateway-wide work. */
  account_id?: string;
  due_at: number;
  /** JSON-serialisable, at most MAX_PAYLOAD_BYTES; never card data or secrets. */
  payload?: unknown;
}

export interface JobContext {
  /** The business time of this run (`runDue`'s `now_ms`; a test clock's time for its account). */
  now_ms: number;
  /** Set when a sweep runs for one account only (a test clock moved, docs/contract.md §16). */
  account_id?: string;
}

export interface RecurringOptions {
  /**
   * The sweep can be run for one account (its step honours `ctx.account_id`), so a test
   * clock that moves an account's time runs it as of each moment it passes (`runSweeps`).
   */
  per_account?: boolean;
}

/** Nothing: the job is done. `again_at`: the same row is due again then (recurring work). */
export type JobOutcome = undefined | { again_at: number };
export type JobHandler = (job: Job, ctx: JobContext) => Promise<JobOutcome>;
export type TxJobHandler = (tx: Tx, job: Job, ctx: JobContext) => Promise<JobOutcome>;

export interface KindOptions {
  /** Claims before the job is `failed` (default 5). A recurring sweep never fails for good. */
  max_attempts?: number;
  /** Delay before attempt n + 1 after attempt n failed (default RETRY_DELAYS_MS, ±10% jitter). */
  retry_delay_ms?: (attempt: number) => number;
}

export interface SchedulerOptions {
  /** How long a claim holds (default 60 s): the longest a batch may take, and how soon a dead process's jobs are taken over. */
  lease_ms?: number;
  /** Handlers running at once within a batch (default 16). */
  concurrency?: number;
  /** Wall clock of the leases (default Date.now). */
  clock?: () => number;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Told of a failed step of a local task (default: a line on standard error). */
  report?: StepErrorReport;
}

/** What one `runDue` did. */
export interface RunReport {
  claimed: number;
  /** Finished for good. */
  done: number;
  /** Due again at the time their handler asked for (recurring work). */
  again: number;
  /** Failed and due again after a backoff. */
  retried: number;
  /** Failed for the last time. */
  failed: number;
  /** Not recorded: the lease had lapsed and the job may be another process's now. */
  lost: number;
}

export interface RunOptions {
  /** Only this account's jobs (the test clocks of issue 11). */
  account_id?: string;
  /** Overrides the scheduler's concurrency; 1 runs the batch strictly in due order. */
  concurrency?: number;
}

export const MAX_KEY_LENGTH = 200;
export const MAX_PAYLOAD_BYTES = 16_384;
/** Jobs claimed by one `runDue` at most (docs/style.md §9). */
export const MAX_BATCH = 1_000;
const MAX_ERROR_LENGTH = 500;
const KIND = /^[a-z][a-z0-9_.-]{0,63}$/;
/** Backoff of a failing job: 5 s, 30 s, 2 min, 10 min, then 10 min. */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 30_000, 120_000, 600_000];
const JITTER = 0.1;
/** Done rows are kept this long (they dedupe their key meanwhile), then purged. */
export const KEEP_DONE_MS = 30 * 24 * 3600 * 1000;

const defaultRetryDelay = (attempt: number): number => RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? 5_000;

/**
 * Writes a job inside the caller's transaction, so it exists exactly when the change that
 * makes it due commits. Returns false when a job with this key exists already (any status).
 */
export async function enqueueJob(tx: Tx, spec: JobSpec, now_ms: number): Promise<boolean> {
  if (!KIND.test(spec.kind)) throw new Error(`job kind ${JSON.stringify(spec.kind)} must match ${KIND}`);
  if (spec.job_key.length === 0 || spec.job_key.length > MAX_KEY_LENGTH) throw new Error(`job_key must be 1 to ${MAX_KEY_LENGTH} characters`);
  if (!Number.isSafeInteger(spec.due_at) || spec.due_at < 0) throw new Error('due_at must be a time in integer milliseconds');
  const payload = JSON.stringify(spec.payload ?? null);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`job payload over ${MAX_PAYLOAD_BYTES} bytes (${spec.kind})`);
  const r = await tx
    .insertInto('scheduled_jobs')
    .values({
      job_key: spec.job_key,
      kind: spec.kind,
      account_id: spec.account_id ?? '',
      due_at: spec.due_at,
      status: 'due',
      attempts: 0,
      lease_until: 0,
      lease_token: null,
      payload,
      last_error: '',
      created_at: now_ms,
      updated_at: now_ms,
    })
    .onConflict((oc) => oc.column('job_key').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Deletes done jobs older than `keep_ms`; bounded per run. Their keys no longer dedupe after this. */
export async function purgeFinishedJobs(store: Store, now_ms: number, keep_ms = KEEP_DONE_MS, limit = 1_000): Promise<number> {
  const cutoff = now_ms - keep_ms;
  // A done job was due before it was done: due_at bounds the index range, updated_at decides.
  const keys = await store.db
    .selectFrom('scheduled_jobs')
    .select('job_key')
    .where('status', '=', 'done')
    .where('due_at', '<=', cutoff)
    .where('updated_at', '<=', cutoff)
    .limit(limit)
    .execute();
  if (keys.length === 0) return 0;
  await store.transaction((tx) =>
    tx
      .deleteFrom('scheduled_jobs')
      .where(
        'job_key',
        'in',
        keys.map((k) => k.job_key),
      )
      .where('status', '=', 'done')
      .execute(),
  );
  return keys.length;
}

/** An error message fit for the table and the log: bounded, digit runs that could be a card number removed. */
export function cleanError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/\d(?:[ -]?\d){11,18}/g, '[number removed]').slice(0, MAX_ERROR_LENGTH);
}

interface Kind {
  plain?: JobHandler;
  inTx?: TxJobHandler;
  max_attempts: number;
  retry_delay_ms: (attempt: number) => number;
}

type Result = { kind: 'outcome'; outcome: JobOutcome } | { kind: 'error'; error: unknown };
type Patch = Updateable<ScheduledJobRow>;

interface Pending {
  row: ScheduledJobRow;
  result: Result;
  settle: (recorded: boolean) => void;
  fail: (e: unknown) => void;
}

export class Scheduler {
  private readonly kinds = new Map<string, Kind>();
  private readonly recurringEvery = new Map<string, number>();
  private readonly accountSweeps = new Map<string, (ctx: JobContext) => Promise<unknown>>();
  private readonly lease_ms: number;
  private readonly concurrency: number;
  private readonly clock: () => number;
  private readonly random: () => number;
  private readonly localTasks: LocalTasks;

  constructor(
    private readonly store: Store,
    private readonly opts: SchedulerOptions = {},
  ) {
    this.lease_ms = opts.lease_ms ?? 60_000;
    this.concurrency = Math.max(1, Math.min(opts.concurrency ?? 16, 256));
    this.clock = opts.clock ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.localTasks = new LocalTasks(opts.report);
  }

  /**
   * A process-local recurring task: `step` every `every_ms` (after the previous one ended),
   * never overlapping itself, run by `start` in this process only, with no row and no lease.
   */
  local(name: string, every_ms: number, step: LocalStep, opts: LocalTaskOptions = {}): void {
    this.localTasks.add(name, every_ms, step, opts);
  }

  /** Runs the local task `name` at once (or right after its running step). */
  wake(name: string): void {
    this.localTasks.wake(name);
  }

  /** The local tasks `start` runs, in the order they were added. */
  localTaskNames(): string[] {
    return this.localTasks.names();
  }

  /** Starts the local tasks (`keep_alive`: their timers hold the process open). */
  start(opts: { keep_alive?: boolean } = {}): void {
    this.localTasks.start(opts);
  }

  /** Stops the local tasks: no new step; waits for the running ones and what they left running. */
  stop(): Promise<void> {
    return this.localTasks.stop();
  }

  /** An at-least-once kind: the handler must be idempotent (see the top of this file). */
  register(kind: string, handler: JobHandler, opts: KindOptions = {}): void {
    this.add(kind, { plain: handler, ...this.kindOptions(opts) });
  }

  /** An exactly-once kind: the handler's writes commit in the transaction that marks the job done. */
  registerTx(kind: string, handler: TxJobHandler, opts: KindOptions = {}): void {
    this.add(kind, { inTx: handler, ...this.kindOptions(opts) });
  }

  /**
   * A sweep every `every_ms`: one row (`recurring:<kind>`) that each run re-dues, so among
   * several processes one runs each tick, and a killed one's tick is taken over when its
   * lease lapses. A failing sweep is retried (at most `every_ms` later), never given up.
   */
  recurring(kind: string, every_ms: number, step: (ctx: JobContext) => Promise<unknown>, opts: RecurringOptions = {}): void {
    if (!Number.isSafeInteger(every_ms) || every_ms < 1) throw new Error(`${kind}: every_ms must be a positive integer`);
    this.register(
      kind,
      async (_job, ctx) => {
        await step(ctx);
        return { again_at: ctx.now_ms + every_ms };
      },
      { max_attempts: Number.POSITIVE_INFINITY, retry_delay_ms: (n) => Math.min(every_ms, defaultRetryDelay(n)) },
    );
    this.recurringEvery.set(kind, every_ms);
    if (opts.per_account) this.accountSweeps.set(kind, step);
  }

  /**
   * Runs every per-account sweep once for `account_id` as of `now_ms` (a test clock's
   * moment), outside the recurring rows: the sweeps are compare-and-sets, so running one
   * beside the gateway-wide tick is safe.
   */
  async runSweeps(now_ms: number, account_id: string): Promise<void> {
    for (const step of this.accountSweeps.values()) await step({ now_ms, account_id });
  }

  /** The registered kinds (this process claims only these: an older process leaves a newer kind alone). */
  registeredKinds(): string[] {
    return [...this.kinds.keys()];
  }

  enqueue(tx: Tx, spec: JobSpec, now_ms: number): Promise<boolean> {
    return enqueueJob(tx, spec, now_ms);
  }

  /**
   * Makes sure every recurring sweep has its row: created due now the first time, revived
   * if an operator or an old version finished it, and brought forward when its interval
   * was shortened. Idempotent; every process runs it at start.
   */
  async installRecurring(now_ms: number): Promise<void> {
    if (this.recurringEvery.size === 0) return;
    await this.store.transaction(async (tx) => {
      for (const [kind, every_ms] of this.recurringEvery) {
        const job_key = `recurring:${kind}`;
        await enqueueJob(tx, { kind, job_key, due_at: now_ms }, now_ms);
        await tx
          .updateTable('scheduled_jobs')
          .set({ status: 'due', due_at: now_ms, attempts: 0, lease_until: 0, lease_token: null, updated_at: now_ms })
          .where('job_key', '=', job_key)
          .where('status', 'in', ['done', 'failed'])
          .execute();
        await tx
          .updateTable('scheduled_jobs')
          .set({ due_at: now_ms + every_ms, updated_at: now_ms })
          .where('job_key', '=', job_key)
          .where('status', '=', 'due')
          .where('due_at', '>', now_ms + every_ms)
          .execute();
      }
    });
  }

  /**
   * Claims up to `limit` jobs (due by `now_ms`, or running under a lapsed lease), runs them
   * with bounded concurrency and records each outcome. One batch: call again while it
   * reports `claimed === limit`.
   */
  async runDue(now_ms: number, limit = 100, run: RunOptions = {}): Promise<RunReport> {
    const report: RunReport = { claimed: 0, done: 0, again: 0, retried: 0, failed: 0, lost: 0 };
    const kinds = this.registeredKinds();
    const n = Math.max(1, Math.min(Math.floor(limit), MAX_BATCH));
    if (kinds.length === 0) return report;
    const lease_now = this.clock();
    // A cheap read first: an idle process costs no write transaction (and no fsync).
    if (!(await this.anyClaimable(now_ms, lease_now, kinds, run.account_id))) return report;
    const token = newId('lease_token');
    const rows = await this.claim(now_ms, lease_now, kinds, n, token, run.account_id);
    report.claimed = rows.length;
    if (rows.length === 0) return report;
    const outcomes = new OutcomeWriter(this.store, token, now_ms, (row, e) => this.failurePatch(row, e, now_ms));
    const width = Math.max(1, Math.min(run.concurrency ?? this.concurrency, 256));
    // A lane moves on to its next job while the outcome is written (OutcomeWriter gathers them).
    const recording: Promise<void>[] = [];
    await eachBounded(rows, width, async (row) => {
      const result = await this.runOne(row, token, now_ms, report);
      if (result) recording.push(this.record(row, result, outcomes, report));
    });
    await Promise.all(recording);
    return report;
  }

  private add(kind: string, k: Kind): void {
    if (!KIND.test(kind)) throw new Error(`job kind ${JSON.stringify(kind)} must match ${KIND}`);
    if (this.kinds.has(kind)) throw new Error(`job kind ${kind} registered twice`);
    this.kinds.set(kind, k);
  }

  private kindOptions(opts: KindOptions): Pick<Kind, 'max_attempts' | 'retry_delay_ms'> {
    const max_attempts = opts.max_attempts ?? 5;
    if (!(max_attempts >= 1)) throw new Error('max_attempts must be at least 1');
    return { max_attempts, retry_delay_ms: opts.retry_delay_ms ?? defaultRetryDelay };
  }

  private async anyClaimable(now_ms: number, lease_now: number, kinds: string[], account_id: string | undefined): Promise<boolean> {
    let due = this.store.db.selectFrom('scheduled_jobs').select('job_key').where('status', '=', 'due').where('due_at', '<=', now_ms).where('kind', 'in', kinds);
    if (account_id !== undefined) due = due.where('account_id', '=', account_id);
    if (await due.limit(1).executeTakeFirst()) return true;
    let stale = this.store.db
      .selectFrom('scheduled_jobs')
      .select('job_key')
      .where('status', '=', 'running')
      .where('lease_until', '<', lease_now)
      .where('kind', 'in', kinds);
    if (account_id !== undefined) stale = stale.where('account_id', '=', account_id);
    return (await stale.limit(1).executeTakeFirst()) !== undefined;
  }

  private claim(now_ms: number, lease_now: number, kinds: string[], limit: number, token: string, account_id: string | undefined): Promise<ScheduledJobRow[]> {
    const pg = this.store.engine === 'postgres';
    return this.store.transaction(async (tx) => {
      // Jobs of dead processes first (they were due before anything due now), then due ones.
      let stale = tx
        .selectFrom('scheduled_jobs')
        .select('job_key')
        .where('status', '=', 'running')
        .where('lease_until', '<', lease_now)
        .where('kind', 'in', kinds)
        .orderBy('due_at')
        .limit(limit);
      if (account_id !== undefined) stale = stale.where('account_id', '=', account_id);
      if (pg) stale = stale.forUpdate().skipLocked();
      const keys = (await stale.execute()).map((r) => r.job_key);
      if (keys.length < limit) {
        let due = tx
          .selectFrom('scheduled_jobs')
          .select('job_key')
          .where('status', '=', 'due')
          .where('due_at', '<=', now_ms)
          .where('kind', 'in', kinds)
          .orderBy('due_at')
          .limit(limit - keys.length);
        if (account_id !== undefined) due = due.where('account_id', '=', account_id);
        if (pg) due = due.forUpdate().skipLocked();
        for (const r of await due.execute()) keys.push(r.job_key);
      }
      if (keys.length === 0) return [];
      // The compare-and-set: only rows still claimable become this claim's.
      const rows = await tx
        .updateTable('scheduled_jobs')
        .set((eb) => ({
          status: 'running',
          lease_until: lease_now + this.lease_ms,
          lease_token: token,
          attempts: eb('attempts', '+', 1),
          updated_at: now_ms,
        }))
        .where('job_key', 'in', keys)
        .where((eb) =>
          eb.or([eb.and([eb('status', '=', 'due'), eb('due_at', '<=', now_ms)]), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', lease_now)])]),
        )
        .returningAll()
        .execute();
      return rows.sort((a, b) => Number(a.due_at) - Number(b.due_at));
    });
  }

  /** Runs one job; an exactly-once job is finished here, an at-least-once one returns the result to record. */
  private async runOne(row: ScheduledJobRow, token: string, now_ms: number, report: RunReport): Promise<Result | undefined> {
    const kind = this.kinds.get(row.kind) as Kind;
    const job = toJob(row);
    const ctx: JobContext = { now_ms };
    let result: Result;
    if (kind.inTx && row.attempts <= kind.max_attempts) {
      const handler = kind.inTx;
      try {
        const outcome = await this.store.transaction(async (tx) => {
          // Still this claim's? On PostgreSQL this also locks the row until commit, so no
          // other process can claim it while the effect is being written.
          const held = await tx
            .updateTable('scheduled_jobs')
            .set({ updated_at: now_ms })
            .where('job_key', '=', row.job_key)
            .where('lease_token', '=', token)
            .where('status', '=', 'running')
            .executeTakeFirst();
          if (Number(held.numUpdatedRows) !== 1) return LOST;
          const outcome = await handler(tx, job, ctx);
          await tx
            .updateTable('scheduled_jobs')
            .set(finishPatch(outcome, now_ms))
            .where('job_key', '=', row.job_key)
            .where('lease_token', '=', token)
            .execute();
          return outcome;
        });
        if (outcome === LOST) {
          report.lost++;
          this.opts.log?.('scheduled job lost its lease before it ran', { kind: row.kind, job_key: row.job_key });
        } else if (outcome) report.again++;
        else report.done++;
        return undefined;
      } catch (error) {
        // Rolled back whole: the effect did not happen; record the failure on its own.
        result = { kind: 'error', error };
      }
    } else if (row.attempts > kind.max_attempts) {
      // Every claim within the budget ended without an outcome: the job stops the processes
      // that run it (or outlives its lease every time). Give up instead of looping.
      result = { kind: 'error', error: new Error(`no outcome after ${kind.max_attempts} claims (the process running it stopped, or it outlived its lease)`) };
    } else {
      // A claim that lapsed while the job waited in its batch may be another process's now.
      if (this.clock() >= Number(row.lease_until)) {
        report.lost++;
        return undefined;
      }
      try {
        const outcome = await (kind.plain as JobHandler)(job, ctx);
        checkOutcome(outcome);
        result = { kind: 'outcome', outcome };
      } catch (error) {
        result = { kind: 'error', error };
      }
    }
    return result;
  }

  private async record(row: ScheduledJobRow, result: Result, outcomes: OutcomeWriter, report: RunReport): Promise<void> {
    const kind = this.kinds.get(row.kind) as Kind;
    try {
      const recorded = await outcomes.record(row, result);
      if (!recorded) {
        report.lost++;
        this.opts.log?.('scheduled job outcome not recorded: its lease was taken over', { kind: row.kind, job_key: row.job_key });
      } else if (result.kind === 'outcome') {
        if (result.outcome) report.again++;
        else report.done++;
      } else {
        const failed = row.attempts >= kind.max_attempts;
        if (failed) report.failed++;
        else report.retried++;
        this.opts.log?.(failed ? 'scheduled job failed for good' : 'scheduled job failed, will retry', {
          kind: row.kind,
          job_key: row.job_key,
          attempts: row.attempts,
          error: cleanError(result.error),
        });
      }
    } catch (e) {
      // The outcome could not be written (database gone): the lease lapses and the job runs again.
      report.lost++;
      this.opts.log?.('recording a scheduled job outcome failed', { kind: row.kind, job_key: row.job_key, error: cleanError(e) });
    }
  }

  private failurePatch(row: ScheduledJobRow, error: unknown, now_ms: number): Patch {
    const kind = this.kinds.get(row.kind) as Kind;
    const last_error = cleanError(error);
    if (row.attempts >= kind.max_attempts) return { status: 'failed' as const, lease_until: 0, lease_token: null, last_error, updated_at: now_ms };
    const delay = Math.round(kind.retry_delay_ms(row.attempts) * (1 - JITTER + 2 * JITTER * this.random()));
    return { status: 'due' as const, due_at: now_ms + delay, lease_until: 0, lease_token: null, last_error, updated_at: now_ms };
  }
}

const LOST = Symbol('lost');

function toJob(row: ScheduledJobRow): Job {
  return {
    job_key: row.job_key,
    kind: row.kind,
    account_id: row.account_id,
    due_at: Number(row.due_at),
    attempts: row.attempts,
    payload: JSON.parse(row.payload),
  };
}

function checkOutcome(outcome: JobOutcome): void {
  if (outcome !== undefined && !Number.isSafeInteger(outcome.again_at))
    throw new Error('a handler returned again_at that is not a time in integer milliseconds');
}

function finishPatch(outcome: JobOutcome, now_ms: number): Patch {
  checkOutcome(outcome);
  const free = { lease_until: 0, lease_token: null, last_error: '', updated_at: now_ms };
  if (outcome) return { ...free, status: 'due', due_at: outcome.again_at, attempts: 0 };
  return { ...free, status: 'done' };
}

/**
 * Records the outcomes of a batch's at-least-once jobs: those that arrive while a write is
 * running go together in the next one, so a batch of quick jobs costs a few transactions,
 * not one each, while a crash still repeats only the jobs whose outcome was not yet written.
 * Every write is a compare-and-set on the claim's token: a claim that lapsed and was taken
 * over records nothing.
 */
class OutcomeWriter {
  private queue: Pending[] = [];
  private writing = false;

  constructor(
    private readonly store: Store,
    private readonly token: string,
    private readonly now_ms: number,
    private readonly failurePatch: (row: ScheduledJobRow, error: unknown) => Patch,
  ) {}

  record(row: ScheduledJobRow, result: Result): Promise<boolean> {
    return new Promise((settle, fail) => {
      this.queue.push({ row, result, settle, fail });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        // Let handlers that are finishing now join this write.
        await new Promise<void>((r) => setImmediate(r));
        const batch = this.queue.splice(0, MAX_BATCH);
        try {
          const recorded = await this.write(batch);
          for (const p of batch) p.settle(recorded.has(p.row.job_key));
        } catch (e) {
          for (const p of batch) p.fail(e);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private write(batch: Pending[]): Promise<Set<string>> {
    const { token, now_ms } = this;
    return this.store.transaction(async (tx) => {
      const recorded = new Set<string>();
      const done = batch.filter((p) => p.result.kind === 'outcome' && !p.result.outcome).map((p) => p.row.job_key);
      if (done.length > 0) {
        const rows = await tx
          .updateTable('scheduled_jobs')
          .set(finishPatch(undefined, now_ms))
          .where('job_key', 'in', done)
          .where('lease_token', '=', token)
          .where('status', '=', 'running')
          .returning('job_key')
          .execute();
        for (const r of rows) recorded.add(r.job_key);
      }
      for (const p of batch) {
        let patch: Patch;
        if (p.result.kind === 'error') patch = this.failurePatch(p.row, p.result.error);
        else if (p.result.outcome) patch = finishPatch(p.result.outcome, now_ms);
        else continue;
        const r = await tx
          .updateTable('scheduled_jobs')
          .set(patch)
          .where('job_key', '=', p.row.job_key)
          .where('lease_token', '=', token)
          .where('status', '=', 'running')
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 1) recorded.add(p.row.job_key);
      }
      return recorded;
    });
  }
}

/** Runs `fn` over `items` with at most `width` at once; `fn` must not throw. */
async function eachBounded<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(lanes);
}
