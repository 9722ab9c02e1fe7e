import { type Kysely, type Migration, sql } from 'kysely';

export const ledgerMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ledger_postings')
      .addColumn('posting_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ledger_postings_tx').on('ledger_postings').columns(['transaction_id']).execute();
    await db.schema
      .createTable('ledger_entries')
      .addColumn('entry_id', 'text', (c) => c.primaryKey())
      .addColumn('posting_id', 'text', (c) => c.notNull().references('ledger_postings.posting_id'))
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('ledger_account', 'text', (c) => c.notNull())
      .addColumn('amount_minor', 'bigint', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('settled', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ledger_entries_posting').on('ledger_entries').columns(['posting_id']).execute();
    await db.schema.createIndex('ledger_entries_account').on('ledger_entries').columns(['account_id', 'currency', 'ledger_account']).execute();
    await db.schema.createIndex('ledger_entries_tx').on('ledger_entries').columns(['transaction_id']).execute();
    await db.schema.createIndex('ledger_entries_unsettled').on('ledger_entries').columns(['ledger_account', 'settled', 'created_at']).execute();
    await db.schema
      .createTable('ledger_balances')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('ledger_account', 'text', (c) => c.notNull())
      .addColumn('balance_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_balances_pk', ['account_id', 'currency', 'ledger_account'])
      .execute();
    await db.schema
      .createTable('pricing')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.account_id'))
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('percent_bp', 'integer', (c) => c.notNull())
      .addColumn('fixed_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('pricing_pk', ['account_id', 'currency'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['pricing', 'ledger_balances', 'ledger_entries', 'ledger_postings']) await db.schema.dropTable(t).execute();
  },
};

/**
 * Balance slots (issue 6): every payment of a merchant updated the same few balance rows,
 * so on PostgreSQL concurrent payments queued on those row locks until each commit's
 * fsync. Each (account, currency, ledger account) now has up to BALANCE_SLOTS rows; a
 * transaction updates one slot and the balance is their sum. Existing sums go to slot 0.
 */
export const ledgerBalanceSlotsMigration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ledger_balances_slotted')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('ledger_account', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('balance_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_balance_slots_pk', ['account_id', 'currency', 'ledger_account', 'slot'])
      .execute();
    await db
      .insertInto('ledger_balances_slotted')
      .columns(['account_id', 'currency', 'ledger_account', 'slot', 'balance_minor', 'updated_at'])
      .expression(db.selectFrom('ledger_balances').select(['account_id', 'currency', 'ledger_account', sql.lit(0).as('slot'), 'balance_minor', 'updated_at']))
      .execute();
    await db.schema.dropTable('ledger_balances').execute();
    await db.schema.alterTable('ledger_balances_slotted').renameTo('ledger_balances').execute();
  },
  async down(db: Kysely<any>) {
    await db.schema
      .createTable('ledger_balances_summed')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('ledger_account', 'text', (c) => c.notNull())
      .addColumn('balance_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_balances_pk', ['account_id', 'currency', 'ledger_account'])
      .execute();
    await db
      .insertInto('ledger_balances_summed')
      .columns(['account_id', 'currency', 'ledger_account', 'balance_minor', 'updated_at'])
      .expression(
        db
          .selectFrom('ledger_balances')
          .select(['account_id', 'currency', 'ledger_account', sql`sum(balance_minor)`.as('balance_minor'), sql`max(updated_at)`.as('updated_at')])
          .groupBy(['account_id', 'currency', 'ledger_account']),
      )
      .execute();
    await db.schema.dropTable('ledger_balances').execute();
    await db.schema.alterTable('ledger_balances_summed').renameTo('ledger_balances').execute();
  },
};
