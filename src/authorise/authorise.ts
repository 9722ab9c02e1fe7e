// Direct card payment (interface.md "Create a direct payment"; docs/contract.md §4, §5, §7, §9).
//
// Order of work: validate (nothing stored on failure) → a repeat of a known order_no is
// answered from storage → card checks → risk → processor → one write unit (src/db/unit.ts)
// that writes the card, the payment, its signals, postings and event together → the signed answer.

import { type CardFacts, cardFacts, fourDigitYear, isExpired, maskPan } from '../cards/card.js';
import { newId } from '../crypto/ids.js';
import { canonicalString } from '../crypto/signature.js';
import { type CardRow, type PaymentRow, tokenHash } from '../db/tables/payments.js';
import type { SubscriptionRow } from '../db/tables/subscriptions.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { capturedBy, feeFor, postPaymentChangeInto } from '../ledger/postings.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { EventType } from '../notifications/outbox.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { recordPaymentEventInto } from '../payments/events.js';
import { paymentByOrderNo } from '../payments/reader.js';
import type { AuthoriseDirect } from '../payments/schema.js';
import { applyTransitionInto, MANUAL_CAPTURE_WINDOW_MS, type PaymentStatus } from '../payments/states.js';
import { openAnswer, sealAnswer } from '../payments/stored-answer.js';
import * as v from '../payments/validate.js';
import type { AuthoriseOutcome, Processor, ProcessorCard } from '../processors/types.js';
import type { RiskAssessment, RiskContext, RiskEngine } from '../risk/index.js';
import { answerFields, contractNameTaken, createSubscription, type Prepared, prepareSubscription } from '../subscriptions/service.js';
import { challengeFirst, onIssuerChallenge, parseMpiInfo, type ThreedsResult } from '../threeds/mpi.js';
import { type NewChallenge, newChallenge } from '../threeds/service.js';
import type { Deps } from '../web/context.js';
import { ApiError, invalid, type ResultCode } from '../web/errors.js';
import { cardAnswerRecord, cardDuplicateAnswer } from './answer.js';

/** Request fields kept for the order record; card data never is. */
/** Request fields a payment keeps for its order record and pages (never card data); the checkout and APM paths keep the same. */
export const KEPT_FIELDS = [
  'website',
  'shopper_email',
  'shopper_phone',
  'shopper_id',
  'shopper_ip',
  'first_name',
  'last_name',
  'note',
  'custom',
  'billing_country',
  'billing_state',
  'billing_city',
  'billing_address',
  'billing_postal_code',
  'delivery_firstname',
  'delivery_lastname',
  'delivery_country',
  'delivery_state',
  'delivery_city',
  'delivery_address',
  'delivery_postal_code',
  'device_fingerprint',
  'device_type',
  'browser_lang',
  'default_lang',
  'platform_source',
  'items',
  'subscription',
] as const;

export interface AuthoriseResult {
  record: Record<string, unknown>;
}

interface ResolvedCard {
  card: ProcessorCard;
  /** Brand and Luhn, worked out once per request (card-type detection is not cheap). */
  facts: CardFacts;
  /** Existing vault row (token payments), or null when this payment brings the card. */
  card_id: string | null;
  fingerprint: string;
}

/** The checks of every payment request a schema cannot express; the amount in minor units. */
export function validateBody(body: AuthoriseDirect): number {
  v.requireCurrency('currency', body.currency);
  const amount_minor = v.amountField('amount', body.amount, body.currency);
  if (amount_minor <= 0) throw invalid('amount', 'must be greater than zero');
  v.checkComponents(body as Record<string, unknown>, amount_minor, body.currency);
  v.checkIp('shopper_ip', body.shopper_ip);
  body.account_owner?.forEach((o, i) => {
    v.checkIp(`account_owner[${i}].lastLogin_ip`, o.lastLogin_ip);
    v.checkIp(`account_owner[${i}].registration_ip`, o.registration_ip);
  });
  v.checkCountry('billing_country', body.billing_country);
  v.checkCountry('delivery_country', body.delivery_country);
  v.checkItems(body.items);
  v.checkTimeZone(body.time_zone);
  v.checkBirthDate(body.birth_date);
  body.cart_items?.forEach((c, i) => {
    const cur = c.basic_item_data.price?.currency;
    if (cur) v.requireCurrency(`cart_items[${i}].basic_item_data.price.currency`, cur);
  });
  if (body.subscription?.contract_amount !== undefined) v.amountField('subscription.contract_amount', body.subscription.contract_amount, body.currency);
  return amount_minor;
}

export class AuthoriseService {
  constructor(
    private readonly deps: Deps,
    private readonly risk: RiskEngine,
  ) {}

  private existing(account_id: string, order_no: string): Promise<PaymentRow | undefined> {
    return paymentByOrderNo(this.deps.store.db, account_id, order_no);
  }

  private replay(row: PaymentRow, request_hash: string, body: AuthoriseDirect): AuthoriseResult {
    // docs/contract.md §4: same body → the original answer; another body → 1011.
    if (row.request_hash === request_hash) return { record: openAnswer(this.deps.keyring, row.answer) };
    return { record: cardDuplicateAnswer(body) };
  }

  private async resolveCard(creds: AccountCredentials, body: AuthoriseDirect): Promise<ResolvedCard> {
    const keyring = this.deps.keyring;
    if (body.token_id) {
      if (body.card) throw invalid('token_id', 'cannot be sent together with card; send one of them');
      const row = await this.deps.store.db
        .selectFrom('cards')
        .selectAll()
        .where('token_hash', '=', tokenHash(keyring, body.token_id))
        .where('account_id', '=', creds.account.account_id)
        .executeTakeFirst();
      if (!row) throw new ApiError('0400', 'token_id is not a token of this account', 'token_id');
      const pan = keyring.decrypt(row.pan_enc);
      return {
        card: { pan, brand: row.brand, exp_month: row.exp_month, exp_year: row.exp_year },
        facts: cardFacts(pan),
        card_id: row.card_id,
        fingerprint: row.fingerprint,
      };
    }
    for (const f of ['card', 'expiration_month', 'expiration_year', 'security_code'] as const) {
      if (!body[f]) throw invalid(f, 'is required (or send a token_id from an earlier payment)');
    }
    const pan = body.card as string;
    const facts = cardFacts(pan);
    return {
      facts,
      card: {
        pan,
        brand: facts.brand,
        exp_month: Number(body.expiration_month),
        exp_year: fourDigitYear(body.expiration_year as string),
        security_code: body.security_code,
      },
      card_id: null,
      fingerprint: keyring.fingerprint(pan),
    };
  }

  /**
   * A direct card payment. `opts` is for the generic interface's `/v1/payments` (the same
   * path in another wire shape): its id is chosen before (`pay_<transaction_id>` is also the
   * order_no) and its `metadata` is kept in the payment's details.
   */
  async authorise(
    creds: AccountCredentials,
    body: AuthoriseDirect,
    opts: RunOptions = {},
  ): Promise<AuthoriseResult & { row?: PaymentRow; threeds_url?: string }> {
    const { deps } = this;
    const amount_minor = validateBody(body);
    await requireSafeNotifyUrl(body.notify_url, deps.settings.allow_private_webhooks); // docs/contract.md §11
    const account = creds.account;
    const request_hash = deps.keyring.fingerprint(canonicalString(body as Record<string, unknown>));

    const prior = await this.existing(account.account_id, body.order_no);
    if (prior) return this.replay(prior, request_hash, body);

    return this.run(creds, body, amount_minor, request_hash, null, opts);
  }

  /**
   * Pays a hosted-checkout payment by card (docs/contract.md §14): the same checks, risk, 3-D
   * Secure and processor as a direct payment, written onto the session's pending payment
   * by a compare-and-set that only the first payer wins. `body` is the session's request
   * with the card fields of the payment form. Null when another submit paid it first.
   */
  async payCheckout(creds: AccountCredentials, body: AuthoriseDirect, pending: PaymentRow): Promise<{ row: PaymentRow; threeds_url?: string } | null> {
    const r = await this.run(creds, body, pending.amount_minor, pending.request_hash, pending);
    return r.row ? { row: r.row, threeds_url: r.threeds_url } : null;
  }

  /** Decides a card payment and records it: as a new payment, or onto a pending checkout payment. */
  private async run(
    creds: AccountCredentials,
    body: AuthoriseDirect,
    amount_minor: number,
    request_hash: string,
    pending: PaymentRow | null,
    opts: RunOptions = {},
  ): Promise<AuthoriseResult & { row?: PaymentRow; threeds_url?: string }> {
    const { deps } = this;
    const now = deps.now();
    const account = creds.account;
    const processor = deps.processorFor(account);
    if (!processor) throw new ApiError('1016', 'this account is in live mode and no processor is configured for it');

    const resolved = await this.resolveCard(creds, body);
    const { card, facts } = resolved;
    checkSecurityCode(card, facts);
    // docs/contract.md §10: 3-D Secure results from an outside server, validated (400 names the field).
    const mpi = parseMpiInfo(body.additional_information, facts.brand);
    // docs/contract.md §16: the subscription is checked before anything is charged, written with its first payment's approval.
    // On the hosted page a name taken since the session opened does not stop the shopper paying.
    const subscription = await prepareSubscription(deps.store.db, account.account_id, body, amount_minor, now, { taken: pending ? 'skip' : 'refuse' });

    const transaction_id = pending ? pending.transaction_id : (opts.transaction_id ?? newId('payment', now));
    const capture_method = (body.capture_method ?? account.capture_method) as 'automatic' | 'manual';
    const decision = await this.decide({ account, processor, resolved, body, amount_minor, mpi, transaction_id, capture_method, now });
    const { result, status, riskCtx, outcome } = decision;

    const details = paymentDetails(body, pending, outcome?.reference ?? '', opts.details);

    const wantsToken = body.token_flag === '1' && status !== 'declined';
    const token_id = body.token_id ? body.token_id : wantsToken ? newId('card_token') : '';
    const storeCard = facts.valid && resolved.card_id === null;
    const card_id = resolved.card_id ?? (storeCard ? newId('stored_card', now) : null);

    const rowInput = { account, body, pending, request_hash, amount_minor, transaction_id, capture_method, card_id, facts, card, mpi, details, now };
    const row = cardPaymentRow({ ...rowInput, ...decision, connector: processor.name });
    // docs/contract.md §10: a challenge page for the shopper, created with the payment.
    const challenge: NewChallenge | null = status === 'pending' ? newChallenge(deps.settings.public_url, row, now) : null;
    const approved = status === 'authorised' || status === 'captured';
    // A payment that waits (3-D Secure, review) keeps its `subscription` in details; it is created when that ends approved.
    const details_without = row.details;
    if (approved && subscription) row.details = JSON.stringify({ ...JSON.parse(row.details || '{}'), recurring_id: subscription.recurring_id });
    const answerOf = (sub: typeof subscription) =>
      cardAnswerRecord(row, body, {
        token_id: status === 'declined' ? '' : token_id,
        threeds_url: challenge?.url,
        subscription: approved ? answerFields(sub) : undefined,
      });
    let record = answerOf(subscription);
    row.answer = sealAnswer(deps.keyring, record);

    const inserted = await this.write({
      pending,
      row,
      card: storeCard && card_id ? this.cardRow(card_id, account.account_id, wantsToken ? token_id : null, resolved, now) : null,
      riskCtx,
      challenge,
      subscription: approved ? subscription : null,
      now,
      withoutSubscription: () => {
        record = answerOf(null);
        row.details = details_without;
        row.answer = sealAnswer(deps.keyring, record);
      },
    });
    if (!inserted) return this.lostTheRace(pending, account.account_id, body, request_hash);
    deps.metrics.payments.inc({ outcome: result });
    return { record, row, threeds_url: challenge?.url };
  }

  /** Another request took the order_no (its answer is replayed), or paid the checkout payment first (nothing to answer). */
  private async lostTheRace(pending: PaymentRow | null, account_id: string, body: AuthoriseDirect, request_hash: string): Promise<AuthoriseResult> {
    if (pending) return { record: {} };
    const winner = await this.existing(account_id, body.order_no);
    if (!winner) throw new Error('order race without a winner');
    return this.replay(winner, request_hash, body);
  }

  /**
   * What the card's facts, the risk engine and the processor decide (docs/contract.md §9, §10):
   * the result code and the payment's status. The processor is asked only when nothing before
   * it refused and no challenge comes first.
   */
  private async decide(o: {
    account: AccountCredentials['account'];
    processor: Processor;
    resolved: ResolvedCard;
    body: AuthoriseDirect;
    amount_minor: number;
    mpi: ReturnType<typeof parseMpiInfo>;
    transaction_id: string;
    capture_method: 'automatic' | 'manual';
    now: number;
  }): Promise<CardDecision> {
    const { account, processor, resolved, body, amount_minor, mpi, transaction_id, capture_method, now } = o;
    const { card, facts } = resolved;
    let risk: RiskAssessment | null = null;
    let riskCtx: RiskContext | null = null;
    let outcome: AuthoriseOutcome | null = null;
    let result: ResultCode;
    let threeds_result: ThreedsResult = mpi ? mpi.result : '';
    if (!facts.valid) {
      result = '1010'; // docs/contract.md §9: fails Luhn → no processor call
    } else if (isExpired(card.exp_month, card.exp_year, now)) {
      result = '1005';
    } else {
      riskCtx = {
        account_id: account.account_id,
        mode: account.mode,
        pan: card.pan,
        card_fingerprint: resolved.fingerprint,
        amount_minor,
        currency: body.currency,
        body: body as Record<string, unknown>,
        threeds_result: mpi ? mpi.result : '',
        now_ms: now,
      };
      risk = await this.risk.assess(riskCtx);
      if (risk.action === 'REJECT') {
        result = '1008'; // docs/contract.md §10: rejected before the processor sees it
      } else if (challengeFirst(body.open3d, mpi, risk)) {
        result = '0002';
      } else {
        const threeds = mpi ? { eci: mpi.eci, cavv: mpi.cavv, xid: mpi.xid, ds_trans_id: mpi.ds_trans_id } : undefined;
        outcome = await processor.authorise({ transaction_id, amount_minor, currency: body.currency, card, threeds });
        if (outcome.kind === 'approved') result = '0000';
        else if (outcome.kind === 'declined') result = outcome.code;
        else if (onIssuerChallenge(body.open3d) === 'challenge') result = '0002';
        else {
          result = '1009';
          threeds_result = 'U';
        }
      }
    }

    let status: PaymentStatus;
    if (result === '0000') {
      // docs/contract.md §10: REVIEW holds an approved payment (funds authorised) for a person.
      const next = statusAfterApproval(risk?.action ?? 'ACCEPT', capture_method);
      status = next.status;
      result = next.result;
    } else if (result === '0002') status = 'pending';
    else status = 'declined';
    return { result, status, risk, riskCtx, outcome, threeds_result };
  }

  /** The stored card of a new card payment: the number encrypted, the token only as a keyed hash. */
  private cardRow(card_id: string, account_id: string, token_id: string | null, resolved: ResolvedCard, now: number): CardRow {
    const { keyring } = this.deps;
    const { card, facts } = resolved;
    return {
      card_id,
      account_id,
      token_hash: token_id ? tokenHash(keyring, token_id) : null,
      pan_enc: keyring.encrypt(card.pan),
      key_id: keyring.active.id,
      fingerprint: resolved.fingerprint,
      brand: facts.brand,
      bin: card.pan.slice(0, 6),
      last4: card.pan.slice(-4),
      exp_month: card.exp_month,
      exp_year: card.exp_year,
      created_at: now,
    };
  }

  /**
   * Writes the payment with everything that goes with it as one write unit: the card, the
   * payment (or the checkout payment's compare-and-set), risk signals, the challenge, the
   * postings and the event. With a subscription to create (which reads what it writes) the
   * unit runs inside a transaction. False when another request took the order_no, or paid
   * the checkout payment, first: then nothing is written.
   */
  private async write(w: {
    pending: PaymentRow | null;
    row: PaymentRow;
    card: CardRow | null;
    riskCtx: RiskContext | null;
    challenge: NewChallenge | null;
    subscription: Prepared | null;
    now: number;
    /** On the hosted page a contract_name taken since it was checked leaves the payment without its subscription. */
    withoutSubscription: () => void;
  }): Promise<boolean> {
    const { deps } = this;
    const { pending, row, now, subscription } = w;
    // Facts first: the fee on what this payment captures is read before its unit is built.
    const captured = capturedBy(pending, row);
    const fee_minor = captured > 0 ? await feeFor(deps.store.db, row.account_id, row.currency, captured) : 0;
    const lost = () => new OrderRace();
    const unit = new WriteUnit(deps.store.engine);
    if (w.card) unit.insertRows('cards', [w.card]);
    if (pending) {
      // docs/contract.md §14: paid at most once; a second tab or submit loses here and changes nothing.
      const { transaction_id: _id, status: _status, account_id: _a, merchant_id: _m, ...patch } = row;
      applyTransitionInto(unit, row.transaction_id, 'checkout_pay', 'pending', row.status, patch, now, lost, { unclaimed: true });
    } else {
      // Lost a race with the same order_no: the unit fails whole, the card row with it.
      unit.insertRows('payments', [row], { ignoreConflictOn: ['account_id', 'order_no'], expected: { rows: 1, error: lost } });
    }
    if (w.riskCtx) this.risk.record(unit, w.riskCtx, row.transaction_id);
    if (w.challenge) unit.insertRows('threeds_challenges', [w.challenge.row]);
    try {
      if (!subscription) {
        recordWithPayment(unit, pending, row, fee_minor, now);
        await deps.store.write(unit);
        return true;
      }
      await deps.store.transaction(async (tx) => {
        await applyUnit(tx, unit);
        const created = await createSubscription(tx, subscription, row, now);
        if (!created) {
          // Another first payment took the contract_name since it was checked. A direct
          // payment is refused as a sequential one would have been (everything here rolls
          // back); on the hosted page the shopper's payment stands without the subscription.
          if (!pending) throw contractNameTaken();
          w.withoutSubscription();
          await tx.updateTable('payments').set({ details: row.details, answer: row.answer }).where('transaction_id', '=', row.transaction_id).execute();
        }
        const rest = new WriteUnit(deps.store.engine);
        recordWithPayment(rest, pending, row, fee_minor, now, created);
        await applyUnit(tx, rest);
      });
      return true;
    } catch (e) {
      if (e instanceof OrderRace) return false;
      throw e;
    }
  }
}

/** Everything written with the payment: its ledger postings (hold or capture) and its event. */
function recordWithPayment(unit: WriteUnit, before: PaymentRow | null, row: PaymentRow, fee_minor: number, now: number, subscription?: SubscriptionRow): void {
  postPaymentChangeInto(unit, before, row, fee_minor, now);
  const type: EventType =
    row.status === 'pending'
      ? 'payment.pending'
      : row.status === 'review'
        ? 'payment.held'
        : row.status === 'declined'
          ? 'payment.failed'
          : 'payment.succeeded';
  recordPaymentEventInto(unit, row, type, now, subscription);
}

class OrderRace extends Error {}

export interface RunOptions {
  /** The payment's id when the caller chose it (the generic interface). */
  transaction_id?: string;
  /** Kept in the payment's details beside the request's kept fields (the generic interface's metadata). */
  details?: Record<string, unknown>;
}

/** What `AuthoriseService.decide` found about a card payment. */
interface CardDecision {
  result: ResultCode;
  status: PaymentStatus;
  risk: RiskAssessment | null;
  riskCtx: RiskContext | null;
  outcome: AuthoriseOutcome | null;
  threeds_result: ThreedsResult;
}

/** The security code has the brand's length (docs/contract.md §9). */
function checkSecurityCode(card: ProcessorCard, facts: CardFacts): void {
  if (card.security_code !== undefined && card.security_code.length !== facts.security_code_length) {
    throw invalid('security_code', `must be ${facts.security_code_length} digits for this card brand`);
  }
}

/** A payment's details: the kept request fields (or the pending payment's), the processor's reference, the caller's extras. */
function paymentDetails(body: AuthoriseDirect, pending: PaymentRow | null, reference: string, extra?: Record<string, unknown>): Record<string, unknown> {
  const details: Record<string, unknown> = pending ? (JSON.parse(pending.details || '{}') as Record<string, unknown>) : {};
  if (!pending) for (const k of KEPT_FIELDS) if (body[k] !== undefined) details[k] = body[k];
  details.reference_no = reference;
  if (extra) Object.assign(details, extra);
  return details;
}

/** What a card payment's row is made of. */
interface CardRowInput {
  account: AccountCredentials['account'];
  body: AuthoriseDirect;
  pending: PaymentRow | null;
  request_hash: string;
  amount_minor: number;
  transaction_id: string;
  capture_method: 'automatic' | 'manual';
  card_id: string | null;
  facts: CardFacts;
  card: ProcessorCard;
  connector: string;
  mpi: ReturnType<typeof parseMpiInfo>;
  risk: RiskAssessment | null;
  result: ResultCode;
  status: PaymentStatus;
  threeds_result: ThreedsResult;
  details: Record<string, unknown>;
  now: number;
}

/** The row of a card payment as decided: a new payment, or the hosted checkout's pending one paid by card. */
function cardPaymentRow(o: CardRowInput): PaymentRow {
  const { account, body, pending, request_hash, amount_minor, transaction_id, capture_method, card_id, facts, card } = o;
  const { connector, mpi, risk, result, status, threeds_result, details, now } = o;
  const row: PaymentRow = {
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    order_no: body.order_no,
    kind: pending ? pending.kind : 'card',
    livemode: account.mode === 'live' ? 1 : 0,
    currency: body.currency,
    amount_minor,
    authorised_minor: status === 'authorised' || status === 'pending' || status === 'review' ? amount_minor : 0,
    captured_minor: status === 'captured' ? amount_minor : 0,
    refunded_minor: 0,
    status,
    capture_method,
    result_code: result,
    card_id,
    card_brand: facts.brand,
    card_masked: maskPan(card.pan),
    connector,
    is3ds: mpi ? 1 : 0,
    threeds_result,
    risk_score: risk ? risk.score : null,
    risk_action: risk ? risk.action : '',
    risk_reasons: JSON.stringify(risk?.reasons ?? []),
    notify_url: pending ? pending.notify_url : (body.notify_url ?? ''),
    return_url: pending ? pending.return_url : (body.return_url ?? ''),
    request_hash,
    details: JSON.stringify(details),
    answer: '',
    created_at: pending ? pending.created_at : now,
    updated_at: now,
    expires_at: status === 'authorised' ? now + MANUAL_CAPTURE_WINDOW_MS : status === 'review' ? now + REVIEW_WINDOW_MS : null,
  };
  return row;
}
