// Write plans (issue 15): a unit of work that only writes, run by recording its statements
// instead of executing them, so they can be executed elsewhere as plain values (SQLite: on
// the writer thread, src/db/sqlite-thread.ts, in a group commit; PostgreSQL: as one
// round trip, src/db/pg-plan.ts).
//
// The unit is ordinary domain code given a `Tx`; on a plan that `Tx` is a Kysely instance
// whose connection records every INSERT, UPDATE and DELETE (SQL text and parameters, as the
// real one would have sent them) and answers it as "one row changed". A read inside the unit
// runs on the reader (committed data): it may read what the unit does not write itself
// (pricing, settings), never its own writes. A statement whose outcome decides the unit
// (an INSERT … ON CONFLICT DO NOTHING that must insert, a compare-and-set UPDATE) is marked
// with `guard(tx, error)`: where it changes no row, the whole unit is rolled back and the
// plan fails with that error, as the unit would have thrown it.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { DB } from './schema.js';

/** One recorded statement: what the writer runs. `guard`: the unit fails unless it changes exactly one row. */
export interface PlannedStatement {
  sql: string;
  parameters: unknown[];
  guard: boolean;
}

/** A recorded unit: its statements, and for each guarded one the error the unit fails with. */
export interface Plan {
  statements: PlannedStatement[];
  onGuard: Map<number, () => Error>;
}

const READ = /^\s*(select|with|pragma|explain)\b/i;
const recorders = new WeakMap<Kysely<DB>, Plan>();

class RecordingConnection implements DatabaseConnection {
  constructor(
    private readonly plan: Plan,
    private readonly reader: Kysely<DB>,
  ) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if (READ.test(compiled.sql)) return this.reader.executeQuery<R>(compiled);
    if (/\breturning\b/i.test(compiled.sql)) {
      throw new Error('a write plan cannot use RETURNING: its statements run later, elsewhere');
    }
    this.plan.statements.push({ sql: compiled.sql, parameters: [...compiled.parameters], guard: false });
    return { rows: [], numAffectedRows: 1n };
  }

  // biome-ignore lint/correctness/useYield: never streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('a write plan cannot stream');
  }
}

class RecordingDriver implements Driver {
  constructor(private readonly connection: RecordingConnection) {}
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('a write plan is one transaction already');
  }
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/** A Kysely over `engine`'s dialect whose statements are recorded into `plan`. */
export function recordingTx(plan: Plan, reader: Kysely<DB>, engine: 'sqlite' | 'postgres' = 'sqlite'): Kysely<DB> {
  const connection = new RecordingConnection(plan, reader);
  const sqlite = engine === 'sqlite';
  const dialect: Dialect = {
    createAdapter: () => (sqlite ? new SqliteAdapter() : new PostgresAdapter()),
    createDriver: () => new RecordingDriver(connection),
    createIntrospector: (db) => (sqlite ? new SqliteIntrospector(db) : new PostgresIntrospector(db)),
    createQueryCompiler: () => (sqlite ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
  };
  const tx = new Kysely<DB>({ dialect });
  recorders.set(tx, plan);
  return tx;
}

/** Records a write on `db` if it is a plan's recording transaction (src/db/prepared.ts skips Kysely's executor with it). */
export function recordWrite(db: unknown, sql: string, parameters: unknown[]): QueryResult<never> | null {
  const plan = recorders.get(db as Kysely<DB>);
  if (!plan) return null;
  if (/\breturning\b/i.test(sql)) throw new Error('a write plan cannot use RETURNING: its statements run later, elsewhere');
  plan.statements.push({ sql, parameters, guard: false });
  return { rows: [], numAffectedRows: 1n };
}

export function newPlan(): Plan {
  return { statements: [], onGuard: new Map() };
}

/**
 * Marks the statement just run on `tx` as deciding the unit: on a plan, the unit is rolled
 * back and fails with `error()` where it changed no row. On a real transaction it does
 * nothing: the caller checks the real result as it always has, and must throw the same error.
 */
export function guard(tx: Kysely<DB>, error: () => Error): void {
  const plan = recorders.get(tx);
  if (!plan) return;
  const i = plan.statements.length - 1;
  const last = plan.statements[i];
  if (!last) throw new Error('guard: no statement to guard');
  last.guard = true;
  plan.onGuard.set(i, error);
}
