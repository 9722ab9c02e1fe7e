// The sandbox issuer's challenge (docs/contract.md §10): created with a pending payment, shown at
// an unguessable single-use URL, completed or failed by the shopper, lapsing after 15
// minutes. Completing it runs the processor authorisation with the 3-D Secure data and
// moves the payment on through the transition table; the shopper then returns to the
// merchant's return_url with a signed result, and the notification goes out either way.

import { createHash, timingSafeEqual } from 'node:crypto';
import { newId } from '../crypto/ids.js';
import type { Tx } from '../db/store.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { processorCaptureMethod, REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { processorOfPayment } from '../payments/at-processor.js';
import { movePayment, type PaymentMove } from '../payments/engine.js';
import { paymentById, requirePayment } from '../payments/reader.js';
import { shopperReturn } from '../payments/shopper-return.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import { attemptStatusOf, callWithDeadline, newAttempt, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { AuthoriseOutcome, ShopperAction } from '../processors/types.js';
import { withAuthentication } from '../risk/rules.js';
import { thresholdsFor } from '../risk/settings.js';
import { createForApproved } from '../subscriptions/service.js';
import type { Deps } from '../web/context.js';
import type { ResultCode } from '../web/errors.js';
import { applyChallengeTransition, type ChallengeEvent } from './states.js';
import type { ThreedsChallengeRow } from './tables.js';

/** The challenge's event for each way it ends (states.ts). */
const END_EVENT: Readonly<Record<'completed' | 'failed' | 'expired', ChallengeEvent>> = { completed: 'complete', failed: 'fail', expired: 'expire' };

/** docs/contract.md §10: a challenge not finished within 15 minutes fails. */
export const CHALLENGE_TTL_MS = 15 * 60 * 1000;
export const CHALLENGE_ID = /^[A-Za-z0-9_-]{32}$/;

export interface NewChallenge {
  id: string;
  url: string;
  row: ThreedsChallengeRow;
}

export const hashId = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Where a processor sends the shopper back after its own challenge, for the authorise attempt `attempt_id`. */
export const threedsReturnUrl = (public_url: string, attempt_id: string): string => `${public_url}/threeds/return/${encodeURIComponent(attempt_id)}`;

/**
 * A fresh challenge for a payment; `row` is inserted with the payment (insertChallenge).
 * `action_enc`: a processor's own challenge (the page forwards the shopper there).
 */
export function newChallenge(
  public_url: string,
  payment: Pick<PaymentRow, 'transaction_id' | 'merchant_id' | 'account_id'>,
  now_ms: number,
  action_enc: string | null = null,
): NewChallenge {
  const id = newId('threeds_challenge'); // 32 url-safe characters, 192 random bits
  return {
    id,
    url: `${public_url}/threeds/${id}`,
    row: {
      id_hash: hashId(id),
      transaction_id: payment.transaction_id,
      merchant_id: payment.merchant_id,
      account_id: payment.account_id,
      form_token: newId('form_token'),
      status: 'open',
      created_at: now_ms,
      expires_at: now_ms + CHALLENGE_TTL_MS,
      decided_at: null,
      action_enc,
    },
  };
}

export async function insertChallenge(tx: Tx, row: ThreedsChallengeRow): Promise<void> {
  await tx.insertInto('threeds_challenges').values(row).execute();
}

/** What the shopper sees, and where they go next. */
export type PageOutcome =
  | { kind: 'not_found' }
  | { kind: 'used' }
  | { kind: 'forbidden' }
  | { kind: 'show'; challenge: ThreedsChallengeRow; payment: PaymentRow; merchant_name: string }
  | { kind: 'forward'; action: ShopperAction; payment: PaymentRow }
  | { kind: 'done'; payment: PaymentRow; redirect: string | null };

export class ChallengeService {
  constructor(private readonly deps: Deps) {}

  private async load(id: string) {
    if (!CHALLENGE_ID.test(id)) return null;
    const challenge = await this.deps.store.db.selectFrom('threeds_challenges').selectAll().where('id_hash', '=', hashId(id)).executeTakeFirst();
    if (!challenge) return null;
    const payment = await requirePayment(this.deps.store.db, challenge.transaction_id);
    return { challenge, payment };
  }

  /** GET: the page, or the end of a challenge opened too late. */
  async view(id: string): Promise<PageOutcome> {
    const found = await this.load(id);
    if (!found) return { kind: 'not_found' };
    const { challenge, payment } = found;
    if (challenge.status !== 'open') return { kind: 'used' };
    if (this.deps.now() >= challenge.expires_at) return this.finishExpired(challenge, payment);
    if (challenge.action_enc) return { kind: 'forward', action: JSON.parse(this.deps.keyring.decrypt(challenge.action_enc)) as ShopperAction, payment };
    return { kind: 'show', challenge, payment, merchant_name: await this.deps.merchants.displayName(challenge.merchant_id) };
  }

  /**
   * The shopper is back from a processor's own challenge (`threedsReturnUrl`): the processor is
   * asked for its result (a recorded attempt, as every call) and the payment moves on as after
   * the sandbox challenge. `params`: what the processor put on the return URL or posted to it.
   */
  async returned(attempt_id: string, params: Record<string, string>): Promise<PageOutcome> {
    const { deps } = this;
    if (attempt_id.length > 100) return { kind: 'not_found' };
    const first = await deps.store.db
      .selectFrom('processor_attempts')
      .select(['object_id', 'operation', 'status'])
      .where('attempt_id', '=', attempt_id)
      .executeTakeFirst();
    if (first?.operation !== 'authorise' || first.status !== 'challenge') return { kind: 'not_found' };
    const challenge = await deps.store.db.selectFrom('threeds_challenges').selectAll().where('transaction_id', '=', first.object_id).executeTakeFirst();
    if (!challenge?.action_enc) return { kind: 'not_found' };
    const payment = await requirePayment(deps.store.db, challenge.transaction_id);
    if (challenge.status !== 'open') return { kind: 'done', payment, redirect: await this.returnLocation(payment) };
    if (deps.now() >= challenge.expires_at) return this.finishExpired(challenge, payment);
    const { claimed, processor, attempt, sending } = await this.claim(challenge, payment, 'complete');
    if (!claimed) return { kind: 'done', payment: await requirePayment(deps.store.db, payment.transaction_id), redirect: null };
    if (!attempt || !processor?.completeAuthentication)
      return this.finish(challenge, payment, { status: 'declined', result: '1007', threeds_result: 'N', challenge: 'failed' });
    const complete = processor.completeAuthentication.bind(processor);
    const sent: PaymentRow = { ...payment, ...sending, status: 'processing', updated_at: attempt.created_at };
    const reference = String((JSON.parse(payment.details || '{}') as { reference_no?: unknown }).reference_no ?? '');
    const decision = await callWithDeadline(attempt, deps.now, (call) => complete({ transaction_id: payment.transaction_id, reference, params }, call));
    return this.settleAuthorisation(challenge, payment, sent, attempt, decision);
  }

  /** POST: the shopper completed or failed the challenge. */
  async decide(id: string, form_token: string, outcome: 'complete' | 'fail'): Promise<PageOutcome> {
    const found = await this.load(id);
    if (!found) return { kind: 'not_found' };
    const { challenge, payment } = found;
    if (challenge.status !== 'open') return { kind: 'used' };
    // A processor's own challenge is answered at the processor, never by the sandbox's form.
    if (challenge.action_enc) return { kind: 'forbidden' };
    const a = Buffer.from(form_token);
    const b = Buffer.from(challenge.form_token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return { kind: 'forbidden' };
    if (this.deps.now() >= challenge.expires_at) return this.finishExpired(challenge, payment);

    const { deps } = this;
    const { claimed, processor, attempt, sending } = await this.claim(challenge, payment, outcome);
    if (!claimed) return { kind: 'used' };

    if (outcome === 'fail') return this.finish(challenge, payment, { status: 'declined', result: '1009', threeds_result: 'N', challenge: 'failed' });
    // The sandbox's made-up authentication goes to the sandbox only: a processor that runs its own is never sent it.
    if (!attempt || !processor || !payment.card_id || processor.completeAuthentication) {
      return this.finish(challenge, payment, { status: 'declined', result: '1007', threeds_result: 'Y', challenge: 'completed' });
    }
    const sent: PaymentRow = { ...payment, ...sending, status: 'processing', updated_at: attempt.created_at };
    // The risk after authentication decides a hold for review, before the call: a payment to be
    // held is only authorised at the processor (src/payments/approval.ts).
    const risk = withAuthentication(
      payment.risk_score ?? 0,
      JSON.parse(payment.risk_reasons || '[]'),
      await thresholdsFor(this.deps.store.db, payment.account_id),
    );
    const card = await deps.store.db.selectFrom('cards').selectAll().where('card_id', '=', payment.card_id).executeTakeFirstOrThrow();
    const decision = await callWithDeadline(attempt, deps.now, (call) =>
      processor.authorise(
        {
          transaction_id: payment.transaction_id,
          amount_minor: payment.amount_minor,
          currency: payment.currency,
          card: { pan: deps.keyring.decrypt(card.pan_enc), brand: card.brand, exp_month: card.exp_month, exp_year: card.exp_year },
          threeds: sandboxAuthentication(card.brand),
          capture_method: processorCaptureMethod(risk.action, payment.capture_method),
        },
        call,
      ),
    );
    return this.settleAuthorisation(challenge, payment, sent, attempt, decision);
  }

  /** The processor's answer after a challenge (the sandbox's or its own): the payment moves on, or waits for the sweeper. */
  private async settleAuthorisation(
    challenge: ThreedsChallengeRow,
    payment: PaymentRow,
    sent: PaymentRow,
    attempt: ProcessorAttemptRow,
    decision: AuthoriseOutcome,
  ): Promise<PageOutcome> {
    // A processor's own challenge: its result, with the risk the payment was sent with (it is not lowered).
    const own = challenge.action_enc !== null;
    const risk = own
      ? { score: payment.risk_score ?? 0, action: payment.risk_action === 'REVIEW' ? 'REVIEW' : 'ACCEPT' }
      : withAuthentication(payment.risk_score ?? 0, JSON.parse(payment.risk_reasons || '[]'), await thresholdsFor(this.deps.store.db, payment.account_id));
    const settled = { attempt, outcome: decision };
    if (decision.kind === 'pending' || decision.kind === 'unknown') return this.leaveOpen(challenge, sent, attempt, decision);
    // Authenticated, and the issuer still wants authentication: a processing error.
    if (decision.kind === 'challenge_required')
      return this.finish(challenge, sent, { status: 'declined', result: '1007', threeds_result: 'Y', challenge: 'completed', settled });
    // The shopper failed the processor's own challenge (or came back without finishing it).
    if (decision.kind === 'declined' && decision.authentication_failed)
      return this.finish(challenge, sent, { status: 'declined', result: '1009', threeds_result: 'N', challenge: 'failed', settled });
    if (decision.kind === 'declined')
      return this.finish(challenge, sent, { status: 'declined', result: decision.code, threeds_result: 'Y', challenge: 'completed', settled });
    const next = statusAfterApproval(risk.action, payment.capture_method);
    return this.finish(challenge, sent, {
      status: next.status,
      result: next.result,
      threeds_result: 'Y',
      challenge: 'completed',
      risk_score: risk.score,
      risk_action: risk.action === 'REJECT' ? 'REVIEW' : risk.action,
      reference: decision.reference,
      settled,
    });
  }

  /**
   * Single use: the challenge is claimed before any processor call, so a second submit
   * (double click, replay) cannot authorise twice. docs/contract.md §20: the authorisation
   * after a passed challenge is an attempt, recorded with the claim and the payment moved to
   * `processing`, before the call.
   */
  private async claim(challenge: ThreedsChallengeRow, payment: PaymentRow, outcome: 'complete' | 'fail') {
    const { deps } = this;
    const now = deps.now();
    const processor = outcome === 'complete' ? await processorOfPayment(deps, payment) : null;
    const attempt =
      processor && payment.card_id
        ? newAttempt(
            {
              account_id: payment.account_id,
              connector: processor.name,
              processor_id: processor.processor_id,
              operation: 'authorise',
              object_id: payment.transaction_id,
              amount_minor: Number(payment.amount_minor),
              currency: payment.currency,
            },
            now,
            deps.settings.processor_timeout_ms,
          )
        : null;
    const sending: Partial<PaymentRow> = { result_code: '0006', threeds_result: 'Y', is3ds: 1 };
    const claimed = await deps.store
      .transaction(async (tx) => {
        if (!(await applyChallengeTransition(tx, challenge.id_hash, 'claim', 'open', {}, now))) return false;
        if (attempt) {
          if (!(await applyTransition(tx, payment.transaction_id, 'processor_send', 'pending', 'processing', sending, now))) throw new PaymentChanged();
          await tx.insertInto('processor_attempts').values(attempt).execute();
        }
        return true;
      })
      .catch((e) => {
        if (e instanceof PaymentChanged) return false;
        throw e;
      });
    return { claimed, processor, attempt, sending };
  }

  /**
   * The processor has not said yet (pending) or could not be heard (unknown): the challenge
   * is done, the payment stays `processing` (the shopper returns to that) and the sweeper
   * asks again (src/attempts/sweeper.ts).
   */
  private async leaveOpen(
    challenge: ThreedsChallengeRow,
    sent: PaymentRow,
    attempt: ProcessorAttemptRow,
    outcome: Extract<AuthoriseOutcome, { kind: 'pending' | 'unknown' }>,
  ): Promise<PageOutcome> {
    const now = this.deps.now();
    await this.deps.store
      .transaction(async (tx) => {
        await applyChallengeTransition(tx, challenge.id_hash, 'complete', 'processing', { decided_at: now }, now);
        const unit = new WriteUnit(this.deps.store.engine);
        const error = outcome.kind === 'unknown' ? outcome.reason : '';
        const reference = outcome.kind === 'pending' ? outcome.reference : undefined;
        settleAttemptInto(unit, attempt, 'answer', { status: outcome.kind, reference, error }, now, () => new PaymentChanged());
        await applyUnit(tx, unit);
      })
      .catch((e) => {
        // The sweeper settled it first: its answer stands.
        if (!(e instanceof PaymentChanged)) throw e;
      });
    const current = await requirePayment(this.deps.store.db, sent.transaction_id);
    return { kind: 'done', payment: current, redirect: await this.returnLocation(current) };
  }

  private finishExpired(challenge: ThreedsChallengeRow, payment: PaymentRow): Promise<PageOutcome> {
    return this.finish(challenge, payment, { status: 'declined', result: '1009', threeds_result: 'N', challenge: 'expired', from: 'open' });
  }

  /** The scheduled job: fails challenges that lapsed, at most `limit` per run. */
  async expireDue(limit = 100, account_id?: string): Promise<number> {
    const now = this.deps.now();
    let q = this.deps.store.db.selectFrom('threeds_challenges').selectAll().where('status', '=', 'open').where('expires_at', '<=', now);
    if (account_id !== undefined) q = q.where('account_id', '=', account_id);
    const due = await q.orderBy('expires_at').limit(limit).execute();
    let n = 0;
    for (const challenge of due) {
      const payment = await paymentById(this.deps.store.db, challenge.transaction_id);
      if (!payment) continue;
      const r = await this.finishExpired(challenge, payment);
      if (r.kind === 'done') n++;
    }
    return n;
  }

  /** One transaction: the challenge's end, the payment's transition, its event. */
  private async finish(
    challenge: ThreedsChallengeRow,
    payment: PaymentRow,
    o: {
      status: 'declined' | 'review' | 'captured' | 'authorised';
      result: ResultCode;
      threeds_result: 'Y' | 'N';
      challenge: 'completed' | 'failed' | 'expired';
      from?: 'open' | 'processing';
      risk_score?: number;
      risk_action?: string;
      reference?: string;
      /** The attempt whose answer this is: settled with it, the payment moved from `processing`. */
      settled?: { attempt: ProcessorAttemptRow; outcome: AuthoriseOutcome };
    },
  ): Promise<PageOutcome> {
    const now = this.deps.now();
    const authenticated = o.threeds_result === 'Y';
    const patch: Partial<PaymentRow> = {
      result_code: o.result,
      threeds_result: o.threeds_result,
      is3ds: authenticated ? 1 : 0,
      authorised_minor: o.status === 'authorised' || o.status === 'review' ? payment.amount_minor : 0,
      captured_minor: o.status === 'captured' ? payment.amount_minor : 0,
      expires_at: o.status === 'authorised' ? now + MANUAL_CAPTURE_WINDOW_MS : o.status === 'review' ? now + REVIEW_WINDOW_MS : null,
    };
    if (o.risk_score !== undefined) patch.risk_score = o.risk_score;
    if (o.risk_action !== undefined) patch.risk_action = o.risk_action;
    if (o.reference) {
      const details = JSON.parse(payment.details || '{}') as Record<string, unknown>;
      details.reference_no = o.reference;
      patch.details = JSON.stringify(details);
    }
    const updated = await this.deps.store
      .transaction(async (tx) => {
        const ended = await applyChallengeTransition(tx, challenge.id_hash, END_EVENT[o.challenge], o.from ?? 'processing', { decided_at: now }, now);
        if (!ended) return null; // another request or the job ended it first
        if (o.settled) {
          const d = o.settled.outcome;
          const unit = new WriteUnit(this.deps.store.engine);
          const result_code = d.kind === 'declined' ? d.code : '';
          const reference = 'reference' in d ? d.reference : undefined;
          settleAttemptInto(unit, o.settled.attempt, 'answer', { status: attemptStatusOf(d), result_code, reference }, now, () => new PaymentChanged());
          await applyUnit(tx, unit);
        }
        const move: PaymentMove = {
          event: o.settled ? 'processor_answer' : o.status === 'declined' ? 'authenticate_fail' : 'authenticate_ok',
          to: o.status,
          patch,
          // The event a challenge's end sends: the payment as it now stands.
          notify: o.status === 'declined' ? 'payment.failed' : o.status === 'review' ? 'payment.held' : 'payment.succeeded',
          // docs/contract.md §16: the first payment of a subscription is approved only now.
          approved: (t, after) => createForApproved(t, after, now),
        };
        // The hold placed at authorise is kept (authorised, review), captured or released (declined).
        const moved = payment.status === 'pending' || payment.status === 'processing' ? await movePayment(tx, payment, move, now) : undefined;
        return moved ?? (await requirePayment(tx, payment.transaction_id));
      })
      .catch((e) => {
        // The sweeper settled the attempt first: its answer stands.
        if (e instanceof PaymentChanged) return null;
        throw e;
      });
    if (!updated) return { kind: 'used' };
    return { kind: 'done', payment: updated, redirect: await this.returnLocation(updated) };
  }

  /** Back to the hosted checkout, or return_url with the signed result (docs/contract.md §10), or null. */
  private returnLocation(row: PaymentRow): Promise<string | null> {
    return shopperReturn(this.deps, row);
  }
}

/** What the sandbox issuer's access control server hands back after a passed challenge. */
function sandboxAuthentication(brand: string) {
  return {
    eci: brand === 'mastercard' || brand === 'maestro' ? '02' : '05',
    cavv: newId('threeds_cavv'),
    xid: '',
    ds_trans_id: newId('threeds_ds_trans_id'),
  };
}

/** The payment or its attempt changed under the challenge's claim (another submit, the sweeper): nothing of this request is written. */
class PaymentChanged extends Error {}
