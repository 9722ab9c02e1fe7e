// The sandbox issuer's challenge (docs/contract.md §10): created with a pending payment, shown at
// an unguessable single-use URL, completed or failed by the shopper, lapsing after 15
// minutes. Completing it runs the processor authorisation with the 3-D Secure data and
// moves the payment on through the transition table; the shopper then returns to the
// merchant's return_url with a signed result, and the notification goes out either way.

import { createHash, timingSafeEqual } from 'node:crypto';
import { newId } from '../crypto/ids.js';
import type { Tx } from '../db/store.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { REVIEW_WINDOW_MS, statusAfterApproval } from '../payments/approval.js';
import { movePayment, type PaymentMove } from '../payments/engine.js';
import { paymentById, requirePayment } from '../payments/reader.js';
import { shopperReturn } from '../payments/shopper-return.js';
import { MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import type { AuthoriseOutcome } from '../processors/types.js';
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

/** A fresh challenge for a payment; `row` is inserted with the payment (insertChallenge). */
export function newChallenge(public_url: string, payment: Pick<PaymentRow, 'transaction_id' | 'merchant_id' | 'account_id'>, now_ms: number): NewChallenge {
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
    return { kind: 'show', challenge, payment, merchant_name: await this.deps.merchants.displayName(challenge.merchant_id) };
  }

  /** POST: the shopper completed or failed the challenge. */
  async decide(id: string, form_token: string, outcome: 'complete' | 'fail'): Promise<PageOutcome> {
    const found = await this.load(id);
    if (!found) return { kind: 'not_found' };
    const { challenge, payment } = found;
    if (challenge.status !== 'open') return { kind: 'used' };
    const a = Buffer.from(form_token);
    const b = Buffer.from(challenge.form_token);
    if (a.length !== b.length || !timingSafeEqual(a, b)) return { kind: 'forbidden' };
    if (this.deps.now() >= challenge.expires_at) return this.finishExpired(challenge, payment);

    // Single use: claim the challenge before any processor call, so a second submit
    // (double click, replay) cannot authorise twice.
    const claimed = await this.deps.store.transaction((tx) => applyChallengeTransition(tx, challenge.id_hash, 'claim', 'open', {}, this.deps.now()));
    if (!claimed) return { kind: 'used' };

    if (outcome === 'fail') return this.finish(challenge, payment, { status: 'declined', result: '1009', threeds_result: 'N', challenge: 'failed' });

    const creds = await this.deps.merchants.credentials(payment.merchant_id, payment.account_id);
    const processor = creds ? this.deps.processorFor(creds.account) : null;
    let decision: AuthoriseOutcome | null = null;
    if (processor && payment.card_id) {
      const card = await this.deps.store.db.selectFrom('cards').selectAll().where('card_id', '=', payment.card_id).executeTakeFirstOrThrow();
      decision = await processor.authorise({
        transaction_id: payment.transaction_id,
        amount_minor: payment.amount_minor,
        currency: payment.currency,
        card: { pan: this.deps.keyring.decrypt(card.pan_enc), brand: card.brand, exp_month: card.exp_month, exp_year: card.exp_year },
        threeds: sandboxAuthentication(card.brand),
      });
    }
    // Not yet through a recorded attempt (docs/attempts.md lists what is): an open outcome fails the payment as a processing error.
    if (!decision || decision.kind === 'challenge_required' || decision.kind === 'pending' || decision.kind === 'unknown') {
      return this.finish(challenge, payment, { status: 'declined', result: '1007', threeds_result: 'Y', challenge: 'completed' });
    }
    if (decision.kind === 'declined')
      return this.finish(challenge, payment, { status: 'declined', result: decision.code, threeds_result: 'Y', challenge: 'completed' });
    const risk = withAuthentication(
      payment.risk_score ?? 0,
      JSON.parse(payment.risk_reasons || '[]'),
      await thresholdsFor(this.deps.store.db, payment.account_id),
    );
    const next = statusAfterApproval(risk.action, payment.capture_method);
    return this.finish(challenge, payment, {
      status: next.status,
      result: next.result,
      threeds_result: 'Y',
      challenge: 'completed',
      risk_score: risk.score,
      risk_action: risk.action === 'REJECT' ? 'REVIEW' : risk.action,
      reference: decision.reference,
    });
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
    const updated = await this.deps.store.transaction(async (tx) => {
      const ended = await applyChallengeTransition(tx, challenge.id_hash, END_EVENT[o.challenge], o.from ?? 'processing', { decided_at: now }, now);
      if (!ended) return null; // another request or the job ended it first
      const move: PaymentMove = {
        event: o.status === 'declined' ? 'authenticate_fail' : 'authenticate_ok',
        to: o.status,
        patch,
        // The event a challenge's end sends: the payment as it now stands.
        notify: o.status === 'declined' ? 'payment.failed' : o.status === 'review' ? 'payment.held' : 'payment.succeeded',
        // docs/contract.md §16: the first payment of a subscription is approved only now.
        approved: (t, after) => createForApproved(t, after, now),
      };
      // The hold placed at authorise is kept (authorised, review), captured or released (declined).
      const moved = payment.status === 'pending' ? await movePayment(tx, payment, move, now) : undefined;
      return moved ?? (await requirePayment(tx, payment.transaction_id));
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
