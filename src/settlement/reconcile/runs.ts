// Kept runs (issue 35 item 3): a run and its mismatches are written in one transaction once the
// file was read to its end, so a run is there whole or not at all; read back by `reconcile
// show` and `reconcile list`, and by the metric (the last run of each account and connector).
import { sql } from 'kysely';
import type { Store, Tx } from '../../db/store.js';
import type { ReconciliationItemRow, ReconciliationRunRow } from '../../db/tables/reconciliation.js';

/** Rows per insert statement (14 columns: far under both engines' parameter limits). */
const INSERT_ROWS = 500;

export async function saveRun(store: Store, run: ReconciliationRunRow, items: readonly ReconciliationItemRow[]): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.insertInto('reconciliation_runs').values(run).execute();
    for (let i = 0; i < items.length; i += INSERT_ROWS) {
      await tx
        .insertInto('reconciliation_items')
        .values(items.slice(i, i + INSERT_ROWS))
        .execute();
    }
  });
}

const NUMERIC_RUN: readonly (keyof ReconciliationRunRow)[] = [
  'file_bytes',
  'lines',
  'matched',
  'missing_here',
  'missing_at_processor',
  'amount_differs',
  'fee_differs',
  'not_applicable',
  'mismatches',
  'items_kept',
  'items_dropped',
  'started_at',
  'finished_at',
];

/** PostgreSQL answers bigint columns as strings: numbers again. */
function runOf(row: ReconciliationRunRow): ReconciliationRunRow {
  const r = { ...row } as Record<string, unknown>;
  for (const k of NUMERIC_RUN) r[k] = Number(row[k]);
  for (const k of ['from_ms', 'to_ms'] as const) r[k] = row[k] === null ? null : Number(row[k]);
  return r as unknown as ReconciliationRunRow;
}

function itemOf(row: ReconciliationItemRow): ReconciliationItemRow {
  const num = (v: number | null) => (v === null ? null : Number(v));
  return {
    ...row,
    seq: Number(row.seq),
    line_no: num(row.line_no),
    ours_amount_minor: num(row.ours_amount_minor),
    theirs_amount_minor: num(row.theirs_amount_minor),
    ours_fee_minor: num(row.ours_fee_minor),
    theirs_fee_minor: num(row.theirs_fee_minor),
  };
}

/** A kept run and its first `limit` mismatches, in the order found; null when there is no such run. */
export async function readRun(db: Tx, run_id: string, limit: number): Promise<{ run: ReconciliationRunRow; items: ReconciliationItemRow[] } | null> {
  const run = await db.selectFrom('reconciliation_runs').selectAll().where('run_id', '=', run_id).executeTakeFirst();
  if (!run) return null;
  const items = await db.selectFrom('reconciliation_items').selectAll().where('run_id', '=', run_id).orderBy('seq').limit(limit).execute();
  return { run: runOf(run), items: items.map(itemOf) };
}

/** An account's runs, newest first. */
export async function listRuns(db: Tx, account_id: string, limit: number): Promise<ReconciliationRunRow[]> {
  const rows = await db
    .selectFrom('reconciliation_runs')
    .selectAll()
    .where('account_id', '=', account_id)
    .orderBy('started_at', 'desc')
    .orderBy('run_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(runOf);
}

/** The mismatches of the last run of each account and connector (the gauge `tollgate_reconciliation_mismatches`). */
export async function lastRunMismatches(db: Tx): Promise<Array<{ account_id: string; connector: string; mismatches: number }>> {
  const rows = await db
    .selectFrom('reconciliation_runs as r')
    .select(['r.account_id', 'r.connector', 'r.mismatches'])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('reconciliation_runs as later')
            .select(sql`1`.as('one'))
            .whereRef('later.account_id', '=', 'r.account_id')
            .whereRef('later.connector', '=', 'r.connector')
            .where((eb) =>
              eb.or([
                eb('later.started_at', '>', eb.ref('r.started_at')),
                eb.and([eb('later.started_at', '=', eb.ref('r.started_at')), eb('later.run_id', '>', eb.ref('r.run_id'))]),
              ]),
            ),
        ),
      ),
    )
    .execute();
  return rows.map((r) => ({ account_id: r.account_id, connector: r.connector, mismatches: Number(r.mismatches) }));
}
