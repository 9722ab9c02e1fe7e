import type { Kysely, Migration } from 'kysely';

export const frameOriginsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('account_frame_origins')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('account_frame_origins_pk', ['account_id', 'origin'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('account_frame_origins').execute();
  },
};
