// SQLite's threads (issue 15), so B-tree work, the WAL fsync and checkpoints no longer stop
// the event loop that parses, checks and answers requests. `role` (workerData) says which:
//
// - `writer`: owns one write connection and runs group commits (src/db/sqlite-group.ts) of
//   write units (src/db/unit.ts) sent as plain values: each unit in its own savepoint, an
//   operation that changes another number of rows than it must (or fails) rolls its unit
//   back alone, and the outcomes are posted back only once the batch's COMMIT is durable.
// - `reader`: owns one read-only connection (query_only) and answers reads of committed
//   data in the order they came (Store.db on the server). Reads asked for while it works
//   on a batch come as the next batch, one message answered by one (a postMessage costs
//   ~5–8 µs of CPU alone and ~20 µs under load, whatever it carries).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { controlOf, groupCommit } from './sqlite-group.js';
import type { UnitValue } from './unit.js';

/**
 * A unit's operations: the statement, its parameters, and the rows it must change (-1: any
 * number). A statement is sent as text once, with the number that names it from then on
 * (`[ref, …, text]`), then by that number alone: a postMessage copies what it carries, and a
 * payment's statements are kilobytes of SQL. Ref 0 is a statement sent as text every time.
 */
export type WireOp = [ref: number, parameters: readonly UnitValue[], expected_rows: number, text?: string];
export type WireUnit = WireOp[];

export interface WriterBatch {
  id: number;
  units: WireUnit[];
}

export interface WireError {
  message: string;
  code?: string;
}

/** A failed unit: the operation whose row count was not the expected one, or the database's error. */
export type UnitOutcome = { ok: true } | { ok: false; op: number; rows: number } | { ok: false; error: WireError };

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

class RowCount extends Error {
  constructor(
    readonly op: number,
    readonly rows: number,
  ) {
    super(`operation ${op} changed ${rows} rows`);
  }
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

  const control = controlOf(db);

  // The text of each statement named by its ref (WireOp): never evicted (the main thread stops
  // naming new ones past its bound); prepared through the same cache as any text, so a
  // statement that does not prepare fails its own unit, as it did when sent as text.
  const named = new Map<number, string>();
  const statementOf = ([ref, , , text]: WireOp): Database.Statement => {
    const sql = text ?? named.get(ref);
    if (sql === undefined) throw new Error(`statement ${ref} was never sent`);
    return prepare(sql);
  };

  /** A unit's operations in order; throws the first failure. */
  const runUnit = (unit: WireUnit): void => {
    unit.forEach((wireOp, op) => {
      const [, parameters, expected] = wireOp;
      const stmt = statementOf(wireOp);
      if (stmt.reader) throw new Error('a write unit only writes');
      const rows = stmt.run(parameters as unknown[]).changes;
      if (expected >= 0 && rows !== expected) throw new RowCount(op, rows);
    });
  };

  const run = async (batch: WriterBatch): Promise<WriterReply> => {
    try {
      // Names first, whatever runs: a unit that fails before its statement still named it for the next batches.
      for (const unit of batch.units) for (const [ref, , , text] of unit) if (ref > 0 && text !== undefined) named.set(ref, text);
      const settled = await groupCommit(db, control, batch.units.length, (i) => runUnit(batch.units[i] as WireUnit));
      const outcomes = settled.map((s): UnitOutcome => {
        if (s.ok) return { ok: true };
        return s.error instanceof RowCount ? { ok: false, op: s.error.op, rows: s.error.rows } : { ok: false, error: wire(s.error) };
      });
      return { id: batch.id, outcomes };
    } catch (e) {
      // BEGIN, a savepoint or the COMMIT failed: nothing of the batch is durable.
      return { id: batch.id, failed: wire(e) };
    }
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

  port.on('message', (m: WriterBatch | { id: number; json: string } | ReadBatch | { close: true }) => {
    if ('close' in m) {
      db.close();
      port.postMessage({ closed: true });
      return;
    }
    if ('json' in m) void run({ id: m.id, units: JSON.parse(m.json) as WireUnit[] }).then((reply) => port.postMessage(reply));
    else if ('units' in m) void run(m).then((reply) => port.postMessage(reply));
    else port.postMessage({ replies: m.reads.map(read) } satisfies ReadBatchReply);
  });
}
