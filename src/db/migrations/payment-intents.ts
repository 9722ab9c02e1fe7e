import type { Kysely, Migration } from 'kysely';

/** PaymentIntents of the generic interface and the payments their confirms made (issue 33). */
export const paymentIntentsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('payment_intents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('capture_method', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('payment_method_id', 'text', (c) => c.notNull())
      .addColumn('setup_future_usage', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('receipt_email', 'text', (c) => c.notNull())
      .addColumn('return_url', 'text', (c) => c.notNull())
      .addColumn('statement_descriptor', 'text', (c) => c.notNull())
      .addColumn('three_d_secure', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('client_secret', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint', (c) => c.notNull())
      .addColumn('canceled_at', 'bigint')
      .addColumn('cancellation_reason', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // The list, newest first, per account and mode; a customer's.
    await db.schema.createIndex('payment_intents_list').on('payment_intents').columns(['account_id', 'livemode', 'created_at', 'id']).execute();
    await db.schema.createIndex('payment_intents_customer').on('payment_intents').columns(['account_id', 'customer_id', 'created_at']).execute();
    await db.schema
      .createTable('payment_intent_charges')
      .addColumn('transaction_id', 'text', (c) => c.primaryKey())
      .addColumn('intent_id', 'text', (c) => c.notNull().references('payment_intents.id'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('payment_intent_charges_intent').on('payment_intent_charges').columns(['intent_id', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('payment_intent_charges').execute();
    await db.schema.dropTable('payment_intents').execute();
  },
};
