// The card payment command (interface.md "Create a direct payment"; docs/contract.md §4, §5, §7, §9).
// Each interface checks its request and maps it to a CardPaymentCommand (command.ts) first.
//
// Order of work: the notify_url → a repeat of a known order_no is answered from storage →
// card checks → risk → processor → one write unit (src/db/unit.ts) that writes the card, the
// payment, its signals, postings and event together → the answer record it stored.

import { type CardFacts, cardFacts, isExpired, maskPan } from '../cards/card.js';
import { noProcessor } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import { type CardRow, type PaymentRow, tokenHash } from '../db/tables/payments.js';
import type { SubscriptionRow } from '../db/tables/subscriptions.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { capturedBy, feeFor, postPaymentChangeInto } from '../ledger/postings.js';
import type { AccountCredentials } from '../merchants/service.js';
import type { EventType } from '../notifications/outbox.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { processorCaptureMethod, REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { recordPaymentEventInto } from '../payments/events.js';
import { paymentById, paymentByOrderNo } from '../payments/reader.js';
import { applyProcessorAnswerInto, applyTransitionInto, MANUAL_CAPTURE_WINDOW_MS, type PaymentStatus } from '../payments/states.js';
import { openAnswer, sealAnswer } from '../payments/stored-answer.js';
import { attemptStatusOf, callWithDeadline, newAttempt, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { AuthoriseOutcome, Processor, ProcessorCard } from '../processors/types.js';
import type { RiskAssessment, RiskContext, RiskEngine } from '../risk/index.js';
import { isLive, releaseContractName } from '../subscriptions/engine.js';
import { answerFields, contractNameTaken, createSubscription, type Prepared, prepareSubscription } from '../subscriptions/service.js';
import { challengeFirst, type MpiInfo, onIssuerChallenge, type ThreedsRequest, type ThreedsResult } from '../threeds/mpi.js';
import { type NewChallenge, newChallenge, threedsReturnUrl } from '../threeds/service.js';
import type { Deps } from '../web/context.js';
import { invalid, type ResultCode } from '../web/errors.js';
import { cardAnswerRecord } from './answer.js';
import type { CaptureMethod, CardPaymentCommand, CardPaymentResult, CardSource } from './command.js';
import { type PaymentSnapshot, writeSnapshotPayment } from './snapshot.js';

type Decided = Extract<CardPaymentResult, { kind: 'decided' }>;

interface ResolvedCard {
  card: ProcessorCard;
  /** Brand and Luhn, worked out once per request (card-type detection is not cheap). */
  facts: CardFacts;
  /** Existing vault row (token payments), or null when this payment brings the card. */
  card_id: string | null;
  fingerprint: string;
}

export class AuthoriseService {
  constructor(
    private readonly deps: Deps,
    private readonly risk: RiskEngine,
  ) {}

  private existing(account_id: string, order_no: string): Promise<PaymentRow | undefined> {
    return paymentByOrderNo(this.deps.store.db, account_id, order_no);
  }

  private replay(row: PaymentRow, request_hash: string): CardPaymentResult {
    // docs/contract.md §4: same request → the original answer; another request → 1011.
    if (row.request_hash === request_hash) return { kind: 'replayed', record: openAnswer(this.deps.keyring, row.answer), row };
    return { kind: 'duplicate' };
  }

  private async resolveCard(creds: AccountCredentials, source: CardSource): Promise<ResolvedCard> {
    const keyring = this.deps.keyring;
    if (source.kind === 'refused') throw source.error;
    if (source.kind === 'token' || source.kind === 'stored') {
      let q = this.deps.store.db.selectFrom('cards').selectAll().where('account_id', '=', creds.account.account_id);
      q = source.kind === 'token' ? q.where('token_hash', '=', tokenHash(keyring, source.token_id)) : q.where('card_id', '=', source.card_id);
      const row = await q.executeTakeFirst();
      if (!row) throw invalid('token_id', 'is not a token of this account');
      const pan = keyring.decrypt(row.pan_enc);
      return {
        card: { pan, brand: row.brand, exp_month: row.exp_month, exp_year: row.exp_year },
        facts: cardFacts(pan),
        card_id: row.card_id,
        fingerprint: row.fingerprint,
      };
    }
    const facts = cardFacts(source.pan);
    return {
      facts,
      card: { pan: source.pan, brand: facts.brand, exp_month: source.exp_month, exp_year: source.exp_year, security_code: source.security_code },
      card_id: null,
      fingerprint: keyring.fingerprint(source.pan),
    };
  }

  /**
   * A card payment. `opts` is for the generic interface's `/v1/payments`: its id is chosen
   * before (`pay_<transaction_id>` is also the order_no) and its `metadata` is kept in the
   * payment's details.
   */
  async authorise(creds: AccountCredentials, cmd: CardPaymentCommand, opts: RunOptions = {}): Promise<CardPaymentResult> {
    const { deps } = this;
    await requireSafeNotifyUrl(cmd.notify_url, deps.settings.allow_private_webhooks); // docs/contract.md §11
    const account_id = creds.account.account_id;
    const prior = await this.existing(account_id, cmd.order_no);
    if (prior) return this.replay(prior, cmd.request_hash);
    const decided = await this.run(creds, cmd, null, opts);
    return decided === 'lost' ? this.lostTheRace(account_id, cmd) : decided;
  }

  /**
   * Pays a hosted-checkout payment by card (docs/contract.md §14): the same checks, risk, 3-D
   * Secure and processor as a direct payment, written onto the session's pending payment
   * by a compare-and-set that only the first payer wins. `cmd` is the session's request
   * with the card of the payment form, its amount and request hash the pending payment's.
   * Null when another submit paid it first.
   */
  async payCheckout(creds: AccountCredentials, cmd: CardPaymentCommand, pending: PaymentRow): Promise<{ row: PaymentRow; threeds_url?: string } | null> {
    const r = await this.run(creds, cmd, pending);
    return r === 'lost' ? null : { row: r.row, threeds_url: r.threeds_url };
  }

  /**
   * Decides a card payment and records it: as a new payment, or onto a pending checkout
   * payment. When the processor is to be asked (docs/contract.md §20), the payment is first
   * committed in `processing` with its attempt, then the processor is called outside any
   * transaction, then its answer moves the payment on by compare-and-set. 'lost': another
   * request was first (and only the first reaches the processor).
   */
  private async run(creds: AccountCredentials, cmd: CardPaymentCommand, pending: PaymentRow | null, opts: RunOptions = {}): Promise<Decided | 'lost'> {
    const { p, processor } = await this.prepare(creds, cmd, pending, opts);
    const { f, riskCtx } = await this.facts(p);
    // A processor that runs 3-D Secure itself (Adyen, Stripe) is asked to; the sandbox challenge is for the sandbox only.
    f.processor_authenticates = !!processor.completeAuthentication;
    // Decided without the processor (Luhn, expiry, risk, a challenge first): one write.
    if (beforeProcessor(f) !== null) return this.record(p, f, riskCtx, pending ? { kind: 'checkout_pay', before: pending } : { kind: 'insert' });
    return this.throughProcessors(p, processor, f, riskCtx);
  }

  /** The payment's facts before any decision: its card, processor, 3-D Secure results, subscription and ids. */
  private async prepare(
    creds: AccountCredentials,
    cmd: CardPaymentCommand,
    pending: PaymentRow | null,
    opts: RunOptions,
  ): Promise<{ p: CardPayment; processor: Processor }> {
    const { deps } = this;
    const now = deps.now();
    const account = creds.account;
    if (!deps.processorFor(account, { currency: cmd.currency })) throw noProcessor();

    const resolved = await this.resolveCard(creds, cmd.card);
    const { card, facts } = resolved;
    // docs/contract.md §21: the first of the account's processors that takes the currency and brand.
    const processor = deps.processorFor(account, { currency: cmd.currency, brand: facts.brand });
    if (!processor) throw noProcessor();
    checkSecurityCode(card, facts);
    // docs/contract.md §10: 3-D Secure results from an outside server, validated (400 names the field).
    const mpi = cmd.threeds.mpi(facts.brand);
    // docs/contract.md §16: the subscription is checked before anything is charged, written with its first payment's approval.
    // On the hosted page a name taken since the session opened does not stop the shopper paying.
    const terms = cmd.subscription ? cmd.subscription(now) : null;
    const asked = { subscription: terms, amount_minor: cmd.amount_minor };
    const subscription = await prepareSubscription(deps.store.db, account.account_id, asked, now, { taken: pending ? 'skip' : 'refuse' });

    const transaction_id = pending ? pending.transaction_id : (opts.transaction_id ?? newId('payment', now));
    const storeCard = facts.valid && resolved.card_id === null;
    const p: CardPayment = {
      account,
      cmd,
      pending,
      resolved,
      mpi,
      transaction_id,
      capture_method: cmd.capture_method ?? (account.capture_method as CaptureMethod),
      subscription,
      connector: processor.name,
      processor_id: processor.processor_id,
      card_id: resolved.card_id ?? (storeCard ? (opts.card_id ?? newId('stored_card', now)) : null),
      storeCard,
      opts,
      now,
    };
    return { p, processor };
  }

  /**
   * Asks the processor (docs/contract.md §20, §21): the attempt is committed, then the call
   * is made; a processor that certainly did not take it (refused connection, open circuit)
   * hands the payment to the next that takes the currency and brand; a decline or a call
   * that may have reached it is final for this payment.
   */
  private async throughProcessors(p: CardPayment, processor: Processor, f: DecisionFacts, riskCtx: RiskContext | null): Promise<Decided | 'lost'> {
    const { deps } = this;
    const { cmd, mpi, transaction_id } = p;
    const card = p.resolved.card;
    let sent = await this.send(p, f, riskCtx);
    if (sent === 'lost') return 'lost';
    const threeds = mpi ? { eci: mpi.eci, cavv: mpi.cavv, xid: mpi.xid, ds_trans_id: mpi.ds_trans_id } : undefined;
    const all = deps.processorsFor(p.account, { currency: cmd.currency, brand: p.resolved.facts.brand });
    const next = all.slice(all.indexOf(processor) + 1 || all.length);
    let at = processor;
    // Held for review when approved: only authorised at the processor (the review captures or cancels it).
    const sentCapture = processorCaptureMethod(f.risk?.action ?? 'ACCEPT', p.capture_method);
    const authentication = (to: Processor, attempt_id: string) =>
      to.completeAuthentication && !mpi && f.threeds !== 'never'
        ? {
            return_url: threedsReturnUrl(deps.settings.public_url, attempt_id),
            required: challengeFirst(f.threeds, mpi, f.risk ?? { action: 'ACCEPT', fixed: true }),
          }
        : undefined;
    const input = (to: Processor, attempt_id: string) => ({
      transaction_id,
      amount_minor: cmd.amount_minor,
      currency: cmd.currency,
      card,
      threeds,
      capture_method: sentCapture,
      authentication: authentication(to, attempt_id),
    });
    let outcome: AuthoriseOutcome = await callWithDeadline(sent.attempt, deps.now, (call) => at.authorise(input(at, call.attempt_id), call));
    for (let to = next.shift(); outcome.kind === 'unknown' && outcome.not_sent && to; to = next.shift()) {
      const moved: Sent | 'lost' = await this.handOver(p, sent, to, outcome.reason);
      if (moved === 'lost') break;
      sent = moved;
      at = to;
      outcome = await callWithDeadline(sent.attempt, deps.now, (call) => at.authorise(input(at, call.attempt_id), call));
    }
    // Not sent anywhere: nothing can have been authorised, so it fails now (safe to retry).
    if (outcome.kind === 'unknown' && outcome.not_sent) outcome = { kind: 'declined', code: '1007', reference: '' };
    if (outcome.kind === 'pending' || outcome.kind === 'unknown') return this.leaveOpen(p, sent, sent.lean ? riskCtx : null, outcome);
    return this.settleAnswer(p, f, riskCtx, sent, at, outcome);
  }

  /** The processor's answer moves the payment on by compare-and-set; an approval nobody can record is voided. */
  private async settleAnswer(
    p: CardPayment,
    f: DecisionFacts,
    riskCtx: RiskContext | null,
    sent: Sent,
    at: Processor,
    outcome: Exclude<AuthoriseOutcome, { kind: 'pending' | 'unknown' }>,
  ): Promise<Decided | 'lost'> {
    const { transaction_id } = p;
    let answered = await this.record(p, { ...f, outcome }, sent.lean ? riskCtx : null, {
      kind: 'processor_answer',
      before: sent.row,
      attempt: sent.attempt,
      outcome,
      lean: sent.lean,
    });
    if (answered === 'lost' && sent.lean) {
      // Past its deadline a repeat (or the sweeper) wrote this payment from the attempt's
      // snapshot (src/authorise/snapshot.ts): the answer settles into that row instead.
      const written = await paymentById(this.deps.store.db, transaction_id);
      if (written?.status === 'processing')
        answered = await this.record(p, { ...f, outcome }, riskCtx, { kind: 'processor_answer', before: written, attempt: sent.attempt, outcome, lean: false });
    }
    if (answered === 'lost' && sent.lean && outcome.kind === 'approved') await this.voidOrphan(at, sent.attempt, transaction_id, outcome.reference);
    return answered;
  }

  /**
   * The payment goes to processor `to`: its attempt at the last one, never sent, is closed
   * (`declined`, not sent) and hands its claim and snapshot to a new attempt at `to`, in one
   * write; 'lost' when that attempt was settled meanwhile (the sweeper, a repeat).
   */
  private async handOver(p: CardPayment, sent: Sent, to: Processor, reason: string): Promise<Sent | 'lost'> {
    const { deps } = this;
    const now = deps.now();
    p.connector = to.name;
    p.processor_id = to.processor_id;
    const row: PaymentRow = { ...sent.row, connector: to.name };
    const attempt = newAttempt(
      {
        account_id: p.account.account_id,
        connector: to.name,
        processor_id: to.processor_id,
        operation: 'authorise',
        object_id: row.transaction_id,
        amount_minor: p.cmd.amount_minor,
        currency: p.cmd.currency,
        ...(sent.lean
          ? {
              claim_key: orderClaim(p.account.account_id, p.cmd.order_no),
              snapshot: JSON.stringify({ payment: row, card: sent.card, note: String(p.cmd.kept.note ?? '') } satisfies PaymentSnapshot),
            }
          : {}),
      },
      now,
      deps.settings.processor_timeout_ms,
    );
    const unit = new WriteUnit(deps.store.engine);
    const error = `not sent (${reason}); the payment went to the next processor`;
    settleAttemptInto(unit, sent.attempt, 'lose', { status: 'declined', result_code: '1007', error, release: true }, now, () => new OrderRace());
    if (!sent.lean)
      unit.compareAndSet(
        unit.q
          .updateTable('payments')
          .set({ connector: to.name, updated_at: now })
          .where('transaction_id', '=', row.transaction_id)
          .where('status', '=', 'processing'),
        () => new OrderRace(),
      );
    unit.insertRows('processor_attempts', [attempt]);
    try {
      await deps.store.write(unit);
    } catch (e) {
      if (e instanceof OrderRace) return 'lost';
      throw e;
    }
    return { ...sent, row, attempt };
  }

  /**
   * An approval whose payment could not be written: another payment took the order_no
   * without reaching the processor (one decided before it, a card refused by Luhn, say).
   * The authorisation is cancelled at the processor so nothing stays held at the issuer.
   */
  private async voidOrphan(processor: Processor, attempt: ProcessorAttemptRow, transaction_id: string, reference: string): Promise<void> {
    const { deps } = this;
    const current = await deps.store.db.selectFrom('processor_attempts').selectAll().where('attempt_id', '=', attempt.attempt_id).executeTakeFirst();
    if (current?.status !== 'sent' || (await paymentById(deps.store.db, transaction_id))) return;
    const voiding = { attempt_id: `${attempt.attempt_id}.void`, deadline_at: deps.now() + deps.settings.processor_timeout_ms };
    const cancelled = await callWithDeadline(voiding, deps.now, (call) => processor.cancel({ transaction_id, reference }, call));
    const voided = cancelled.kind === 'approved' || cancelled.kind === 'pending';
    const error = voided ? 'the order was taken by another payment: cancelled at the processor' : `cancel: ${cancelled.reason}`;
    const unit = settleAttemptInto(
      new WriteUnit(deps.store.engine),
      current,
      voided ? 'void' : 'answer',
      { status: voided ? 'voided' : 'unknown', error },
      deps.now(),
      () => new OrderRace(),
    );
    await deps.store.write(unit).catch((e) => {
      if (!(e instanceof OrderRace)) throw e;
    });
  }

  /** Another request took the order_no: its answer is replayed, or it is a duplicate. */
  private async lostTheRace(account_id: string, cmd: CardPaymentCommand): Promise<CardPaymentResult> {
    const winner = await this.existing(account_id, cmd.order_no);
    if (winner) return this.replay(winner, cmd.request_hash);
    // The winner is at the processor and has no payment row yet: its snapshot answers (pending, 0006).
    const claim = await this.deps.store.db
      .selectFrom('processor_attempts')
      .select(['snapshot', 'status', 'deadline_at'])
      .where('claim_key', '=', orderClaim(account_id, cmd.order_no))
      .executeTakeFirst();
    const snap = claim?.snapshot ? (JSON.parse(claim.snapshot) as PaymentSnapshot) : null;
    if (!snap) {
      // Its payment was written (and the claim let go) between the two reads.
      const written = await this.existing(account_id, cmd.order_no);
      if (written) return this.replay(written, cmd.request_hash);
      throw new Error('order race without a winner');
    }
    if (snap.payment.request_hash !== cmd.request_hash) return { kind: 'duplicate' };
    if (claim?.status === 'sent' && Number(claim.deadline_at) < this.deps.now()) {
      // Past its deadline the caller has given up on the processor (or died with the call):
      // the payment is written now, as the sweeper would, so the pending order can be queried.
      const written = await writeSnapshotPayment(this.deps, snap);
      if (written) return this.replay(written, cmd.request_hash);
    }
    // Not written yet (the first request is within its deadline, or the write failed): the
    // snapshot is the payment as it will be written, so every interface can answer it.
    return { kind: 'replayed', record: cardAnswerRecord(snap.payment, snap.note, { token_id: '' }), row: { ...snap.payment, answer: '' } };
  }

  /**
   * What the card's facts and the risk engine say (docs/contract.md §9, §10), each read only
   * while the ones before leave the payment open; the processor's outcome comes later.
   */
  private async facts(p: CardPayment): Promise<{ f: DecisionFacts; riskCtx: RiskContext | null }> {
    const { account, resolved, cmd, mpi, capture_method, now } = p;
    const { card, facts } = resolved;
    const f: DecisionFacts = {
      card_valid: facts.valid,
      expired: isExpired(card.exp_month, card.exp_year, now),
      threeds: cmd.threeds.request,
      mpi,
      capture_method,
      risk: null,
      outcome: null,
      processor_authenticates: false,
    };
    if (!f.card_valid || f.expired) return { f, riskCtx: null };
    const riskCtx: RiskContext = {
      account_id: account.account_id,
      mode: account.mode,
      pan: card.pan,
      card_fingerprint: resolved.fingerprint,
      amount_minor: cmd.amount_minor,
      currency: cmd.currency,
      shopper: cmd.shopper,
      threeds_result: mpi ? mpi.result : '',
      now_ms: now,
    };
    f.risk = await this.risk.assess(riskCtx);
    return { f, riskCtx };
  }

  /**
   * The first write of a payment the processor is asked about (docs/contract.md §20): the
   * card, the payment in `processing` (or the checkout payment moved there, only the first
   * submit winning), its risk signals and the attempt, committed before the call. Its
   * stored answer is the pending one (0006), so a replay meanwhile answers that.
   */
  private async send(p: CardPayment, f: DecisionFacts, riskCtx: RiskContext | null): Promise<Sent | 'lost'> {
    const { deps } = this;
    const { account, cmd, pending, now } = p;
    const row = cardPaymentRow({
      ...this.rowInput(p, paymentDetails(cmd, pending, '', p.opts.details)),
      risk: f.risk,
      result: '0006',
      status: 'processing',
      threeds_result: p.mpi ? p.mpi.result : '',
    });
    const note = String(cmd.kept.note ?? '');
    // A new payment (lean): the attempt alone claims its order_no and carries what the payment
    // will be written as; the payment is written once, with the answer. A hosted-checkout
    // payment exists already: it is claimed by its compare-and-set to `processing`.
    const lean = !pending;
    const card = p.storeCard && p.card_id ? this.cardRow(p.card_id, account.account_id, null, p.resolved, now) : null;
    const attempt = newAttempt(
      {
        account_id: account.account_id,
        connector: p.connector,
        processor_id: p.processor_id,
        operation: 'authorise',
        object_id: row.transaction_id,
        amount_minor: cmd.amount_minor,
        currency: cmd.currency,
        ...(lean
          ? { claim_key: orderClaim(account.account_id, cmd.order_no), snapshot: JSON.stringify({ payment: row, card, note } satisfies PaymentSnapshot) }
          : {}),
      },
      now,
      deps.settings.processor_timeout_ms,
    );
    const unit = new WriteUnit(deps.store.engine);
    if (lean) {
      unit.insertRows('processor_attempts', [attempt], { ignoreConflictOn: ['claim_key'], expected: { rows: 1, error: () => new OrderRace() } });
      p.opts.alsoWrite?.(unit);
    } else {
      row.answer = sealAnswer(deps.keyring, cardAnswerRecord(row, note, { token_id: '' }));
      if (card) unit.insertRows('cards', [card]);
      this.claimInto(unit, { kind: 'checkout_send', before: pending as PaymentRow }, row, now);
      if (riskCtx) this.risk.record(unit, riskCtx, row.transaction_id);
      unit.insertRows('processor_attempts', [attempt]);
    }
    // A first payment holds its contract_name while it is at the processor, so concurrent
    // first payments of one name are refused before any reaches it (the hosted page's
    // shopper pays without the subscription instead, as below).
    const claimsName = p.subscription !== null && !pending;
    if (claimsName && p.subscription) {
      const claim = { account_id: account.account_id, contract_name: p.subscription.contract_name, transaction_id: row.transaction_id, created_at: now };
      unit.insertRows('subscription_name_claims', [claim], {
        ignoreConflictOn: ['account_id', 'contract_name'],
        expected: { rows: 1, error: () => new NameClaimed() },
      });
    }
    try {
      await deps.store.write(unit);
    } catch (e) {
      if (e instanceof OrderRace) return 'lost';
      if (e instanceof NameClaimed) throw contractNameTaken();
      throw e;
    }
    return { row, attempt, lean, card };
  }

  /** The processor has not said yet (pending) or could not be heard (unknown): the payment stays `processing`, the sweeper asks again. */
  private async leaveOpen(
    p: CardPayment,
    sent: Sent,
    riskCtx: RiskContext | null,
    outcome: Extract<AuthoriseOutcome, { kind: 'pending' | 'unknown' }>,
  ): Promise<Decided> {
    const { deps } = this;
    const unit = new WriteUnit(deps.store.engine);
    if (sent.lean) {
      // The payment is written now, `processing`, with the pending answer (0006) a replay gives.
      sent.row.answer = sealAnswer(deps.keyring, cardAnswerRecord(sent.row, String(p.cmd.kept.note ?? ''), { token_id: '' }));
      // The card is there already when the payment was written from the snapshot meanwhile.
      if (sent.card) unit.insertRows('cards', [sent.card], { ignoreConflictOn: ['card_id'] });
      unit.insertRows('payments', [sent.row], { ignoreConflictOn: ['account_id', 'order_no'], expected: { rows: 1, error: () => new OrderRace() } });
      if (riskCtx) this.risk.record(unit, riskCtx, sent.row.transaction_id);
    }
    settleAttemptInto(
      unit,
      sent.attempt,
      'answer',
      { status: outcome.kind, reference: outcome.kind === 'pending' ? outcome.reference : undefined, error: outcome.kind === 'unknown' ? outcome.reason : '' },
      deps.now(),
      () => new OrderRace(),
    );
    // Lost only to the sweeper, which then wrote and settled it: the stored answer stands.
    const lost = await deps.store.write(unit).then(
      () => false,
      (e) => {
        if (!(e instanceof OrderRace)) throw e;
        return true;
      },
    );
    const row = lost ? ((await paymentById(deps.store.db, sent.row.transaction_id)) ?? sent.row) : sent.row;
    deps.metrics.payments.inc({ outcome: row.result_code });
    return { kind: 'decided', record: openAnswer(deps.keyring, row.answer), row };
  }

  /** What every row of this payment is made of, with its details. */
  private rowInput(p: CardPayment, details: Record<string, unknown>) {
    const { account, cmd, pending, capture_method, transaction_id, card_id, resolved, mpi, connector, now } = p;
    return { account, cmd, pending, capture_method, transaction_id, card_id, facts: resolved.facts, card: resolved.card, mpi, details, connector, now };
  }

  /**
   * Records a decided payment: its row, the challenge page it may need, the token, the
   * subscription, and the answer stored with it (a replay of its order_no on any interface
   * answers it). `riskCtx` is given when the risk signals are still to be written.
   */
  private async record(p: CardPayment, f: DecisionFacts, riskCtx: RiskContext | null, claim: Claim): Promise<Decided | 'lost'> {
    const { deps } = this;
    const { account, cmd, pending, subscription, now } = p;
    const decision = { ...cardDecision(f), risk: f.risk };
    const { result, status } = decision;
    const details = paymentDetails(cmd, pending, f.outcome && 'reference' in f.outcome ? f.outcome.reference : '', p.opts.details);

    const wantsToken = cmd.keep_token && status !== 'declined';
    const token_id = cmd.card.kind === 'token' ? cmd.card.token_id : wantsToken ? newId('card_token') : '';
    const row = cardPaymentRow({ ...this.rowInput(p, details), ...decision });
    // docs/contract.md §10: a challenge page for the shopper, created with the payment.
    // A processor's own challenge: the page forwards the shopper to it (src/threeds/routes.ts).
    const action = f.outcome?.kind === 'challenge_required' ? f.outcome.action : undefined;
    const challenge: NewChallenge | null =
      status === 'pending' ? newChallenge(deps.settings.public_url, row, now, action ? deps.keyring.encrypt(JSON.stringify(action)) : null) : null;
    const approved = status === 'authorised' || status === 'captured';
    // A payment that waits (3-D Secure, review) keeps its `subscription` in details; it is created when that ends approved.
    const details_without = row.details;
    if (approved && subscription) row.details = JSON.stringify({ ...JSON.parse(row.details || '{}'), recurring_id: subscription.recurring_id });
    // The acquiring answer record is stored with the payment: a replay of its order_no on any interface answers it.
    const answerOf = (sub: typeof subscription) =>
      cardAnswerRecord(row, String(cmd.kept.note ?? ''), {
        token_id: status === 'declined' ? '' : token_id,
        threeds_url: challenge?.url,
        subscription: approved ? answerFields(sub) : undefined,
      });
    let record = answerOf(subscription);
    row.answer = sealAnswer(deps.keyring, record);

    // A card written before the processor was asked (a hosted checkout's) gets its token only
    // now, with an outcome that allows one; a new payment's card is written with it.
    const written = claim.kind === 'processor_answer' && !claim.lean;
    const newCard = !written && p.storeCard && p.card_id;
    const tokenOnly = written && p.storeCard && p.card_id && wantsToken;
    const inserted = await this.write({
      claim,
      also: claim.kind === 'insert' ? p.opts.alsoWrite : undefined,
      row,
      card: newCard ? this.cardRow(p.card_id as string, account.account_id, wantsToken ? token_id : null, p.resolved, now) : null,
      token: tokenOnly ? { card_id: p.card_id as string, token_id } : null,
      riskCtx,
      challenge,
      subscription: approved ? subscription : null,
      holdsName: claim.kind === 'processor_answer' && subscription !== null && !pending,
      now,
      withoutSubscription: () => {
        record = answerOf(null);
        row.details = details_without;
        row.answer = sealAnswer(deps.keyring, record);
      },
    });
    if (!inserted) return 'lost';
    deps.metrics.payments.inc({ outcome: result });
    return { kind: 'decided', record, row, threeds_url: challenge?.url };
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

  /** How `row` takes its place: a new row, or a compare-and-set on the payment it replaces; a lost race fails the unit with OrderRace. */
  private claimInto(unit: WriteUnit, claim: Claim | { kind: 'checkout_send'; before: PaymentRow }, row: PaymentRow, now: number): void {
    const lost = () => new OrderRace();
    if (claim.kind === 'insert') {
      // Lost a race with the same order_no: the unit fails whole, the card row with it.
      unit.insertRows('payments', [row], { ignoreConflictOn: ['account_id', 'order_no'], expected: { rows: 1, error: lost } });
      return;
    }
    if (claim.kind === 'processor_answer') {
      // A new payment is inserted with its answer (the attempt held its order_no); a checkout one moves from `processing`.
      if (claim.lean) unit.insertRows('payments', [row], { ignoreConflictOn: ['account_id', 'order_no'], expected: { rows: 1, error: lost } });
      else applyProcessorAnswerInto(unit, row, now, lost);
      const o = claim.outcome;
      settleAttemptInto(
        unit,
        claim.attempt,
        'answer',
        { status: attemptStatusOf(o), result_code: o.kind === 'declined' ? o.code : '', reference: 'reference' in o ? o.reference : undefined },
        now,
        lost,
      );
      return;
    }
    // docs/contract.md §14: paid at most once; a second tab or submit loses here and changes nothing.
    const { transaction_id: _id, status: _status, account_id: _a, merchant_id: _m, ...patch } = row;
    const event = claim.kind === 'checkout_send' ? 'processor_send' : 'checkout_pay';
    applyTransitionInto(unit, row.transaction_id, event, 'pending', row.status, patch, now, lost, { unclaimed: true });
  }

  /**
   * Writes the payment with everything that goes with it as one write unit: the card, the
   * payment (or the compare-and-set its claim makes), risk signals, the challenge, the
   * postings and the event. With a subscription to create (which reads what it writes) the
   * unit runs inside a transaction. False when another request took the order_no, or paid
   * the checkout payment, first: then nothing is written.
   */
  private async write(w: {
    claim: Claim;
    /** The interface's rows written with a payment decided without the processor (RunOptions.alsoWrite). */
    also: ((unit: WriteUnit) => void) | undefined;
    row: PaymentRow;
    card: CardRow | null;
    /** The token of a card stored before the processor was asked. */
    token: { card_id: string; token_id: string } | null;
    riskCtx: RiskContext | null;
    challenge: NewChallenge | null;
    subscription: Prepared | null;
    /** The payment holds its subscription's contract_name since it went to the processor. */
    holdsName: boolean;
    now: number;
    /** On the hosted page a contract_name taken since it was checked leaves the payment without its subscription. */
    withoutSubscription: () => void;
  }): Promise<boolean> {
    const { deps } = this;
    const { claim, row, now, subscription } = w;
    const before = claim.kind === 'insert' || (claim.kind === 'processor_answer' && claim.lean) ? null : claim.before;
    // Facts first: the fee on what this payment captures is read before its unit is built.
    const captured = capturedBy(before, row);
    const fee_minor = captured > 0 ? await feeFor(deps.store.db, row.account_id, row.currency, captured) : 0;
    const unit = new WriteUnit(deps.store.engine);
    // A new card id: there already only when the payment was written from its snapshot meanwhile (then the unit loses its order_no).
    if (w.card) unit.insertRows('cards', [w.card], { ignoreConflictOn: ['card_id'] });
    this.claimInto(unit, claim, row, now);
    w.also?.(unit);
    if (w.token) {
      const token_hash = tokenHash(deps.keyring, w.token.token_id);
      unit.compareAndSet(unit.q.updateTable('cards').set({ token_hash }).where('card_id', '=', w.token.card_id), () => new Error('the stored card is missing'));
    }
    if (w.riskCtx) this.risk.record(unit, w.riskCtx, row.transaction_id);
    if (w.challenge) unit.insertRows('threeds_challenges', [w.challenge.row]);
    try {
      if (!subscription) {
        // The contract_name held while the payment was at the processor goes with an outcome that starts no subscription.
        if (w.holdsName) unit.delete(unit.q.deleteFrom('subscription_name_claims').where('transaction_id', '=', row.transaction_id));
        recordWithPayment(unit, before, row, fee_minor, now);
        await deps.store.write(unit);
        return true;
      }
      await deps.store.transaction(async (tx) => {
        await applyUnit(tx, unit);
        const created = await createSubscription(tx, subscription, row, now);
        if (!created) {
          // Another first payment took the contract_name since it was checked. A payment
          // decided without the processor is refused as a sequential one would have been
          // (everything here rolls back); one the processor approved, and the hosted page's,
          // stands without the subscription.
          if (claim.kind === 'insert') throw contractNameTaken();
          w.withoutSubscription();
          await tx.updateTable('payments').set({ details: row.details, answer: row.answer }).where('transaction_id', '=', row.transaction_id).execute();
        }
        // The hold on the contract_name stays while the subscription charges (subscriptions/engine.ts ends it).
        if (w.holdsName && !(created && isLive(created.status))) await releaseContractName(tx, row.transaction_id);
        const rest = new WriteUnit(deps.store.engine);
        recordWithPayment(rest, before, row, fee_minor, now, created);
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

/** Another first payment holds the subscription's contract_name while it is at the processor. */
class NameClaimed extends Error {}

/** How a decided row takes its place: a new payment, the checkout payment's compare-and-set, or the answer to a payment sent to the processor. */
type Claim =
  | { kind: 'insert' }
  | { kind: 'checkout_pay'; before: PaymentRow }
  | {
      kind: 'processor_answer';
      before: PaymentRow;
      attempt: ProcessorAttemptRow;
      outcome: Exclude<AuthoriseOutcome, { kind: 'pending' | 'unknown' }>;
      /** A new payment whose attempt alone claimed it: inserted now (else a checkout payment moved from `processing`). */
      lean: boolean;
    };

/** What `send` recorded before the call. */
interface Sent {
  /** The payment as it stands at the processor (`processing`, 0006). */
  row: PaymentRow;
  attempt: ProcessorAttemptRow;
  /** A new payment: only its attempt is written yet (with `card`, the card it brings). */
  lean: boolean;
  card: CardRow | null;
}

/** A new card payment's rows while its attempt is at the processor (`processor_attempts.snapshot`): written by the sweeper if the process died. */
/** The claim a new card payment's attempt holds on its order_no. */
export function orderClaim(account_id: string, order_no: string): string {
  return `order:${account_id}:${order_no}`;
}

/** A card payment being decided: what `run` resolved, read by the steps after it. */
interface CardPayment {
  account: AccountCredentials['account'];
  cmd: CardPaymentCommand;
  pending: PaymentRow | null;
  resolved: ResolvedCard;
  mpi: MpiInfo | null;
  transaction_id: string;
  capture_method: CaptureMethod;
  subscription: Prepared | null;
  /** The connector's name and the configured processor (routing may move the payment to the next). */
  connector: string;
  processor_id: string | undefined;
  /** The vault row the payment points at: the token's, or the one this payment stores (storeCard). */
  card_id: string | null;
  storeCard: boolean;
  opts: RunOptions;
  now: number;
}

export interface RunOptions {
  /** The payment's id when the caller chose it (the generic interface). */
  transaction_id?: string;
  /** Kept in the payment's details beside the request's kept fields (the generic interface's metadata). */
  details?: Record<string, unknown>;
  /** The id the card brought with the payment is stored under (the interface writes rows naming it, below). */
  card_id?: string;
  /**
   * The interface's own rows of this payment (a PaymentIntent and its claim, src/generic/payment-intents.ts),
   * added to the payment's first write: with its processor attempt, or with the payment when it
   * is decided without the processor. So they commit with the payment's first trace or not at
   * all; a compare-and-set among them that fails fails that write before the processor is asked.
   */
  alsoWrite?: (unit: WriteUnit) => void;
}

/** What a card payment's facts decide. */
interface CardDecision {
  result: ResultCode;
  status: PaymentStatus;
  threeds_result: ThreedsResult;
}

/** What a card payment's decision reads; `risk` is read for a usable card, `outcome` only when `beforeProcessor` leaves the payment open. */
interface DecisionFacts {
  card_valid: boolean;
  expired: boolean;
  threeds: ThreedsRequest;
  mpi: MpiInfo | null;
  capture_method: CaptureMethod;
  risk: RiskAssessment | null;
  outcome: Exclude<AuthoriseOutcome, { kind: 'pending' | 'unknown' }> | null;
  /** The processor runs 3-D Secure itself: it is asked to instead of the sandbox challenge first. */
  processor_authenticates: boolean;
}

/** The result decided before the processor is asked; null when it is to be asked. */
function beforeProcessor(f: DecisionFacts): ResultCode | null {
  if (!f.card_valid) return '1010'; // docs/contract.md §9: fails Luhn → no processor call
  if (f.expired) return '1005';
  if (!f.risk) return null;
  if (f.risk.action === 'REJECT') return '1008'; // docs/contract.md §10: rejected before the processor sees it
  if (!f.processor_authenticates && challengeFirst(f.threeds, f.mpi, f.risk)) return '0002';
  return null;
}

/** The result code, the payment's status and its 3-D Secure result, from the facts alone. */
function cardDecision(f: DecisionFacts): CardDecision {
  const threeds_result: ThreedsResult = f.mpi ? f.mpi.result : '';
  const result = beforeProcessor(f) ?? processorResult(f);
  if (result === '0000') {
    // docs/contract.md §10: REVIEW holds an approved payment (funds authorised) for a person.
    const next = statusAfterApproval(f.risk?.action ?? 'ACCEPT', f.capture_method);
    return { result: next.result, status: next.status, threeds_result };
  }
  if (result === '0002') return { result, status: 'pending', threeds_result };
  // 1009: the issuer demanded authentication the merchant forbade, so it was not performed; or the shopper failed the processor's.
  if (result === '1009') return { result, status: 'declined', threeds_result: f.outcome?.kind === 'declined' ? 'N' : 'U' };
  return { result, status: 'declined', threeds_result };
}

function processorResult(f: DecisionFacts): ResultCode {
  if (!f.outcome) throw new Error('a card payment decided without the processor’s outcome');
  if (f.outcome.kind === 'approved') return '0000';
  // The shopper failed the processor's own challenge.
  if (f.outcome.kind === 'declined') return f.outcome.authentication_failed ? '1009' : f.outcome.code;
  // A processor that authenticates itself and gave no page to send the shopper to: a processing error, never the sandbox challenge.
  if (f.processor_authenticates && !f.outcome.action) return '1007';
  return onIssuerChallenge(f.threeds) === 'challenge' ? '0002' : '1009';
}

/** The security code has the brand's length (docs/contract.md §9). */
function checkSecurityCode(card: ProcessorCard, facts: CardFacts): void {
  if (card.security_code !== undefined && card.security_code.length !== facts.security_code_length) {
    throw invalid('security_code', `must be ${facts.security_code_length} digits for this card brand`);
  }
}

/** A payment's details: the kept request fields (or the pending payment's), the processor's reference, the caller's extras. */
function paymentDetails(cmd: CardPaymentCommand, pending: PaymentRow | null, reference: string, extra?: Record<string, unknown>): Record<string, unknown> {
  const details: Record<string, unknown> = pending ? (JSON.parse(pending.details || '{}') as Record<string, unknown>) : { ...cmd.kept };
  details.reference_no = reference;
  if (extra) Object.assign(details, extra);
  return details;
}

/** What a card payment's row is made of. */
interface CardRowInput {
  account: AccountCredentials['account'];
  cmd: CardPaymentCommand;
  pending: PaymentRow | null;
  transaction_id: string;
  capture_method: CaptureMethod;
  card_id: string | null;
  facts: CardFacts;
  card: ProcessorCard;
  connector: string;
  mpi: MpiInfo | null;
  risk: RiskAssessment | null;
  result: ResultCode;
  status: PaymentStatus;
  threeds_result: ThreedsResult;
  details: Record<string, unknown>;
  now: number;
}

/** The row of a card payment as decided: a new payment, or the hosted checkout's pending one paid by card. */
function cardPaymentRow(o: CardRowInput): PaymentRow {
  const { account, cmd, pending, transaction_id, capture_method, card_id, facts, card } = o;
  const { amount_minor, request_hash } = cmd;
  const { connector, mpi, risk, result, status, threeds_result, details, now } = o;
  const row: PaymentRow = {
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    order_no: cmd.order_no,
    kind: pending ? pending.kind : 'card',
    livemode: account.mode === 'live' ? 1 : 0,
    currency: cmd.currency,
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
    notify_url: pending ? pending.notify_url : (cmd.notify_url ?? ''),
    return_url: pending ? pending.return_url : (cmd.return_url ?? ''),
    request_hash,
    details: JSON.stringify(details),
    answer: '',
    created_at: pending ? pending.created_at : now,
    updated_at: now,
    expires_at: status === 'authorised' ? now + MANUAL_CAPTURE_WINDOW_MS : status === 'review' ? now + REVIEW_WINDOW_MS : null,
  };
  return row;
}
