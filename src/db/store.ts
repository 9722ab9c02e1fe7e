// One query layer (Kysely) over SQLite and PostgreSQL (docs/style.md §8). Domain code reads through
// `store.db` and writes either a write unit (src/db/unit.ts: `store.write(unit)`, the
// statements of a change built beforehand) or a transaction function
// (`store.transaction(fn)`, for a change that must read its own writes).
//
// SQLite: one writer connection and one reader connection (WAL lets readers run beside
// the writer). Writes are *group committed* (src/db/sqlite-group.ts): those that arrive
// while a commit is in progress are run back to back, each inside its own SAVEPOINT, and
// committed together, so one fsync acknowledges many payments (field-facts: durability).
// A failing unit rolls back to its savepoint and fails alone. Write units run on the writer
// thread where there is one; transaction functions on the event loop's writer, and must
// only touch the database through `tx` and wait on nothing else (no network calls).
//
// The execution paths: SQLite — units on the writer thread, transaction functions (and
// units, where there is no writer thread, through applyUnit) on the event loop's writer;
// PostgreSQL — a unit as one simple-query message (src/db/pg-unit.ts), a transaction
// function in a Kysely transaction.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresDialect,
  type QueryResult,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import type pg from 'pg';
import { storageFault } from './faults.js';
import { pgDriver } from './pg-driver.js';
import { checkFailed, unitAsOneQuery } from './pg-unit.js';
import type { DB } from './schema.js';
import { controlOf, groupCommit } from './sqlite-group.js';
import type { ReadBatch, ReadBatchReply, ReadRequest, WireError, WriterBatch, WriterReply } from './sqlite-thread.js';
import { applyUnit, type Engine, type WriteUnit, wireOps } from './unit.js';

export type { Engine } from './unit.js';
/** A real transaction: each statement runs as it is called and answers with its result. */
export type Tx = Kysely<DB>;

export interface Store {
  readonly engine: Engine;
  /** Reads of committed data. On SQLite this is a separate read connection. */
  readonly db: Kysely<DB>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs and commits a write unit (src/db/unit.ts) built for this store's engine: on
   * SQLite in a group commit (on the writer thread where there is one), on PostgreSQL in
   * one round trip. Resolves once durable; fails with the error of the operation whose row
   * count was not the expected one, or the database's, the unit rolled back whole.
   */
  write(unit: WriteUnit): Promise<void>;
  /**
   * How many transactions one request runs at once when it has several independent ones
   * (the items of a capture, cancel or refund batch). SQLite: all of them, its group
   * commit takes them together. PostgreSQL: a quarter of the pool, so that a few batches
   * of 50 do not queue thousands of waiters for 16 connections, where the last in the
   * queue would wait past the acquire timeout and a healthy database would answer 503.
   */
  readonly concurrentTransactions: number;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** better-sqlite3 prepares a statement per call; Kysely reuses a handful of SQL texts. */
function cachingDatabase(raw: Database.Database): Database.Database {
  const cache = new Map<string, Database.Statement>();
  const MAX_CACHED = 500;
  return new Proxy(raw, {
    get(target, prop, receiver) {
      if (prop === 'prepare') {
        return (text: string) => {
          let stmt = cache.get(text);
          if (!stmt) {
            stmt = target.prepare(text);
            if (cache.size >= MAX_CACHED) cache.clear();
            cache.set(text, stmt);
          }
          return stmt;
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Queued work: a transaction function, or a write unit (for the writer thread). */
type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void } & (
  | { fn: (tx: Tx) => Promise<unknown>; unit?: undefined }
  | { unit: WriteUnit; fn?: undefined }
);

/** The units of a batch as one JSON string, or null when a value has no JSON form (a bigint). */
function stringifyUnits(units: unknown[]): string | null {
  try {
    return JSON.stringify(units);
  } catch {
    return null;
  }
}

/**
 * A SQLite thread (src/db/sqlite-thread.ts): dist/db/sqlite-thread.js, or under tsx (tests,
 * tools) the TypeScript module loaded through tsx's loader, which a worker does not inherit.
 */
function sqliteThread(file: string, role: 'writer' | 'reader'): Worker {
  const workerData = { file, role };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./sqlite-thread.js', import.meta.url), { workerData });
  const module = JSON.stringify(new URL('./sqlite-thread.ts', import.meta.url).href);
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${module}); })`, { eval: true, workerData });
}

/**
 * Reads on the reader thread (issue 15): `Store.db` on the server. Each read is posted with
 * its SQL and parameters and answered with its rows; the event loop does none of SQLite's
 * work. If the thread dies, reads in flight fail and later ones run on `fallback` (this
 * thread's reader connection).
 */
class ThreadReader implements DatabaseConnection {
  private readonly waiting = new Map<number, { resolve: (rows: unknown[]) => void; reject: (e: Error) => void }>();
  private next = 1;
  private worker: Worker | null;
  /**
   * Reads asked for while the thread is busy with a batch: sent together as the next batch
   * when its answer comes back. A read asked for while the thread is idle goes at once, so
   * batching adds no wait; under load one message carries many reads.
   */
  private pending: ReadRequest[] = [];
  private busy = false;
  /** Called once no read waits for an answer (close waits for it). */
  private drained: Array<() => void> = [];
  private flush(worker: Worker): void {
    const reads = this.pending;
    this.pending = [];
    this.busy = true;
    worker.postMessage({ reads } satisfies ReadBatch);
  }

  constructor(
    worker: Worker,
    private readonly fallback: Kysely<DB>,
  ) {
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: ReadBatchReply | { closed: true }) => {
      if ('closed' in m) return;
      this.busy = false;
      if (this.pending.length > 0 && this.worker === worker) this.flush(worker);
      for (const r of m.replies) {
        const w = this.waiting.get(r.id);
        this.waiting.delete(r.id);
        if ('rows' in r) w?.resolve(r.rows);
        else w?.reject(sqliteError(r.error));
      }
      if (this.waiting.size === 0) {
        worker.unref();
        for (const f of this.drained.splice(0)) f();
      }
    });
    const gone = (e: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
      this.pending = [];
      for (const f of this.drained.splice(0)) f();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite reader thread exited (code ${code})`)));
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const worker = this.worker;
    if (!worker) return this.fallback.executeQuery<R>(compiled);
    const rows = await new Promise<unknown[]>((resolve, reject) => {
      const id = this.next++;
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      this.pending.push({ id, sql: compiled.sql, parameters: compiled.parameters });
      if (!this.busy) this.flush(worker);
    });
    return { rows: rows as R[] };
  }

  // biome-ignore lint/correctness/useYield: reads are answered whole
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the reader thread does not stream');
  }

  /** Reads already asked for are answered first (those waiting as the next batch too); later ones run on the fallback. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    if (this.waiting.size > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
    if (this.worker !== worker) return;
    this.worker = null;
    await closeThread(worker);
  }
}

function threadReaderDb(reader: ThreadReader): Kysely<DB> {
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => reader,
    beginTransaction: async () => {
      throw new Error('reads of committed data take no transaction');
    },
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    // Kysely destroys only a driver it has used: SqliteStore.close() closes the reader itself.
    destroy: async () => {},
  };
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  });
}

/**
 * Closes a SQLite thread's connection, then the thread: it is terminated once it says its
 * connection is closed, not on an answer to work sent before the close.
 */
function closeThread(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    const onMessage = (m: unknown) => {
      if (typeof m === 'object' && m !== null && 'closed' in m) void worker.terminate();
    };
    worker.on('message', onMessage);
    worker.once('exit', () => {
      worker.off('message', onMessage);
      resolve();
    });
    worker.ref();
    worker.postMessage({ close: true });
  });
}

function sqliteError(e: WireError): Error {
  return e.code ? new Database.SqliteError(e.message, e.code) : new Error(e.message);
}

class SqliteStore implements Store {
  readonly engine = 'sqlite' as const;
  readonly concurrentTransactions = Number.POSITIVE_INFINITY;
  readonly db: Kysely<DB>;
  /** Reads on this thread's reader connection (tools; and the fallback if the reader thread dies). */
  private readonly localReader: Kysely<DB>;
  private readonly threadReader: ThreadReader | null = null;
  private readonly writer: Kysely<DB>;
  private readonly rawWriter: Database.Database;
  private readonly rawReader: Database.Database;
  private queue: Pending[] = [];
  private running = false;
  private readonly control: ReturnType<typeof controlOf>;
  /** The writer thread (write units), or null: units then run on this thread's writer. */
  private worker: Worker | null = null;
  private readonly replies = new Map<number, { resolve: (r: WriterReply) => void; reject: (e: Error) => void }>();
  private nextBatch = 1;
  /** Statements the writer thread has been sent, by number (wireOps). */
  private readonly statementRefs = new Map<string, number>();

  constructor(
    file: string,
    private readonly maxBatch: number,
    threads = false,
  ) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.rawWriter = new Database(file);
    // A payment gateway survives power loss: WAL + synchronous=FULL (field-facts).
    this.rawWriter.pragma('journal_mode = WAL');
    this.rawWriter.pragma('synchronous = FULL');
    this.rawWriter.pragma('foreign_keys = ON');
    this.rawWriter.pragma('busy_timeout = 5000');
    this.rawReader = new Database(file);
    this.rawReader.pragma('busy_timeout = 5000');
    this.rawReader.pragma('query_only = ON');
    this.control = controlOf(this.rawWriter);
    this.writer = new Kysely<DB>({ dialect: new SqliteDialect({ database: cachingDatabase(this.rawWriter) }) });
    this.localReader = new Kysely<DB>({ dialect: new SqliteDialect({ database: cachingDatabase(this.rawReader) }) });
    const useThreads = threads && file !== ':memory:';
    if (useThreads) this.threadReader = new ThreadReader(sqliteThread(path.resolve(file), 'reader'), this.localReader);
    this.db = this.threadReader ? threadReaderDb(this.threadReader) : this.localReader;
    if (useThreads) this.startWorker(path.resolve(file));
  }

  private startWorker(file: string): void {
    const worker = sqliteThread(file, 'writer');
    worker.unref();
    worker.on('message', (m: WriterReply | { closed: true }) => {
      if ('closed' in m) return;
      const waiting = this.replies.get(m.id);
      this.replies.delete(m.id);
      waiting?.resolve(m);
    });
    const gone = (e: Error) => {
      // Units run on this thread's writer from now on; those in flight fail (not durable).
      if (this.worker !== worker) return;
      this.worker = null;
      for (const w of this.replies.values()) w.reject(e);
      this.replies.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite writer thread exited (code ${code})`)));
    this.worker = worker;
  }

  /** Whether write units run on the writer thread (false: on this thread). */
  get writerThread(): boolean {
    return this.worker !== null;
  }

  /** Used by migrations, which run before anything else. */
  get writerDb(): Kysely<DB> {
    return this.writer;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.enqueue({ fn }) as Promise<T>;
  }

  async write(unit: WriteUnit): Promise<void> {
    if (unit.engine !== this.engine) throw new Error(`a ${unit.engine} write unit cannot run on SQLite`);
    if (unit.ops.length === 0) return;
    await this.enqueue({ unit });
  }

  private enqueue(work: { fn: (tx: Tx) => Promise<unknown> } | { unit: WriteUnit }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...work, resolve, reject } as Pending);
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // Let requests that are already parsed join this commit.
        await new Promise<void>((r) => setImmediate(r));
        const batch = this.queue.splice(0, this.maxBatch);
        // Units go to the writer thread; transaction functions (which read their own
        // writes) run here. The two writers take turns, so neither waits on SQLite's lock.
        // Without the thread a unit is a transaction function here like any other.
        const worker = this.worker;
        const units = worker ? batch.filter((p) => p.unit) : [];
        const here = worker ? batch.filter((p) => p.fn) : batch;
        if (here.length > 0) await this.runHere(here);
        if (worker && units.length > 0) await this.runUnits(worker, units);
      }
    } finally {
      this.running = false;
    }
  }

  /** One group commit on this thread's writer; each item settles once the batch is durable. */
  private async runHere(batch: Pending[]): Promise<void> {
    let outcomes: Awaited<ReturnType<typeof groupCommit<unknown>>>;
    try {
      outcomes = await this.writer.connection().execute((conn) =>
        groupCommit(this.rawWriter, this.control, batch.length, (i) => {
          const item = batch[i] as Pending;
          return item.fn ? item.fn(conn) : applyUnit(conn, item.unit);
        }),
      );
    } catch (error) {
      // The commit itself failed: nothing in the batch is durable.
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const o = outcomes[i];
      if (!o) item.reject(new Error('transaction outcome missing'));
      else if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  }

  /** One group commit of write units on the writer thread; each settles once the batch is durable. */
  private async runUnits(worker: Worker, items: Pending[]): Promise<void> {
    const id = this.nextBatch++;
    const units = items.map((item) => wireOps(item.unit as WriteUnit, this.statementRefs));
    let reply: WriterReply;
    try {
      reply = await new Promise<WriterReply>((resolve, reject) => {
        this.replies.set(id, { resolve, reject });
        // Referenced only while a batch is out: an idle writer thread keeps no process alive.
        worker.ref();
        // One string: V8 copies a string as it is, where structured cloning walks every value
        // of every unit (~100 µs of this thread a payment). Bigints do not go into JSON.
        const json = stringifyUnits(units);
        worker.postMessage(json === null ? ({ id, units } satisfies WriterBatch) : { id, json });
      }).finally(() => {
        if (this.replies.size === 0) worker.unref();
      });
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    if ('failed' in reply) {
      // BEGIN or COMMIT failed: nothing in the batch is durable.
      const error = sqliteError(reply.failed);
      for (const item of items) item.reject(error);
      return;
    }
    items.forEach((item, i) => {
      const o = reply.outcomes[i];
      if (!o) item.reject(new Error('write unit outcome missing'));
      else if (o.ok) item.resolve(undefined);
      else if ('op' in o) item.reject(((item.unit as WriteUnit).ops[o.op]?.expected?.error ?? (() => new Error(`operation ${o.op} changed ${o.rows} rows`)))());
      else item.reject(sqliteError(o.error));
    });
  }

  async ping(): Promise<boolean> {
    try {
      this.rawReader.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    while (this.running || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    const worker = this.worker;
    this.worker = null;
    if (worker) await closeThread(worker);
    await this.threadReader?.close();
    if (this.db !== this.localReader) await this.db.destroy();
    await this.localReader.destroy();
    // Kysely closes only a connection it has used; the writer goes last, so the last
    // connection to close checkpoints the WAL and removes it.
    if (this.rawReader.open) this.rawReader.close();
    await this.writer.destroy();
    if (this.rawWriter.open) this.rawWriter.close();
  }
}

class PostgresStore implements Store {
  readonly engine = 'postgres' as const;
  readonly db: Kysely<DB>;
  private readonly pool: pg.Pool;
  readonly concurrentTransactions: number;

  constructor(url: string, poolSize: number, timeouts: { statement_ms: number; acquire_ms: number }) {
    this.concurrentTransactions = Math.max(1, Math.floor(poolSize / 4));
    this.pool = new (pgDriver().Pool)({
      connectionString: url,
      max: poolSize,
      // A request waits this long for a connection, then is answered 503 (issue 17).
      ...(timeouts.acquire_ms > 0 ? { connectionTimeoutMillis: timeouts.acquire_ms } : {}),
      // A slow or hung database turns into prompt errors (503), not piled-up requests:
      // the server cancels the statement, and the driver gives up a little later if the
      // server itself does not answer. 0: none (migrations, operator commands).
      ...(timeouts.statement_ms > 0 ? { statement_timeout: timeouts.statement_ms, query_timeout: timeouts.statement_ms + 1_000 } : {}),
      keepAlive: true,
    });
    // A pooled client that errors while idle must not crash the process.
    this.pool.on('error', () => {});
    // Nor one that errors while checked out (a restart terminates it between two
    // statements: 57P01): without a listener its 'error' event kills the process. The
    // statement that runs on it fails, and the pool drops the client when it is released.
    this.pool.on('connect', (client) => {
      client.on('error', () => {});
    });
    this.db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: this.pool }) });
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /**
   * The unit as one message that PostgreSQL runs as one transaction (src/db/pg-unit.ts):
   * an operation whose row count is not the expected one fails the unit with its error.
   */
  async write(unit: WriteUnit): Promise<void> {
    if (unit.engine !== this.engine) throw new Error(`a ${unit.engine} write unit cannot run on PostgreSQL`);
    if (unit.ops.length === 0) return;
    const text = unitAsOneQuery(unit);
    const client = await this.pool.connect();
    let dropped = false;
    try {
      await client.query(text);
    } catch (error) {
      // A client whose connection failed or timed out is dropped, not pooled again.
      dropped = storageFault(error) === 'unavailable';
      const i = checkFailed(error);
      const expected = i === null ? undefined : unit.ops[i]?.expected;
      throw expected ? expected.error() : error;
    } finally {
      client.release(dropped);
    }
  }

  async ping(): Promise<boolean> {
    try {
      // Bounded: a readiness probe never hangs on a database that does not answer.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timed out')), 1_000);
      });
      await Promise.race([sql`SELECT 1`.execute(this.db), timeout]).finally(() => clearTimeout(timer));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

export interface OpenOptions {
  groupCommitMax?: number;
  /** SQLite: reads and write units on their own threads (the server); off for tools and migrations. */
  threads?: boolean;
  poolSize?: number;
  /** PostgreSQL: statement timeout (server side) and the wait for a pooled connection. */
  statementTimeoutMs?: number;
  acquireTimeoutMs?: number;
}

export function openStore(url: string, opts: OpenOptions = {}): Store {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return new PostgresStore(url, opts.poolSize ?? 16, { statement_ms: opts.statementTimeoutMs ?? 0, acquire_ms: opts.acquireTimeoutMs ?? 0 });
  }
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) throw new Error('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/tollgate.db');
    return new SqliteStore(file, opts.groupCommitMax ?? 256, opts.threads ?? false);
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://');
}

/** The connection migrations run on (the writer on SQLite). */
export function migrationDb(store: Store): Kysely<DB> {
  return store instanceof SqliteStore ? store.writerDb : store.db;
}
