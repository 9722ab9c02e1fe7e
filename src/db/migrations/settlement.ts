import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Settlement batches (issue 35 item 1): the batches, the accounts' delays, and each posting's
 * batch (null until its day's batch closes). Postings already in the books join the batch of
 * their day when the first batches are built; their entries keep the `settled` they have.
 */
export const settlementBatchesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('settlement_batches')
      .addColumn('batch_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('closes_at', 'bigint', (c) => c.notNull())
      .addColumn('lines', 'bigint', (c) => c.notNull())
      .addColumn('gross_minor', 'bigint', (c) => c.notNull())
      .addColumn('fee_minor', 'bigint', (c) => c.notNull())
      .addColumn('net_minor', 'bigint', (c) => c.notNull())
      .addColumn('pending_minor', 'bigint', (c) => c.notNull())
      .addColumn('delay_days', 'integer', (c) => c.notNull())
      .addColumn('available_at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('settled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // One batch per account, currency and day, whoever builds it.
    await db.schema.createIndex('settlement_batches_day').on('settlement_batches').columns(['account_id', 'currency', 'day']).unique().execute();
    await db.schema.createIndex('settlement_batches_due').on('settlement_batches').columns(['status', 'available_at']).execute();
    await db.schema
      .createTable('settlement_delays')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('days', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('ledger_postings').addColumn('batch_id', 'text').execute();
    await db.schema.createIndex('ledger_postings_batch').on('ledger_postings').columns(['account_id', 'currency', 'batch_id', 'created_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('ledger_postings_batch').execute();
    await db.schema.alterTable('ledger_postings').dropColumn('batch_id').execute();
    await db.schema.dropTable('settlement_delays').execute();
    await db.schema.dropTable('settlement_batches').execute();
  },
};

/**
 * Payouts name the batches they paid (issue 35 item 1): each batch's payable part (its net
 * without payout movements) and the part payouts have taken of it, each payout's allocation
 * (payout_batches, and a copy on the payout for its record). Batches closed before this
 * migration get their payable part from their postings as a batch closed now does, none of it
 * paid: payouts made before it name no batch.
 */
export const payoutBatchesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('settlement_batches')
      .addColumn('payable_minor', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('settlement_batches')
      .addColumn('paid_minor', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    // A batch closed before: its net without its payout lines (what closeBatch now computes).
    await sql`update settlement_batches set payable_minor = net_minor - coalesce((select sum(e.amount_minor)
        from ledger_postings p join ledger_entries e on e.posting_id = p.posting_id
        where p.batch_id = settlement_batches.batch_id and p.reason like 'payout%'
          and e.ledger_account in ('merchant_pending', 'merchant_available')), 0)`.execute(db);
    // The open batches of an account and currency, oldest first: what the next payout pays.
    await db.schema.createIndex('settlement_batches_open').on('settlement_batches').columns(['account_id', 'currency', 'status', 'day']).execute();
    await db.schema
      .createTable('payout_batches')
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('batch_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('payout_batches_pk', ['transaction_id', 'batch_id'])
      .execute();
    await db.schema.createIndex('payout_batches_batch').on('payout_batches').columns(['batch_id']).execute();
    await db.schema
      .alterTable('payouts')
      .addColumn('settlement_batches', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('payouts').dropColumn('settlement_batches').execute();
    await db.schema.dropTable('payout_batches').execute();
    await db.schema.dropIndex('settlement_batches_open').execute();
    await db.schema.alterTable('settlement_batches').dropColumn('paid_minor').execute();
    await db.schema.alterTable('settlement_batches').dropColumn('payable_minor').execute();
  },
};
