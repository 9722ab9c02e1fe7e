// Every capability's migrations, in order. Both engines run the same list (docs/contract.md §13).
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { apiKeysMigration } from '../apikeys/migration.js';
import { apmIssuerPagesMigration } from '../apm/migration.js';
import { checkoutMigration } from '../checkout/migration.js';
import { connectMigration } from '../connect/migration.js';
import type { Keyring } from '../crypto/keyring.js';
import { fxRatesMigration } from '../fx/migration.js';
import { idempotencyMigration, idempotencySealedMigration } from '../idempotency/migration.js';
import { ledgerBalanceSlotsMigration, ledgerMigration } from '../ledger/migration.js';
import { coreMigration } from '../merchants/migration.js';
import { paymentMethodsMigration } from '../methods/migration.js';
import { eventAttemptsMigration, notificationsMigration } from '../notifications/migration.js';
import { frameOriginsMigration } from '../pages/migration.js';
import { cardTokenHashMigration, paymentsMigration } from '../payments/migration.js';
import { payoutBankDetailsMaskedMigration, payoutsMigration } from '../payouts/migration.js';
import { portalEmailPerMerchantMigration } from '../portal/email-migration.js';
import { portalMigration } from '../portal/migration.js';
import { portalSearchMigration } from '../portal/search-migration.js';
import { refundIdempotencyMigration, refundMetadataMigration, refundsMigration } from '../refunds/migration.js';
import { reviewMigration } from '../review/migration.js';
import { riskMigration } from '../risk/migration.js';
import { scheduledJobsMigration, testClocksMigration } from '../scheduler/migration.js';
import { subscriptionDeductionsMigration, subscriptionsMigration } from '../subscriptions/migration.js';
import { threedsMigration } from '../threeds/migration.js';
import type { MigrationContext } from './rewrite.js';

// Names sort in the order they must run. Migrations that rewrite stored data with the master
// keyring (issue 29: sealed or masked at rest) take the run's context.
export function migrationsFor(ctx: MigrationContext): Record<string, Migration> {
  return {
    '0001_core': coreMigration,
    '0002_payments': paymentsMigration,
    '0003_events': notificationsMigration,
    '0010_refunds': refundsMigration,
    '0011_ledger': ledgerMigration,
    '0012_idempotency': idempotencyMigration,
    '0013_refund_idempotency': refundIdempotencyMigration,
    '0014_ledger_balance_slots': ledgerBalanceSlotsMigration,
    '0020_event_attempts': eventAttemptsMigration,
    '0030_risk': riskMigration,
    '0031_threeds': threedsMigration,
    '0032_review': reviewMigration,
    '0033_frame_origins': frameOriginsMigration,
    '0040_payment_methods': paymentMethodsMigration,
    '0041_checkout_sessions': checkoutMigration,
    '0042_apm_issuer_pages': apmIssuerPagesMigration,
    '0043_scheduled_jobs': scheduledJobsMigration,
    '0044_subscriptions': subscriptionsMigration,
    '0045_subscription_deductions': subscriptionDeductionsMigration,
    '0046_test_clocks': testClocksMigration,
    '0047_fx_rates': fxRatesMigration,
    '0048_payouts': payoutsMigration,
    '0050_api_keys': apiKeysMigration,
    '0051_connect': connectMigration,
    '0052_refund_metadata': refundMetadataMigration,
    '0060_portal': portalMigration,
    '0061_portal_search': portalSearchMigration,
    '0070_payout_bank_details_masked': payoutBankDetailsMaskedMigration(ctx),
    '0071_card_token_hash': cardTokenHashMigration(ctx),
    '0072_idempotency_sealed': idempotencySealedMigration(ctx),
    '0074_portal_email_per_merchant': portalEmailPerMerchantMigration,
  };
}

/**
 * Applies every pending migration. When one rewrote rows on SQLite, the old row versions
 * are still in free pages of the file and in the WAL: VACUUM rebuilds the file without them
 * and a TRUNCATE checkpoint empties the WAL (Kysely runs SQLite migrations outside a
 * transaction, so both can run here). PostgreSQL keeps old row versions until the table
 * is rewritten: run `VACUUM FULL` on payouts, events, cards, payments and idempotency_keys
 * after upgrading (docs/ARCHITECTURE.md, "Data at rest").
 */
export async function migrateToLatest(db: Kysely<any>, opts: { keyring: Keyring; engine: 'sqlite' | 'postgres' }): Promise<string[]> {
  const ctx: MigrationContext = { ...opts, rewritten: 0 };
  const all = migrationsFor(ctx);
  const migrator = new Migrator({ db, provider: { getMigrations: async () => all } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  if (ctx.engine === 'sqlite' && ctx.rewritten > 0) {
    await sql`vacuum`.execute(db);
    await sql`pragma wal_checkpoint(truncate)`.execute(db);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
