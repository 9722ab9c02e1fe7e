import type { Kysely, Migration } from 'kysely';

export const connectMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('connected_accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('country', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('business_type', 'text', (c) => c.notNull())
      .addColumn('default_currency', 'text', (c) => c.notNull())
      .addColumn('business_profile', 'text', (c) => c.notNull())
      .addColumn('capabilities', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('deleted', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connected_accounts_platform').on('connected_accounts').columns(['platform_account_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('transfers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull().references('connected_accounts.id'))
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('reversed_minor', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('transfer_group', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('idempotency_ref', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('transfers_idempotency_ref').on('transfers').column('idempotency_ref').unique().execute();
    await db.schema.createIndex('transfers_platform').on('transfers').columns(['platform_account_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('transfers_destination').on('transfers').columns(['destination', 'created_at']).execute();

    await db.schema
      .createTable('transfer_reversals')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('transfer_id', 'text', (c) => c.notNull().references('transfers.id'))
      .addColumn('platform_account_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('idempotency_ref', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('transfer_reversals_idempotency_ref').on('transfer_reversals').column('idempotency_ref').unique().execute();
    await db.schema.createIndex('transfer_reversals_transfer').on('transfer_reversals').columns(['transfer_id', 'created_at', 'id']).execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['transfer_reversals', 'transfers', 'connected_accounts']) await db.schema.dropTable(t).execute();
  },
};
