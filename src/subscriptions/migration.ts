import { type Kysely, type Migration, sql } from 'kysely';

export const subscriptionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('subscriptions')
      .addColumn('recurring_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('contract_name', 'text', (c) => c.notNull())
      .addColumn('contract', 'text', (c) => c.notNull())
      .addColumn('price_id', 'text', (c) => c.notNull())
      .addColumn('first_transaction_id', 'text', (c) => c.notNull().unique().references('payments.transaction_id'))
      .addColumn('first_order_no', 'text', (c) => c.notNull())
      .addColumn('first_payment_at', 'bigint', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('contract_amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('interval', 'text', (c) => c.notNull())
      .addColumn('interval_count', 'integer', (c) => c.notNull())
      .addColumn('billing_cycle', 'integer', (c) => c.notNull())
      .addColumn('promotion_cycle', 'integer', (c) => c.notNull())
      .addColumn('contract_start', 'text', (c) => c.notNull())
      .addColumn('contract_end', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('next_n', 'integer', (c) => c.notNull())
      .addColumn('next_at', 'bigint')
      .addColumn('notify_url', 'text', (c) => c.notNull())
      .addColumn('end_reason', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // decisions §16: contract_name is unique per account among the subscriptions that still charge.
    await db.schema
      .createIndex('subscriptions_live_contract_name')
      .on('subscriptions')
      .columns(['account_id', 'contract_name'])
      .unique()
      .where(sql.ref('status'), 'in', ['Active', 'PastDue'])
      .execute();
    await db.schema.createIndex('subscriptions_due').on('subscriptions').columns(['status', 'next_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('subscriptions').execute();
  },
};
