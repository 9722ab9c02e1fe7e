import type { Kysely, Migration } from 'kysely';

/** Customers of the generic interface (issue 33). */
export const customersMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('customers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('phone', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('shipping', 'text', (c) => c.notNull())
      .addColumn('preferred_locales', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('deleted', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // Lists are the account's and mode's, newest first; the email filter is exact.
    await db.schema.createIndex('customers_account').on('customers').columns(['account_id', 'livemode', 'created_at', 'id']).execute();
    await db.schema.createIndex('customers_email').on('customers').columns(['account_id', 'email']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('customers').execute();
  },
};
