// What a database error means for the caller (issue 17): most are bugs (500), but a dropped
// or refused connection, a timeout, a full disk or a read-only database are the storage's
// state, not the request's fault. Those answer 503 with Retry-After, and the operator is
// told once per episode, not once per request.

/** `unavailable`: the database cannot be reached or answered too slowly; `storage`: it cannot write (disk full, read-only, I/O error). */
export type StorageFault = 'unavailable' | 'storage';

/** PostgreSQL SQLSTATEs: class 08 (connection exception) and the codes below. */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '57014', '53300']);
const PG_STORAGE = new Set(['53100', '53200', '25006', '58030', '58000']);
/** Socket errors of the driver. */
const NET = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
/** What pg says without a code when a connection ends or a pool cannot hand one out in time. */
const PG_MESSAGES =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Query read timeout|Connection ended|the database system is (starting up|shutting down|in recovery)|Client was closed and is not queryable/i;

export function storageFault(e: unknown): StorageFault | null {
  if (e === null || typeof e !== 'object') return null;
  const code = String((e as { code?: unknown }).code ?? '');
  const message = String((e as { message?: unknown }).message ?? '');
  if (code.startsWith('SQLITE_')) {
    if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED' || code.startsWith('SQLITE_LOCKED_')) return 'unavailable';
    if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'storage';
    return null;
  }
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (code.startsWith('08') || PG_UNAVAILABLE.has(code)) return 'unavailable';
    if (PG_STORAGE.has(code)) return 'storage';
    return null;
  }
  if (NET.has(code)) return 'unavailable';
  if (PG_MESSAGES.test(message)) return 'unavailable';
  return null;
}

/** How long a client should wait before retrying, per fault (Retry-After, whole seconds). */
export const RETRY_AFTER_S: Readonly<Record<StorageFault, number>> = { unavailable: 1, storage: 5 };

/**
 * One log line when storage goes bad and one when it is good again, per process, so a
 * fault that refuses thousands of requests tells the operator once (issue 17 item 3). An
 * episode lasts while faults keep coming: it ends only after QUIET_MS without one and a
 * success after that (a read-only database still answers reads, so a success alone is
 * not the end).
 */
export class FaultLog {
  static readonly QUIET_MS = 2_000;
  private current: StorageFault | null = null;
  private since_ms = 0;
  private last_ms = 0;
  private refused = 0;

  constructor(private readonly log: { error(o: object, m: string): void; info(o: object, m: string): void }) {}

  failed(kind: StorageFault, e: unknown, now_ms = Date.now()): void {
    this.refused++;
    this.last_ms = now_ms;
    if (this.current !== null) return;
    this.current = kind;
    this.since_ms = now_ms;
    const err = e as { code?: unknown; message?: unknown };
    this.log.error(
      { fault: kind, code: String(err.code ?? ''), reason: String(err.message ?? '').slice(0, 300) },
      kind === 'storage'
        ? 'storage cannot write (disk full, read-only or I/O error): answering 503 until it can; nothing half-written'
        : 'database unreachable or too slow: answering 503 until it answers again',
    );
  }

  /** A request went through: the episode, if any, is over once no fault came for QUIET_MS. */
  recovered(now_ms = Date.now()): void {
    if (this.current === null || now_ms - this.last_ms < FaultLog.QUIET_MS) return;
    this.log.info(
      { fault: this.current, seconds: Math.round((this.last_ms - this.since_ms) / 100) / 10, refused: this.refused },
      'storage is back: serving again',
    );
    this.current = null;
    this.refused = 0;
  }

  get active(): StorageFault | null {
    return this.current;
  }
}
