import type { Kysely, Migration } from 'kysely';

/** Webhook endpoints, platform events and their deliveries (issue 33 item 5; migration 0088). */
export const webhookEndpointsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('enabled_events', 'text', (c) => c.notNull())
      .addColumn('secret_enc', 'text', (c) => c.notNull())
      .addColumn('disabled', 'integer', (c) => c.notNull())
      .addColumn('api_version', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('deleted', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id', 'livemode', 'created_at', 'id']).execute();
    await db.schema
      .createTable('webhook_endpoint_events')
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_endpoint_events_pk', ['endpoint_id', 'event_type'])
      .execute();
    await db.schema
      .createTable('platform_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('object_id', 'text', (c) => c.notNull())
      .addColumn('data_object', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Lists are the account's and mode's, newest first; a type filter is exact or a prefix.
    await db.schema.createIndex('platform_events_account').on('platform_events').columns(['account_id', 'livemode', 'created_at', 'id']).execute();
    await db.schema.createIndex('platform_events_event').on('platform_events').columns(['event_id']).execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('platform_event_id', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('lease_token', 'text')
      .addColumn('delivered_at', 'bigint')
      .addColumn('last_error', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_deliveries_pk', ['platform_event_id', 'endpoint_id'])
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    // The attempt log names the delivery an attempt was for ('' for the notify_url delivery).
    await db.schema
      .alterTable('event_attempts')
      .addColumn('delivery', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('event_attempts').dropColumn('delivery').execute();
    for (const t of ['webhook_deliveries', 'platform_events', 'webhook_endpoint_events', 'webhook_endpoints']) await db.schema.dropTable(t).execute();
  },
};
