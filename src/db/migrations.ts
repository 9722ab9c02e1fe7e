// Every capability's migrations, in order. Both engines run the same list (docs/contract.md §13).
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import type { Keyring } from '../crypto/keyring.js';
import { apiKeysMigration } from './migrations/apikeys.js';
import { apmIssuerPagesMigration } from './migrations/apm.js';
import { attemptClaimsMigration, attemptProcessorMigration, processorAttemptsMigration } from './migrations/attempts.js';
import { checkoutMigration } from './migrations/checkout.js';
import { connectMigration } from './migrations/connect.js';
import { customersMigration } from './migrations/customers.js';
import { disputeNoticesMigration, disputeOrphansMigration } from './migrations/dispute-orphans.js';
import { disputeRequestRefsMigration, disputeResponseErrorMigration, disputesMigration } from './migrations/disputes.js';
import { fxRatesMigration } from './migrations/fx.js';
import { idempotencyMigration, idempotencySealedMigration } from './migrations/idempotency.js';
import { ledgerBalanceSlotsMigration, ledgerMigration } from './migrations/ledger.js';
import { coreMigration } from './migrations/merchants.js';
import { paymentMethodsMigration } from './migrations/methods.js';
import { eventAttemptsMigration, notificationsMigration } from './migrations/notifications.js';
import { frameOriginsMigration } from './migrations/pages.js';
import { paymentIntentsMigration } from './migrations/payment-intents.js';
import { paymentMethodObjectsMigration } from './migrations/payment-methods.js';
import { cardTokenHashMigration, paymentsMigration } from './migrations/payments.js';
import { payoutBankDetailsMaskedMigration, payoutsMigration } from './migrations/payouts.js';
import { portalMigration } from './migrations/portal.js';
import { portalEmailPerMerchantMigration } from './migrations/portal-email.js';
import { portalSearchMigration } from './migrations/portal-search.js';
import { processorsMigration } from './migrations/processors.js';
import { reconciliationMigration } from './migrations/reconciliation.js';
import { refundIdempotencyMigration, refundMetadataMigration, refundsMigration } from './migrations/refunds.js';
import { reviewMigration } from './migrations/review.js';
import { riskMigration } from './migrations/risk.js';
import { scheduledJobsMigration, testClocksMigration } from './migrations/scheduler.js';
import { payoutBatchesMigration, settlementBatchesMigration } from './migrations/settlement.js';
import { subscriptionDeductionsMigration, subscriptionsMigration } from './migrations/subscriptions.js';
import { threedsActionMigration, threedsMigration } from './migrations/threeds.js';
import { webhookEndpointsMigration } from './migrations/webhooks.js';
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
    '0080_processor_attempts': processorAttemptsMigration,
    '0081_attempt_claims': attemptClaimsMigration,
    '0082_processors': processorsMigration,
    '0083_attempt_processor': attemptProcessorMigration,
    '0084_threeds_action': threedsActionMigration,
    '0085_customers': customersMigration,
    '0086_payment_method_objects': paymentMethodObjectsMigration,
    '0087_payment_intents': paymentIntentsMigration,
    '0088_webhook_endpoints': webhookEndpointsMigration,
    '0089_disputes': disputesMigration,
    '0090_dispute_orphans': disputeOrphansMigration,
    '0091_dispute_request_refs': disputeRequestRefsMigration,
    '0092_dispute_response_error': disputeResponseErrorMigration,
    '0093_reconciliation': reconciliationMigration,
    '0094_settlement_batches': settlementBatchesMigration,
    '0095_payout_batches': payoutBatchesMigration,
    '0096_dispute_notices': disputeNoticesMigration,
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
