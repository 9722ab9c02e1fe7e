// SQLite's threads (issue 15), so B-tree work, the WAL fsync and checkpoints no longer stop
// the event loop that parses, checks and answers requests. `role` (workerData) says which:
//
// - `writer`: owns one write connection and runs group commits of write plans
//   (src/db/plan.ts) sent as plain values.
// - `reader`: owns one read-only connection (query_only) and answers reads of committed
//   data in the order they came (Store.db on the server). Reads asked for while it works
//   on a batch come as the next batch, one message answered by one (a postMessage costs
//   ~5–8 µs of CPU alone and ~20 µs under load, whatever it carries).
//
// One batch: BEGIN IMMEDIATE; per unit a SAVEPOINT, its statements in order (a guarded one
// must change exactly one row), RELEASE, or ROLLBACK TO on a failure, which fails that unit
// alone; then COMMIT, which returns after the WAL's fsync (synchronous=FULL). Only then are
// the outcomes posted back: nothing is acknowledged before it is durable.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

export interface WriterBatch {
  id: number;
  units: Array<Array<[sql: string, parameters: unknown[], guard: boolean]>>;
}

export interface WireError {
  message: string;
  code?: string;
}

export type UnitOutcome = { ok: true } | { ok: false; statement: number; guard: boolean; error?: WireError };

export type WriterReply = { id: number; outcomes: UnitOutcome[] } | { id: number; failed: WireError };

export interface ReadRequest {
  id: number;
  sql: string;
  parameters: readonly unknown[];
}

export type ReadReply = { id: number; rows: unknown[] } | { id: number; error: WireError };

/** Reads sent together (those asked for while the reader worked on the previous batch), answered as one message. */
export interface ReadBatch {
  reads: ReadRequest[];
}

export interface ReadBatchReply {
  replies: ReadReply[];
}

function wire(e: unknown): WireError {
  const err = e as { message?: unknown; code?: unknown };
  return { message: String(err?.message ?? e), ...(typeof err?.code === 'string' ? { code: err.code } : {}) };
}

if (parentPort) {
  const port = parentPort;
  const { file, role } = workerData as { file: string; role: 'writer' | 'reader' };
  const db = new Database(file);
  if (role === 'writer') {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
  } else db.pragma('query_only = ON');
  db.pragma('busy_timeout = 5000');
  const cache = new Map<string, Database.Statement>();
  const prepare = (text: string) => {
    let stmt = cache.get(text);
    if (!stmt) {
      stmt = db.prepare(text);
      if (cache.size >= 500) cache.clear();
      cache.set(text, stmt);
    }
    return stmt;
  };

  const run = (batch: WriterBatch): WriterReply => {
    const outcomes: UnitOutcome[] = [];
    try {
      prepare('BEGIN IMMEDIATE').run();
      try {
        for (const unit of batch.units) {
          prepare('SAVEPOINT unit').run();
          let failed: UnitOutcome | null = null;
          for (let i = 0; i < unit.length && !failed; i++) {
            const [text, parameters, guarded] = unit[i] as [string, unknown[], boolean];
            try {
              const stmt = prepare(text);
              if (stmt.reader) stmt.all(parameters);
              else {
                const info = stmt.run(parameters);
                if (guarded && info.changes !== 1) failed = { ok: false, statement: i, guard: true };
              }
            } catch (e) {
              failed = { ok: false, statement: i, guard: false, error: wire(e) };
            }
          }
          if (failed) prepare('ROLLBACK TO unit').run();
          prepare('RELEASE unit').run();
          outcomes.push(failed ?? { ok: true });
        }
        prepare('COMMIT').run();
      } catch (e) {
        if (db.inTransaction) prepare('ROLLBACK').run();
        throw e;
      }
    } catch (e) {
      // BEGIN, a savepoint or the COMMIT failed: nothing of the batch is durable.
      return { id: batch.id, failed: wire(e) };
    }
    return { id: batch.id, outcomes };
  };

  const read = (m: ReadRequest): ReadReply => {
    try {
      const stmt = prepare(m.sql);
      if (!stmt.reader) throw new Error('the reader thread only reads');
      return { id: m.id, rows: stmt.all(m.parameters as unknown[]) };
    } catch (e) {
      return { id: m.id, error: wire(e) };
    }
  };

  port.on('message', (m: WriterBatch | ReadBatch | { close: true }) => {
    if ('close' in m) {
      db.close();
      port.postMessage({ closed: true });
      return;
    }
    port.postMessage('units' in m ? run(m) : ({ replies: m.reads.map(read) } satisfies ReadBatchReply));
  });
}
