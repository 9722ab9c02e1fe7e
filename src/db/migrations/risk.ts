import type { Kysely, Migration } from 'kysely';

export const riskMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('risk_blocklist')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('risk_blocklist_pk', ['account_id', 'type', 'value'])
      .execute();
    await db.schema
      .createTable('risk_settings')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.account_id'))
      .addColumn('review_threshold', 'integer', (c) => c.notNull())
      .addColumn('reject_threshold', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('risk_signals')
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Velocity reads one range of this index per signal, without touching the table. It is
    // the table's only index: each payment writes four rows on the hot path.
    await db.schema
      .createIndex('risk_signals_lookup')
      .on('risk_signals')
      .columns(['account_id', 'kind', 'value', 'created_at', 'currency', 'amount_minor'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['risk_signals', 'risk_settings', 'risk_blocklist']) await db.schema.dropTable(t).execute();
  },
};
