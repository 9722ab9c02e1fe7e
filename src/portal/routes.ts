// The merchant portal under /portal (docs/contract.md §19): one Fastify scope with its own hooks
// (plugin.ts) and one file per group of pages. Every page and action calls the same domain
// functions as the API.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../http/context.js';
import { registerAuditPage } from './audit-page.js';
import type { PortalDeps } from './context.js';
import { registerDashboard } from './dashboard.js';
import { registerPayoutPages } from './payouts.js';
import { portalScope } from './plugin.js';
import { PortalSessions } from './sessions.js';
import { registerSettings } from './settings.js';
import { registerSignIn } from './signin.js';
import { registerSubscriptionPages } from './subscriptions.js';
import { registerTransaction } from './transaction.js';
import { registerTransactions } from './transactions.js';
import { PortalUsers } from './users.js';
import { registerUserPages } from './users-page.js';

export function portalDeps(deps: Deps): PortalDeps {
  return { ...deps, users: new PortalUsers(deps.store, deps.keyring), sessions: new PortalSessions(deps.store, deps.keyring) };
}

export async function registerPortal(app: FastifyInstance, deps: Deps): Promise<void> {
  const pdeps = portalDeps(deps);
  await app.register(
    async (scope) => {
      await portalScope(scope, pdeps);
      registerSignIn(scope, pdeps);
      registerDashboard(scope, pdeps);
      registerTransactions(scope, pdeps);
      registerTransaction(scope, pdeps);
      registerSubscriptionPages(scope, pdeps);
      registerPayoutPages(scope, pdeps);
      registerSettings(scope, pdeps);
      registerUserPages(scope, pdeps);
      registerAuditPage(scope, pdeps);
    },
    { prefix: '/portal' },
  );
}
