import type { Kysely, Migration } from 'kysely';

/** Disputes, their evidence and the dispute fee per account and currency (issue 34). */
export const disputesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('disputes')
      .addColumn('dispute_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull().references('payments.transaction_id'))
      .addColumn('order_no', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('processor_ref', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('fee_minor', 'bigint', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('evidence_due_by', 'bigint', (c) => c.notNull())
      .addColumn('submitted_at', 'bigint')
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('closed_at', 'bigint')
      .execute();
    // A processor's notification, however often it comes, is one dispute.
    await db.schema.createIndex('disputes_processor_ref').on('disputes').columns(['connector', 'processor_ref']).unique().execute();
    await db.schema.createIndex('disputes_account_due').on('disputes').columns(['account_id', 'livemode', 'evidence_due_by']).execute();
    await db.schema.createIndex('disputes_account_created').on('disputes').columns(['account_id', 'livemode', 'created_at', 'dispute_id']).execute();
    await db.schema.createIndex('disputes_payment').on('disputes').columns(['transaction_id']).execute();
    await db.schema
      .createTable('dispute_evidence')
      .addColumn('evidence_id', 'text', (c) => c.primaryKey())
      .addColumn('dispute_id', 'text', (c) => c.notNull().references('disputes.dispute_id'))
      .addColumn('field', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('file_name', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('data_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dispute_evidence_dispute').on('dispute_evidence').columns(['dispute_id', 'created_at']).execute();
    await db.schema
      .createTable('dispute_fees')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('fee_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('dispute_fees_pk', ['account_id', 'currency'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('dispute_fees').execute();
    await db.schema.dropTable('dispute_evidence').execute();
    await db.schema.dropTable('disputes').execute();
  },
};

/**
 * The request that gave a piece of evidence, and the one that submitted a dispute (the
 * Idempotency-Key's record; issue 34's crash test): a re-run of a request whose answer a crash
 * lost is recognised and answered, never applied twice.
 */
export const disputeRequestRefsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('dispute_evidence')
      .addColumn('request_ref', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema
      .alterTable('disputes')
      .addColumn('submit_ref', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema.createIndex('dispute_evidence_request').on('dispute_evidence').columns(['dispute_id', 'request_ref']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('dispute_evidence_request').execute();
    await db.schema.alterTable('dispute_evidence').dropColumn('request_ref').execute();
    await db.schema.alterTable('disputes').dropColumn('submit_ref').execute();
  },
};

/**
 * Why the processor refused the merchant's last answer to a dispute (its evidence or its
 * acceptance), '' when it took it or none was sent (issue 34 item 3): the dispute is back with
 * the merchant, who reads this in the portal and the API.
 */
export const disputeResponseErrorMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable('disputes')
      .addColumn('response_error', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('disputes').dropColumn('response_error').execute();
  },
};
