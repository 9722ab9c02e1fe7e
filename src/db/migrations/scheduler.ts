import type { Kysely, Migration } from 'kysely';

export const scheduledJobsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('scheduled_jobs')
      .addColumn('job_key', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull())
      .addColumn('lease_token', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('last_error', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // The claim: due rows in time order, and the few running rows whose lease may have lapsed.
    await db.schema.createIndex('scheduled_jobs_due').on('scheduled_jobs').columns(['status', 'due_at']).execute();
    // One account's due jobs in time order (the test clocks of issue 11 run an account's jobs alone).
    await db.schema.createIndex('scheduled_jobs_account').on('scheduled_jobs').columns(['account_id', 'status', 'due_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('scheduled_jobs').execute();
  },
};

/**
 * Test clocks (docs/contract.md §16): where a test account's clock stands once an operator moved
 * it forward. One row per moved account; live accounts never have one.
 */
export const testClocksMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('test_clocks')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('now_ms', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('test_clocks').execute();
  },
};
