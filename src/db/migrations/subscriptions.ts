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
    // docs/contract.md §16: contract_name is unique per account among the subscriptions that still charge.
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

/**
 * Deductions (issue 11 item 4): where the charging stands. `charge_seq` numbers the orders
 * (`<first order_no>-R<charge_seq>`, every attempt a new order), `charged_count` counts the
 * paid deductions, `retry_count` the failed attempts of the deduction now due (dunning).
 */
export const subscriptionDeductionsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('subscriptions')
      .addColumn('charge_seq', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('subscriptions')
      .addColumn('charged_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('subscriptions')
      .addColumn('retry_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // The CLI lists an account's subscriptions newest first.
    await db.schema.createIndex('subscriptions_account').on('subscriptions').columns(['account_id', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('subscriptions_account').execute();
    for (const c of ['charge_seq', 'charged_count', 'retry_count']) await db.schema.alterTable('subscriptions').dropColumn(c).execute();
  },
};
