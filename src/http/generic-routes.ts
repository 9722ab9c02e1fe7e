// The generic interface (docs/contract.md §12, §18; issue 13): Bearer keys, one wire convention
// (src/generic/wire.ts), and the resources. Payments and refunds are the acquiring interface's
// aggregates in another shape (one domain path); accounts and transfers live in src/connect.
//
// Where a URL's code is:
//   /v1/payments[/:id[/capture|/cancel]]     src/generic/payments.ts (registrar: a list of named handlers)
//   /v1/refunds[/:id]                        src/generic/refunds.ts (the same)
//   /v1/payment_intents[/:id[/confirm|/capture|/cancel]], /v1/charges[/:id]   src/generic/payment-intents.ts, charges.ts
//   /v1/customers[/:id]                      src/generic/customers.ts
//   /v1/payment_methods[/…], /v1/customers/:id/payment_methods   src/generic/payment-methods.ts
//   /v1/webhook_endpoints[/:id]             src/generic/webhook-endpoints.ts
//   /v1/events[/:id]                         src/generic/events.ts (deliveries: src/notifications/platform.ts, worker.ts)
//   /v1/disputes[/:id[/close]]               src/generic/disputes.ts (the aggregate: src/disputes)
//   /v1/account, /v1/accounts[/…]            src/connect/accounts.ts
//   /v1/transfers[/…]                        src/connect/transfers.ts
//   /v1/balance                              src/connect/balance.ts (registered by transfers.ts)
// The hooks of every generic route (Bearer key, rate limit, IP allow-list for reads, request-id)
// are genericRouteOptions in src/generic/auth.ts; the wire convention (errors, lists, metadata) is
// src/generic/wire.ts. This list sits with the app's assembly, above src/generic and src/connect.
import type { FastifyInstance } from 'fastify';
import { registerAccountRoutes } from '../connect/accounts.js';
import { connectObjectOf } from '../connect/events.js';
import { registerTransferRoutes } from '../connect/transfers.js';
import { registerCustomerRoutes } from '../generic/customers.js';
import { registerDisputeRoutes } from '../generic/disputes.js';
import { registerEventRoutes } from '../generic/events.js';
import { registerPaymentIntentRoutes } from '../generic/payment-intents.js';
import { registerPaymentMethodObjectRoutes } from '../generic/payment-methods.js';
import { registerGenericPaymentRoutes } from '../generic/payments.js';
import { registerGenericRefundRoutes } from '../generic/refunds.js';
import { registerWebhookEndpointRoutes } from '../generic/webhook-endpoints.js';
import type { RiskEngine } from '../risk/index.js';
import type { Deps } from '../web/context.js';

/** `risk` is the one risk engine of the app (the acquiring routes and the hosted checkout use it too). */
export function registerGenericRoutes(app: FastifyInstance, deps: Deps, risk: RiskEngine): void {
  registerGenericPaymentRoutes(app, deps, risk);
  registerPaymentIntentRoutes(app, deps, risk);
  registerGenericRefundRoutes(app, deps);
  registerCustomerRoutes(app, deps);
  registerPaymentMethodObjectRoutes(app, deps);
  registerAccountRoutes(app, deps);
  registerTransferRoutes(app, deps);
  registerWebhookEndpointRoutes(app, deps);
  registerEventRoutes(app, deps, connectObjectOf);
  registerDisputeRoutes(app, deps);
}
