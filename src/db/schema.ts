// Database row types. Each capability declares its own tables and this file joins them.
// Times are integer milliseconds since the Unix epoch (UTC); amounts integer minor units.

import type { ApiKeyTables } from '../apikeys/tables.js';
import type { ApmTables } from '../apm/tables.js';
import type { CheckoutTables } from '../checkout/tables.js';
import type { ConnectTables } from '../connect/tables.js';
import type { FxTables } from '../fx/tables.js';
import type { IdempotencyTables } from '../idempotency/tables.js';
import type { LedgerTables } from '../ledger/tables.js';
import type { CoreTables } from '../merchants/tables.js';
import type { MethodTables } from '../methods/tables.js';
import type { NotificationTables } from '../notifications/tables.js';
import type { PageTables } from '../pages/tables.js';
import type { PaymentTables } from '../payments/tables.js';
import type { PayoutTables } from '../payouts/tables.js';
import type { PortalTables } from '../portal/tables.js';
import type { RefundTables } from '../refunds/tables.js';
import type { ReviewTables } from '../review/tables.js';
import type { RiskTables } from '../risk/tables.js';
import type { SchedulerTables } from '../scheduler/tables.js';
import type { SubscriptionTables } from '../subscriptions/tables.js';
import type { ThreedsTables } from '../threeds/tables.js';

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
    PortalTables {}
