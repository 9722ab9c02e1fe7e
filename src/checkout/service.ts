// The hosted checkout (docs/contract.md §14). A session is one payment: `POST /v1/checkout` writes
// the payment (kind `checkout`, `pending`, `payment_status` 1000, nothing reserved) and its
// session row in one transaction; the shopper's page then pays it by card (the direct
// payment's own path, AuthoriseService.payCheckout), starts an alternative method
// (ApmService.startOnCheckout), or cancels it. Each of those, and the expiry job, is a
// compare-and-set on "still pending and no method chosen" (`card_brand` empty), so a second
// tab, a reload or the back button never pays twice: the loser shows the result instead.
import { timingSafeEqual } from 'node:crypto';
import { validateBody } from '../authorise/acquiring.js';
import { KEPT_FIELDS as CARD_KEPT_FIELDS } from '../authorise/command.js';
import { newId } from '../crypto/ids.js';
import { canonicalString } from '../crypto/signature.js';
import { insertRows } from '../db/prepared.js';
import type { PaymentRow } from '../db/tables/payments.js';
import type { AccountCredentials } from '../merchants/service.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { movePayment } from '../payments/engine.js';
import { paymentByOrderNo, requirePayment } from '../payments/reader.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { prepareSubscription, subscriptionTermsOf } from '../subscriptions/service.js';
import type { Deps } from '../web/context.js';
import { invalid } from '../web/errors.js';
import type { Checkout } from './schema.js';
import { canApplySession, checkoutSessionState } from './states.js';
import type { CheckoutSessionRow } from './tables.js';

/** `cs_` + 32 url-safe characters (192 random bits). */
export const SESSION_ID = /^cs_[A-Za-z0-9_-]{32}$/;

/** What a session keeps of its request for the order record and pages: a direct payment's fields. */
const KEPT_FIELDS = CARD_KEPT_FIELDS;

export type Created = { kind: 'session'; session: CheckoutSessionRow; payment: PaymentRow } | { kind: 'duplicate' };

export interface Session {
  session: CheckoutSessionRow;
  payment: PaymentRow;
}

/** Pending and no method chosen yet: the shopper may still pay, pick a method or cancel (states.ts). */
export function isOpen(p: Pick<PaymentRow, 'status' | 'card_brand'>): boolean {
  return checkoutSessionState(p) === 'open';
}

export class CheckoutService {
  constructor(private readonly deps: Deps) {}

  /** The session's form signature (`signInfo`), and the token of the payment page's forms. */
  signInfo(session_id: string): string {
    return this.deps.keyring.fingerprint(`checkout:${session_id}`);
  }

  formToken(session_id: string): string {
    return this.deps.keyring.fingerprint(`checkout-form:${session_id}`);
  }

  static same(a: string, b: string): boolean {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  }

  /**
   * `POST /v1/checkout`: checks the request as a direct payment's (without the card), then
   * the session. The same body again finds the same session; another body with a used
   * `order_no` is a duplicate (`1011`).
   */
  async create(creds: AccountCredentials, body: Checkout, source_ip: string): Promise<Created> {
    const { deps } = this;
    if (body.token_id) throw invalid('token_id', 'is not used by the hosted checkout: the shopper enters the card on the payment page');
    const amount_minor = validateBody(body as AuthoriseDirect);
    await requireSafeNotifyUrl(body.notify_url, deps.settings.allow_private_webhooks); // docs/contract.md §11
    // docs/contract.md §16: a bad `subscription` is the merchant's 400 here, not the shopper's at the card form.
    // (The card is entered later; the check runs again, with it, when the shopper pays.)
    const now = deps.now();
    const subscription = body.subscription ? subscriptionTermsOf(body.subscription, body.currency, now) : null;
    await prepareSubscription(deps.store.db, creds.account.account_id, { subscription, amount_minor }, now);
    const account = creds.account;
    const request_hash = deps.keyring.fingerprint(canonicalString(body as Record<string, unknown>));
    const prior = await this.replay(account.account_id, body.order_no, request_hash);
    if (prior) return prior;

    const { payment, session } = newSession(account, body, amount_minor, request_hash, source_ip, deps.now(), deps.settings.checkout_ttl_ms);
    const won = await deps.store.transaction(async (tx) => {
      const r = await insertRows(tx, 'payments', [payment], { ignoreConflictOn: ['account_id', 'order_no'] });
      if (Number(r.numAffectedRows ?? 0) !== 1) return false;
      await tx.insertInto('checkout_sessions').values(session).execute();
      return true;
    });
    if (won) return { kind: 'session', session, payment };
    // The same order_no arrived twice at once: the winner's session, or a duplicate.
    return (await this.replay(account.account_id, body.order_no, request_hash)) ?? { kind: 'duplicate' };
  }

  private async replay(account_id: string, order_no: string, request_hash: string): Promise<Created | null> {
    const db = this.deps.store.db;
    const prior = await paymentByOrderNo(db, account_id, order_no);
    if (!prior) return null;
    if (prior.kind !== 'checkout' || prior.request_hash !== request_hash) return { kind: 'duplicate' };
    const session = await db.selectFrom('checkout_sessions').selectAll().where('transaction_id', '=', prior.transaction_id).executeTakeFirst();
    return session ? { kind: 'session', session, payment: prior } : { kind: 'duplicate' };
  }

  async load(session_id: string): Promise<Session | null> {
    if (!SESSION_ID.test(session_id)) return null;
    const db = this.deps.store.db;
    const session = await db.selectFrom('checkout_sessions').selectAll().where('session_id', '=', session_id).executeTakeFirst();
    if (!session) return null;
    const payment = await requirePayment(db, session.transaction_id);
    return { session, payment };
  }

  /** The session's request, for paying it: the card or method fields are added by the caller. */
  requestOf(s: Session): AuthoriseDirect {
    return JSON.parse(s.session.request) as AuthoriseDirect;
  }

  /** "Cancel" on the payment page: the open session's payment ends `cancelled` (5000), notified. */
  async cancel(s: Session): Promise<PaymentRow | null> {
    const { deps } = this;
    const now = deps.now();
    return deps.store.transaction(async (tx) => {
      const before = await requirePayment(tx, s.payment.transaction_id);
      if (!canApplySession('cancel', checkoutSessionState(before)) || (before.expires_at !== null && Number(before.expires_at) <= now)) return null;
      const patch = { result_code: '1019', expires_at: null };
      return (await movePayment(tx, before, { event: 'cancel', to: 'cancelled', patch, notify: 'payment.cancelled', unclaimed: true }, now)) ?? null;
    });
  }
}

/** The payment (pending, no method chosen yet) and the session a new hosted checkout writes. */
function newSession(
  account: AccountCredentials['account'],
  body: Checkout,
  amount_minor: number,
  request_hash: string,
  source_ip: string,
  now: number,
  ttl_ms: number,
): { payment: PaymentRow; session: CheckoutSessionRow } {
  const transaction_id = newId('payment', now);
  const { encryption_data: _signature, ...request } = body as Checkout & { encryption_data?: string };
  const details: Record<string, unknown> = {};
  for (const k of KEPT_FIELDS) if (body[k] !== undefined) details[k] = body[k];
  const payment: PaymentRow = {
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    order_no: body.order_no,
    kind: 'checkout',
    livemode: account.mode === 'live' ? 1 : 0,
    currency: body.currency,
    amount_minor,
    authorised_minor: 0,
    captured_minor: 0,
    refunded_minor: 0,
    status: 'pending',
    capture_method: (body.capture_method ?? account.capture_method) as 'automatic' | 'manual',
    result_code: '0003',
    card_id: null,
    card_brand: '', // no method chosen yet: the session is open
    card_masked: '',
    connector: '',
    is3ds: 0,
    threeds_result: '',
    risk_score: null,
    risk_action: '',
    risk_reasons: '[]',
    notify_url: body.notify_url ?? '',
    return_url: body.return_url,
    request_hash,
    details: JSON.stringify(details),
    answer: '',
    created_at: now,
    updated_at: now,
    expires_at: now + ttl_ms,
  };
  const session: CheckoutSessionRow = {
    session_id: newId('checkout_session'),
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    request: JSON.stringify(request),
    cancel_url: body.cancel_url ?? body.return_url,
    source_ip,
    created_at: now,
  };
  return { payment, session };
}
