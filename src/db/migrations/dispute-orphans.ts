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
