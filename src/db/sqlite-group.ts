// SQLite's group commit (field-facts: durability), the one savepoint loop: the writer
// thread runs write units with it (src/db/sqlite-thread.ts), the event loop's writer runs
// transaction functions with it (src/db/store.ts).
//
// One batch: BEGIN IMMEDIATE; per item a SAVEPOINT, the item, RELEASE, or ROLLBACK TO on a
// failure, which fails that item alone; then COMMIT, which returns after the WAL's fsync
// (synchronous=FULL). Only then may outcomes be acknowledged: nothing is before it is durable.
import type Database from 'better-sqlite3';

export type ControlStatement = 'BEGIN IMMEDIATE' | 'COMMIT' | 'ROLLBACK' | 'SAVEPOINT unit' | 'RELEASE unit' | 'ROLLBACK TO unit';

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Prepared once per connection: transaction control runs on every item. */
export function controlOf(db: Database.Database): (text: ControlStatement) => void {
  const statements = new Map<ControlStatement, Database.Statement>();
  return (text) => {
    let stmt = statements.get(text);
    if (!stmt) {
      stmt = db.prepare(text);
      statements.set(text, stmt);
    }
    stmt.run();
  };
}

/**
 * Runs `run(0)` … `run(count - 1)` in one transaction, each in its own savepoint, and
 * commits. Resolves with each item's outcome once the commit is durable; rejects (nothing
 * of the batch durable, the transaction rolled back) if BEGIN, a savepoint or COMMIT fails.
 * `run` must touch the database only through `db`'s connection and wait on nothing else.
 */
export async function groupCommit<T>(
  db: Database.Database,
  control: (text: ControlStatement) => void,
  count: number,
  run: (i: number) => T | Promise<T>,
): Promise<Array<Settled<T>>> {
  const outcomes: Array<Settled<T>> = [];
  control('BEGIN IMMEDIATE');
  try {
    for (let i = 0; i < count; i++) {
      control('SAVEPOINT unit');
      try {
        const value = await run(i);
        control('RELEASE unit');
        outcomes.push({ ok: true, value });
      } catch (error) {
        control('ROLLBACK TO unit');
        control('RELEASE unit');
        outcomes.push({ ok: false, error });
      }
    }
    // synchronous=FULL: this returns after the WAL is fsynced, so every outcome is durable.
    control('COMMIT');
  } catch (error) {
    if (db.inTransaction) control('ROLLBACK');
    throw error;
  }
  return outcomes;
}
