import type { Kysely, Migration } from 'kysely';

export const fxRatesMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('fx_rates')
      .addColumn('base', 'text', (c) => c.notNull())
      .addColumn('quote', 'text', (c) => c.notNull())
      .addColumn('rate', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('fx_rates_pair', ['base', 'quote'])
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('fx_rates').execute();
  },
};
