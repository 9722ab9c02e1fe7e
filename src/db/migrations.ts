// Every capability's migrations, in order. Both engines run the same list (decisions §13).
import { type Kysely, type Migration, Migrator } from 'kysely';
import { apiKeysMigration } from '../apikeys/migration.js';
import { apmIssuerPagesMigration } from '../apm/migration.js';
import { checkoutMigration } from '../checkout/migration.js';
import { connectMigration } from '../connect/migration.js';
import { fxRatesMigration } from '../fx/migration.js';
import { idempotencyMigration } from '../idempotency/migration.js';
import { ledgerBalanceSlotsMigration, ledgerMigration } from '../ledger/migration.js';
import { coreMigration } from '../merchants/migration.js';
import { paymentMethodsMigration } from '../methods/migration.js';
import { eventAttemptsMigration, notificationsMigration } from '../notifications/migration.js';
import { frameOriginsMigration } from '../pages/migration.js';
import { paymentsMigration } from '../payments/migration.js';
import { payoutsMigration } from '../payouts/migration.js';
import { portalEmailPerMerchantMigration } from '../portal/email-migration.js';
import { portalMigration } from '../portal/migration.js';
import { portalSearchMigration } from '../portal/search-migration.js';
import { refundIdempotencyMigration, refundMetadataMigration, refundsMigration } from '../refunds/migration.js';
import { reviewMigration } from '../review/migration.js';
import { riskMigration } from '../risk/migration.js';
import { scheduledJobsMigration, testClocksMigration } from '../scheduler/migration.js';
import { subscriptionDeductionsMigration, subscriptionsMigration } from '../subscriptions/migration.js';
import { threedsMigration } from '../threeds/migration.js';

// Names sort in the order they must run.
export const migrations: Record<string, Migration> = {
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
  '0074_portal_email_per_merchant': portalEmailPerMerchantMigration,
};

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
