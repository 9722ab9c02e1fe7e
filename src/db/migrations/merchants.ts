import type { Kysely, Migration } from 'kysely';

export const coreMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sequences')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .execute();
    await db
      .insertInto('sequences')
      .values([
        { name: 'merchant', value: 10000 },
        { name: 'account', value: 20000 },
      ])
      .execute();
    await db.schema
      .createTable('merchants')
      .addColumn('merchant_id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('accounts')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('capture_method', 'text', (c) => c.notNull().defaultTo('automatic'))
      .addColumn('webhook_secret_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('accounts_merchant').on('accounts').column('merchant_id').execute();
    await db.schema
      .createTable('account_keys')
      .addColumn('key_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('secret_enc', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('account_keys_account').on('account_keys').column('account_id').execute();
    await db.schema
      .createTable('account_ips')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('cidr', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('account_ips_pk', ['account_id', 'cidr'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['account_ips', 'account_keys', 'accounts', 'merchants', 'sequences']) {
      await db.schema.dropTable(t).execute();
    }
  },
};
