// Storage of the shared scheduler (issue 11): every timed job of the gateway is one row.

/**
 * due: waits for `due_at`; running: claimed by a process until `lease_until`; done: finished
 * (kept a while so its `job_key` still dedupes); failed: gave up after its attempts.
 */
export type JobStatus = 'due' | 'running' | 'done' | 'failed';

export interface ScheduledJobRow {
  /**
   * The job's identity and its dedupe key (`sub_…:charge:3`, `recurring:payment.expiry`):
   * enqueueing a key that exists does nothing. The primary key, so no second unique index.
   */
  job_key: string;
  /** Which registered handler runs it. */
  kind: string;
  /** The account the job is about; '' for gateway-wide work (sweeps). */
  account_id: string;
  /** When the job becomes due (ms); a retry or a recurring job moves it. */
  due_at: number;
  status: JobStatus;
  /** Claims so far since it was last finished; a claim counts, so a job that kills its process ends failed too. */
  attempts: number;
  /** While running: the claim holds until then (wall clock); past it, another process may take the job over. */
  lease_until: number;
  /** Who holds the claim: only the holder may record the job's outcome. */
  lease_token: string | null;
  /** The handler's input as JSON text (bounded, never card data). */
  payload: string;
  /** Why the last attempt failed, '' when none (card-number-like digit runs removed). */
  last_error: string;
  created_at: number;
  updated_at: number;
}

/** A test account's clock once moved forward (docs/contract.md §16); live accounts have none. */
export interface TestClockRow {
  account_id: string;
  /** Where the account's clock stands: every job of the account due by then has run. */
  now_ms: number;
  updated_at: number;
}

export interface SchedulerTables {
  scheduled_jobs: ScheduledJobRow;
  test_clocks: TestClockRow;
}
