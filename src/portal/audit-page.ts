// GET /portal/audit (docs/contract.md §19; PCI DSS 10.2): the merchant's audit log, newest first,
// keyset-paginated by audit_id (time-ordered, index portal_audit_merchant (merchant_id,
// audit_id)), filtered by action. The log is the merchant's (sign-ins are not tied to an
// account), so it is scoped by the signed-in user's merchant, never by a parameter.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { attrs, html } from '../pages/index.js';
import { auditLog } from './audit.js';
import { ctx, type PortalDeps, type PortalRoute, sendPortalPage } from './context.js';
import type { PortalAuditRow } from './tables.js';

export const AUDIT_PAGE_SIZE = 50;

const AuditQuery = Type.Object({
  before: Type.Optional(Type.String({ maxLength: 64, pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  action: Type.Optional(Type.String({ maxLength: 100, pattern: '^[a-z0-9_.]*$' })),
});

/** Actions offered in the filter besides those on the page (the portal's fixed vocabulary). */
const KNOWN_ACTIONS = [
  'signin',
  'signin.second_factor',
  'subscription.cancel',
  'payout.create',
  'user.password_set',
  'user.totp_enrol',
  'user.signout_everywhere',
];

const when = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

export const AUDIT_ROUTES: readonly PortalRoute[] = [{ method: 'GET', url: '/audit', access: 'manage', querystring: AuditQuery, handler: auditPage }];

async function auditPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: { before?: string; action?: string } }>, reply: FastifyReply) {
  const c = ctx(request);
  const action = request.query.action || undefined;
  const { rows, next } = await auditLog(deps.store, c.user.merchant_id, { before: request.query.before, action, limit: AUDIT_PAGE_SIZE });
  const actions = [...new Set([...KNOWN_ACTIONS, ...rows.map((r) => r.action), ...(action ? [action] : [])])].sort();
  const line = (r: PortalAuditRow) =>
    html`<tr data-audit-id="${r.audit_id}" data-outcome="${r.outcome}"><td>${when(Number(r.at))}</td><td>${r.email}</td><td class="action">${r.action}</td><td>${r.target}</td><td class="outcome">${r.outcome}</td><td>${r.ip}</td><td>${r.detail}</td></tr>`;
  const nextHref = next ? `/portal/audit?${new URLSearchParams({ ...(action ? { action } : {}), before: next }).toString()}` : '';
  const body = html`<form method="get" action="/portal/audit" class="inline" id="audit-filter"><label for="f-action">Action</label>
<select id="f-action" name="action"><option value="">All actions</option>${actions.map((a) => html`<option ${attrs({ value: a, selected: a === action })}>${a}</option>`)}</select>
<button type="submit">Filter</button></form>
${
  rows.length === 0
    ? html`<p id="audit-empty">No audit lines${action ? ` for ${action}` : ''}${request.query.before ? ' further back' : ''}.</p>`
    : html`<div class="scroll"><table id="audit"><thead><tr><th scope="col">Time (UTC)</th><th scope="col">User</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Outcome</th><th scope="col">IP</th><th scope="col">Detail</th></tr></thead>
<tbody>${rows.map(line)}</tbody></table></div>`
}
${nextHref && html`<p><a id="next-page" href="${nextHref}">Older lines</a></p>`}`;
  return sendPortalPage(request, reply, { title: 'Audit log', nav: 'audit', body });
}
