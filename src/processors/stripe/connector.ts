// The Stripe connector (docs/contract.md §21, docs/processors.md "Stripe"): the `Processor` of
// types.ts over Stripe's PaymentIntents and Refunds, through the official `stripe` package.
// Every call carries `Idempotency-Key` = the attempt id. What is not a readable answer is
// `unknown` (a network error, the deadline, a 5xx, Stripe's APIError, a malformed answer)
// and the sweeper asks again; a card error is a decline mapped by STRIPE_DECLINES; a refused
// key (401/403) is a decline 1007 and one log line for the operator, never a 500. No error,
// reason or log line carries a card number, a security code or a key (docs/security.md):
// reasons are built from Stripe's error type and code, never its message (a message may
// echo a parameter).
//
// Status queries (`authoriseStatus`, `operationStatus`) find the PaymentIntent by our
// metadata through the Search API (`metadata['attempt_id']` for an authorisation,
// `metadata['transaction_id']` for a capture or cancel). Repeating the create under the same
// Idempotency-Key would replay Stripe's answer, but Stripe refuses a repeat whose parameters
// differ, and the card number and security code are not kept to repeat it. Search is
// eventually consistent (Stripe: under a minute), so finding nothing is `unknown`, never
// `not_found`: an authorisation Stripe never saw ends by the void bound (docs/attempts.md),
// whose cancel then finds nothing to cancel.
//
// Dispute responses (`respondToDispute`, docs/contract.md §22): `defend` uploads each file
// (Idempotency-Key `<attempt>.file.<i>`), then submits the evidence (`submit: true`, key = the
// attempt id); `accept` closes the dispute. A repeat under the same attempt id replays Stripe's
// first answers, so nothing is uploaded or submitted twice. A 4xx there (the dispute closed,
// unknown, its evidence already in) is a refusal the merchant is shown, 404 included: a
// dispute's id comes from Stripe's own event, so not finding it is no lag of search.
import Stripe from 'stripe';
import type {
  AttemptStatusAnswer,
  AuthoriseInput,
  AuthoriseOutcome,
  CancelInput,
  CaptureInput,
  DisputeResponseInput,
  DisputeResponseOutcome,
  MoneyOperation,
  OperationOutcome,
  OperationStatusAnswer,
  Processor,
  ProcessorCall,
  RefundInput,
  WebhookParse,
  WebhookRequest,
} from '../types.js';
import { planStripeEvidence, stripeEvidenceParams } from './dispute-response.js';
import { disputeNoticeOfEvent } from './disputes.js';
import { authoriseOfIntent, cancelOfIntent, captureOfIntent, declineCode, metadataOf, notificationsOfEvent, refundOutcome } from './outcomes.js';

export interface StripeSettings {
  secret_key: string;
  webhook_secret?: string;
  /** Where Stripe is (a mock in tests); default https://api.stripe.com. A path in it is ignored: Stripe's paths start at `/v1`. */
  base_url?: string;
  /** Shown as `connector` in answers (default `stripe`). */
  name?: string;
  /** The most one request may take at the HTTP level (default 30 s); the call's own deadline answers `unknown` sooner. */
  request_timeout_ms?: number;
  /** Where a refused key or request is told (default: one JSON line on standard error). */
  log?: (fields: Record<string, unknown>, message: string) => void;
}

type Unknown = { kind: 'unknown'; reason: string };

const stderrLog = (fields: Record<string, unknown>, message: string) => {
  process.stderr.write(`${JSON.stringify({ level: 'error', time: Date.now(), ...fields, msg: message })}\n`);
};

/** At most this many PaymentIntents are read for one transaction (a checkout paid again after a decline makes several). */
const SEARCH_LIMIT = 20;

/** Longer than docs/style.md §16 allows: the methods share one client and one reading of its failures, and each is a few lines. */
export function createStripeProcessor(s: StripeSettings): Processor {
  const base = new URL(s.base_url || 'https://api.stripe.com');
  const name = s.name ?? 'stripe';
  const log = s.log ?? stderrLog;
  // File uploads (`files.create`) go to another host than the API: stripe-node 23 sends them
  // with `apiBase: 'files'`, and `resolveBaseAddress` answers files.stripe.com only while the
  // client's `host` is the default api.stripe.com; any other `host` set here takes the uploads
  // too, on the same port and protocol (its comment: "can override host globally, but not
  // locally"; no request option picks the host). So with `base_url` set, uploads reach it;
  // without, they go to files.stripe.com as Stripe's file upload guide says. Even with
  // `maxNetworkRetries: 0` the package sends a request once more when its connection closes
  // (ECONNRESET, EPIPE; RequestSender `_shouldRetry`), under the same Idempotency-Key: safe
  // because every POST here carries one (a GET repeated changes nothing).
  const stripe = new Stripe(s.secret_key, {
    host: base.hostname,
    port: base.port || (base.protocol === 'http:' ? 80 : 443),
    protocol: base.protocol === 'http:' ? 'http' : 'https',
    maxNetworkRetries: 0,
    timeout: s.request_timeout_ms ?? 30_000,
    telemetry: false,
  });

  /** Stripe's refusals as outcomes: a card error declines with its code, a refused key or request declines 1007 (logged), the rest is unknown. */
  function failure(
    e: unknown,
    call: ProcessorCall,
    what: string,
    /** `refused`: a 404 is a refusal like any other 4xx (an object known by its id, not found by search). */
    missing: 'unknown' | 'refused' = 'unknown',
  ): { kind: 'declined'; code: ReturnType<typeof declineCode>; reason: string; credentials_refused?: boolean } | Unknown {
    if (call.signal.aborted) return { kind: 'unknown', reason: 'no answer by the deadline' };
    if (!(e instanceof Stripe.errors.StripeError)) return { kind: 'unknown', reason: `the call failed: ${e instanceof Error ? e.name : 'error'}` };
    const code = typeof e.code === 'string' ? e.code.slice(0, 60) : '';
    if (e instanceof Stripe.errors.StripeCardError) {
      const decline_code = typeof e.decline_code === 'string' ? e.decline_code.slice(0, 60) : '';
      return { kind: 'declined', code: declineCode({ decline_code, code }), reason: `card declined: ${decline_code || code || 'no code'}` };
    }
    if (e instanceof Stripe.errors.StripeAuthenticationError || e instanceof Stripe.errors.StripePermissionError) {
      // An operator must act (a wrong, revoked or restricted key); the key itself is never logged.
      log(
        { connector: name, attempt_id: call.attempt_id, operation: what, status: e.statusCode },
        'Stripe refused our credentials: check the secret_key set with `tollgate processor set`',
      );
      return { kind: 'declined', code: '1007', reason: `processor refused our credentials (${e.statusCode ?? 401})`, credentials_refused: true };
    }
    const refusable = e.statusCode !== 404 || missing === 'refused';
    if (e instanceof Stripe.errors.StripeInvalidRequestError && refusable && !(e instanceof Stripe.errors.StripeIdempotencyError)) {
      log({ connector: name, attempt_id: call.attempt_id, operation: what, status: e.statusCode, code }, 'Stripe refused our request');
      return { kind: 'declined', code: '1007', reason: `Stripe refused the request: ${e.statusCode ?? 400} ${code || e.type}` };
    }
    // 404 (say, no such PaymentIntent), 409 (the same key still in flight), 429, 5xx, a connection error, a malformed answer: ask again later.
    return { kind: 'unknown', reason: `Stripe: ${e.type}${e.statusCode ? ` ${e.statusCode}` : ''}${code ? ` ${code}` : ''}` };
  }

  /** One request, answered `unknown` at the call's deadline (the package takes no abort signal; its own timeout ends the request). */
  async function request<T>(call: ProcessorCall, fn: () => Promise<T>): Promise<{ ok: T } | { error: unknown }> {
    if (call.signal.aborted) return { error: new Error('deadline') };
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<{ error: unknown }>((resolve) => {
      onAbort = () => resolve({ error: new Error('deadline') });
      call.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      // Through a promise: an argument the package refuses at once (thrown, its message may name the value) is an error like any other.
      return await Promise.race([
        Promise.resolve()
          .then(fn)
          .then(
            (ok) => ({ ok }),
            (error: unknown) => ({ error }),
          ),
        aborted,
      ]);
    } finally {
      if (onAbort) call.signal.removeEventListener('abort', onAbort);
    }
  }

  const opts = (call: ProcessorCall) => ({ idempotencyKey: call.attempt_id });

  /** A dispute call's failure: unknown, or a refusal named by Stripe's type and code (never its message). */
  function disputeFailure(e: unknown, call: ProcessorCall, what: string): DisputeResponseOutcome {
    const f = failure(e, call, what, 'refused');
    if (f.kind === 'unknown') return f;
    if (f.credentials_refused) return { kind: 'declined', reason: f.reason, credentials_refused: true };
    const raw = e as { statusCode?: unknown; rawType?: unknown; code?: unknown };
    const word = (v: unknown) => (typeof v === 'string' ? ` ${v.replace(/[^a-z0-9_]/gi, '').slice(0, 60)}` : '');
    const status = typeof raw.statusCode === 'number' ? raw.statusCode : 400;
    return { kind: 'declined', reason: `Stripe refused the ${what}: ${status}${word(raw.rawType)}${word(raw.code)}` };
  }

  /** Stripe's answer about the dispute: taken when it names the dispute, else unknown. */
  const disputeTaken = (answer: unknown): DisputeResponseOutcome => {
    const id = (answer as { id?: unknown } | null)?.id;
    return typeof id === 'string' && id ? { kind: 'approved', reference: id } : { kind: 'unknown', reason: 'Stripe answered without the dispute' };
  };

  /** `defend`: each file uploaded (its own key), then the evidence submitted under the attempt id. */
  async function defend(input: DisputeResponseInput, call: ProcessorCall): Promise<DisputeResponseOutcome> {
    const planned = planStripeEvidence(input.evidence);
    if (planned.kind === 'declined') return planned;
    const file_ids: string[] = [];
    for (const [i, { file }] of planned.plan.files.entries()) {
      const upload = { purpose: 'dispute_evidence' as const, file: { data: file.bytes, name: file.file_name, type: file.content_type } };
      const r = await request(call, () => stripe.files.create(upload, { idempotencyKey: `${call.attempt_id}.file.${i}` }));
      if ('error' in r) return disputeFailure(r.error, call, 'dispute evidence file');
      if (typeof r.ok?.id !== 'string') return { kind: 'unknown', reason: 'Stripe answered the upload without a file id' };
      file_ids.push(r.ok.id);
    }
    const params = { evidence: stripeEvidenceParams(planned.plan, file_ids), submit: true };
    const r = await request(call, () => stripe.disputes.update(input.processor_ref, params, opts(call)));
    return 'error' in r ? disputeFailure(r.error, call, 'dispute evidence') : disputeTaken(r.ok);
  }

  /** The transaction's PaymentIntents found by search, newest first; `unknown` when the search failed. */
  async function intentsOf(query: string, call: ProcessorCall, what: string): Promise<Stripe.PaymentIntent[] | Unknown> {
    const r = await request(call, () => stripe.paymentIntents.search({ query, limit: SEARCH_LIMIT }));
    if ('error' in r) {
      const f = failure(r.error, call, what);
      return f.kind === 'unknown' ? f : { kind: 'unknown', reason: f.reason };
    }
    const data = (r.ok as { data?: unknown })?.data;
    if (!Array.isArray(data)) return { kind: 'unknown', reason: 'Stripe answered the search without a list' };
    return [...(data as Stripe.PaymentIntent[])].sort((a, b) => Number(b.created) - Number(a.created));
  }
  const byTransaction = (transaction_id: string) => `metadata['transaction_id']:'${quote(transaction_id)}'`;

  /** The PaymentIntent a capture or cancel acts on: by its reference, else the transaction's newest one that is not declined. */
  async function intentFor(input: { transaction_id: string; reference: string }, call: ProcessorCall, what: string): Promise<string | Unknown | null> {
    if (input.reference) return input.reference;
    const found = await intentsOf(byTransaction(input.transaction_id), call, what);
    if (!Array.isArray(found)) return found;
    return found.find((pi) => pi.status !== 'requires_payment_method')?.id ?? null;
  }

  return {
    name,
    async authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome> {
      const r = await request(call, () => stripe.paymentIntents.create(intentParams(input, call), opts(call)));
      if ('error' in r) {
        const f = failure(r.error, call, 'authorise');
        // A decline names the PaymentIntent Stripe made for it when the error carries one.
        const pi = (r.error as { payment_intent?: { id?: unknown } })?.payment_intent?.id;
        return f.kind === 'declined'
          ? { kind: 'declined', code: f.code, reference: typeof pi === 'string' ? pi : '', ...(f.credentials_refused ? { credentials_refused: true } : {}) }
          : f;
      }
      return authoriseOfIntent(r.ok);
    },

    async completeAuthentication(input, call: ProcessorCall): Promise<AuthoriseOutcome> {
      // The PaymentIntent is ours (the authorisation's reference), never the one the return URL names.
      if (!input.reference.startsWith('pi_')) return { kind: 'declined', code: '1007', reference: input.reference };
      const r = await request(call, () => stripe.paymentIntents.retrieve(input.reference, {}, opts(call)));
      if ('error' in r) {
        const f = failure(r.error, call, 'authentication result');
        return f.kind === 'unknown' ? f : { kind: 'declined', code: f.code, reference: input.reference };
      }
      const outcome = authoriseOfIntent(r.ok);
      // Still waiting for the shopper: back without finishing the challenge.
      if (outcome.kind === 'challenge_required') return { kind: 'declined', code: '1007', reference: input.reference, authentication_failed: true };
      return outcome;
    },

    async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
      const found = await intentsOf(`metadata['attempt_id']:'${quote(call.attempt_id)}'`, call, 'authorise status');
      if (!Array.isArray(found)) return found;
      if (found.length === 0) return { kind: 'unknown', reason: 'no PaymentIntent found by search (yet)' };
      return authoriseOfIntent(found[0]);
    },

    async capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome> {
      const id = await intentFor(input, call, 'capture');
      if (id === null) return { kind: 'declined', code: '1007', reason: 'no authorisation at Stripe to capture' };
      if (typeof id !== 'string') return id;
      const r = await request(call, () => stripe.paymentIntents.capture(id, { amount_to_capture: input.amount_minor }, opts(call)));
      return 'error' in r ? failure(r.error, call, 'capture') : captureOfIntent(r.ok);
    },

    async cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome> {
      const id = await intentFor(input, call, 'cancel');
      // Nothing at Stripe holds money for this transaction: nothing to cancel.
      if (id === null) return { kind: 'approved', reference: '' };
      if (typeof id !== 'string') return id;
      const r = await request(call, () => stripe.paymentIntents.cancel(id, {}, opts(call)));
      return 'error' in r ? failure(r.error, call, 'cancel') : cancelOfIntent(r.ok);
    },

    async refund(input: RefundInput, call: ProcessorCall): Promise<OperationOutcome> {
      const params = {
        payment_intent: input.reference,
        amount: input.amount_minor,
        metadata: { transaction_id: input.transaction_id, refund_id: input.refund_id, attempt_id: call.attempt_id },
      };
      const r = await request(call, () => stripe.refunds.create(params, opts(call)));
      return 'error' in r ? failure(r.error, call, 'refund') : refundOutcome(r.ok);
    },

    async operationStatus(input: { operation: MoneyOperation; transaction_id: string }, call: ProcessorCall): Promise<OperationStatusAnswer> {
      const found = await intentsOf(byTransaction(input.transaction_id), call, `${input.operation} status`);
      if (!Array.isArray(found)) return found;
      const pi = found.find((p) => p.status !== 'requires_payment_method');
      if (!pi) return { kind: 'unknown', reason: 'no PaymentIntent found by search (yet)' };
      if (input.operation === 'capture') return pi.status === 'requires_capture' ? { kind: 'not_found' } : captureOfIntent(pi);
      if (input.operation === 'cancel') return pi.status === 'requires_capture' ? { kind: 'not_found' } : cancelOfIntent(pi);
      // A refund: the PaymentIntent's refunds, the one this attempt made (by our metadata).
      const r = await request(call, () => stripe.refunds.list({ payment_intent: pi.id, limit: 100 }));
      if ('error' in r) {
        const f = failure(r.error, call, 'refund status');
        return f.kind === 'unknown' ? f : { kind: 'unknown', reason: f.reason };
      }
      const mine = (r.ok.data ?? []).find((x) => metadataOf(x).attempt_id === call.attempt_id);
      return mine ? refundOutcome(mine) : { kind: 'not_found' };
    },

    async respondToDispute(input: DisputeResponseInput, call: ProcessorCall): Promise<DisputeResponseOutcome> {
      if (!input.processor_ref) return { kind: 'declined', reason: 'no Stripe dispute id to answer' };
      if (input.action === 'defend') return defend(input, call);
      const r = await request(call, () => stripe.disputes.close(input.processor_ref, {}, opts(call)));
      return 'error' in r ? disputeFailure(r.error, call, 'dispute acceptance') : disputeTaken(r.ok);
    },

    parseWebhook(req: WebhookRequest): WebhookParse {
      if (!s.webhook_secret) return { kind: 'refused', status: 401, message: 'no webhook secret is set for this processor (--credential webhook_secret=…)' };
      const header = req.headers['stripe-signature'];
      if (!header) return { kind: 'refused', status: 401, message: 'no Stripe-Signature header' };
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(req.raw, header, s.webhook_secret);
      } catch (e) {
        if (e instanceof Stripe.errors.StripeSignatureVerificationError) return { kind: 'refused', status: 401, message: 'bad signature' };
        return { kind: 'refused', status: 400, message: 'the body is not a Stripe event' };
      }
      if (!event || typeof event !== 'object') return { kind: 'refused', status: 400, message: 'the body is not a Stripe event' };
      const dispute = disputeNoticeOfEvent(event);
      return {
        kind: 'accepted',
        notifications: notificationsOfEvent(event),
        disputes: dispute ? [dispute] : [],
        reply: { status: 200, content_type: 'application/json', body: '{"received":true}' },
      };
    },
  };
}

/** The PaymentIntent's parameters for an authorisation (docs/processors.md "Stripe": what is sent and why). */
export function intentParams(input: AuthoriseInput, call: ProcessorCall): Stripe.PaymentIntentCreateParams {
  const card: Record<string, string | number> = { number: input.card.pan, exp_month: input.card.exp_month, exp_year: input.card.exp_year };
  if (input.card.security_code !== undefined) card.cvc = input.card.security_code;
  const params: Record<string, unknown> = {
    amount: input.amount_minor,
    currency: input.currency.toLowerCase(),
    confirm: true,
    capture_method: input.capture_method === 'manual' ? 'manual' : 'automatic',
    // Raw card details (an account with raw card data APIs enabled); the package's types do not list them.
    payment_method_data: { type: 'card', card },
    metadata: { transaction_id: input.transaction_id, attempt_id: call.attempt_id },
  };
  if (input.merchant_initiated) params.off_session = true;
  if (input.authentication && !input.threeds) {
    // Stripe runs 3-D Secure with the shopper and sends them back here; `any` when the gateway asks for it.
    params.return_url = input.authentication.return_url;
    if (input.authentication.required) params.payment_method_options = { card: { request_three_d_secure: 'any' } };
  }
  if (input.threeds) {
    // 3-D Secure run elsewhere (our challenge or the merchant's MPI): its result for the issuer.
    const v2 = !!input.threeds.ds_trans_id;
    params.payment_method_options = {
      card: {
        three_d_secure: {
          cryptogram: input.threeds.cavv,
          electronic_commerce_indicator: input.threeds.eci,
          transaction_id: v2 ? input.threeds.ds_trans_id : input.threeds.xid,
          version: v2 ? '2.2.0' : '1.0.2',
        },
      },
    };
  }
  return params as unknown as Stripe.PaymentIntentCreateParams;
}

/** A value inside a search query's single quotes. */
function quote(v: string): string {
  return v.replace(/[\\']/g, (c) => `\\${c}`).slice(0, 200);
}
