import type { Kysely, Migration } from 'kysely';

export const notificationsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('events')
      .addColumn('event_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('object_id', 'text', (c) => c.notNull())
      .addColumn('notify_url', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_due').on('events').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('events_object').on('events').columns(['account_id', 'object_id']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('events').execute();
  },
};
