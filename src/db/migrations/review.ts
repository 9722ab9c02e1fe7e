import type { Kysely, Migration } from 'kysely';

export const reviewMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('risk_reviews')
      // One decision per payment: the transition table lets a hold end only once.
      .addColumn('transaction_id', 'text', (c) => c.primaryKey().references('payments.transaction_id'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('decision', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('risk_reviews').execute();
  },
};
