import type { Kysely, Migration } from 'kysely';

export const refundsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('refunds')
      .addColumn('refund_reference_id', 'text', (c) => c.primaryKey())
      .addColumn('transaction_id', 'text', (c) => c.notNull().references('payments.transaction_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('order_no', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('refund_amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('refund_reason', 'text', (c) => c.notNull())
      .addColumn('refund_reference', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('result_code', 'text', (c) => c.notNull())
      .addColumn('notify_url', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('processed_at', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('refunds_account_created').on('refunds').columns(['account_id', 'created_at']).execute();
    await db.schema.createIndex('refunds_transaction').on('refunds').columns(['transaction_id']).execute();
    await db.schema.createIndex('refunds_order_no').on('refunds').columns(['account_id', 'order_no']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('refunds').execute();
  },
};

/**
 * A refund made under an Idempotency-Key remembers `<key id>:<item index>`, so a re-run of
 * the same request after a crash (the key was claimed, the answer never stored) finds the
 * refund it already made instead of refunding twice (docs/contract.md §4; field-facts:
 * "atomic phases with recovery points").
 */
export const refundIdempotencyMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('refunds').addColumn('idempotency_ref', 'text').execute();
    await db.schema.createIndex('refunds_idempotency_ref').on('refunds').column('idempotency_ref').unique().execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('refunds_idempotency_ref').execute();
    await db.schema.alterTable('refunds').dropColumn('idempotency_ref').execute();
  },
};

/** The generic interface's `metadata` of a refund (issue 13); '{}' for every other refund. */
export const refundMetadataMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('refunds')
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('refunds').dropColumn('metadata').execute();
  },
};
