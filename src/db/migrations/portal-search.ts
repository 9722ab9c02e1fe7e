// The indexes of the portal's transaction search (docs/contract.md §19; src/portal/search.ts).
// Every filter is one equality (or a date range) on the account's payments, read newest
// first by keyset on (created_at, transaction_id): each index below is that filter's
// column between `account_id` and the keyset pair, so a page is one bounded range read
// in index order, without a sort, at any table size. `order_no` has its unique
// (account_id, order_no) index and `transaction_id` is the primary key: at most one row.
import { type Kysely, type Migration, sql } from 'kysely';

/**
 * The last four digits of a payment's card, from `card_masked` (BIN, stars, last four;
 * '' for APM payments). Written the same in the index and the query: both engines match
 * an expression index only on the same expression. Changing it needs a new migration.
 */
export const LAST4_EXPRESSION = 'substr(card_masked, length(card_masked) - 3)';

const INDEXES: ReadonlyArray<[name: string, keys: string]> = [
  ['payments_portal_created', 'account_id, created_at, transaction_id'],
  ['payments_portal_status', 'account_id, status, created_at, transaction_id'],
  ['payments_portal_amount', 'account_id, amount_minor, created_at, transaction_id'],
  ['payments_portal_last4', `account_id, (${LAST4_EXPRESSION}), created_at, transaction_id`],
];

export const portalSearchMigration: Migration = {
  async up(db: Kysely<any>) {
    for (const [name, keys] of INDEXES) await sql`CREATE INDEX ${sql.id(name)} ON payments (${sql.raw(keys)})`.execute(db);
    // (account_id, created_at) is a prefix of payments_portal_created: one index fewer to
    // write per payment, and every read it served is served by the longer one.
    await db.schema.dropIndex('payments_account_created').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.createIndex('payments_account_created').on('payments').columns(['account_id', 'created_at']).execute();
    for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
  },
};
