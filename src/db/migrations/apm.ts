import type { Kysely, Migration } from 'kysely';

export const apmIssuerPagesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('apm_issuer_pages')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('transaction_id', 'text', (c) => c.notNull().unique().references('payments.transaction_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('form_token', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('apm_issuer_pages').execute();
  },
};
