// Compile once, run many (issue 6: "prepared statements and a lean hot path"). Kysely
// builds and compiles a query's tree on every call; on the authorise path that was about a
// quarter of the CPU (the risk engine's union read alone took 112 µs to build). A hot
// query of fixed shape is therefore built once per engine with marked placeholder values;
// later calls only put their own values into the compiled parameter list. The SQL still
// comes from Kysely, so both engines keep one query layer; the statement itself is also
// prepared once by the driver (SQLite's statement cache, PostgreSQL's text is stable).
import { type Compilable, CompiledQuery, type Insertable, type Kysely, type QueryResult } from 'kysely';
import type { DB } from './schema.js';

// A NUL can never be a real value: bodies holding one are refused when parsed.
const MARK = '\u0000tollgate-param:';
const MAX_SHAPES = 2_000;

type Slot = { name: string } | { constant: unknown };
const shapes = new Map<string, { sql: string; slots: Slot[] }>();

/** A named placeholder for `build`; typed loosely so it fits any column. */
export function param(name: string): any {
  return `${MARK}${name}`;
}

function engineOf(db: Kysely<any>): string {
  return db.getExecutor().adapter.constructor.name;
}

/**
 * Runs the query `build` makes, compiled once per engine and `key`. `build` must use
 * `param(name)` for every value that changes between calls; `values` gives them.
 */
export async function runPrepared<R = unknown>(
  db: Kysely<any>,
  key: string,
  build: () => Compilable<unknown>,
  values: Record<string, unknown>,
): Promise<QueryResult<R>> {
  const k = `${engineOf(db)}|${key}`;
  let shape = shapes.get(k);
  if (!shape) {
    const compiled = build().compile();
    const slots: Slot[] = compiled.parameters.map((p) => (typeof p === 'string' && p.startsWith(MARK) ? { name: p.slice(MARK.length) } : { constant: p }));
    shape = { sql: compiled.sql, slots };
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(k, shape);
  }
  const parameters = shape.slots.map((s) => {
    if (!('name' in s)) return s.constant;
    const v = values[s.name];
    if (v === undefined) throw new Error(`prepared query ${key}: no value for ${s.name}`);
    return v;
  });
  return db.executeQuery<R>(CompiledQuery.raw(shape.sql, parameters));
}

/**
 * Inserts rows (all with the same columns) through a statement compiled once per table,
 * column list and row count. `ignoreConflictOn` adds ON CONFLICT (…) DO NOTHING; the
 * result's `numAffectedRows` then tells whether the row went in.
 */
export function insertRows<T extends keyof DB & string>(
  db: Kysely<DB>,
  table: T,
  rows: ReadonlyArray<Insertable<DB[T]>>,
  opts: { ignoreConflictOn?: readonly string[] } = {},
): Promise<QueryResult<unknown>> {
  const first = rows[0] as Record<string, unknown> | undefined;
  if (!first) throw new Error(`insertRows ${table}: no rows`);
  const columns = Object.keys(first).filter((c) => first[c] !== undefined);
  const values: Record<string, unknown> = {};
  rows.forEach((row, i) => {
    const r = row as Record<string, unknown>;
    for (const c of columns) {
      if (r[c] === undefined) throw new Error(`insertRows ${table}: row ${i} has no ${c}`);
      values[`${c}#${i}`] = r[c];
    }
  });
  const key = `insert|${table}|${columns.join(',')}|${rows.length}|${opts.ignoreConflictOn?.join(',') ?? ''}`;
  return runPrepared(
    db,
    key,
    () => {
      const any = db as Kysely<any>;
      const q = any.insertInto(table).values(rows.map((_, i) => Object.fromEntries(columns.map((c) => [c, param(`${c}#${i}`)]))));
      const conflict = opts.ignoreConflictOn;
      return conflict ? q.onConflict((oc) => oc.columns(conflict as string[]).doNothing()) : q;
    },
    values,
  );
}
