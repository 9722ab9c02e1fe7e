import type { Kysely, Migration } from 'kysely';

export const checkoutMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('checkout_sessions')
      .addColumn('session_id', 'text', (c) => c.primaryKey())
      .addColumn('transaction_id', 'text', (c) => c.notNull().unique().references('payments.transaction_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('cancel_url', 'text', (c) => c.notNull())
      .addColumn('source_ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('checkout_sessions').execute();
  },
};
