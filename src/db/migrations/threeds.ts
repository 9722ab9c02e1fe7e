import type { Kysely, Migration } from 'kysely';

export const threedsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('threeds_challenges')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('transaction_id', 'text', (c) => c.notNull().unique().references('payments.transaction_id'))
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('form_token', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .execute();
    // The expiry job reads open challenges by expiry time.
    await db.schema.createIndex('threeds_challenges_expiry').on('threeds_challenges').columns(['status', 'expires_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('threeds_challenges').execute();
  },
};

/** A processor's own challenge (Adyen, Stripe): the page forwards the shopper to it. */
export const threedsActionMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('threeds_challenges').addColumn('action_enc', 'text').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('threeds_challenges').dropColumn('action_enc').execute();
  },
};
