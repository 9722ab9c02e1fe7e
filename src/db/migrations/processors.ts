import type { Kysely, Migration } from 'kysely';

/** Processors per account (docs/contract.md §21) and the notifications they send (§20). */
export const processorsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('processors')
      .addColumn('processor_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('base_url', 'text', (c) => c.notNull())
      .addColumn('priority', 'integer', (c) => c.notNull())
      .addColumn('currencies', 'text', (c) => c.notNull())
      .addColumn('brands', 'text', (c) => c.notNull())
      .addColumn('credentials_enc', 'text', (c) => c.notNull())
      .addColumn('credentials_hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('processors_account_connector', ['account_id', 'connector'])
      .execute();
    await db.schema
      .createTable('processor_notifications')
      .addColumn('processor_id', 'text', (c) => c.notNull())
      .addColumn('notification_id', 'text', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('attempt_id', 'text', (c) => c.notNull())
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('result', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('processor_notifications_pk', ['processor_id', 'notification_id'])
      .execute();
    await db.schema.createIndex('processor_notifications_result').on('processor_notifications').columns(['processor_id', 'result']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('processor_notifications').execute();
    await db.schema.dropTable('processors').execute();
  },
};
