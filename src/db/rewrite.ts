// Data migrations that rewrite stored rows (issue 29: bank details, card tokens and stored
// answers sealed or masked at rest). Rows are read in primary-key order in bounded batches
// and only those whose text changes are written back. On PostgreSQL the migrator already
// runs every migration in one transaction; on SQLite (no transactional DDL in Kysely's
// eyes) each batch is its own transaction, or a million autocommits would each pay an fsync.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Keyring } from '../crypto/keyring.js';

/** What a migration that touches stored data needs besides the database. */
export interface MigrationContext {
  keyring: Keyring;
  engine: 'sqlite' | 'postgres';
  /** Rows rewritten so far by this run (SQLite is vacuumed afterwards when any were). */
  rewritten: number;
}

const BATCH = 2_000;

export interface RewriteSpec {
  table: string;
  /** The primary key (text), the batch order. */
  key: string;
  /** The columns read (besides the key). */
  columns: string[];
  /** Extra SQL condition that picks candidate rows cheaply (a LIKE), or none. */
  where?: RawBuilder<unknown>;
  /** The columns to write, or null to leave the row as it is. */
  map: (row: Record<string, string | null>) => Record<string, string | null> | null;
}

/** Rewrites every row `map` changes; returns how many. */
export async function rewriteRows(db: Kysely<any>, ctx: MigrationContext, spec: RewriteSpec): Promise<number> {
  let after = '';
  let changed = 0;
  for (let round = 0; round < 100_000_000; round++) {
    const rows = (await db
      .selectFrom(spec.table)
      .select([`${spec.key} as __key`, ...spec.columns])
      .where(spec.key, '>', after)
      .$if(spec.where !== undefined, (q) => q.where(spec.where as never))
      .orderBy(spec.key)
      .limit(BATCH)
      .execute()) as Array<Record<string, string | null> & { __key: string }>;
    if (rows.length === 0) break;
    after = rows[rows.length - 1]?.__key as string;
    const updates: Array<{ k: string; set: Record<string, string | null> }> = [];
    for (const { __key, ...r } of rows) {
      const set = spec.map(r);
      if (set !== null) updates.push({ k: __key, set });
    }
    if (updates.length === 0) continue;
    const write = async (t: Kysely<any>) => {
      if (ctx.engine === 'postgres') return updateFromValues(t, spec, updates);
      // SQLite: one prepared statement run per row, in-process, no round trips.
      for (const u of updates) await t.updateTable(spec.table).set(u.set).where(spec.key, '=', u.k).execute();
    };
    if (db.isTransaction) await write(db);
    else await db.transaction().execute(write);
    changed += updates.length;
  }
  ctx.rewritten += changed;
  return changed;
}

/**
 * PostgreSQL: the batch as one `UPDATE … FROM (VALUES …)`, one round trip instead of one per
 * row (200,000 payouts took minutes row by row). Every row of a batch sets the same columns.
 */
async function updateFromValues(db: Kysely<any>, spec: RewriteSpec, updates: Array<{ k: string; set: Record<string, string | null> }>): Promise<void> {
  const columns = Object.keys(updates[0]?.set ?? {});
  if (columns.length === 0) return;
  const rows = updates.map((u) => sql`(${sql.join([u.k, ...columns.map((c) => u.set[c] ?? null)])})`);
  await sql`update ${sql.table(spec.table)} as t set ${sql.join(columns.map((c) => sql`${sql.ref(c)} = v.${sql.ref(c)}`))}
    from (values ${sql.join(rows)}) as v(${sql.join([sql.ref('__key'), ...columns.map((c) => sql.ref(c))])})
    where t.${sql.ref(spec.key)} = v.${sql.ref('__key')}`.execute(db);
}
