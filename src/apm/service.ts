// Alternative-method payments (docs/contract.md §15): `POST /v1/authorise` with `payment_method`,
// and the same start when a shopper picks a method on the hosted checkout page.
// Each interface maps its request to an `ApmPaymentCommand` (command.ts) first; the acquiring
// interface answers a used order_no's 1011 itself.
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
import { apmAnswerRecord } from '../authorise/answer.js';
import type { CaptureMethod } from '../authorise/command.js';
import { noProcessor, notFound, Refused, refuse } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import { insertRows } from '../db/prepared.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { PaymentRow } from '../db/tables/payments.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import type { AccountCredentials } from '../merchants/service.js';
import { type ApmMethod, apmMethod } from '../methods/catalogue.js';
import { enabledMethods } from '../methods/enablement.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { movePayment } from '../payments/engine.js';
import { recordPaymentEvent } from '../payments/events.js';
import { paymentById, paymentByOrderNo } from '../payments/reader.js';
import { applyTransition, MANUAL_CAPTURE_WINDOW_MS } from '../payments/states.js';
import {
  ABANDONED_START_MS,
  apmClaim,
  callWithDeadline,
  newAttempt,
  OPEN_ATTEMPT,
  type ProcessorAttemptRow,
  settleAttemptInto,
} from '../processors/attempts.js';
import type { Processor } from '../processors/types.js';
import type { Deps } from '../web/context.js';
import type { ApmPaymentCommand, ApmPaymentResult } from './command.js';
import type { IssuerPageRow } from './tables.js';

export const ISSUER_PAGE_ID = /^[A-Za-z0-9_-]{32}$/;
export const hashIssuerId = (id: string): string => createHash('sha256').update(id).digest('hex');

type StartedResult = Extract<ApmPaymentResult, { kind: 'started' }>;
type LostResult = Extract<ApmPaymentResult, { kind: 'lost' }>;

// The refusals below that are not a wire field (no processor: 1016; a processor that does not
// serve the method: 0404 naming payment_method) stay ApiErrors: the 0404 answer names its field
// (`error_field`), which the core's outcome catalogue has no place for, and the card command
// raises its 1016 the same way.
export class ApmService {
  constructor(private readonly deps: Deps) {}

  /** Unless the account offers the method for this currency and billing country: the 404 of §15. */
  private async requireOffered(account: Pick<AccountRow, 'account_id' | 'mode'>, method: ApmMethod, currency: string, billing_country: string): Promise<void> {
    const { payment_method } = method;
    const offered = await enabledMethods(this.deps.store.db, account, currency, billing_country);
    if (!offered.some((m) => m.payment_method === payment_method)) {
      const where = `${currency}${billing_country ? ` and billing_country ${billing_country}` : ' without a billing_country'}`;
      throw notFound('payment_method', `payment_method "${payment_method}" is not offered by this account for ${where}`);
    }
  }

  /** The checks of a command that need the account (404), then its deferred 400s, then the notify_url. */
  private async admit(creds: AccountCredentials, cmd: ApmPaymentCommand): Promise<void> {
    await this.requireOffered(creds.account, cmd.method, cmd.currency, cmd.billing_country);
    if (cmd.refused) throw cmd.refused;
    await requireSafeNotifyUrl(cmd.notify_url, this.deps.settings.allow_private_webhooks); // docs/contract.md §11
  }

  /** `POST /v1/authorise` with `payment_method`: started, or a repeat of a known order_no answered from storage. */
  async authorise(creds: AccountCredentials, cmd: ApmPaymentCommand): Promise<Exclude<ApmPaymentResult, LostResult>> {
    await this.admit(creds, cmd);
    const account_id = creds.account.account_id;
    const prior = await this.existing(account_id, cmd.order_no);
    if (prior) return replay(prior, cmd.request_hash);
    const started = await this.start(creds, cmd, null);
    if (started.kind === 'started') return started;
    // Another request holds the order_no (its start at the processor, or its payment written):
    // its answer is this one's once it is written; a start that failed wrote nothing.
    const winner = await this.awaitWinner(account_id, cmd.order_no);
    if (!winner) throw new Refused(refuse('not_processed', 'the processor did not answer the start of the payment; it is safe to retry'));
    return replay(winner, cmd.request_hash);
  }

  /**
   * The payment of the request that holds the order_no, once written: waited for while its
   * start is at the processor (at most the processor timeout and a second, in wall time);
   * undefined when that start ended without a payment.
   */
  private async awaitWinner(account_id: string, order_no: string): Promise<PaymentRow | undefined> {
    const until = Date.now() + this.deps.settings.processor_timeout_ms + 1_000;
    for (;;) {
      const row = await this.existing(account_id, order_no);
      if (row) return row;
      const held = await this.deps.store.db
        .selectFrom('processor_attempts')
        .select('attempt_id')
        .where('claim_key', '=', apmClaim(account_id, order_no))
        .where('status', 'in', [...OPEN_ATTEMPT])
        .executeTakeFirst();
      if (!held || Date.now() > until) return this.existing(account_id, order_no);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * The shopper chose a method on the hosted checkout page: the same checks and start, on
   * the session's pending payment (`cmd` carries its amount and request hash). Lost when the
   * session was paid (or cancelled) first.
   */
  async startOnCheckout(creds: AccountCredentials, cmd: ApmPaymentCommand, pending: PaymentRow): Promise<StartedResult | LostResult> {
    await this.admit(creds, cmd);
    return this.start(creds, cmd, pending);
  }

  private existing(account_id: string, order_no: string): Promise<PaymentRow | undefined> {
    return paymentByOrderNo(this.deps.store.db, account_id, order_no);
  }

  private async start(creds: AccountCredentials, cmd: ApmPaymentCommand, pending: PaymentRow | null): Promise<StartedResult | LostResult> {
    const { deps } = this;
    const { method } = cmd;
    const account = creds.account;
    const processor = deps.processorFor(account);
    if (!processor) throw noProcessor();
    if (!processor.startApm) throw notFound('payment_method', `payment_method "${method.payment_method}" is not served by this account's processor`);
    const now = deps.now();
    const transaction_id = pending ? pending.transaction_id : newId('payment', now);
    const attempt = await this.claimStart(account.account_id, processor, cmd, transaction_id, now);
    if (!attempt) return { kind: 'lost' };
    const startApm = processor.startApm.bind(processor);
    const started = await callWithDeadline(attempt, deps.now, (call) =>
      startApm({ transaction_id, payment_method: method.payment_method, amount_minor: cmd.amount_minor, currency: cmd.currency, fields: cmd.fields }, call),
    );
    if ('kind' in started) {
      // Nothing was written but the attempt: the shopper has no issuer page to go to, and the
      // merchant may try again. The attempt is closed, not left unknown: there is no status to
      // ask of a start and nothing the sweeper would settle (an unpaid issuer session the
      // processor may have opened lapses there, as a lost start's does below).
      await this.letGo(attempt, `${started.reason}; refused 1007, safe to retry`, now);
      throw new Refused(refuse('not_processed', 'the processor did not answer the start of the payment; it is safe to retry'));
    }
    const page_id = newId('apm_page'); // 32 url-safe characters, 192 random bits
    const issuer_url = started.issuer.kind === 'url' ? started.issuer.url : `${deps.settings.public_url}/issuer/${page_id}`;
    const expires_at = now + method.expiry_ms;

    const row = startedRow({ account, cmd, pending, transaction_id, reference: started.reference, connector: processor.name, now, expires_at });
    const record = apmAnswerRecord(row, issuer_url);
    row.answer = JSON.stringify(record);
    const page = started.issuer.kind === 'gateway_page' ? issuerPage(page_id, transaction_id, account, method, now, expires_at) : null;
    if (!(await this.recordStarted(row, pending, page, attempt, started.reference, now))) {
      // Another request took the order_no or the session first: this start is let go of (an unpaid issuer session lapses at the processor).
      await this.letGo(attempt, 'lost the order to another request', now);
      return { kind: 'lost' };
    }
    deps.metrics.payments.inc({ outcome: '0003' });
    return { kind: 'started', record, issuer_url };
  }

  /**
   * docs/contract.md §20: the start is an attempt, recorded before the call, and it claims
   * the order_no (a checkout session's too): one start per order reaches the processor,
   * whatever the concurrency. A start that fails lets the claim go; one that succeeds keeps
   * it. One whose process died is closed by the sweeper a minute past its deadline. Null:
   * another start holds the claim.
   */
  private async claimStart(
    account_id: string,
    processor: Processor,
    cmd: ApmPaymentCommand,
    transaction_id: string,
    now: number,
  ): Promise<ProcessorAttemptRow | null> {
    const { deps } = this;
    const claimed = newAttempt(
      {
        account_id,
        connector: processor.name,
        processor_id: processor.processor_id,
        operation: 'apm_start',
        object_id: transaction_id,
        amount_minor: cmd.amount_minor,
        currency: cmd.currency,
        claim_key: apmClaim(account_id, cmd.order_no),
      },
      now,
      deps.settings.processor_timeout_ms,
    );
    const attempt = { ...claimed, next_check_at: claimed.deadline_at + ABANDONED_START_MS };
    const unit = new WriteUnit(deps.store.engine).insertRows('processor_attempts', [attempt], {
      ignoreConflictOn: ['claim_key'],
      expected: { rows: 1, error: () => new Lost() },
    });
    return deps.store.write(unit).then(
      () => attempt,
      (e) => {
        if (e instanceof Lost) return null;
        throw e;
      },
    );
  }

  /** The started payment, its issuer page, its event and its attempt's answer in one transaction; false when another request was first. */
  private recordStarted(
    row: PaymentRow,
    pending: PaymentRow | null,
    page: ReturnType<typeof issuerPage> | null,
    attempt: ProcessorAttemptRow,
    reference: string,
    now: number,
  ): Promise<boolean> {
    const { deps } = this;
    const { transaction_id } = row;
    return deps.store
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
        await applyUnit(
          tx,
          settleAttemptInto(new WriteUnit(deps.store.engine), attempt, 'answer', { status: 'approved', reference }, now, () => new Lost()),
        );
        return true;
      })
      .catch((e) => {
        if (e instanceof Lost) return false;
        throw e;
      });
  }

  /** Closes a start that did not become a payment, so its order_no claim goes. */
  private async letGo(attempt: ProcessorAttemptRow, error: string, now: number): Promise<void> {
    const { deps } = this;
    await deps.store.write(settleAttemptInto(new WriteUnit(deps.store.engine), attempt, 'lose', { status: 'declined', error }, now, () => new Lost()));
  }
}

/** docs/contract.md §4: the same request again gets the original answer; another request 1011. */
function replay(row: PaymentRow, request_hash: string): Extract<ApmPaymentResult, { kind: 'replayed' | 'duplicate' }> {
  return row.request_hash === request_hash ? { kind: 'replayed', record: JSON.parse(row.answer) as Record<string, unknown> } : { kind: 'duplicate' };
}

/** The row of a started APM payment: a new payment, or the hosted checkout's pending one with its method chosen. */
function startedRow(o: {
  account: AccountCredentials['account'];
  cmd: ApmPaymentCommand;
  pending: PaymentRow | null;
  transaction_id: string;
  reference: string;
  connector: string;
  now: number;
  expires_at: number;
}): PaymentRow {
  const { account, cmd, pending, transaction_id, reference, connector, now, expires_at } = o;
  const { method } = cmd;
  const details: Record<string, unknown> = pending ? (JSON.parse(pending.details || '{}') as Record<string, unknown>) : { ...cmd.kept };
  details.payment_method = method.payment_method;
  if (cmd.bank_code) details.bank_code = cmd.bank_code;
  details.reference_no = reference;

  const row: PaymentRow = {
    transaction_id,
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    order_no: cmd.order_no,
    kind: pending ? pending.kind : 'apm',
    livemode: account.mode === 'live' ? 1 : 0,
    currency: cmd.currency,
    amount_minor: cmd.amount_minor,
    authorised_minor: 0, // nothing is reserved until the shopper pays
    captured_minor: 0,
    refunded_minor: 0,
    status: 'pending',
    capture_method: cmd.capture_method ?? (account.capture_method as CaptureMethod),
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
    notify_url: pending ? pending.notify_url : (cmd.notify_url ?? ''),
    return_url: pending ? pending.return_url : (cmd.return_url ?? ''),
    request_hash: cmd.request_hash,
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
