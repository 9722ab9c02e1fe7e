import type { Kysely, Migration } from 'kysely';

export const portalMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('portal_users')
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.merchant_id'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('password_hash', 'text')
      .addColumn('failed_logins', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('totp_secret_enc', 'text')
      .addColumn('totp_enrolled_at', 'bigint')
      .addColumn('totp_last_step', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('setup_hash', 'text', (c) => c.unique())
      .addColumn('setup_expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('portal_users_merchant').on('portal_users').columns(['merchant_id', 'email']).execute();
    await db.schema
      .createTable('portal_recovery_codes')
      .addColumn('user_id', 'text', (c) => c.notNull().references('portal_users.user_id'))
      .addColumn('code_hash', 'text', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addPrimaryKeyConstraint('portal_recovery_codes_pk', ['user_id', 'code_hash'])
      .execute();
    await db.schema
      .createTable('portal_sessions')
      .addColumn('session_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('portal_sessions_user').on('portal_sessions').columns(['user_id']).execute();
    await db.schema
      .createTable('portal_audit')
      .addColumn('audit_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('portal_audit_merchant').on('portal_audit').columns(['merchant_id', 'audit_id']).execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['portal_audit', 'portal_sessions', 'portal_recovery_codes', 'portal_users']) await db.schema.dropTable(t).execute();
  },
};
