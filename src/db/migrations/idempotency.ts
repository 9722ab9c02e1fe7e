import { type Kysely, type Migration, sql } from 'kysely';
import { Keyring } from '../../crypto/keyring.js';
import { type MigrationContext, rewriteRows } from '../rewrite.js';

export const idempotencyMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('idem_key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer', (c) => c.notNull())
      .addColumn('response_type', 'text', (c) => c.notNull())
      .addColumn('response_body', 'text', (c) => c.notNull())
      .addColumn('locked_until', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('idempotency_keys_scope_key', ['scope', 'idem_key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('idempotency_keys').execute();
  },
};

/** Issue 29: the stored answers of the last 24 h are encrypted like those written from now on. */
export function idempotencySealedMigration(ctx: MigrationContext): Migration {
  return {
    async up(db: Kysely<any>) {
      await rewriteRows(db, ctx, {
        table: 'idempotency_keys',
        key: 'id',
        columns: ['response_body'],
        where: sql`status = 'done'`,
        map: (r) => (Keyring.isSealed(r.response_body as string) ? null : { response_body: ctx.keyring.encrypt(r.response_body as string) }),
      });
    },
    async down() {},
  };
}
