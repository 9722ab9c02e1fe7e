import type { Kysely, Migration } from 'kysely';

export const paymentMethodsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('account_payment_methods')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('account_payment_methods_pk', ['account_id', 'payment_method'])
      .execute();
    // The approval ranking reads the latest payments of one method (card brand or APM) of
    // one account: a bounded range of this index per method. Its columns never change after
    // the insert, so status updates keep PostgreSQL's HOT updates.
    await db.schema.createIndex('payments_method_recent').on('payments').columns(['account_id', 'card_brand', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('payments_method_recent').execute();
    await db.schema.dropTable('account_payment_methods').execute();
  },
};
