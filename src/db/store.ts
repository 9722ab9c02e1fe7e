// One query layer (Kysely) over SQLite and PostgreSQL (style §8). Domain code writes
// through `store.transaction(fn)` and reads through `store.db`.
//
// SQLite: one writer connection and one reader connection (WAL lets readers run beside
// the writer). Transactions are *group committed*: those that arrive while a commit is
// in progress are run back to back, each inside its own SAVEPOINT, and committed together,
// so one fsync acknowledges many payments (field-facts: durability). A failing unit rolls
// back to its savepoint and fails alone. Transaction functions must only touch the
// database through `tx` and must not wait on anything else (no network calls).
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
import pg from 'pg';
import { storageFault } from './faults.js';
import { guardFailed, planAsOneQuery } from './pg-plan.js';
import { newPlan, type Plan, recordingTx } from './plan.js';
import type { DB } from './schema.js';
import type { ReadBatch, ReadBatchReply, ReadRequest, WireError, WriterBatch, WriterReply } from './sqlite-thread.js';

export type Engine = 'sqlite' | 'postgres';
export type Tx = Kysely<DB>;

export interface Store {
  readonly engine: Engine;
  /** Reads of committed data. On SQLite this is a separate read connection. */
  readonly db: Kysely<DB>;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * A unit that only writes (src/db/plan.ts): `fn`'s statements are recorded, then run and
   * committed with others (SQLite: on the writer thread). Resolves with `fn`'s value once
   * durable; fails with a guard's error or a statement's, the unit rolled back. PostgreSQL
   * runs it as a transaction.
   */
  writePlan<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
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

// int8 (bigint) columns hold minor units and millisecond times, all far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

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

/** A queued unit: a transaction function, or a recorded write plan (with the value its function returned). */
type Pending = { resolve: (v: unknown) => void; reject: (e: unknown) => void } & (
  | { fn: (tx: Tx) => Promise<unknown>; plan?: undefined }
  | { plan: Plan; value: unknown; fn?: undefined }
);

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
  private readonly controlStatements = new Map<string, Database.Statement>();
  /** The writer with its statement cache (write plans run on it when there is no writer thread). */
  private readonly writerStatements: Database.Database;
  /** The writer thread (write plans), or null: plans then run on this thread's writer. */
  private worker: Worker | null = null;
  private readonly replies = new Map<number, { resolve: (r: WriterReply) => void; reject: (e: Error) => void }>();
  private nextBatch = 1;

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
    this.writerStatements = cachingDatabase(this.rawWriter);
    this.writer = new Kysely<DB>({ dialect: new SqliteDialect({ database: this.writerStatements }) });
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
      // Plans run on this thread's writer from now on; those in flight fail (not durable).
      if (this.worker !== worker) return;
      this.worker = null;
      for (const w of this.replies.values()) w.reject(e);
      this.replies.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite writer thread exited (code ${code})`)));
    this.worker = worker;
  }

  /** Whether write plans run on the writer thread (false: on this thread). */
  get writerThread(): boolean {
    return this.worker !== null;
  }

  /** Used by migrations, which run before anything else. */
  get writerDb(): Kysely<DB> {
    return this.writer;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  async writePlan<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const plan = newPlan();
    const value = await fn(recordingTx(plan, this.db));
    if (plan.statements.length === 0) return value;
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ plan, value, resolve: resolve as (v: unknown) => void, reject });
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
        // Write plans go to the writer thread; transaction functions (which read their own
        // writes) run here. The two writers take turns, so neither waits on SQLite's lock.
        const worker = this.worker;
        const plans = worker ? batch.filter((p) => p.plan) : [];
        const here = worker ? batch.filter((p) => !p.plan) : batch;
        if (here.length > 0) await this.runBatch(here);
        if (worker && plans.length > 0) await this.runPlans(worker, plans);
      }
    } finally {
      this.running = false;
    }
  }

  /** Transaction control runs as prepared statements on the writer, bypassing the query builder. */
  private control(text: 'BEGIN IMMEDIATE' | 'COMMIT' | 'ROLLBACK' | 'SAVEPOINT unit' | 'RELEASE unit' | 'ROLLBACK TO unit'): void {
    let stmt = this.controlStatements.get(text);
    if (!stmt) {
      stmt = this.rawWriter.prepare(text);
      this.controlStatements.set(text, stmt);
    }
    stmt.run();
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.writer.connection().execute(async (conn) => {
        this.control('BEGIN IMMEDIATE');
        try {
          for (const item of batch) {
            this.control('SAVEPOINT unit');
            try {
              const value = item.fn ? await item.fn(conn) : this.runPlanHere(item.plan, item.value);
              this.control('RELEASE unit');
              outcomes.push({ ok: true, value });
            } catch (error) {
              this.control('ROLLBACK TO unit');
              this.control('RELEASE unit');
              outcomes.push({ ok: false, error });
            }
          }
          // synchronous=FULL: this returns after the WAL is fsynced, so every answer below is durable.
          this.control('COMMIT');
        } catch (error) {
          if (this.rawWriter.inTransaction) this.control('ROLLBACK');
          throw error;
        }
      });
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

  /** A write plan on this thread's writer, inside the batch's savepoint (no writer thread). */
  private runPlanHere(plan: Plan, value: unknown): unknown {
    plan.statements.forEach((st, i) => {
      const stmt = this.writerStatements.prepare(st.sql);
      if (stmt.reader) stmt.all(st.parameters);
      else if (stmt.run(st.parameters).changes !== 1 && st.guard) throw (plan.onGuard.get(i) as () => Error)();
    });
    return value;
  }

  /** One group commit of write plans on the writer thread; each settles once the batch is durable. */
  private async runPlans(worker: Worker, items: Pending[]): Promise<void> {
    const id = this.nextBatch++;
    const units = items.map((item) => (item.plan as Plan).statements.map((st) => [st.sql, st.parameters, st.guard] as [string, unknown[], boolean]));
    let reply: WriterReply;
    try {
      reply = await new Promise<WriterReply>((resolve, reject) => {
        this.replies.set(id, { resolve, reject });
        // Referenced only while a batch is out: an idle writer thread keeps no process alive.
        worker.ref();
        worker.postMessage({ id, units } satisfies WriterBatch);
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
      const plan = item.plan as Plan;
      if (!o) item.reject(new Error('write plan outcome missing'));
      else if (o.ok) item.resolve('value' in item ? item.value : undefined);
      else if (o.guard) item.reject((plan.onGuard.get(o.statement) as () => Error)());
      else item.reject(o.error ? sqliteError(o.error) : new Error('write plan failed'));
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
    this.pool = new pg.Pool({
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
   * The unit's statements are recorded, then sent as one message that PostgreSQL runs as one
   * transaction (src/db/pg-plan.ts); a plan whose values cannot be literals runs statement
   * by statement in a transaction. Either way a guard that changes no row fails the unit.
   */
  async writePlan<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const plan = newPlan();
    const value = await fn(recordingTx(plan, this.db, 'postgres'));
    if (plan.statements.length === 0) return value;
    const text = planAsOneQuery(plan);
    const client = await this.pool.connect();
    let dropped = false;
    try {
      if (text !== null) await client.query(text);
      else await this.runPlanStatements(client, plan);
    } catch (error) {
      // A client whose connection failed or timed out is dropped, not pooled again.
      dropped = storageFault(error) === 'unavailable';
      const i = text !== null ? guardFailed(error) : null;
      throw i !== null ? (plan.onGuard.get(i) as () => Error)() : error;
    } finally {
      client.release(dropped);
    }
    return value;
  }

  private async runPlanStatements(client: pg.PoolClient, plan: Plan): Promise<void> {
    await client.query('BEGIN');
    try {
      for (let i = 0; i < plan.statements.length; i++) {
        const st = plan.statements[i] as Plan['statements'][number];
        const r = await client.query(st.sql, st.parameters);
        if (st.guard && r.rowCount !== 1) throw (plan.onGuard.get(i) as () => Error)();
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
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
  /** SQLite: reads and write plans on their own threads (the server); off for tools and migrations. */
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
