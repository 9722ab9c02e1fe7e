// Portal: the dispute list (docs/contract.md §19, §22; issue 34 item 4).
//   GET /portal/disputes   the selected account's disputes by evidence due date: those still open
//                          first, soonest due first (overdue ones at the top), each flagged when it
//                          still asks for a response within 3 days; then the closed ones, latest
//                          due first, keyset-paginated (`before`)
// One dispute, its evidence and its actions: dispute.ts. Every read is scoped by the selected
// account (and so by merchant and mode).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { DB } from '../db/schema.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { CLOSED_STATUSES, OPEN_STATUSES, takesEvidence } from '../disputes/states.js';
import { formatAmount } from '../money/currency.js';
import { attrs, html, type SafeHtml } from '../pages/index.js';
import { ctx, type PortalDeps, type PortalRoute, sendPortalPage } from './context.js';
import { cell, statusWords, when } from './format.js';

/** The window of the "due soon" flag, as the CLI's `disputes list --due-within 3d`. */
export const DUE_SOON_MS = 3 * 24 * 3600 * 1000;
/** Open disputes one page shows at most (an account has a handful; the bound is docs/style.md §9). */
export const OPEN_MAX = 200;
export const CLOSED_PAGE_SIZE = 50;
const CURSOR = /^(\d{1,16})\.([A-Za-z0-9_-]{1,64})$/;

const ListQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 100, pattern: CURSOR.source })) });

/** A dispute that still asks for a response and is due within 3 days of `now` (overdue ones too): the CLI's rule. */
export const dueSoon = (d: Pick<DisputeRow, 'status' | 'evidence_due_by'>, now: number): boolean =>
  takesEvidence(d.status) && Number(d.evidence_due_by) <= now + DUE_SOON_MS;

export const disputePath = (id: string) => `/portal/disputes/${encodeURIComponent(id)}`;
export const disputeMoney = (d: Pick<DisputeRow, 'amount_minor' | 'currency'>) => `${formatAmount(Number(d.amount_minor), d.currency)} ${d.currency}`;

/** The reason code in words: `product_not_received` → `product not received`. */
export const reasonWords = (reason: string) => reason.replace(/_/g, ' ');

/** The account's disputes of one mode: the index disputes_account_due (account_id, livemode, evidence_due_by) bounds each read. */
export function accountDisputes(db: Kysely<DB>, account: Pick<AccountRow, 'account_id' | 'mode'>) {
  return db
    .selectFrom('disputes')
    .selectAll()
    .where('account_id', '=', account.account_id)
    .where('livemode', '=', account.mode === 'live' ? 1 : 0);
}

export const DISPUTES_ROUTES: readonly PortalRoute[] = [{ method: 'GET', url: '/disputes', access: 'read', querystring: ListQuery, handler: disputesPage }];

/** The flag of a dispute due soon (words, not only colour). */
export function dueFlag(d: DisputeRow, now: number): SafeHtml {
  if (!dueSoon(d, now)) return html``;
  const overdue = Number(d.evidence_due_by) < now;
  return html` <strong class="error due-soon">${overdue ? 'Overdue' : 'Due within 3 days'}</strong>`;
}

function disputeRow(d: DisputeRow, now: number): SafeHtml {
  return html`<tr ${attrs({ 'data-dispute-id': d.dispute_id, 'data-status': d.status, 'data-due-soon': dueSoon(d, now) ? 'yes' : undefined })}>
${cell('Due (UTC)', html`<span class="due">${when(d.evidence_due_by)}</span>${dueFlag(d, now)}`, 'due-cell')}
${cell('Dispute', html`<a href="${disputePath(d.dispute_id)}">${d.dispute_id}</a>`, 'code-cell wrap')}
${cell('Status', statusWords(d.status), 'status')}${cell('Reason', reasonWords(d.reason), 'reason')}
${cell('Amount', disputeMoney(d), 'num amount')}
${cell('Payment', html`<a href="/portal/transactions/${encodeURIComponent(d.transaction_id)}">${d.transaction_id}</a><br><small>${d.order_no}</small>`, 'wrap')}
${cell('Opened (UTC)', when(d.created_at))}</tr>`;
}

function disputeTable(id: string, rows: readonly DisputeRow[], now: number): SafeHtml {
  return html`<div class="scroll"><table id="${id}" class="stack"><thead><tr><th scope="col">Due (UTC)</th><th scope="col">Dispute</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col" class="num">Amount</th><th scope="col">Payment</th><th scope="col">Opened (UTC)</th></tr></thead>
<tbody>${rows.map((d) => disputeRow(d, now))}</tbody></table></div>`;
}

/** The closed disputes after `before` (latest due first), one more to know if there is a next page. */
function closedDisputes(deps: PortalDeps, account: AccountRow, before: string | undefined): Promise<DisputeRow[]> {
  let q = accountDisputes(deps.store.db, account).where('status', 'in', [...CLOSED_STATUSES]);
  const cursor = before ? CURSOR.exec(before) : null;
  if (cursor) {
    const at = Number(cursor[1]);
    const id = cursor[2] as string;
    q = q.where((eb) => eb.or([eb('evidence_due_by', '<', at), eb.and([eb('evidence_due_by', '=', at), eb('dispute_id', '<', id)])]));
  }
  return q
    .orderBy('evidence_due_by', 'desc')
    .orderBy('dispute_id', 'desc')
    .limit(CLOSED_PAGE_SIZE + 1)
    .execute();
}

async function disputesPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: { before?: string } }>, reply: FastifyReply) {
  const c = ctx(request);
  const now = deps.now();
  const before = request.query.before;
  const [open, closed] = await Promise.all([
    before
      ? Promise.resolve([])
      : accountDisputes(deps.store.db, c.account)
          .where('status', 'in', [...OPEN_STATUSES])
          .orderBy('evidence_due_by')
          .orderBy('dispute_id')
          .limit(OPEN_MAX)
          .execute(),
    closedDisputes(deps, c.account, before),
  ]);
  const more = closed.length > CLOSED_PAGE_SIZE;
  const page = more ? closed.slice(0, CLOSED_PAGE_SIZE) : closed;
  const last = page[page.length - 1];
  const soon = open.filter((d) => dueSoon(d, now)).length;
  const body = html`<p class="note">A dispute that asks for a response (needs response) takes evidence until its due date; one unanswered by then is lost. Those due within 3 days are flagged.</p>
${
  before
    ? html``
    : html`<h2>Open</h2>
<p id="open-count">${open.length} open${soon > 0 && html`, <strong class="error" id="due-soon-count">${soon} due within 3 days</strong>`}.</p>
${open.length === 0 ? html`<p id="open-empty">No open disputes.</p>` : disputeTable('open-disputes', open, now)}`
}
<h2>Closed</h2>
${page.length === 0 ? html`<p id="closed-empty">No closed disputes${before ? ' further back' : ''}.</p>` : disputeTable('closed-disputes', page, now)}
${more && last && html`<p><a id="next-page" href="/portal/disputes?before=${`${Number(last.evidence_due_by)}.${last.dispute_id}`}">Older closed disputes</a></p>`}`;
  return sendPortalPage(request, reply, { title: 'Disputes', nav: 'disputes', body });
}
