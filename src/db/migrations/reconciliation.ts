import type { Kysely, Migration } from 'kysely';

/**
 * Reconciliation runs and their mismatches (issue 35 item 3; decisions.md §23). The runs of an
 * account and connector are read newest first (`reconcile list`, the metric's last run); a
 * run's items in the order found.
 */
export const reconciliationMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('reconciliation_runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('file_sha256', 'text', (c) => c.notNull())
      .addColumn('file_bytes', 'bigint', (c) => c.notNull())
      .addColumn('lines', 'bigint', (c) => c.notNull())
      .addColumn('from_ms', 'bigint')
      .addColumn('to_ms', 'bigint')
      .addColumn('matched', 'bigint', (c) => c.notNull())
      .addColumn('missing_here', 'bigint', (c) => c.notNull())
      .addColumn('missing_at_processor', 'bigint', (c) => c.notNull())
      .addColumn('amount_differs', 'bigint', (c) => c.notNull())
      .addColumn('fee_differs', 'bigint', (c) => c.notNull())
      .addColumn('not_applicable', 'bigint', (c) => c.notNull())
      .addColumn('mismatches', 'bigint', (c) => c.notNull())
      .addColumn('items_kept', 'bigint', (c) => c.notNull())
      .addColumn('items_dropped', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('finished_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('reconciliation_runs_account').on('reconciliation_runs').columns(['account_id', 'connector', 'started_at']).execute();
    await db.schema
      .createTable('reconciliation_items')
      .addColumn('run_id', 'text', (c) => c.notNull().references('reconciliation_runs.run_id'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('movement', 'text', (c) => c.notNull())
      .addColumn('line_no', 'bigint')
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('refund_id', 'text', (c) => c.notNull())
      .addColumn('ours_amount_minor', 'bigint')
      .addColumn('theirs_amount_minor', 'bigint')
      .addColumn('ours_fee_minor', 'bigint')
      .addColumn('theirs_fee_minor', 'bigint')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('reconciliation_items_pk', ['run_id', 'seq'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('reconciliation_items').execute();
    await db.schema.dropTable('reconciliation_runs').execute();
  },
};
