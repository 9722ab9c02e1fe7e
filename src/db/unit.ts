// A unit of writes (issue 30 item 4): the statements of one change, as a plain value, built
// before anything runs and run all or nothing. Where a transaction (`Tx`) is a connection
// that answers each statement as it goes, a unit is a list of operations that nobody
// answers until it is executed whole: its builders receive no results, so none can be
// faked, and what the change needs to know is read before the unit is built (facts first).
//
// Each operation holds the SQL and parameters Kysely compiles for the store's engine
// (built on a connection-less Kysely, `unit.q`, or a prepared shape, src/db/prepared.ts),
// and, for a compare-and-set or an insert that must go in, the number of rows it must
// change and the error the unit fails with otherwise. Three executors run a unit with the
// same checks: SQLite's writer thread in its group commit (src/db/sqlite-thread.ts), one
// PostgreSQL round trip (src/db/pg-unit.ts), and `applyUnit` inside a real transaction.
import {
  type Compilable,
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Insertable,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { type CompiledStatement, compileInsertRows, compilePrepared, type StatementKind, statementKind } from './prepared.js';
import type { DB } from './schema.js';

export type Engine = 'sqlite' | 'postgres';

/**
 * What a unit's operation may carry: the values both drivers bind the same way and the
 * schema's columns (text, integer, bigint) take. No boolean (better-sqlite3 refuses it), no
 * bytes (pg sends them binary, typed by the column: a literal cannot say the same), no
 * Date, object or array (pg would turn them into text by rules of its own).
 */
export type UnitValue = string | number | bigint | null;

export type OpKind = Exclude<StatementKind, 'read'>;

/** The rows an operation must change, and the error the unit fails with where it changes another number. */
export interface Expected {
  rows: number;
  error: () => Error;
}

export interface UnitOp {
  readonly kind: OpKind;
  readonly sql: string;
  readonly parameters: readonly UnitValue[];
  /** Unset: any row count will do (a plain insert fails by itself on a conflict). */
  readonly expected?: Expected;
}

class NoConnection implements Driver {
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    throw new Error('a write unit’s builder only compiles statements: add them to the unit, which runs them whole');
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

function builderFor(engine: Engine): Kysely<DB> {
  const sqlite = engine === 'sqlite';
  const dialect: Dialect = {
    createAdapter: () => (sqlite ? new SqliteAdapter() : new PostgresAdapter()),
    createDriver: () => new NoConnection(),
    createIntrospector: (db) => (sqlite ? new SqliteIntrospector(db) : new PostgresIntrospector(db)),
    createQueryCompiler: () => (sqlite ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
  };
  return new Kysely<DB>({ dialect });
}

/** One connection-less Kysely per engine: its queries compile to exactly what the store's own Kysely sends. */
const BUILDERS: Readonly<Record<Engine, Kysely<DB>>> = { sqlite: builderFor('sqlite'), postgres: builderFor('postgres') };

/** The engine a Kysely instance (a transaction, the store's reader) speaks. */
export function engineOf(db: Kysely<DB>): Engine {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

function checkValue(v: unknown, sql: string): UnitValue {
  if (v === null || typeof v === 'string' || typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  throw new TypeError(`a write unit cannot carry ${typeof v === 'number' ? String(v) : typeof v} (in ${sql.slice(0, 60)})`);
}

/**
 * The writes of one change on one engine. A different type from a transaction: a `Tx`
 * cannot be passed where a unit is expected, nor a unit where a `Tx` is.
 */
export class WriteUnit {
  readonly #ops: UnitOp[] = [];

  constructor(readonly engine: Engine) {}

  /** The operations in the order they run. */
  get ops(): readonly UnitOp[] {
    return this.#ops;
  }

  /** A connection-less query builder of the unit's engine: compile with it, never run. */
  get q(): Kysely<DB> {
    return BUILDERS[this.engine];
  }

  /** Adds a write (a query, or a statement compiled already); `kind` must be what it does. */
  add(kind: OpKind, query: Compilable<unknown> | CompiledStatement, expected?: Expected): this {
    const st = 'compile' in query ? compile(query) : query;
    if (st.kind !== kind) throw new Error(`a write unit's ${kind} is a ${st.kind} statement`);
    if (st.returning) throw new Error('a write unit cannot use RETURNING: nobody reads its results');
    const parameters = st.parameters.map((v) => checkValue(v, st.sql));
    this.#ops.push(expected ? { kind, sql: st.sql, parameters, expected } : { kind, sql: st.sql, parameters });
    return this;
  }

  /** A plain insert, or an INSERT … ON CONFLICT DO NOTHING that must change `expected.rows`. */
  insert(query: Compilable<unknown>, expected?: Expected): this {
    return this.add('insert', query, expected);
  }

  /** An INSERT … ON CONFLICT DO UPDATE. */
  upsert(query: Compilable<unknown>): this {
    return this.add('upsert', query);
  }

  /** A compare-and-set: the update must change exactly `rows` rows, or the unit fails with `error()`. */
  compareAndSet(query: Compilable<unknown>, error: () => Error, rows = 1): this {
    return this.add('update', query, { rows, error });
  }

  delete(query: Compilable<unknown>, expected?: Expected): this {
    return this.add('delete', query, expected);
  }

  /** Rows inserted through a prepared shape (src/db/prepared.ts), optionally ON CONFLICT (…) DO NOTHING. */
  insertRows<T extends keyof DB & string>(
    table: T,
    rows: ReadonlyArray<Insertable<DB[T]>>,
    opts: { ignoreConflictOn?: readonly string[]; expected?: Expected } = {},
  ): this {
    return this.add('insert', compileInsertRows(this.q, table, rows, opts), opts.expected);
  }

  /** A write through a prepared shape compiled once per engine and `key` (see compilePrepared). */
  prepared(kind: OpKind, key: string, build: (q: Kysely<DB>) => Compilable<unknown>, values: Record<string, unknown>, expected?: Expected): this {
    return this.add(
      kind,
      compilePrepared(this.q, key, () => build(this.q), values),
      expected,
    );
  }
}

function compile(query: Compilable<unknown>): CompiledStatement {
  const c = query.compile();
  return { sql: c.sql, parameters: [...c.parameters], ...statementKind(c.query) };
}

/** Statements the writer thread knows by number (WireOp in sqlite-thread.ts); past this many, new ones go as text. */
const MAX_NAMED_STATEMENTS = 5_000;

/**
 * The unit's ops as the SQLite writer thread receives them: a statement by its number once
 * `refs` has sent its text, the parameters, the expected row count or -1 for any.
 */
export function wireOps(
  unit: WriteUnit,
  refs: Map<string, number>,
): Array<[ref: number, parameters: readonly UnitValue[], expected_rows: number, text?: string]> {
  return unit.ops.map((op) => {
    const expected = op.expected ? op.expected.rows : -1;
    const ref = refs.get(op.sql);
    if (ref !== undefined) return [ref, op.parameters, expected];
    if (refs.size >= MAX_NAMED_STATEMENTS) return [0, op.parameters, expected, op.sql];
    const named = refs.size + 1;
    refs.set(op.sql, named);
    return [named, op.parameters, expected, op.sql];
  });
}

/**
 * Runs `unit` inside the transaction `tx`, statement by statement, with the same row-count
 * checks as the other executors: an operation that changes another number of rows than it
 * must throws its error (the caller's transaction, or savepoint, then rolls back).
 */
export async function applyUnit(tx: Kysely<DB>, unit: WriteUnit): Promise<void> {
  if (engineOf(tx) !== unit.engine) throw new Error(`a ${unit.engine} write unit cannot run on ${engineOf(tx)}`);
  for (const op of unit.ops) {
    const r = await tx.executeQuery(CompiledQuery.raw(op.sql, op.parameters as unknown[]));
    if (op.expected && Number(r.numAffectedRows ?? 0) !== op.expected.rows) throw op.expected.error();
  }
}
