// Payouts in the portal (docs/contract.md §17, §19):
//   GET  /portal/payouts    the account's payouts, newest first, keyset-paginated; the available balance; the form
//   POST /portal/payouts    create one (manage), through portalAction and the same requestPayout as POST /v1/payout
// The form offers a subset of the API's request: a saved beneficiary (beneficiary_id) or a new
// one with the bank fields of one rail (IBAN; account number and bank code; SWIFT code), one
// amount (what the beneficiary receives), LOCAL or SWIFT, an optional later date. The request
// it builds is checked against the API's own schema (PayoutBody) and then by the same checks
// (the request as the core's command, then the core's), so a refusal reads as the API's
// would. A payout's record is its request, which is why the form fills one in. Its
// request_id is derived from the form token: a form submitted twice is one payout even past
// the form-token store (a known request_id is replayed).

import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { PayoutRow } from '../db/tables/payouts.js';
import { accountBalances } from '../ledger/balances.js';
import { formatAmount } from '../money/currency.js';
import { attrs, field, html, type SafeHtml } from '../pages/index.js';
import { requestPayout } from '../payouts/request.js';
import { PayoutBody, type PayoutRequest } from '../payouts/schema.js';
import { asApiError } from '../web/outcomes.js';
import { can, ctx, formSecrets, type PortalDeps, PortalError, type PortalRoute, portalAction, sendPortalPage, withNotice } from './context.js';
import { cell, statusWords, when } from './format.js';

export const PAYOUTS_PAGE_SIZE = 50;
/** Saved beneficiaries offered in the form (newest first). */
const MAX_BENEFICIARIES = 200;
const CURSOR = /^(\d{1,16})\.([A-Za-z0-9]{1,64})$/;

const ListQuery = Type.Object({ before: Type.Optional(Type.String({ maxLength: 100, pattern: CURSOR.source })) });

const opt = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
/** The form's fields: bounded here; their shapes are checked on the assembled request by the API's schema. */
const CreateBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 100 }),
    form_token: opt(255),
    source_currency: Type.String({ maxLength: 3 }),
    payment_currency: opt(3),
    payment_amount: Type.String({ maxLength: 19 }),
    payment_method: Type.String({ maxLength: 5 }),
    payment_date: opt(10),
    reason: Type.String({ maxLength: 140 }),
    reference: Type.String({ maxLength: 140 }),
    beneficiary_id: opt(45),
    entity_type: opt(8),
    company_name: opt(100),
    first_name: opt(100),
    last_name: opt(100),
    country_code: opt(2),
    account_name: opt(140),
    iban: opt(42),
    account_number: opt(34),
    bank_code: opt(20),
    swift_code: opt(11),
  },
  { additionalProperties: false },
);
type CreateForm = Omit<Record<keyof (typeof CreateBody)['properties'], string | undefined>, 'csrf'>;

/** The API's request less what the portal supplies itself (identity, signature). */
const PortalPayoutRequest = Type.Omit(PayoutBody, ['merchant_id', 'account_id', 'encryption_data']);

/** A UUID from the form token: the same form is the same payout request. */
export function requestIdOf(user_id: string, form_token: string): string {
  const h = createHash('sha256').update(`portal payout\n${user_id}\n${form_token}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const given = (v: string | undefined) => {
  const t = v?.trim();
  return t ? t : undefined;
};
const upper = (v: string | undefined) => given(v)?.toUpperCase();

/** The API request the form describes (empty fields left out), or the first schema problem, named by the API's field path. */
export function payoutRequestOf(
  form: CreateForm,
  request_id: string,
): { ok: true; request: Omit<PayoutRequest, 'merchant_id' | 'account_id' | 'encryption_data'> } | { ok: false; problem: string } {
  const source_currency = upper(form.source_currency) ?? '';
  const beneficiary_id = given(form.beneficiary_id);
  const bank_details = Object.fromEntries(
    Object.entries({
      account_name: given(form.account_name),
      iban: upper(form.iban),
      account_number: given(form.account_number),
      bank_code: given(form.bank_code),
      swift_code: upper(form.swift_code),
      bank_country_code: upper(form.country_code),
    }).filter(([, v]) => v !== undefined),
  );
  const entity_type = upper(form.entity_type);
  const beneficiary = Object.fromEntries(
    Object.entries({
      entity_type,
      company_name: entity_type === 'COMPANY' ? given(form.company_name) : undefined,
      first_name: entity_type === 'PERSONAL' ? given(form.first_name) : undefined,
      last_name: entity_type === 'PERSONAL' ? given(form.last_name) : undefined,
      address: upper(form.country_code) ? { country_code: upper(form.country_code) } : undefined,
      bank_details: Object.keys(bank_details).length ? bank_details : undefined,
    }).filter(([, v]) => v !== undefined),
  );
  const request = Object.fromEntries(
    Object.entries({
      request_id,
      source_currency,
      payment_currency: upper(form.payment_currency) ?? source_currency,
      payment_amount: given(form.payment_amount),
      payment_method: upper(form.payment_method),
      payment_date: given(form.payment_date),
      reason: given(form.reason),
      reference: given(form.reference),
      ...(beneficiary_id ? { beneficiary_id } : { beneficiary }),
    }).filter(([, v]) => v !== undefined),
  );
  const first = Value.Errors(PortalPayoutRequest, request)[0];
  if (first) {
    const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const missing = (first.params as { requiredProperties?: string[] }).requiredProperties;
    return {
      ok: false,
      problem: missing?.length ? `${[path, missing.join(', ')].filter(Boolean).join('.')}: required` : `${path || 'request'} ${first.message}`,
    };
  }
  return { ok: true, request: request as unknown as Omit<PayoutRequest, 'merchant_id' | 'account_id' | 'encryption_data'> };
}

/** The merchant's own reference of a payout (the one the beneficiary sees), from the request's echo. */
function referenceOf(p: PayoutRow): string {
  try {
    const d = JSON.parse(p.details || '{}') as { reference?: unknown };
    return typeof d.reference === 'string' ? d.reference : '';
  } catch {
    return '';
  }
}

/** The settlement batches the payout paid (its record's `settlement_batches`), each linked to its batch page. */
function paidBatches(p: PayoutRow): SafeHtml | '' {
  let parts: Array<{ batch_id: string; day: string; amount: number }> = [];
  try {
    parts = JSON.parse(p.settlement_batches || '[]');
  } catch {
    parts = [];
  }
  if (parts.length === 0) return '';
  return html`<br><small class="batches">Paid batches: ${parts.map(
    (x, i) =>
      html`${i > 0 ? ', ' : ''}<a href="/portal/settlement/${encodeURIComponent(x.batch_id)}" data-batch-id="${x.batch_id}">${x.day}</a> (${formatAmount(x.amount, p.source_currency)})`,
  )}</small>`;
}

/** One payout; `names` maps beneficiary ids to their saved label (name, country, clearing system, last four). */
function payoutRow(p: PayoutRow, names: ReadonlyMap<string, string>): SafeHtml {
  const name = names.get(p.beneficiary_id);
  return html`<tr data-payout-id="${p.transaction_id}" data-status="${p.status}">${cell('Created (UTC)', when(p.created_at))}${cell(
    'Reference',
    html`<span class="reference">${referenceOf(p)}</span><br><small>${p.short_reference_id} · ${p.transaction_id}</small>${paidBatches(p)}`,
    'code-cell wrap',
  )}
${cell('Status', html`${statusWords(p.status)}${p.failure_reason && html`<br><small class="failure">${p.failure_reason}</small>`}`, 'status')}
${cell('Method', `${p.payment_method}${p.local_clearing_system && ` (${p.local_clearing_system})`}`)}${cell(
  'Beneficiary',
  html`<span class="beneficiary">${name ?? p.beneficiary_id}</span>${name !== undefined && html`<br><small>${p.beneficiary_id}</small>`}`,
  'wrap',
)}
${cell('You pay', `${formatAmount(Number(p.amount_payer_pays), p.source_currency)} ${p.source_currency}`, 'num')}
${cell('Beneficiary receives', `${formatAmount(Number(p.amount_beneficiary_receives), p.payment_currency)} ${p.payment_currency}`, 'num')}
${cell('Fee', formatAmount(Number(p.fee_amount), p.source_currency), 'num')}${cell('Pay on', p.payment_date)}</tr>`;
}

/** The saved labels of the beneficiaries `rows` pay (one query for the page). */
async function beneficiaryNames(deps: PortalDeps, account_id: string, rows: PayoutRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => r.beneficiary_id).filter(Boolean))];
  if (ids.length === 0) return new Map();
  const found = await deps.store.db
    .selectFrom('beneficiaries')
    .select(['beneficiary_id', 'label'])
    .where('account_id', '=', account_id)
    .where('beneficiary_id', 'in', ids)
    .execute();
  return new Map(found.filter((b) => b.label).map((b) => [b.beneficiary_id, b.label]));
}

type PageOptions = { before?: string; error?: string; values?: Partial<CreateForm> };

export const PAYOUTS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/payouts', access: 'read', querystring: ListQuery, handler: listPage },
  { method: 'POST', url: '/payouts', access: 'manage', body: CreateBody, handler: createAction },
];

async function listPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: { before?: string } }>, reply: FastifyReply) {
  return payoutsPage(deps, request, reply, { before: request.query.before });
}

async function createAction(deps: PortalDeps, request: FastifyRequest<{ Body: CreateForm & { csrf: string } }>, reply: FastifyReply) {
  const c = ctx(request);
  const { csrf: _csrf, ...form } = request.body;
  try {
    return await portalAction(deps, request, reply, {
      action: 'payout.create',
      target: form.beneficiary_id || 'new beneficiary',
      need: 'manage',
      detail: `${form.payment_amount} ${form.payment_currency || form.source_currency} ${form.payment_method}`.slice(0, 100),
      run: async () => {
        const built = payoutRequestOf(form, requestIdOf(c.user.user_id, form.form_token ?? ''));
        if (!built.ok) throw new PortalError(400, built.problem, '/portal/payouts');
        const sent: PayoutRequest = { ...built.request, merchant_id: c.account.merchant_id, account_id: c.account.account_id, encryption_data: '' };
        let row: PayoutRow;
        try {
          ({ row } = await requestPayout(deps, c.account, sent, deps.now()));
        } catch (e) {
          const api = asApiError(e);
          if (api && api.http < 500) throw new PortalError(api.http, api.detail ?? api.message, '/portal/payouts');
          throw e;
        }
        return withNotice('/portal/payouts', row.status === 'FAILED' ? 'payout_failed' : 'payout_created');
      },
    });
  } catch (e) {
    // A refusal of the form shows the form again, filled in, with the reason.
    if (e instanceof PortalError && e.status === 400) return payoutsPage(deps, request, reply, { error: e.message, values: form });
    throw e;
  }
}

/** A page of the account's payouts (keyset: older than `before`), newest first, one more to know if there is a next page. */
async function payoutsOf(deps: PortalDeps, account_id: string, before: string | undefined): Promise<PayoutRow[]> {
  let q = deps.store.db.selectFrom('payouts').selectAll().where('account_id', '=', account_id);
  const cursor = before ? CURSOR.exec(before) : null;
  if (cursor) {
    const at = Number(cursor[1]);
    const id = cursor[2] as string;
    q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('transaction_id', '<', id)])]));
  }
  return q
    .orderBy('created_at', 'desc')
    .orderBy('transaction_id', 'desc')
    .limit(PAYOUTS_PAGE_SIZE + 1)
    .execute();
}

async function payoutsPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, o: PageOptions = {}): Promise<FastifyReply> {
  const c = ctx(request);
  const account_id = c.account.account_id;
  const [rows, balances] = await Promise.all([payoutsOf(deps, account_id, o.before), accountBalances(deps.store.db, account_id)]);
  const more = rows.length > PAYOUTS_PAGE_SIZE;
  const page = more ? rows.slice(0, PAYOUTS_PAGE_SIZE) : rows;
  const last = page[page.length - 1];
  const names = await beneficiaryNames(deps, account_id, page);
  const mayCreate = can(c.user.role, 'manage');
  const beneficiaries = mayCreate
    ? await deps.store.db
        .selectFrom('beneficiaries')
        .select(['beneficiary_id', 'label'])
        .where('account_id', '=', account_id)
        .orderBy('created_at', 'desc')
        .limit(MAX_BENEFICIARIES)
        .execute()
    : [];
  const form = mayCreate && payoutForm(request, balances, beneficiaries, o);
  const body = html`<h2>Available balance</h2>
${
  balances.length === 0
    ? html`<p id="available-empty">No balance yet in this account.</p>`
    : html`<div class="scroll"><table id="available"><thead><tr><th scope="col">Currency</th><th scope="col" class="num">Available</th><th scope="col" class="num">Reserved for payouts</th></tr></thead>
<tbody>${balances.map((b) => html`<tr data-currency="${b.currency}"><th scope="row">${b.currency}</th><td class="num available">${formatAmount(b.available_minor, b.currency)}</td><td class="num">${formatAmount(b.payouts_reserved_minor, b.currency)}</td></tr>`)}</tbody></table></div>`
}
${form}
<h2>Payouts</h2>
${
  page.length === 0
    ? html`<p id="payouts-empty">No payouts${o.before ? ' further back' : ''}.</p>`
    : html`<div class="scroll"><table id="payouts" class="stack"><thead><tr><th scope="col">Created (UTC)</th><th scope="col">Reference</th><th scope="col">Status</th><th scope="col">Method</th><th scope="col">Beneficiary</th><th scope="col" class="num">You pay</th><th scope="col" class="num">Beneficiary receives</th><th scope="col" class="num">Fee</th><th scope="col">Pay on</th></tr></thead>
<tbody>${page.map((p) => payoutRow(p, names))}</tbody></table></div>`
}
${more && last && html`<p><a id="next-page" href="/portal/payouts?before=${`${Number(last.created_at)}.${last.transaction_id}`}">Older payouts</a></p>`}`;
  return sendPortalPage(request, reply, { title: 'Payouts', nav: 'payouts', body, status: o.error ? 400 : undefined });
}

function select(name: string, label: string, options: ReadonlyArray<readonly [string, string]>, value: string | undefined): SafeHtml {
  return html`<label for="f-${name}">${label}</label><select id="f-${name}" name="${name}">${options.map(
    ([val, text]) => html`<option ${attrs({ value: val, selected: val === (value ?? '') })}>${text}</option>`,
  )}</select>`;
}

/** The form is one template of the API request's fields: long by its HTML, not its logic. */
function payoutForm(
  request: FastifyRequest,
  balances: Awaited<ReturnType<typeof accountBalances>>,
  beneficiaries: ReadonlyArray<{ beneficiary_id: string; label: string }>,
  o: PageOptions,
): SafeHtml {
  const v = o.values ?? {};
  return html`<h2 id="create">New payout</h2>
<form method="post" action="/portal/payouts" id="payout-form">${formSecrets(request)}
${o.error && html`<p class="error" id="payout-error" role="alert">${o.error}</p>`}
<div class="filters">
${select(
  'source_currency',
  'From balance',
  balances.map((b) => [b.currency, `${b.currency} (available ${formatAmount(b.available_minor, b.currency)})`] as const),
  v.source_currency,
)}
${field({ name: 'payment_amount', label: 'Amount the beneficiary receives', inputmode: 'decimal', required: true, maxlength: 19, value: v.payment_amount, placeholder: '100.00' })}
${field({ name: 'payment_currency', label: 'In currency (default: the balance’s)', maxlength: 3, value: v.payment_currency, placeholder: 'USD' })}
${select(
  'payment_method',
  'Method',
  [
    ['LOCAL', 'LOCAL (the country’s clearing system)'],
    ['SWIFT', 'SWIFT'],
  ],
  v.payment_method,
)}
${field({ name: 'payment_date', label: 'Pay on (UTC, YYYY-MM-DD; empty: today)', maxlength: 10, value: v.payment_date, pattern: '\\d{4}-\\d{2}-\\d{2}' })}
${field({ name: 'reason', label: 'Reason', required: true, maxlength: 140, value: v.reason })}
${field({ name: 'reference', label: 'Reference the beneficiary sees', required: true, maxlength: 140, value: v.reference })}
</div>
<fieldset><legend>Beneficiary</legend>
${select('beneficiary_id', 'Saved beneficiary', [['', 'A new beneficiary (below)'], ...beneficiaries.map((b) => [b.beneficiary_id, `${b.label} (${b.beneficiary_id})`] as const)], v.beneficiary_id)}
<div class="filters">
${select(
  'entity_type',
  'Kind',
  [
    ['COMPANY', 'Company'],
    ['PERSONAL', 'Person'],
  ],
  v.entity_type,
)}
${field({ name: 'company_name', label: 'Company name', maxlength: 100, value: v.company_name })}
${field({ name: 'first_name', label: 'First name (person)', maxlength: 100, value: v.first_name })}
${field({ name: 'last_name', label: 'Last name (person)', maxlength: 100, value: v.last_name })}
${field({ name: 'country_code', label: 'Country (two letters)', maxlength: 2, value: v.country_code, placeholder: 'US' })}
${field({ name: 'account_name', label: 'Account holder’s name', maxlength: 140, value: v.account_name })}
${field({ name: 'iban', label: 'IBAN (SEPA and other IBAN rails)', maxlength: 42, value: v.iban })}
${field({ name: 'account_number', label: 'Account number', maxlength: 34, value: v.account_number })}
${field({ name: 'bank_code', label: 'Bank code (routing number, sort code, BSB, …)', maxlength: 20, value: v.bank_code })}
${field({ name: 'swift_code', label: 'SWIFT code (BIC)', maxlength: 11, value: v.swift_code })}
</div></fieldset>
<p class="actions"><button type="submit" class="primary" id="create-payout">Create payout</button></p></form>`;
}
