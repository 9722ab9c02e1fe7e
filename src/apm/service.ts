// Alternative-method payments (docs/contract.md §15): `POST /v1/authorise` with `payment_method`,
// and the same start when a shopper picks a method on the hosted checkout page.
//
// Order of work: schema (400) → the method is offered to this account, currency and
// billing country (else 404) → the method's required fields (400 naming the field) → a
// repeat of a known order_no is answered from storage → the connector starts the payment
// (processor interface) → one transaction writes the payment (`pending`, `0003`), the
// issuer page and the `payment.pending` event → the signed answer with `issuer_url`.
// The shopper's outcome on the issuer page, or the method's deadline, ends it
// (`completeApm`, the expiry job): captured (or authorised with manual capture), declined,
// or expired, each ledgered and notified like a card payment.

import { createHash } from 'node:crypto';
import { validateBody } from '../authorise/acquiring.js';
import { apmAnswerRecord, apmDuplicateAnswer } from '../authorise/answer.js';
import { KEPT_FIELDS as CARD_KEPT_FIELDS } from '../authorise/command.js';
import { newId } from '../crypto/ids.js';
import { canonicalString } from '../crypto/signature.js';
import { insertRows } from '../db/prepared.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { AccountCredentials } from '../merchants/service.js';
import { type ApmMethod, apmMethod } from '../methods/catalogue.js';
import { enabledMethods } from '../methods/enablement.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { movePayment } from '../payments/engine.js';
import { recordPaymentEvent } from '../payments/events.js';
import { paymentById, paymentByOrderNo } from '../payments/reader.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import type { Deps } from '../web/context.js';
import { ApiError, invalid } from '../web/errors.js';
import { checkApmFields } from './fields.js';
import type { IssuerPageRow } from './tables.js';

/** Card fields an APM payment must not carry (the shopper pays at the issuer). */
const CARD_ONLY = ['card', 'expiration_month', 'expiration_year', 'security_code', 'token_id'] as const;

export const ISSUER_PAGE_ID = /^[A-Za-z0-9_-]{32}$/;
export const hashIssuerId = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Request fields an APM payment keeps: a card payment's, and its method (no document numbers). */
const KEPT_FIELDS = [...CARD_KEPT_FIELDS.filter((f) => f !== 'subscription'), 'payment_method', 'bank_code'] as const;

/** The method's required fields as flat `path → value` strings for the connector. */
function methodFields(method: ApmMethod, body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { path } of method.required) {
    let here: unknown = body;
    for (const part of path.split('.')) here = here && typeof here === 'object' ? (here as Record<string, unknown>)[part] : undefined;
    if (typeof here === 'string') out[path] = here;
  }
  return out;
}

export class ApmService {
  constructor(private readonly deps: Deps) {}

  /** The method if the account offers it for this currency and billing country; else the 404 of §15. */
  async offered(account: Pick<AccountRow, 'account_id' | 'mode'>, payment_method: string, currency: string, billing_country: string): Promise<ApmMethod> {
    const method = apmMethod(payment_method);
    if (!method) throw new ApiError('0404', `payment_method "${payment_method}" is not a payment method of the catalogue`, 'payment_method');
    const offered = await enabledMethods(this.deps.store.db, account, currency, billing_country);
    if (!offered.some((m) => m.payment_method === payment_method)) {
      throw new ApiError(
        '0404',
        `payment_method "${payment_method}" is not offered by this account for ${currency}${billing_country ? ` and billing_country ${billing_country}` : ' without a billing_country'}`,
        'payment_method',
      );
    }
    return method;
  }

  /** The checks of an APM request after its schema; the amount in minor units and the method. */
  private async check(creds: AccountCredentials, body: AuthoriseDirect): Promise<{ amount_minor: number; method: ApmMethod }> {
    for (const f of CARD_ONLY) if (body[f] !== undefined && body[f] !== '') throw invalid(f, 'is not sent with payment_method: the shopper pays at the issuer');
    // docs/contract.md §16: deductions charge a stored card; an alternative method leaves none.
    if (body.subscription !== undefined) throw invalid('subscription', 'needs a card payment: later deductions charge the stored card');
    const amount_minor = validateBody(body);
    const method = await this.offered(creds.account, body.payment_method as string, body.currency, body.billing_country ?? '');
    const problem = checkApmFields(method, body as Record<string, unknown>);
    if (problem) throw problem;
    if (!body.return_url) throw invalid('return_url', `is required for ${method.payment_method}: the shopper returns there from the issuer's page`);
    await requireSafeNotifyUrl(body.notify_url, this.deps.settings.allow_private_webhooks); // docs/contract.md §11
    return { amount_minor, method };
  }

  /** `POST /v1/authorise` with `payment_method`: the answer record (signed by the route). */
  async authorise(creds: AccountCredentials, body: AuthoriseDirect): Promise<Record<string, unknown>> {
    const { amount_minor, method } = await this.check(creds, body);
    const request_hash = this.deps.keyring.fingerprint(canonicalString(body as Record<string, unknown>));
    const prior = await this.existing(creds.account.account_id, body.order_no);
    if (prior) return prior.request_hash === request_hash ? (JSON.parse(prior.answer) as Record<string, unknown>) : apmDuplicateAnswer(body);
    const started = await this.start(creds, body, method, amount_minor, request_hash, null);
    if (started.kind === 'started') return started.record;
    const winner = await this.existing(creds.account.account_id, body.order_no);
    if (!winner) throw new Error('order race without a winner');
    return winner.request_hash === request_hash ? (JSON.parse(winner.answer) as Record<string, unknown>) : apmDuplicateAnswer(body);
  }

  /**
   * The shopper chose a method on the hosted checkout page: the same checks and start, on
   * the session's pending payment. Null when the session was paid (or cancelled) first.
   */
  async startOnCheckout(creds: AccountCredentials, body: AuthoriseDirect, pending: PaymentRow): Promise<{ issuer_url: string } | null> {
    const { method } = await this.check(creds, body);
    const started = await this.start(creds, body, method, pending.amount_minor, pending.request_hash, pending);
    return started.kind === 'started' ? { issuer_url: started.issuer_url } : null;
  }

  private existing(account_id: string, order_no: string): Promise<PaymentRow | undefined> {
    return paymentByOrderNo(this.deps.store.db, account_id, order_no);
  }

  private async start(
    creds: AccountCredentials,
    body: AuthoriseDirect,
    method: ApmMethod,
    amount_minor: number,
    request_hash: string,
    pending: PaymentRow | null,
  ): Promise<{ kind: 'started'; record: Record<string, unknown>; issuer_url: string } | { kind: 'lost' }> {
    const { deps } = this;
    const account = creds.account;
    const processor = deps.processorFor(account);
    if (!processor) throw new ApiError('1016', 'this account is in live mode and no processor is configured for it');
    if (!processor.startApm)
      throw new ApiError('0404', `payment_method "${method.payment_method}" is not served by this account's processor`, 'payment_method');
    const now = deps.now();
    const transaction_id = pending ? pending.transaction_id : newId('payment', now);
    const started = await processor.startApm({
      transaction_id,
      payment_method: method.payment_method,
      amount_minor,
      currency: body.currency,
      fields: methodFields(method, body as Record<string, unknown>),
    });
    const page_id = newId('apm_page'); // 32 url-safe characters, 192 random bits
    const issuer_url = started.issuer.kind === 'url' ? started.issuer.url : `${deps.settings.public_url}/issuer/${page_id}`;
    const expires_at = now + method.expiry_ms;

    const row = startedRow({
      account,
      body,
      method,
      amount_minor,
      request_hash,
      pending,
      transaction_id,
      reference: started.reference,
      connector: processor.name,
      now,
      expires_at,
    });
    const record = apmAnswerRecord(row, issuer_url);
    row.answer = JSON.stringify(record);
    const page = started.issuer.kind === 'gateway_page' ? issuerPage(page_id, transaction_id, account, method, now, expires_at) : null;

    const won = await deps.store
      .transaction(async (tx) => {
        if (pending) {
          const { transaction_id: _t, status: _s, account_id: _a, merchant_id: _m, ...patch } = row;
          if (!(await applyTransition(tx, transaction_id, 'checkout_pay', 'pending', 'pending', patch, now, { unclaimed: true }))) throw new Lost();
        } else {
          const r = await insertRows(tx, 'payments', [row], { ignoreConflictOn: ['account_id', 'order_no'] });
          if (Number(r.numAffectedRows ?? 0) !== 1) throw new Lost();
        }
        if (page) await tx.insertInto('apm_issuer_pages').values(page).execute();
        await recordPaymentEvent(tx, row, 'payment.pending', now);
        return true;
      })
      .catch((e) => {
        if (e instanceof Lost) return false;
        throw e;
      });
    if (!won) return { kind: 'lost' };
    deps.metrics.payments.inc({ outcome: '0003' });
    return { kind: 'started', record, issuer_url };
  }
}

/** The row of a started APM payment: a new payment, or the hosted checkout's pending one with its method chosen. */
function startedRow(o: {
  account: AccountCredentials['account'];
  body: AuthoriseDirect;
  method: ApmMethod;
  amount_minor: number;
  request_hash: string;
  pending: PaymentRow | null;
  transaction_id: string;
  reference: string;
  connector: string;
  now: number;
  expires_at: number;
}): PaymentRow {
  const { account, body, method, amount_minor, request_hash, pending, transaction_id, reference, connector, now, expires_at } = o;
  const details: Record<string, unknown> = pending ? (JSON.parse(pending.details || '{}') as Record<string, unknown>) : {};
  if (!pending) for (const k of KEPT_FIELDS) if (body[k] !== undefined) details[k] = body[k];
  details.payment_method = method.payment_method;
  if (body.bank_code) details.bank_code = body.bank_code;
  details.reference_no = reference;

  const row: PaymentRow = {
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    order_no: body.order_no,
    kind: pending ? pending.kind : 'apm',
    livemode: account.mode === 'live' ? 1 : 0,
    currency: body.currency,
    amount_minor,
    authorised_minor: 0, // nothing is reserved until the shopper pays
    captured_minor: 0,
    refunded_minor: 0,
    status: 'pending',
    capture_method: (body.capture_method ?? account.capture_method) as 'automatic' | 'manual',
    result_code: '0003',
    card_id: null,
    // The ranking counts a payment under this column: the card brand, or the APM's name.
    card_brand: method.payment_method,
    card_masked: '',
    connector,
    is3ds: 0,
    threeds_result: '',
    risk_score: null,
    risk_action: '',
    risk_reasons: '[]',
    notify_url: pending ? pending.notify_url : (body.notify_url ?? ''),
    return_url: pending ? pending.return_url : (body.return_url ?? ''),
    request_hash,
    details: JSON.stringify(details),
    answer: '',
    created_at: pending ? pending.created_at : now,
    updated_at: now,
    expires_at,
  };
  return row;
}

/** The sandbox issuer's page for a started payment (when the processor hands the shopper to the gateway's own page). */
function issuerPage(
  page_id: string,
  transaction_id: string,
  account: AccountCredentials['account'],
  method: ApmMethod,
  now: number,
  expires_at: number,
): IssuerPageRow {
  return {
    id_hash: hashIssuerId(page_id),
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    payment_method: method.payment_method,
    form_token: newId('form_token'),
    status: 'open',
    created_at: now,
    expires_at,
    decided_at: null,
  };
}

class Lost extends Error {}

export type ApmOutcome = { kind: 'approved' } | { kind: 'declined' };

/**
 * The end of an APM payment the shopper finished at the issuer: the sandbox issuer page
 * calls it, and so would a real provider's report. One transaction: the issuer page's end
 * (when there is one, single use), the payment's transition, its ledger postings and its
 * event. Returns the payment as it now stands, or null when something else ended it first
 * (a second submit, the merchant's cancel, the expiry job).
 */
export async function completeApm(
  deps: Pick<Deps, 'store' | 'now'>,
  transaction_id: string,
  outcome: ApmOutcome,
  page_id_hash: string | null,
): Promise<PaymentRow | null> {
  const now = deps.now();
  return deps.store
    .transaction(async (tx) => {
      const before = await paymentById(tx, transaction_id);
      // Only a payment waiting for an issuer: not a card payment waiting for its 3-D Secure challenge.
      if (before?.status !== 'pending' || !apmMethod(before.card_brand)) return null;
      if (before.expires_at !== null && Number(before.expires_at) <= now) return null;
      if (page_id_hash) {
        const p = await tx
          .updateTable('apm_issuer_pages')
          .set({ status: 'done', decided_at: now })
          .where('id_hash', '=', page_id_hash)
          .where('status', '=', 'open')
          .executeTakeFirst();
        if (Number(p.numUpdatedRows) !== 1) return null;
      }
      const approved = outcome.kind === 'approved';
      const status = approved ? (before.capture_method === 'manual' ? 'authorised' : 'captured') : 'declined';
      const patch = {
        result_code: approved ? '0000' : '1017',
        authorised_minor: status === 'authorised' ? before.amount_minor : 0,
        captured_minor: status === 'captured' ? before.amount_minor : 0,
        expires_at: status === 'authorised' ? now + MANUAL_CAPTURE_WINDOW_MS : null,
      };
      // A cancel or expiry that got there first wins the compare-and-set; the page's end rolls back with it.
      const move = {
        event: approved ? 'issuer_approve' : 'issuer_decline',
        to: status,
        patch,
        notify: approved ? 'payment.succeeded' : 'payment.failed',
      } as const;
      const after = await movePayment(tx, before, move, now);
      if (!after) throw new Lost();
      return after;
    })
    .catch((e) => {
      if (e instanceof Lost) return null;
      throw e;
    });
}
