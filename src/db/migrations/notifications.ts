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

/** Delivery bookkeeping: lease holder, outcome columns and the attempt log (docs/contract.md §11). */
export const eventAttemptsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('events').addColumn('lease_token', 'text').execute();
    await db.schema.alterTable('events').addColumn('delivered_at', 'bigint').execute();
    await db.schema
      .alterTable('events')
      .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema.createIndex('events_status_created').on('events').columns(['status', 'created_at']).execute();
    await db.schema
      .createTable('event_attempts')
      .addColumn('attempt_id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('attempt_no', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('latency_ms', 'bigint', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text', (c) => c.notNull())
      .addColumn('response_excerpt', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('event_attempts_event').on('event_attempts').columns(['event_id', 'started_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('event_attempts').execute();
    await db.schema.dropIndex('events_status_created').execute();
    for (const c of ['last_error', 'delivered_at', 'lease_token']) await db.schema.alterTable('events').dropColumn(c).execute();
  },
};
