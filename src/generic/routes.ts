// The generic interface (docs/contract.md §12, §18; issue 13): Bearer keys, one wire convention
// (wire.ts), and the resources. Payments and refunds are the acquiring interface's
// aggregates in another shape (one domain path); accounts and transfers live in src/connect.
import type { FastifyInstance } from 'fastify';
import { registerAccountRoutes } from '../connect/accounts.js';
import { registerTransferRoutes } from '../connect/transfers.js';
import type { Deps } from '../http/context.js';
import type { RiskEngine } from '../risk/index.js';
import { registerGenericPaymentRoutes } from './payments.js';
import { registerGenericRefundRoutes } from './refunds.js';

/** `risk` is the one risk engine of the app (the acquiring routes and the hosted checkout use it too). */
export function registerGenericRoutes(app: FastifyInstance, deps: Deps, risk: RiskEngine): void {
  registerGenericPaymentRoutes(app, deps, risk);
  registerGenericRefundRoutes(app, deps);
  registerAccountRoutes(app, deps);
  registerTransferRoutes(app, deps);
}
