// Compile once, run many (issue 6: "prepared statements and a lean hot path"). Kysely
// builds and compiles a query's tree on every call; on the authorise path that was about a
// quarter of the CPU (the risk engine's union read alone took 112 µs to build). A hot
// query of fixed shape is therefore built once per engine with marked placeholder values;
// later calls only put their own values into the compiled parameter list. The SQL still
// comes from Kysely, so both engines keep one query layer; the statement itself is also
// prepared once by the driver (SQLite's statement cache, PostgreSQL's text is stable).
// The same shapes serve write units (src/db/unit.ts): `compilePrepared` and
// `compileInsertRows` give the statement without running it.
import {
  type Compilable,
  CompiledQuery,
  DeleteQueryNode,
  type Insertable,
  InsertQueryNode,
  type Kysely,
  type OperationNode,
  type QueryResult,
  UpdateQueryNode,
} from 'kysely';
import type { DB } from './schema.js';

// A NUL can never be a real value: bodies holding one are refused when parsed.
const MARK = '\u0000tollgate-param:';
const MAX_SHAPES = 2_000;

/** What a statement does, from its Kysely tree (a write unit accepts only writes without RETURNING). */
export type StatementKind = 'read' | 'insert' | 'upsert' | 'update' | 'delete';

/** A statement ready to run: Kysely's SQL text, its parameters, and what it does. */
export interface CompiledStatement {
  sql: string;
  parameters: unknown[];
  kind: StatementKind;
  /** It has a RETURNING clause. */
  returning: boolean;
}

/** What `node` (a compiled query's root) does; anything that is not a write counts as a read. */
export function statementKind(node: OperationNode): { kind: StatementKind; returning: boolean } {
  if (InsertQueryNode.is(node)) return { kind: node.onConflict?.updates ? 'upsert' : 'insert', returning: node.returning !== undefined };
  if (UpdateQueryNode.is(node)) return { kind: 'update', returning: node.returning !== undefined };
  if (DeleteQueryNode.is(node)) return { kind: 'delete', returning: node.returning !== undefined };
  return { kind: 'read', returning: false };
}

/** A parameter of a compiled shape: a named value, a row's column (insertRows), or a constant. */
type Slot = { name: string; row: number; column: string } | { constant: unknown };
interface Shape {
  sql: string;
  slots: Slot[];
  kind: StatementKind;
  returning: boolean;
}
const shapes = new Map<string, Shape>();

/** A named placeholder for `build`; typed loosely so it fits any column. */
export function param(name: string): any {
  return `${MARK}${name}`;
}

function engineOf(db: Kysely<any>): string {
  return db.getExecutor().adapter.constructor.name;
}

/** The compiled shape of `key` on `db`'s engine, built and compiled on first use. */
function shapeOf(db: Kysely<any>, key: string, build: () => Compilable<unknown>): Shape {
  const k = `${engineOf(db)}|${key}`;
  let shape = shapes.get(k);
  if (!shape) {
    const compiled = build().compile();
    const slots: Slot[] = compiled.parameters.map((p) => {
      if (!(typeof p === 'string' && p.startsWith(MARK))) return { constant: p };
      const name = p.slice(MARK.length);
      // insertRows names its values `column#row`.
      const hash = name.lastIndexOf('#');
      return { name, row: hash < 0 ? -1 : Number(name.slice(hash + 1)), column: hash < 0 ? name : name.slice(0, hash) };
    });
    shape = { sql: compiled.sql, slots, ...statementKind(compiled.query) };
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(k, shape);
  }
  return shape;
}

function run<R>(db: Kysely<any>, st: CompiledStatement): Promise<QueryResult<R>> {
  return db.executeQuery<R>(CompiledQuery.raw(st.sql, st.parameters));
}

/**
 * The query `build` makes, compiled once per engine and `key`, with `values` in place.
 * `build` must use `param(name)` for every value that changes between calls. `db` only
 * gives the engine (and builds the query): a connection-less builder will do.
 */
export function compilePrepared(db: Kysely<any>, key: string, build: () => Compilable<unknown>, values: Record<string, unknown>): CompiledStatement {
  const shape = shapeOf(db, key, build);
  const parameters = shape.slots.map((s) => {
    if (!('name' in s)) return s.constant;
    const v = values[s.name];
    if (v === undefined) throw new Error(`prepared query ${key}: no value for ${s.name}`);
    return v;
  });
  return { sql: shape.sql, parameters, kind: shape.kind, returning: shape.returning };
}

/** Runs the query `build` makes, compiled once per engine and `key` (see compilePrepared). */
export function runPrepared<R = unknown>(
  db: Kysely<any>,
  key: string,
  build: () => Compilable<unknown>,
  values: Record<string, unknown>,
): Promise<QueryResult<R>> {
  return run<R>(db, compilePrepared(db, key, build, values));
}

/**
 * The insert of `rows` (all with the same columns), compiled once per table, column list
 * and row count. `ignoreConflictOn` adds ON CONFLICT (…) DO NOTHING; the statement's row
 * count then tells whether the row went in.
 */
export function compileInsertRows<T extends keyof DB & string>(
  db: Kysely<DB>,
  table: T,
  rows: ReadonlyArray<Insertable<DB[T]>>,
  opts: { ignoreConflictOn?: readonly string[] } = {},
): CompiledStatement {
  const first = rows[0] as Record<string, unknown> | undefined;
  if (!first) throw new Error(`insertRows ${table}: no rows`);
  let columns = '';
  for (const c in first) if (first[c] !== undefined) columns += `${c},`;
  const key = `insert|${table}|${columns}|${rows.length}|${opts.ignoreConflictOn?.join(',') ?? ''}`;
  const shape = shapeOf(db, key, () => {
    const names = columns.slice(0, -1).split(',');
    const any = db as Kysely<any>;
    const q = any.insertInto(table).values(rows.map((_, i) => Object.fromEntries(names.map((c) => [c, param(`${c}#${i}`)]))));
    const conflict = opts.ignoreConflictOn;
    return conflict ? q.onConflict((oc) => oc.columns(conflict as string[]).doNothing()) : q;
  });
  // The values straight from the rows, in the compiled statement's order.
  const parameters = shape.slots.map((s) => {
    if (!('name' in s)) return s.constant;
    const v = (rows[s.row] as Record<string, unknown> | undefined)?.[s.column];
    if (v === undefined) throw new Error(`insertRows ${table}: row ${s.row} has no ${s.column}`);
    return v;
  });
  return { sql: shape.sql, parameters, kind: shape.kind, returning: shape.returning };
}

/** Inserts `rows` now (see compileInsertRows); the result's `numAffectedRows` tells how many went in. */
export function insertRows<T extends keyof DB & string>(
  db: Kysely<DB>,
  table: T,
  rows: ReadonlyArray<Insertable<DB[T]>>,
  opts: { ignoreConflictOn?: readonly string[] } = {},
): Promise<QueryResult<unknown>> {
  return run(db, compileInsertRows(db, table, rows, opts));
}
