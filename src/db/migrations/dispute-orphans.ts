import type { Kysely, Migration } from 'kysely';

/**
 * Dispute notifications kept aside (issue 34 item 2): for a payment Tollgate does not know, or
 * waiting for the notification that opens their dispute. And an index to find a payment by
 * its processor's reference (a dispute names the payment by it).
 */
export const disputeOrphansMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('dispute_orphans')
      .addColumn('processor_id', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('processor_ref', 'text', (c) => c.notNull())
      .addColumn('payment_ref', 'text', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('notice', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'bigint', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('resolved_at', 'bigint')
      .addColumn('dispute_id', 'text')
      .addPrimaryKeyConstraint('dispute_orphans_pk', ['processor_id', 'notification_id'])
      .execute();
    await db.schema.createIndex('dispute_orphans_ref').on('dispute_orphans').columns(['processor_id', 'processor_ref', 'occurred_at']).execute();
    await db.schema.createIndex('processor_attempts_reference').on('processor_attempts').columns(['reference']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('processor_attempts_reference').execute();
    await db.schema.dropTable('dispute_orphans').execute();
  },
};

/**
 * The processor notices applied to each dispute (issue 34 review, item 1): written in the move's
 * own transaction, so a notice whose processor_notifications record was lost (a crash between
 * the two) or that is delivered several times at once moves its dispute once and is never kept
 * waiting to be applied again. Also what the hooks read of a dispute's history: whether its
 * chargeback was announced before the defence, and the newest notice applied.
 */
export const disputeNoticesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('dispute_notices')
      .addColumn('processor_id', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text', (c) => c.notNull())
      .addColumn('dispute_id', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'bigint', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('dispute_notices_pk', ['processor_id', 'notification_id'])
      .execute();
    await db.schema.createIndex('dispute_notices_dispute').on('dispute_notices').columns(['dispute_id', 'occurred_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('dispute_notices').execute();
  },
};
