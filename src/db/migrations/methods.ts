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
    // one account: a bounded backward range of this index per method, covering (the table is
    // not read). status is indexed already (payments_expiry) and result_code changes only
    // with it, so this index costs PostgreSQL no HOT update it had.
    await db.schema.createIndex('payments_method_recent').on('payments').columns(['account_id', 'card_brand', 'created_at', 'status', 'result_code']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('payments_method_recent').execute();
    await db.schema.dropTable('account_payment_methods').execute();
  },
};
