import type { Kysely, Migration } from 'kysely';

/** PaymentMethods of the generic interface (issue 33). */
export const paymentMethodObjectsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('payment_methods')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull().references('cards.card_id'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('detached', 'integer', (c) => c.notNull())
      .addColumn('billing_details', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // A customer's methods, newest first.
    await db.schema.createIndex('payment_methods_customer').on('payment_methods').columns(['account_id', 'customer_id', 'created_at', 'id']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('payment_methods').execute();
  },
};
