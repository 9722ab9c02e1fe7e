import { type Kysely, type Migration, sql } from 'kysely';
import { type MigrationContext, rewriteRows } from '../rewrite.js';
import { maskedBankDetails } from '../tables/payouts.js';

export const payoutsMigration: Migration = {
  // Longer than 70 lines on purpose (docs/style.md §16): databases have already run this migration, so it stays as it shipped.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('payouts')
      .addColumn('transaction_id', 'text', (c) => c.primaryKey())
      .addColumn('short_reference_id', 'text', (c) => c.notNull().unique())
      .addColumn('merchant_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('livemode', 'integer', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('failure_type', 'text', (c) => c.notNull())
      .addColumn('failure_reason', 'text', (c) => c.notNull())
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('local_clearing_system', 'text', (c) => c.notNull())
      .addColumn('source_currency', 'text', (c) => c.notNull())
      .addColumn('payment_currency', 'text', (c) => c.notNull())
      .addColumn('amount_payer_pays', 'bigint', (c) => c.notNull())
      .addColumn('amount_beneficiary_receives', 'bigint', (c) => c.notNull())
      .addColumn('fee_amount', 'bigint', (c) => c.notNull())
      .addColumn('fee_paid_by', 'text', (c) => c.notNull())
      .addColumn('swift_charge_option', 'text', (c) => c.notNull())
      .addColumn('fx_rate', 'text', (c) => c.notNull())
      .addColumn('fx_source', 'text', (c) => c.notNull())
      .addColumn('payment_date', 'text', (c) => c.notNull())
      .addColumn('dispatch_at', 'bigint', (c) => c.notNull())
      .addColumn('beneficiary_id', 'text', (c) => c.notNull())
      .addColumn('details', 'text', (c) => c.notNull())
      .addColumn('notify_url', 'text', (c) => c.notNull())
      .addColumn('processor_reference', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('payouts_request').unique().on('payouts').columns(['account_id', 'request_id']).execute();
    await db.schema.createIndex('payouts_account_created').on('payouts').columns(['account_id', 'created_at', 'transaction_id']).execute();

    await db.schema
      .createTable('beneficiaries')
      .addColumn('beneficiary_id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('data_enc', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('beneficiaries_fingerprint').unique().on('beneficiaries').columns(['account_id', 'fingerprint']).execute();

    await db.schema
      .createTable('payout_pricing')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('payment_method', 'text', (c) => c.notNull())
      .addColumn('percent_bp', 'integer', (c) => c.notNull())
      .addColumn('fixed_minor', 'bigint', (c) => c.notNull())
      .addColumn('swift_payer_minor', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('payout_pricing_pk', ['account_id', 'currency', 'payment_method'])
      .execute();

    await db.schema
      .createTable('fx_markups')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('markup_bp', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('payout_funding')
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('payouts', 'bigint', (c) => c.notNull().defaultTo(sql`0`))
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('payout_funding_pk', ['account_id', 'currency'])
      .execute();
  },
  async down(db: Kysely<any>) {
    for (const t of ['payout_funding', 'fx_markups', 'payout_pricing', 'beneficiaries', 'payouts']) await db.schema.dropTable(t).execute();
  },
};

/** Masks `beneficiary.bank_details` of a payout echo in place; whether anything changed. */
function maskEcho(echo: Record<string, unknown> | undefined): boolean {
  const beneficiary = echo?.beneficiary as { bank_details?: Record<string, string> } | undefined;
  const bank = beneficiary?.bank_details;
  if (!beneficiary || !bank) return false;
  const masked = maskedBankDetails(bank);
  if (masked.iban === bank.iban && masked.account_number === bank.account_number) return false;
  beneficiary.bank_details = masked;
  return true;
}

/**
 * Issue 29: payouts stored the beneficiary's full IBAN / account number in `payouts.details`
 * (the answer's echo) and in every `payout.*` event. The full details are already in the
 * beneficiary row, encrypted; these copies become the masked form the code now writes.
 */
export function payoutBankDetailsMaskedMigration(ctx: MigrationContext): Migration {
  return {
    async up(db: Kysely<any>) {
      await rewriteRows(db, ctx, {
        table: 'payouts',
        key: 'transaction_id',
        columns: ['details'],
        map: (r) => {
          const echo = JSON.parse(r.details as string) as Record<string, unknown>;
          return maskEcho(echo) ? { details: JSON.stringify(echo) } : null;
        },
      });
      await rewriteRows(db, ctx, {
        table: 'events',
        key: 'event_id',
        columns: ['payload'],
        where: sql`event_type like 'payout.%'`,
        map: (r) => {
          const event = JSON.parse(r.payload as string) as { data?: Record<string, unknown> };
          return maskEcho(event.data) ? { payload: JSON.stringify(event) } : null;
        },
      });
    },
    async down() {
      // The clear copies are not restored: the beneficiary row keeps the full details.
    },
  };
}
