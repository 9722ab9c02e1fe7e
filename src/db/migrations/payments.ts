import { type Kysely, type Migration, sql } from 'kysely';
import { Keyring } from '../../crypto/keyring.js';
import { type MigrationContext, rewriteRows } from '../rewrite.js';
import { tokenHash } from '../tables/payments.js';

export const paymentsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('cards')
      .addColumn('card_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('token_id', 'text', (c) => c.unique())
      .addColumn('pan_enc', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('brand', 'text', (c) => c.notNull())
      .addColumn('bin', 'text', (c) => c.notNull())
      .addColumn('last4', 'text', (c) => c.notNull())
      .addColumn('exp_month', 'integer', (c) => c.notNull())
      .addColumn('exp_year', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('cards_fingerprint').on('cards').columns(['account_id', 'fingerprint']).execute();

    await db.schema
      .createTable('payments')
      .addColumn('transaction_id', 'text', (c) => c.primaryKey())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('order_no', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('authorised_minor', 'bigint', (c) => c.notNull())
      .addColumn('captured_minor', 'bigint', (c) => c.notNull())
      .addColumn('refunded_minor', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('capture_method', 'text', (c) => c.notNull())
      .addColumn('result_code', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.references('cards.card_id'))
      .addColumn('card_brand', 'text', (c) => c.notNull())
      .addColumn('card_masked', 'text', (c) => c.notNull())
      .addColumn('connector', 'text', (c) => c.notNull())
      .addColumn('is3ds', 'integer', (c) => c.notNull())
      .addColumn('threeds_result', 'text', (c) => c.notNull())
      .addColumn('risk_score', 'integer')
      .addColumn('risk_action', 'text', (c) => c.notNull())
      .addColumn('risk_reasons', 'text', (c) => c.notNull())
      .addColumn('notify_url', 'text', (c) => c.notNull())
      .addColumn('return_url', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('details', 'text', (c) => c.notNull())
      .addColumn('answer', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addUniqueConstraint('payments_order_no', ['account_id', 'order_no'])
      .execute();
    await db.schema.createIndex('payments_account_created').on('payments').columns(['account_id', 'created_at']).execute();
    await db.schema.createIndex('payments_expiry').on('payments').columns(['status', 'expires_at']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable('payments').execute();
    await db.schema.dropTable('cards').execute();
  },
};

/**
 * Issue 29: a card's `token_id` is a bearer credential for the stored card. The vault keeps
 * only its keyed hash (`cards.token_hash`, unique, the lookup), and the stored first answer
 * of each payment (replayed for a repeat) holds the token encrypted. The old column stays
 * (SQLite cannot drop a UNIQUE column), always NULL.
 */
export function cardTokenHashMigration(ctx: MigrationContext): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('cards').addColumn('token_hash', 'text').execute();
      await rewriteRows(db, ctx, {
        table: 'cards',
        key: 'card_id',
        columns: ['token_id'],
        where: sql`token_id is not null`,
        map: (r) => ({ token_hash: tokenHash(ctx.keyring, r.token_id as string), token_id: null }),
      });
      await db.schema.createIndex('cards_token_hash').unique().on('cards').column('token_hash').execute();
      await rewriteRows(db, ctx, {
        table: 'payments',
        key: 'transaction_id',
        columns: ['answer'],
        // Only answers that carry a token: `"token_id":""` is the common case and stays.
        where: sql`answer like ${'%"token_id":"%'} and answer not like ${'%"token_id":""%'}`,
        map: (r) => {
          const record = JSON.parse(r.answer as string) as Record<string, unknown>;
          const token = record.token_id;
          if (typeof token !== 'string' || token === '' || Keyring.isSealed(token)) return null;
          return { answer: JSON.stringify({ ...record, token_id: ctx.keyring.encrypt(token) }) };
        },
      });
    },
    async down(db: Kysely<any>) {
      await db.schema.dropIndex('cards_token_hash').execute();
      await db.schema.alterTable('cards').dropColumn('token_hash').execute();
    },
  };
}
