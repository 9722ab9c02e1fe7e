// Database row types. Each capability's tables are declared under src/db/tables/ (the storage layer, so
// nothing here points above it) and this file joins them.
// Times are integer milliseconds since the Unix epoch (UTC); amounts integer minor units.

import type { ApiKeyTables } from './tables/apikeys.js';
import type { ApmTables } from './tables/apm.js';
import type { AttemptTables } from './tables/attempts.js';
import type { CheckoutTables } from './tables/checkout.js';
import type { ConnectTables } from './tables/connect.js';
import type { CustomerTables } from './tables/customers.js';
import type { DisputeOrphanTables } from './tables/dispute-orphans.js';
import type { DisputeTables } from './tables/disputes.js';
import type { FxTables } from './tables/fx.js';
import type { IdempotencyTables } from './tables/idempotency.js';
import type { LedgerTables } from './tables/ledger.js';
import type { CoreTables } from './tables/merchants.js';
import type { MethodTables } from './tables/methods.js';
import type { NotificationTables } from './tables/notifications.js';
import type { PageTables } from './tables/pages.js';
import type { PaymentIntentTables } from './tables/payment-intents.js';
import type { PaymentMethodTables } from './tables/payment-methods.js';
import type { PaymentTables } from './tables/payments.js';
import type { PayoutTables } from './tables/payouts.js';
import type { PortalTables } from './tables/portal.js';
import type { ProcessorTables } from './tables/processors.js';
import type { ReconciliationTables } from './tables/reconciliation.js';
import type { RefundTables } from './tables/refunds.js';
import type { ReviewTables } from './tables/review.js';
import type { RiskTables } from './tables/risk.js';
import type { SchedulerTables } from './tables/scheduler.js';
import type { SettlementTables } from './tables/settlement.js';
import type { SubscriptionTables } from './tables/subscriptions.js';
import type { ThreedsTables } from './tables/threeds.js';
import type { WebhookTables } from './tables/webhooks.js';

export interface DB
  extends CoreTables,
    PaymentTables,
    NotificationTables,
    RefundTables,
    LedgerTables,
    IdempotencyTables,
    RiskTables,
    ThreedsTables,
    ReviewTables,
    PageTables,
    MethodTables,
    CheckoutTables,
    ApmTables,
    SchedulerTables,
    SubscriptionTables,
    FxTables,
    PayoutTables,
    ApiKeyTables,
    ConnectTables,
    CustomerTables,
    PaymentMethodTables,
    PaymentIntentTables,
    DisputeTables,
    DisputeOrphanTables,
    PortalTables,
    AttemptTables,
    ProcessorTables,
    WebhookTables,
    ReconciliationTables,
    SettlementTables {}
