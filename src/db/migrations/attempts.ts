import type { Kysely, Migration } from 'kysely';

/** Processor attempts (docs/attempts.md): one row per call to a processor, written before the call. */
export const processorAttemptsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('processor_attempts')
      .addColumn('attempt_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('object_id', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('result_code', 'text', (c) => c.notNull())
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('checks', 'integer', (c) => c.notNull())
      .addColumn('deadline_at', 'bigint', (c) => c.notNull())
      .addColumn('next_check_at', 'bigint')
      .addColumn('last_error', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // The sweeper's question: open attempts due to be asked again.
    await db.schema.createIndex('processor_attempts_due').on('processor_attempts').columns(['next_check_at']).execute();
    await db.schema.createIndex('processor_attempts_object').on('processor_attempts').columns(['object_id']).execute();
    await db.schema
      .createTable('subscription_name_claims')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('contract_name', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('subscription_name_claims_pk', ['account_id', 'contract_name'])
      .execute();
    await db.schema.createIndex('subscription_name_claims_payment').on('subscription_name_claims').columns(['transaction_id']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('subscription_name_claims').execute();
    await db.schema.dropTable('processor_attempts').execute();
  },
};

/**
 * What an open attempt holds (docs/attempts.md): `claim_key` names the thing only one call at
 * a time may act on (`payment:<id>` for a capture or cancel of a payment, `order:<account>:<order_no>`
 * for a new card payment), unique while the attempt is open and cleared when its outcome is
 * final, so a second one is refused before it reaches the processor. `snapshot`: what a new
 * card payment will be written as (JSON), kept only until its payment row exists, so the
 * sweeper can write it if the process died between the call and the record.
 */
export const attemptClaimsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('processor_attempts').addColumn('claim_key', 'text').execute();
    await db.schema.alterTable('processor_attempts').addColumn('snapshot', 'text').execute();
    await db.schema.createIndex('processor_attempts_claim').unique().on('processor_attempts').column('claim_key').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('processor_attempts_claim').execute();
    await db.schema.alterTable('processor_attempts').dropColumn('snapshot').execute();
    await db.schema.alterTable('processor_attempts').dropColumn('claim_key').execute();
  },
};

/**
 * Which configured processor an attempt went to (`prc_…`, docs/contract.md §21): with several
 * per account, a payment's capture, cancel and refund go to the processor that authorised it.
 * Null for the in-process sandbox of a test account with none set.
 */
export const attemptProcessorMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('processor_attempts').addColumn('processor_id', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('processor_attempts').dropColumn('processor_id').execute();
  },
};
