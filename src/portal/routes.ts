// The merchant portal under /portal (docs/contract.md §19): one Fastify scope with its own hooks
// (plugin.ts) and one file per group of pages. Every page and action calls the same domain
// functions as the API.
//
// Where a URL's code is (every path under /portal; each file's list names its handlers):
//   /  /setup/:token  /signin  /signin/code  /totp  /totp/start  /signout   signin.ts
//   /profile  /password  /signout-everywhere  /account                       profile.ts
//   /dashboard                                                             dashboard.ts
//   /transactions  /transactions.csv                                       transactions.ts
//   /transactions/:transaction_id[/capture|cancel|refund|review|notifications/…]   transaction.ts
//   /disputes                                                              disputes.ts
//   /disputes/:dispute_id[/evidence|accept]                                dispute.ts
//   /subscriptions[/:id/cancel]                                            subscriptions.ts
//   /payouts                                                               payouts.ts
//   /settlement  /settlement/:batch_id[.csv]                               settlement.ts
//   /reconciliation[/:run_id]                                              reconciliation.ts
//   /settings[/…]                                                          settings.ts
//   /processors[/set|/:processor_id/remove]                                processors.ts
//   /users[/:user_id/…]                                                    users-page.ts
//   /audit                                                                 audit-page.ts
// The hooks every route passes (session, access, CSRF, error pages) are in plugin.ts; the
// parser of forms with files (multipart, routes with `upload` only) in multipart.ts.
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../web/context.js';
import { AUDIT_ROUTES } from './audit-page.js';
import type { PortalDeps, PortalRoute } from './context.js';
import { DASHBOARD_ROUTES } from './dashboard.js';
import { DISPUTE_ROUTES } from './dispute.js';
import { DISPUTES_ROUTES } from './disputes.js';
import { registerMultipart } from './multipart.js';
import { PAYOUTS_ROUTES } from './payouts.js';
import { portalScope } from './plugin.js';
import { PROCESSORS_ROUTES } from './processors.js';
import { PROFILE_ROUTES } from './profile.js';
import { RECONCILIATION_ROUTES } from './reconciliation.js';
import { PortalSessions } from './sessions.js';
import { SETTINGS_ROUTES } from './settings.js';
import { SETTLEMENT_ROUTES } from './settlement.js';
import { SIGNIN_ROUTES } from './signin.js';
import { SUBSCRIPTIONS_ROUTES } from './subscriptions.js';
import { TRANSACTION_ROUTES } from './transaction.js';
import { TRANSACTIONS_ROUTES } from './transactions.js';
import { PortalUsers } from './users.js';
import { USERS_ROUTES } from './users-page.js';

/** Every portal route, in the order they are registered (the order they had before the table, and of PORTAL_ROUTES, which the fuzz run reads). */
export const PORTAL_ROUTE_TABLE: readonly PortalRoute[] = [
  ...SIGNIN_ROUTES,
  ...PROFILE_ROUTES,
  ...DASHBOARD_ROUTES,
  ...TRANSACTIONS_ROUTES,
  ...TRANSACTION_ROUTES,
  ...DISPUTES_ROUTES,
  ...DISPUTE_ROUTES,
  ...SUBSCRIPTIONS_ROUTES,
  ...PAYOUTS_ROUTES,
  ...SETTLEMENT_ROUTES,
  ...RECONCILIATION_ROUTES,
  ...SETTINGS_ROUTES,
  ...PROCESSORS_ROUTES,
  ...USERS_ROUTES,
  ...AUDIT_ROUTES,
];

export function portalDeps(deps: Deps): PortalDeps {
  return { ...deps, users: new PortalUsers(deps.store, deps.keyring), sessions: new PortalSessions(deps.store, deps.keyring) };
}

export async function registerPortal(app: FastifyInstance, deps: Deps): Promise<void> {
  const pdeps = portalDeps(deps);
  await app.register(
    async (scope) => {
      await portalScope(scope, pdeps);
      registerMultipart(scope);
      for (const route of PORTAL_ROUTE_TABLE) registerRoute(scope, pdeps, route);
    },
    { prefix: '/portal' },
  );
}

/** One route of the table: its access as `config.portal`, its schemas, hidden from the OpenAPI document; a form with files its body limit. */
function registerRoute(scope: FastifyInstance, deps: PortalDeps, r: PortalRoute): void {
  const schema = {
    hide: true,
    ...(r.params ? { params: r.params } : {}),
    ...(r.querystring ? { querystring: r.querystring } : {}),
    ...(r.body ? { body: r.body } : {}),
  };
  scope.route({
    method: r.method,
    url: r.url,
    config: { portal: r.access, ...(r.upload ? { portalUpload: true } : {}) },
    ...(r.upload ? { bodyLimit: Math.max(r.upload, deps.settings.body_limit_bytes) } : {}),
    schema,
    handler: (request, reply) => r.handler(deps, request, reply),
  });
}
