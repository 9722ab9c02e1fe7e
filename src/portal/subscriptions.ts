// Subscriptions in the portal (docs/contract.md §16, §19):
//   GET  /portal/subscriptions               the account's subscriptions, newest first, keyset-paginated
//   POST /portal/subscriptions/:id/cancel    cancel one (operate): first a page that asks, whose form
//                                            sends confirm=yes; then portalAction and the same
//                                            cancelSubscription as POST /v1/cancelsubscription
// Every read is scoped by the selected account: another account's or merchant's id is 404.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { SubscriptionRow } from '../db/tables/subscriptions.js';
import { formatAmount } from '../money/currency.js';
import { attrs, html } from '../pages/index.js';
import { chargesPaid } from '../subscriptions/schedule.js';
import { cancelSubscription } from '../subscriptions/service.js';
import {
  can,
  ctx,
  formSecrets,
  notFound,
  PathId,
  type PortalDeps,
  PortalError,
  type PortalRoute,
  portalAction,
  sendConfirmPage,
  sendPortalPage,
  withNotice,
} from './context.js';
import { cell, statusWords, when } from './format.js';

export const SUBSCRIPTIONS_PAGE_SIZE = 50;
const CURSOR = /^(\d{1,16})\.(rec_[A-Za-z0-9_-]{1,60})$/;

const ListQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 100, pattern: CURSOR.source })) });
/** A recurring id as the API issues them: printable ASCII (PostgreSQL refuses NUL in text; the portal's fuzz sent one). */
const CancelParams = Type.Object({ id: PathId });
/** `confirm=yes`: sent by the confirmation page's form; without it a live subscription's cancel only asks. */
const CancelBody = Type.Object(
  { csrf: Type.String({ maxLength: 100 }), form_token: Type.Optional(Type.String({ maxLength: 255 })), confirm: Type.Optional(Type.Literal('yes')) },
  { additionalProperties: false },
);

/** A subscription that still deducts, so one that can be cancelled. */
const live = (s: Pick<SubscriptionRow, 'status'>) => s.status === 'Active' || s.status === 'PastDue';
const price = (s: SubscriptionRow) => `${formatAmount(Number(s.contract_amount_minor), s.currency)} ${s.currency}`;

export const SUBSCRIPTIONS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/subscriptions', access: 'read', querystring: ListQuery, handler: subscriptionsPage },
  { method: 'POST', url: '/subscriptions/:id/cancel', access: 'operate', params: CancelParams, body: CancelBody, handler: cancelAction },
];

async function subscriptionsPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: { before?: string } }>, reply: FastifyReply) {
  const c = ctx(request);
  let q = deps.store.db.selectFrom('subscriptions').selectAll().where('account_id', '=', c.account.account_id);
  const cursor = request.query.before ? CURSOR.exec(request.query.before) : null;
  if (cursor) {
    const at = Number(cursor[1]);
    const id = cursor[2] as string;
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('recurring_id', '<', id)])]));
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('recurring_id', 'desc')
    .limit(SUBSCRIPTIONS_PAGE_SIZE + 1)
    .execute();
  const more = rows.length > SUBSCRIPTIONS_PAGE_SIZE;
  const page = more ? rows.slice(0, SUBSCRIPTIONS_PAGE_SIZE) : rows;
  const last = page[page.length - 1];
  const mayCancel = can(c.user.role, 'operate');
  const row = (s: SubscriptionRow) => {
    return html`<tr data-subscription-id="${s.recurring_id}" data-status="${s.status}">
${cell('Recurring id', s.recurring_id, 'code-cell wrap')}${cell('Contract name', s.contract_name, 'wrap')}${cell('Status', html`${statusWords(s.status)}${s.end_reason && html`<br><small>${s.end_reason}</small>`}`, 'status')}
${cell('Price', price(s), 'num')}${cell('Interval', `every ${s.interval_count} ${s.interval}`)}
${cell('Charges paid', chargesPaid(Number(s.charged_count), Number(s.billing_cycle)))}${cell('Next deduction (UTC)', when(s.next_at))}${cell('Created (UTC)', when(s.created_at))}
${cell(
  '',
  live(s) &&
    mayCancel &&
    html`<form method="post" action="/portal/subscriptions/${s.recurring_id}/cancel" class="inline">${formSecrets(request)}<button type="submit" ${attrs({ id: `cancel-${s.recurring_id}`, 'aria-label': `Cancel subscription ${s.contract_name}` })}>Cancel</button></form>`,
)}</tr>`;
  };
  const body = html`<p class="note">Cancelling stops every later deduction at once; nothing already paid is refunded.</p>
${
  page.length === 0
    ? html`<p id="subscriptions-empty">No subscriptions${request.query.before ? ' further back' : ''}.</p>`
    : html`<div class="scroll"><table id="subscriptions" class="stack"><thead><tr><th scope="col">Recurring id</th><th scope="col">Contract name</th><th scope="col">Status</th><th scope="col" class="num">Price</th><th scope="col">Interval</th><th scope="col">Charges paid</th><th scope="col">Next deduction (UTC)</th><th scope="col">Created (UTC)</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${page.map(row)}</tbody></table></div>`
}
${more && last && html`<p><a id="next-page" href="/portal/subscriptions?before=${`${Number(last.created_at)}.${last.recurring_id}`}">Older subscriptions</a></p>`}`;
  return sendPortalPage(request, reply, { title: 'Subscriptions', nav: 'subscriptions', body });
}

async function cancelAction(deps: PortalDeps, request: FastifyRequest<{ Params: { id: string }; Body: { confirm?: 'yes' } }>, reply: FastifyReply) {
  const c = ctx(request);
  const id = request.params.id;
  if (request.body.confirm !== 'yes') {
    // Asks first (issue 36 item 4); an unknown or ended one goes on to the refusal below, audited.
    const s = await deps.store.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('account_id', '=', c.account.account_id)
      .where('recurring_id', '=', id)
      .executeTakeFirst();
    if (s && live(s))
      return sendConfirmPage(request, reply, {
        title: 'Cancel the subscription?',
        nav: 'subscriptions',
        question: `Cancel the subscription “${s.contract_name}” of ${price(s)} every ${s.interval_count} ${s.interval} (${s.recurring_id})?`,
        consequence: 'No later deduction is made; nothing already paid is refunded. This cannot be undone.',
        action: `/portal/subscriptions/${s.recurring_id}/cancel`,
        id: 'confirm-cancel',
        label: 'Yes, cancel the subscription',
        back: '/portal/subscriptions',
      });
  }
  return portalAction(deps, request, reply, {
    action: 'subscription.cancel',
    target: id,
    need: 'operate',
    run: async () => {
      const out = await cancelSubscription(deps.store, c.account.account_id, id, undefined, deps.now());
      if (out.kind === 'not_found') throw notFound();
      if (out.kind === 'already_ended') throw new PortalError(409, `This subscription has already ended (${out.row.status}).`, '/portal/subscriptions');
      return withNotice('/portal/subscriptions', 'subscription_cancelled');
    },
  });
}
