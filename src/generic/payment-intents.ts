// `/v1/payment_intents` of the generic interface (docs/contract.md §24; issue 33): the platform
// family's PaymentIntent over the one money core. The intent keeps what the merchant asked for;
// each confirm is one card payment of `AuthoriseService.authorise` (risk, 3-D Secure, the
// processor, the ledger, the `payment.*` events: the same path as `/v1/payments` and
// `/v1/authorise`), made from the intent's PaymentMethod's vaulted card, its order_no the charge
// id `ch_<transaction_id>`. Capture and cancel are `capturePayment` / `cancelPayment` of that
// payment. Once confirmed, the intent's status is read from its latest payment.
//
// Nothing is done twice: a confirm claims the intent by compare-and-set (one transition
// table, below) and writes the payment's id before the payment exists; a second confirm while
// one runs is refused (`lock_timeout`); a confirm re-run under the same Idempotency-Key, or
// after the claim's lease lapsed with no payment, pays the same order_no again, which the
// core answers from the payment (or the processor attempt) the first run made.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { type Static, Type } from 'typebox';
import type { KeyCaller } from '../apikeys/service.js';
import { requestHash } from '../authorise/acquiring.js';
import { AuthoriseService, orderClaim } from '../authorise/authorise.js';
import type { CardDetails, CardPaymentCommand, CardSource } from '../authorise/command.js';
import { apply, type Machine, type Transitions, transitionUpdate } from '../core/machine.js';
import { Refused } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { IntentState, PaymentIntentRow } from '../db/tables/payment-intents.js';
import type { PaymentMethodRow } from '../db/tables/payment-methods.js';
import type { CardRow, PaymentRow } from '../db/tables/payments.js';
import type { WriteUnit } from '../db/unit.js';
import { currencyExponent } from '../money/currency.js';
import { type NewEvent, recordEvent, recordEventInto } from '../notifications/outbox.js';
import { cancelPayment } from '../payments/cancel.js';
import { capturePayment } from '../payments/capture.js';
import { modePayment } from '../payments/reader.js';
import type { PaymentStatus } from '../payments/states.js';
import type { RiskEngine } from '../risk/index.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { chargeId, chargeObjects, registerChargeRoutes } from './charges.js';
import { customerObject, findCustomer } from './customers.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { genericRefusal } from './outcomes.js';
import { BillingDetails, CardInput, paymentMethodObject, resolvePaymentMethod, testCardInput, testCardOf, vaultRows } from './payment-methods.js';
import { CancelPayment, CapturePayment, lastError, paymentObject } from './payments.js';
import {
  CurrencyParam,
  Expand,
  type ExpandersOf,
  expanded,
  GenericError,
  IdParams,
  invalidParam,
  ListEnvelope,
  type ListQuery,
  listObject,
  listPage,
  listParams,
  lower,
  Metadata,
  type MetadataInput,
  mergeMetadata,
  missingParam,
  newMetadata,
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from './wire.js';

// ---- the transition table -----------------------------------------------------------------

type IntentEvent = 'revise' | 'confirm' | 'cancel';

/**
 * `revise`: the payment method or amount changes before a confirm (or after a decline);
 * `confirm`: a confirm claims the intent for its payment (again after a decline, or as a re-run);
 * `cancel`: no payment will be made. Whether a `confirmed` intent may be revised, confirmed
 * again or cancelled depends on its payment; the handlers check that before they fire.
 */
const INTENT_TRANSITIONS = {
  revise: { from: ['requires_payment_method', 'requires_confirmation', 'confirmed'], to: ['requires_payment_method', 'requires_confirmation'] },
  confirm: { from: ['requires_payment_method', 'requires_confirmation', 'confirmed'], to: 'confirmed' },
  cancel: { from: ['requires_payment_method', 'requires_confirmation', 'confirmed'], to: 'canceled' },
} as const satisfies Transitions<IntentState, IntentEvent>;

const INTENT_MACHINE: Machine<PaymentIntentRow, IntentState, IntentEvent> = {
  noun: 'PaymentIntent',
  table: 'payment_intents' satisfies keyof DB,
  key: 'id',
  status: 'state',
  stamp: 'updated_at',
  events: INTENT_TRANSITIONS,
};

/** How long a confirm's claim holds the intent before a confirm may re-run it (its payment never written). */
export const CONFIRM_LEASE_MS = 120_000;

/**
 * The outbox event of a change of the intent itself, written in the change's transaction: its
 * creation, and a cancel that releases no payment (before any, or after a decline; a released
 * authorisation is told by its payment's `payment.cancelled`). Told as the family's
 * `payment_intent.created` / `payment_intent.canceled` (src/notifications/platform.ts); no
 * notify_url: they reach a platform through its webhook endpoints and `/v1/events`.
 */
function intentEvent(merchant_id: string, row: PaymentIntentRow, event_type: 'payment_intent.created' | 'payment_intent.cancelled'): NewEvent {
  return {
    merchant_id,
    account_id: row.account_id,
    event_type,
    object_id: row.id,
    notify_url: '',
    data: { payment_intent: row.id, amount_minor: Number(row.amount_minor), currency: row.currency, customer: row.customer_id },
  };
}

// ---- the wire status ------------------------------------------------------------------------

export type IntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

/** A confirmed intent's status, from its latest payment (a declined one asks for another payment method). */
const FROM_PAYMENT: Readonly<Record<PaymentStatus, IntentStatus>> = {
  pending: 'requires_action',
  processing: 'processing',
  review: 'processing',
  authorised: 'requires_capture',
  captured: 'succeeded',
  partially_refunded: 'succeeded',
  refunded: 'succeeded',
  cancelled: 'canceled',
  expired: 'canceled',
  declined: 'requires_payment_method',
};

/** An intent with what its status is read from: its latest payment, and whether a confirm is still running without one. */
export interface LoadedIntent {
  row: PaymentIntentRow;
  payment: PaymentRow | undefined;
  inFlight: boolean;
}

export function intentStatus(i: LoadedIntent): IntentStatus {
  const { row, payment } = i;
  if (row.state === 'canceled') return 'canceled';
  if (row.state !== 'confirmed') return row.state;
  if (payment) return FROM_PAYMENT[payment.status];
  // Confirmed, its payment not written: being decided, or a confirm that died before the processor (confirm again).
  return i.inFlight ? 'processing' : 'requires_confirmation';
}

/** The wire object; amounts from the latest payment once there is one. */
export function intentObject(i: LoadedIntent): Record<string, unknown> {
  const { row, payment } = i;
  const status = intentStatus(i);
  const asPayment = payment ? paymentObject(payment) : null;
  const declined = payment?.status === 'declined';
  return {
    id: row.id,
    object: 'payment_intent',
    amount: Number(row.amount_minor),
    amount_capturable: payment?.status === 'authorised' ? Number(payment.authorised_minor) : 0,
    amount_details: { tip: {} },
    amount_received: payment ? Number(payment.captured_minor) : 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: null,
    canceled_at: row.canceled_at === null ? null : unixSeconds(row.canceled_at),
    cancellation_reason: row.cancellation_reason || null,
    capture_method: row.capture_method,
    client_secret: row.client_secret,
    confirmation_method: 'automatic',
    created: unixSeconds(row.created_at),
    currency: lower(row.currency),
    customer: row.customer_id || null,
    customer_account: null,
    description: row.description || null,
    excluded_payment_method_types: null,
    last_payment_error:
      declined && (status === 'requires_payment_method' || status === 'requires_confirmation')
        ? { ...(lastError(payment) as Record<string, unknown>), charge: chargeId(payment.transaction_id) }
        : null,
    latest_charge: payment ? chargeId(payment.transaction_id) : null,
    livemode: row.livemode === 1,
    managed_payments: null,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    next_action: status === 'requires_action' ? (asPayment?.next_action ?? null) : null,
    on_behalf_of: null,
    payment_method: row.payment_method_id || null,
    payment_method_configuration_details: null,
    payment_method_options: {
      card: { request_three_d_secure: row.three_d_secure || 'automatic', capture_method: null, installments: null, mandate_options: null, network: null },
    },
    payment_method_types: ['card'],
    processing: status === 'processing' ? { type: 'card', card: {} } : null,
    receipt_email: row.receipt_email || null,
    review: null,
    setup_future_usage: row.setup_future_usage || null,
    shipping: null,
    source: null,
    statement_descriptor: row.statement_descriptor || null,
    statement_descriptor_suffix: null,
    status,
    transfer_data: null,
    transfer_group: null,
  };
}

// ---- parameters -----------------------------------------------------------------------------

const Amount = Type.Integer({ minimum: 1, maximum: 999_999_999_999, description: 'in minor units (1000 is 10.00 USD, 1000 JPY)' });
const CaptureMethod = Type.String({
  enum: ['automatic', 'automatic_async', 'manual'],
  description: 'manual: authorise only, capture within 7 days (default: automatic)',
});
const SetupFutureUsage = Type.String({
  enum: ['', 'on_session', 'off_session'],
  description: 'attach the PaymentMethod to the intent’s customer once the payment is approved',
});
const PaymentMethodData = Type.Object(
  {
    type: Type.Literal('card', { description: 'card (the one type offered)' }),
    card: CardInput,
    billing_details: Type.Optional(BillingDetails),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false, description: 'a card to make a new PaymentMethod of (vaulted, number encrypted) and use' },
);
const PaymentMethodOptions = Type.Object(
  {
    card: Type.Optional(
      Type.Object(
        {
          request_three_d_secure: Type.Optional(
            Type.String({
              enum: ['automatic', 'any', 'challenge'],
              description: 'any or challenge: always authenticate the shopper; automatic: when the risk or the issuer asks',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const ReturnUrl = Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$', description: 'where the shopper returns after 3-D Secure' });
const Email = Type.String({ maxLength: 254, pattern: '^$|^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', description: 'an e-mail address' });
const PaymentMethodId = Type.String({ maxLength: 80, description: 'a PaymentMethod (pm_…) or a test one (pm_card_visa, …)' });
const AutomaticPaymentMethods = Type.Object(
  {
    enabled: Type.Boolean({ description: 'cards are the one method offered either way' }),
    allow_redirects: Type.Optional(Type.String({ enum: ['always', 'never'] })),
  },
  { additionalProperties: false },
);

/** What a confirm may change, on create (with `confirm`) and on confirm. */
const confirmParams = {
  payment_method: Type.Optional(PaymentMethodId),
  payment_method_data: Type.Optional(PaymentMethodData),
  payment_method_options: Type.Optional(PaymentMethodOptions),
  receipt_email: Type.Optional(Email),
  return_url: Type.Optional(ReturnUrl),
  setup_future_usage: Type.Optional(SetupFutureUsage),
  capture_method: Type.Optional(CaptureMethod),
};

const CreateIntent = Type.Object(
  {
    amount: Amount,
    currency: CurrencyParam,
    confirm: Type.Optional(Type.Boolean({ description: 'confirm at once (default false)' })),
    customer: Type.Optional(Type.String({ maxLength: 80, description: 'a customer (cus_…)' })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
    statement_descriptor: Type.Optional(Type.String({ maxLength: 22 })),
    payment_method_types: Type.Optional(Type.Array(Type.Literal('card'), { minItems: 1, maxItems: 1, description: '["card"], the one type offered' })),
    automatic_payment_methods: Type.Optional(AutomaticPaymentMethods),
    ...confirmParams,
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreateIntent = Static<typeof CreateIntent>;

const UpdateIntent = Type.Object(
  {
    amount: Type.Optional(Amount),
    currency: Type.Optional(CurrencyParam),
    customer: Type.Optional(Type.String({ maxLength: 80, description: 'a customer (cus_…)' })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
    statement_descriptor: Type.Optional(Type.String({ maxLength: 22 })),
    payment_method: Type.Optional(PaymentMethodId),
    payment_method_data: Type.Optional(PaymentMethodData),
    payment_method_options: Type.Optional(PaymentMethodOptions),
    receipt_email: Type.Optional(Email),
    setup_future_usage: Type.Optional(SetupFutureUsage),
    capture_method: Type.Optional(CaptureMethod),
    expand: Expand,
  },
  { additionalProperties: false },
);
type UpdateIntent = Static<typeof UpdateIntent>;

const ConfirmIntent = Type.Object({ ...confirmParams, expand: Expand }, { additionalProperties: false });
type ConfirmIntent = Static<typeof ConfirmIntent>;

const CaptureIntent = CapturePayment;
const CancelIntent = CancelPayment;
const ListIntents = Type.Object(
  { ...listParams, customer: Type.Optional(Type.String({ maxLength: 80, description: 'only this customer’s (cus_…)' })) },
  { additionalProperties: false },
);

const IntentObject = Type.Object(
  {
    id: Type.String({ description: 'pi_…' }),
    object: Type.Literal('payment_intent'),
    amount: Type.Integer(),
    amount_capturable: Type.Integer(),
    amount_received: Type.Integer(),
    capture_method: Type.String(),
    client_secret: Type.String(),
    created: Type.Integer({ description: 'Unix seconds' }),
    currency: Type.String(),
    customer: Type.Union([Type.String(), Type.Null()]),
    latest_charge: Type.Union([Type.String(), Type.Null()]),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    payment_method: Type.Union([Type.String(), Type.Null()]),
    status: Type.String({
      enum: ['requires_payment_method', 'requires_confirmation', 'requires_action', 'processing', 'requires_capture', 'canceled', 'succeeded'],
    }),
  },
  {
    additionalProperties: true,
    description:
      'A PaymentIntent. Before a confirm: `requires_payment_method` or `requires_confirmation`. After: its latest charge’s outcome, `succeeded`, `requires_capture` (manual capture), `requires_action` (follow `next_action.redirect_to_url.url` for 3-D Secure), `processing` (at the processor or held for review), `requires_payment_method` again after a decline (`last_payment_error`), `canceled`.',
  },
);

// ---- reading ------------------------------------------------------------------------------

const ownerOf = (caller: KeyCaller) => ({ account_id: caller.creds.account.account_id, livemode: caller.livemode ? 1 : 0 });

function loadIntents(deps: Deps, rows: readonly PaymentIntentRow[]): Promise<LoadedIntent[]> {
  return loadIntentsFrom(deps.store.db, deps.now(), rows);
}

async function loadIntentsFrom(db: Tx, now: number, rows: readonly PaymentIntentRow[]): Promise<LoadedIntent[]> {
  const tids = rows.map((r) => r.transaction_id).filter((t) => t !== '');
  const payments = tids.length === 0 ? [] : await db.selectFrom('payments').selectAll().where('transaction_id', 'in', tids).execute();
  const byTid = new Map(payments.map((p) => [p.transaction_id, p]));
  return Promise.all(
    rows.map(async (row) => {
      const payment = row.transaction_id ? byTid.get(row.transaction_id) : undefined;
      let inFlight = false;
      if (row.state === 'confirmed' && !payment) {
        // Within the claim's lease, or while its processor attempt holds the order_no, the confirm is still being decided.
        const claim = await db
          .selectFrom('processor_attempts')
          .select('claim_key')
          .where('claim_key', '=', orderClaim(row.account_id, chargeId(row.transaction_id)))
          .executeTakeFirst();
        inFlight = claim !== undefined || now - Number(row.confirmed_at) < CONFIRM_LEASE_MS;
      }
      return { row, payment, inFlight };
    }),
  );
}

async function loadIntent(deps: Deps, row: PaymentIntentRow): Promise<LoadedIntent> {
  return (await loadIntents(deps, [row]))[0] as LoadedIntent;
}

/** This caller's intent `id`, or a 404 naming `param`. */
async function findIntent(deps: Deps, caller: KeyCaller, id: string, param = 'id', db: Tx = deps.store.db): Promise<PaymentIntentRow> {
  const o = ownerOf(caller);
  const row = await db
    .selectFrom('payment_intents')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', o.account_id)
    .where('livemode', '=', o.livemode)
    .executeTakeFirst();
  if (!row) throw noSuch('payment_intent', id, param);
  return row;
}

/** `expand[]` on PaymentIntents: `latest_charge`, `payment_method`, `customer`. */
function intentExpanders(deps: Deps, request: FastifyRequest): ExpandersOf<'payment_intent'> {
  const caller = callerOf(request);
  return {
    latest_charge: async (id) => {
      const row = await modePayment(deps.store.db, caller.creds.account.account_id, caller.livemode ? 1 : 0, id.slice(3));
      return row ? (await chargeObjects(deps.store.db, [row]))[0] : undefined;
    },
    payment_method: async (id) => {
      const pm = await resolvePaymentMethod(deps, caller, id).catch(() => undefined);
      return pm ? paymentMethodObject(pm.row, pm.card) : undefined;
    },
    customer: async (id) => {
      const c = await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, id);
      return c ? customerObject(c) : undefined;
    },
  };
}

async function send(deps: Deps, request: FastifyRequest, reply: FastifyReply, i: LoadedIntent, status = 200) {
  return sendObject(request, reply, await expanded(request, intentObject(i), intentExpanders(deps, request)), status);
}

// ---- what the request names ---------------------------------------------------------------

function currencyOf(given: string): string {
  const currency = given.toUpperCase();
  if (currencyExponent(currency) === null) throw invalidParam('currency', `Invalid currency: ${given} is not a supported ISO 4217 currency.`);
  return currency;
}

async function customerParam(deps: Deps, caller: KeyCaller, id: string): Promise<string> {
  const c = await findCustomer(deps.store.db, caller.creds.account.account_id, caller.livemode, id);
  if (!c) throw noSuch('customer', id, 'customer');
  return c.id;
}

const pmState = (message: string, param = 'payment_method') =>
  new GenericError(400, { type: 'invalid_request_error', code: 'payment_method_unexpected_state', message, param });

/**
 * What a confirm pays with: a card brought now (`payment_method_data`, or one of the family's
 * test PaymentMethods), its PaymentMethod's rows made but not written (they are written with the
 * payment, or by `methodId`); or an existing PaymentMethod's vaulted card.
 */
type MethodChoice = { kind: 'new'; pm: PaymentMethodRow; card: CardRow; brought: CardDetails } | { kind: 'stored'; pm_id: string; card_id: string };

/**
 * The PaymentMethod the request names (`payment_method`, or a new one of `payment_method_data`),
 * checked against the intent's customer as the family does: a detached one, or another
 * customer's, cannot be used. Undefined when the request names none.
 */
async function chooseMethod(
  deps: Deps,
  caller: KeyCaller,
  b: { payment_method?: string; payment_method_data?: Static<typeof PaymentMethodData> },
  customer_id: string,
): Promise<MethodChoice | undefined> {
  if (b.payment_method !== undefined && b.payment_method_data !== undefined)
    throw new GenericError(400, {
      type: 'invalid_request_error',
      code: 'parameters_exclusive',
      message: 'You may only specify one of these parameters: payment_method, payment_method_data.',
      param: 'payment_method_data',
    });
  const brought = (card: Static<typeof CardInput>, extra: Parameters<typeof vaultRows>[3]): MethodChoice => {
    const made = vaultRows(deps, caller, card, extra);
    return {
      kind: 'new',
      pm: made.row,
      card: made.card,
      brought: { kind: 'card', pan: card.number, exp_month: card.exp_month, exp_year: card.exp_year, security_code: card.cvc },
    };
  };
  if (b.payment_method_data !== undefined) {
    const d = b.payment_method_data;
    try {
      return brought(d.card, { billing_details: d.billing_details, metadata: d.metadata as MetadataInput | undefined });
    } catch (e) {
      // The vault's card errors name `card[…]`; here the card came as payment_method_data[card][…].
      if (e instanceof GenericError && typeof e.body.param === 'string') e.body.param = `payment_method_data[${e.body.param.replace('[', '][')}`;
      throw e;
    }
  }
  if (b.payment_method === undefined) return undefined;
  const test = testCardOf(caller, b.payment_method);
  if (test !== undefined) return brought(testCardInput(deps, test), {});
  return storedMethod(deps, caller, b.payment_method, customer_id);
}

/** An existing PaymentMethod of the caller, usable for `customer_id`'s payment. */
async function storedMethod(deps: Deps, caller: KeyCaller, id: string, customer_id: string): Promise<MethodChoice> {
  const pm = await resolvePaymentMethod(deps, caller, id, 'payment_method');
  if (pm.row.detached === 1) throw pmState(`The PaymentMethod ${pm.row.id} was detached from a customer and cannot be used again.`);
  if (pm.row.customer_id !== '' && pm.row.customer_id !== customer_id)
    throw pmState(
      customer_id === ''
        ? `The PaymentMethod ${pm.row.id} belongs to a customer: send that customer with the PaymentIntent.`
        : `The PaymentMethod ${pm.row.id} belongs to another customer than this PaymentIntent's.`,
    );
  return { kind: 'stored', pm_id: pm.row.id, card_id: pm.row.card_id };
}

/** The PaymentMethod's id, its rows written first when it is new (create without confirm, update). */
async function methodId(deps: Deps, choice: MethodChoice | undefined): Promise<string | undefined> {
  if (choice?.kind !== 'new') return choice?.pm_id;
  await deps.store.transaction(async (tx) => {
    await tx.insertInto('cards').values(choice.card).execute();
    await tx.insertInto('payment_methods').values(choice.pm).execute();
  });
  return choice.pm.id;
}

const unexpected = (message: string) => new GenericError(400, { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message });

// ---- handlers -----------------------------------------------------------------------------

type IdRequest<B = unknown> = FastifyRequest<{ Params: { id: string }; Body: B }>;

/** POST /v1/payment_intents */
async function createIntent(deps: Deps, authorise: AuthoriseService, request: FastifyRequest<{ Body: CreateIntent }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const currency = currencyOf(b.currency);
  const customer_id = b.customer !== undefined ? await customerParam(deps, caller, b.customer) : '';
  const now = deps.now();
  // Under an Idempotency-Key the id comes from the key's row: a re-run after a crash finds the intent its first run made.
  const idem = request.idempotency?.id;
  const id = idem ? `pi_${idem.replace(/^idk_/, '')}` : newId('payment_intent', now);
  const row = await deps.store.db.selectFrom('payment_intents').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) {
    const choice = await chooseMethod(deps, caller, b, customer_id);
    const fresh: PaymentIntentRow = {
      id,
      ...ownerOf(caller),
      state: 'requires_payment_method',
      amount_minor: b.amount,
      currency,
      capture_method: b.capture_method === 'manual' ? 'manual' : 'automatic',
      customer_id,
      payment_method_id: '',
      setup_future_usage: b.setup_future_usage ?? '',
      description: b.description ?? '',
      receipt_email: b.receipt_email ?? '',
      return_url: b.return_url ?? '',
      statement_descriptor: b.statement_descriptor ?? '',
      three_d_secure: b.payment_method_options?.card?.request_three_d_secure ?? '',
      metadata: JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined)),
      client_secret: `${id}_secret_${newId('payment_intent_secret')}`,
      transaction_id: '',
      confirmed_at: 0,
      canceled_at: null,
      cancellation_reason: '',
      created_at: now,
      updated_at: now,
    };
    // Confirmed at once: the intent (and a new PaymentMethod) are written with its payment's first write.
    if (b.confirm) return confirmAndAnswer(deps, authorise, request, reply, { row: fresh, isNew: true, choice }, b);
    fresh.payment_method_id = (await methodId(deps, choice)) ?? '';
    fresh.state = fresh.payment_method_id ? 'requires_confirmation' : 'requires_payment_method';
    await deps.store.transaction(async (tx) => {
      await tx.insertInto('payment_intents').values(fresh).execute();
      await recordEvent(tx, intentEvent(caller.creds.account.merchant_id, fresh, 'payment_intent.created'), now);
    });
    return send(deps, request, reply, await loadIntent(deps, fresh));
  }
  // A re-run under the key of a create that wrote its intent: answer it, or confirm it as the first run meant to.
  if (!b.confirm) return send(deps, request, reply, await loadIntent(deps, row));
  return confirmAndAnswer(deps, authorise, request, reply, { row, isNew: false, choice: undefined }, {});
}

/** GET /v1/payment_intents/:id */
async function retrieveIntent(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const row = await findIntent(deps, callerOf(request), request.params.id);
  return send(deps, request, reply, await loadIntent(deps, row));
}

/** Whether the intent's amount, currency and payment method may still change (before a confirm, or after a decline). */
function revisable(i: LoadedIntent): boolean {
  const s = intentStatus(i);
  return s === 'requires_payment_method' || s === 'requires_confirmation';
}

/** POST /v1/payment_intents/:id: metadata and description at any time; the rest while it awaits a (new) payment method or a confirm. */
async function updateIntent(deps: Deps, request: IdRequest<UpdateIntent>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const current = await loadIntent(deps, await findIntent(deps, caller, request.params.id));
  const { row } = current;
  const money = Object.keys(b).some((k) => k !== 'metadata' && k !== 'description' && k !== 'expand');
  if (money && !revisable(current))
    throw unexpected(
      `This PaymentIntent's ${Object.keys(b).find((k) => k !== 'metadata' && k !== 'description')} could not be updated because it is ${intentStatus(current)}.`,
    );
  const customer_id = b.customer !== undefined ? await customerParam(deps, caller, b.customer) : row.customer_id;
  // Every check before a new PaymentMethod is written: a refused update writes nothing.
  const currency = b.currency !== undefined ? currencyOf(b.currency) : undefined;
  const payment_method_id = (await methodId(deps, await chooseMethod(deps, caller, b, customer_id))) ?? row.payment_method_id;
  const patch: Partial<PaymentIntentRow> = {
    ...(b.amount !== undefined ? { amount_minor: b.amount } : {}),
    ...(currency !== undefined ? { currency } : {}),
    ...(b.description !== undefined ? { description: b.description } : {}),
    ...(b.statement_descriptor !== undefined ? { statement_descriptor: b.statement_descriptor } : {}),
    ...(b.receipt_email !== undefined ? { receipt_email: b.receipt_email } : {}),
    ...(b.setup_future_usage !== undefined ? { setup_future_usage: b.setup_future_usage } : {}),
    ...(b.capture_method !== undefined ? { capture_method: b.capture_method === 'manual' ? 'manual' : 'automatic' } : {}),
    ...(b.payment_method_options?.card?.request_three_d_secure !== undefined ? { three_d_secure: b.payment_method_options.card.request_three_d_secure } : {}),
    customer_id,
    payment_method_id,
  };
  const updated = await deps.store.transaction(async (tx) => {
    const now = deps.now();
    const fresh = await findIntent(deps, caller, row.id, 'id', tx);
    const metadata = JSON.stringify(mergeMetadata(fresh.metadata, b.metadata as MetadataInput | undefined));
    // Money fields move the intent by its table (only from the state read above: a confirm that got there first wins);
    // metadata and description alone are a plain write under the row's own version (updated_at).
    const moved = money
      ? await apply(tx, INTENT_MACHINE, row.id, 'revise', row.state, { ...patch, metadata }, now, {
          to: payment_method_id ? 'requires_confirmation' : 'requires_payment_method',
          where: { transaction_id: row.transaction_id, updated_at: row.updated_at },
        })
      : await tx
          .updateTable('payment_intents')
          .set({ ...patch, metadata, updated_at: now })
          .where('id', '=', row.id)
          .where('updated_at', '=', fresh.updated_at)
          .returningAll()
          .executeTakeFirst();
    if (!moved) throw lockTimeout();
    return moved;
  });
  return send(deps, request, reply, await loadIntent(deps, updated));
}

const lockTimeout = () =>
  new GenericError(409, {
    type: 'invalid_request_error',
    code: 'lock_timeout',
    message: 'This PaymentIntent is being changed by another request (a confirm, capture or cancel); retry after it ends.',
  });

/** POST /v1/payment_intents/:id/confirm */
async function confirmIntent(deps: Deps, authorise: AuthoriseService, request: IdRequest<ConfirmIntent>, reply: FastifyReply) {
  const caller = callerOf(request);
  const row = await findIntent(deps, caller, request.params.id);
  return confirmAndAnswer(
    deps,
    authorise,
    request,
    reply,
    { row, isNew: false, choice: await chooseMethod(deps, caller, request.body, row.customer_id) },
    request.body,
  );
}

/** A confirm's intent: as stored, or (`isNew`) not yet written (a create with `confirm`), and the PaymentMethod the request named. */
interface ToConfirm {
  row: PaymentIntentRow;
  isNew: boolean;
  choice: MethodChoice | undefined;
}

/** A failed compare-and-set of a confirm's claim, written with the payment: another request moved the intent first. */
class ClaimLost extends Error {}

/**
 * Confirms the intent with what the request adds, pays it through the core and answers the
 * intent: 200 as it stands after the payment, 402 `card_error` with the intent in
 * `error.payment_intent` when the card was declined. The claim (and a new intent and
 * PaymentMethod) are written in the payment's own first write (RunOptions.alsoWrite), so a
 * refused request writes nothing and a confirm that lost the race never reaches the processor.
 */
async function confirmAndAnswer(
  deps: Deps,
  authorise: AuthoriseService,
  request: FastifyRequest,
  reply: FastifyReply,
  c: ToConfirm,
  b: ConfirmIntent | CreateIntent,
) {
  const caller = callerOf(request);
  const idem = request.idempotency?.id;
  const plan = await planConfirm(deps, caller, c, b, idem ? idem.replace(/^idk_/, '') : newId('payment', deps.now()));
  const { claimed } = plan;
  const details: Record<string, unknown> = { api: 'payment_intents', payment_intent: claimed.id, metadata: JSON.parse(claimed.metadata) };
  if (claimed.statement_descriptor) details.statement_descriptor = claimed.statement_descriptor;
  let payment: PaymentRow | undefined;
  try {
    const result = await authorise.authorise(
      caller.creds,
      { ...intentCommand(deps, caller, claimed), card: plan.card },
      { transaction_id: claimed.transaction_id, details, card_id: plan.card_id, alsoWrite: plan.also },
    );
    // A re-run finds the payment its first run made (or that run's snapshot while it is at the processor).
    payment = result.kind === 'decided' ? result.row : await modePayment(deps.store.db, claimed.account_id, claimed.livemode ? 1 : 0, claimed.transaction_id);
    if (!payment && result.kind === 'replayed') payment = result.row;
  } catch (e) {
    if (e instanceof ClaimLost) throw lockTimeout();
    // Refused before anything was written (the intent is as it was): the refusal names the PaymentMethod.
    if (e instanceof Refused && e.refusal.outcome === 'invalid_input')
      throw invalidParam('payment_method', e.refusal.detail ? `Invalid ${e.refusal.detail}` : 'Invalid input.');
    throw e;
  }
  if (payment && claimed.setup_future_usage && claimed.customer_id && !['declined', 'pending'].includes(payment.status))
    await deps.store.transaction((tx) =>
      tx
        .updateTable('payment_methods')
        .set({ customer_id: claimed.customer_id, updated_at: deps.now() })
        .where('id', '=', claimed.payment_method_id)
        .where('customer_id', '=', '')
        .where('detached', '=', 0)
        .execute(),
    );
  const loaded: LoadedIntent = { row: claimed, payment, inFlight: payment === undefined };
  if (payment?.status === 'declined') {
    const object = await expanded(request, intentObject(loaded), intentExpanders(deps, request));
    const e = lastError(payment) as Record<string, string>;
    return sendObject(request, reply, { error: { ...e, charge: chargeId(payment.transaction_id), payment_intent: object } }, 402);
  }
  return send(deps, request, reply, loaded);
}

/** What a confirm pays: the intent as claimed, the card for the core, and the rows written with the payment. */
interface ConfirmPlan {
  claimed: PaymentIntentRow;
  card: CardSource;
  card_id: string | undefined;
  also: ((unit: WriteUnit) => void) | undefined;
}

/**
 * How a confirm takes the intent for its payment `tid`: from a state awaiting a confirm or after a
 * decline, by a compare-and-set on the state and the latest payment written with the payment;
 * or, as the re-run of a confirm whose answer was lost (the same Idempotency-Key, or a claim
 * whose payment was never written once its lease lapsed), the same payment again, which the core
 * answers from what the first run made. Anything else is refused: a payment in progress or
 * decided cannot be confirmed again.
 */
async function planConfirm(deps: Deps, caller: KeyCaller, c: ToConfirm, b: ConfirmIntent | CreateIntent, tid: string): Promise<ConfirmPlan> {
  const { row } = c;
  if (!c.isNew && row.state === 'confirmed') {
    const current = await loadIntent(deps, row);
    const lapsed = !current.payment && !current.inFlight;
    if (row.transaction_id === tid || lapsed) {
      const pm = await deps.store.db.selectFrom('payment_methods').select('card_id').where('id', '=', row.payment_method_id).executeTakeFirstOrThrow();
      return { claimed: row, card: { kind: 'stored', card_id: pm.card_id }, card_id: undefined, also: undefined };
    }
    if (!current.payment) throw lockTimeout();
    const status = intentStatus(current);
    if (status !== 'requires_payment_method') throw unexpected(`This PaymentIntent's status is ${status}; it cannot be confirmed again.`);
  } else if (row.state === 'canceled') throw unexpected(`This PaymentIntent's status is canceled; it cannot be confirmed.`);
  const choice = c.choice ?? (row.payment_method_id ? await storedMethod(deps, callerOfRow(row), row.payment_method_id, row.customer_id) : undefined);
  if (!choice) throw missingParam('payment_method');
  const now = deps.now();
  const patch: Partial<PaymentIntentRow> = {
    payment_method_id: choice.kind === 'new' ? choice.pm.id : choice.pm_id,
    transaction_id: tid,
    confirmed_at: now,
    ...(b.receipt_email !== undefined ? { receipt_email: b.receipt_email } : {}),
    ...(b.return_url !== undefined ? { return_url: b.return_url } : {}),
    ...(b.setup_future_usage !== undefined ? { setup_future_usage: b.setup_future_usage } : {}),
    ...(b.capture_method !== undefined ? { capture_method: b.capture_method === 'manual' ? 'manual' : 'automatic' } : {}),
    ...(b.payment_method_options?.card?.request_three_d_secure !== undefined ? { three_d_secure: b.payment_method_options.card.request_three_d_secure } : {}),
  };
  const claimed: PaymentIntentRow = { ...row, ...patch, state: 'confirmed', updated_at: now };
  const link = { transaction_id: tid, intent_id: row.id, account_id: row.account_id, created_at: now };
  const also = (unit: WriteUnit) => {
    if (choice.kind === 'new') {
      // The core stores the brought card under this id too (RunOptions.card_id): whichever insert comes first stands.
      unit.insertRows('cards', [choice.card], { ignoreConflictOn: ['card_id'] });
      unit.insertRows('payment_methods', [choice.pm]);
    }
    if (c.isNew) {
      unit.insertRows('payment_intents', [claimed]);
      recordEventInto(unit, intentEvent(caller.creds.account.merchant_id, claimed, 'payment_intent.created'), now);
    } else
      unit.compareAndSet(
        transitionUpdate(unit.q as Kysely<unknown>, INTENT_MACHINE, row.id, 'confirm', row.state, patch, now, {
          where: { transaction_id: row.transaction_id },
        }),
        () => new ClaimLost(),
      );
    unit.insertRows('payment_intent_charges', [link]);
  };
  return choice.kind === 'new'
    ? { claimed, card: choice.brought, card_id: choice.card.card_id, also }
    : { claimed, card: { kind: 'stored', card_id: choice.card_id }, card_id: undefined, also };
}

/** The owner of a stored intent, as the PaymentMethod checks take a caller. */
const callerOfRow = (row: PaymentIntentRow): KeyCaller => ({ livemode: row.livemode === 1, creds: { account: { account_id: row.account_id } } }) as KeyCaller;

/** The core's card payment for the intent's confirm (its card set by the caller): the same command every interface builds. */
function intentCommand(deps: Deps, caller: KeyCaller, i: PaymentIntentRow): Omit<CardPaymentCommand, 'card'> {
  const order_no = chargeId(i.transaction_id);
  const kept: CardPaymentCommand['kept'] = {};
  if (i.receipt_email) kept.shopper_email = i.receipt_email;
  if (i.description) kept.note = i.description;
  const always = i.three_d_secure === 'any' || i.three_d_secure === 'challenge';
  return {
    order_no,
    amount_minor: Number(i.amount_minor),
    currency: i.currency,
    capture_method: i.capture_method,
    threeds: { request: always ? 'always' : 'on_risk', mpi: () => null },
    keep_token: false,
    shopper: { shopper_email: i.receipt_email || undefined },
    return_url: i.return_url || undefined,
    subscription: null,
    kept,
    // What a re-run of this confirm is recognised by: the intent's payment as claimed (none of these change while confirmed).
    request_hash: requestHash(deps.keyring, {
      merchant_id: caller.creds.account.merchant_id,
      account_id: i.account_id,
      order_no,
      payment_intent: i.id,
      payment_method: i.payment_method_id,
      amount: String(i.amount_minor),
      currency: i.currency,
      capture_method: i.capture_method,
      three_d_secure: i.three_d_secure,
      return_url: i.return_url,
      receipt_email: i.receipt_email,
    }),
  };
}

/** POST /v1/payment_intents/:id/capture */
async function captureIntent(deps: Deps, request: IdRequest<Static<typeof CaptureIntent>>, reply: FastifyReply) {
  const caller = callerOf(request);
  const current = await loadIntent(deps, await findIntent(deps, caller, request.params.id));
  const { row, payment } = current;
  const status = intentStatus(current);
  if (status !== 'requires_capture' || !payment) {
    // A re-run of a capture whose answer was lost: it happened, so answer it.
    if (request.idempotency?.rerun && status === 'succeeded') return send(deps, request, reply, current);
    throw unexpected(
      `This PaymentIntent could not be captured because it has a status of ${status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
    );
  }
  const n = request.body.amount_to_capture ?? Number(payment.authorised_minor || payment.amount_minor);
  const outcome = await capturePayment(deps, request.log, { account_id: row.account_id, transaction_id: payment.transaction_id, amount_minor: n });
  if (!outcome.ok) throw genericRefusal(outcome, { what: 'payment_intent', id: row.id, amountParam: 'amount_to_capture' });
  if (request.body.metadata !== undefined) await mergeIntentMetadata(deps, row.id, request.body.metadata as MetadataInput);
  return send(deps, request, reply, await loadIntent(deps, await findIntent(deps, caller, row.id)));
}

async function mergeIntentMetadata(deps: Deps, id: string, given: MetadataInput): Promise<void> {
  await deps.store.transaction(async (tx) => {
    // Lock the row first (PostgreSQL), then read and merge: a concurrent metadata write is never lost.
    await tx.updateTable('payment_intents').set({ updated_at: deps.now() }).where('id', '=', id).execute();
    const fresh = await tx.selectFrom('payment_intents').select('metadata').where('id', '=', id).executeTakeFirstOrThrow();
    await tx
      .updateTable('payment_intents')
      .set({ metadata: JSON.stringify(mergeMetadata(fresh.metadata, given)) })
      .where('id', '=', id)
      .execute();
  });
}

/** POST /v1/payment_intents/:id/cancel: releases an authorised or waiting payment, then the intent. */
async function cancelIntent(deps: Deps, request: IdRequest<Static<typeof CancelIntent>>, reply: FastifyReply) {
  const caller = callerOf(request);
  const current = await loadIntent(deps, await findIntent(deps, caller, request.params.id));
  const { row, payment } = current;
  const status = intentStatus(current);
  if (status === 'canceled' && request.idempotency?.rerun) return send(deps, request, reply, current);
  if (
    !['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture'].includes(status) ||
    (row.state === 'confirmed' && !payment && current.inFlight)
  )
    throw unexpected(
      `You cannot cancel this PaymentIntent because it has a status of ${status}. Only a PaymentIntent with one of the following statuses may be canceled: requires_payment_method, requires_capture, requires_confirmation, requires_action.`,
    );
  const releases = payment !== undefined && (payment.status === 'authorised' || payment.status === 'pending');
  if (releases) {
    const outcome = await cancelPayment(deps, request.log, { account_id: row.account_id, transaction_id: payment.transaction_id });
    if (!outcome.ok) throw genericRefusal(outcome, { what: 'payment_intent', id: row.id, amountParam: 'id' });
  }
  const now = deps.now();
  const reason = request.body.cancellation_reason ?? '';
  const canceled = await deps.store.transaction(async (tx) => {
    const moved = await apply(tx, INTENT_MACHINE, row.id, 'cancel', row.state, { canceled_at: now, cancellation_reason: reason }, now, {
      where: { transaction_id: row.transaction_id },
    });
    // A released payment told the cancel already (payment.cancelled is the family's payment_intent.canceled).
    if (moved && !releases) await recordEvent(tx, intentEvent(caller.creds.account.merchant_id, moved, 'payment_intent.cancelled'), now);
    return moved;
  });
  if (!canceled) throw lockTimeout();
  return send(deps, request, reply, await loadIntent(deps, canceled));
}

/** GET /v1/payment_intents */
async function listIntents(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery & { customer?: string } }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const o = ownerOf(caller);
  const customer = request.query.customer;
  // Another platform's or mode's customer (or none) is "no such customer", as on /v1/payment_methods.
  if (customer !== undefined) await customerParam(deps, caller, customer);
  const scoped = () => {
    let q = deps.store.db.selectFrom('payment_intents').selectAll().where('account_id', '=', o.account_id).where('livemode', '=', o.livemode);
    if (customer !== undefined) q = q.where('customer_id', '=', customer);
    return q;
  };
  const page = await listPage<PaymentIntentRow>(request.query, 'payment_intent', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  const list = listObject('/v1/payment_intents', page, (await loadIntents(deps, page.rows)).map(intentObject));
  return sendObject(request, reply, await expanded(request, list, intentExpanders(deps, request)));
}

// ---- routes -------------------------------------------------------------------------------

const doc = () => ({ tags: [PAYMENTS_TAG], security: [{ bearer: [] }] });
const answers = (description: string, errors: number[]) => ({ ...objectAnswers(IntentObject, description), ...errorAnswers(errors) });

/** One route's OpenAPI entry: the operation, its words, what it takes, the errors it answers. */
function routeSchema(operationId: string, summary: string, description: string, takes: Record<string, unknown>, answered: string, errors: number[]) {
  return { operationId, summary, description, ...doc(), ...takes, response: answers(answered, errors) };
}

/** The schemas of the routes, built per app (Fastify normalises a route's schema in place). */
const SCHEMAS = {
  create: () =>
    routeSchema(
      'createPaymentIntent',
      'Create a PaymentIntent',
      'A payment to be made: `amount`, `currency`, and a PaymentMethod (`payment_method`, or a card in `payment_method_data`). With `confirm=true` it is paid at once through the same path as `/v1/payments` (risk, 3-D Secure, the processor, the ledger, `payment.*` events); a decline is HTTP 402 `card_error` with the intent in `error.payment_intent`. Send an `Idempotency-Key` to make retries safe.',
      { body: CreateIntent },
      'The PaymentIntent.',
      [400, 401, 402, 404, 409, 429],
    ),
  retrieve: () =>
    routeSchema(
      'retrievePaymentIntent',
      'Retrieve a PaymentIntent',
      '`expand[]`: `latest_charge`, `payment_method`, `customer`.',
      { params: IdParams('pi_'), querystring: RetrieveQuery },
      'The PaymentIntent.',
      [401, 403, 404, 429],
    ),
  update: () =>
    routeSchema(
      'updatePaymentIntent',
      'Update a PaymentIntent',
      '`metadata` (merged) and `description` at any time; amount, currency, customer and PaymentMethod only while it is `requires_payment_method` or `requires_confirmation`.',
      { params: IdParams('pi_'), body: UpdateIntent },
      'The PaymentIntent as changed.',
      [400, 401, 402, 404, 409, 429],
    ),
  confirm: () =>
    routeSchema(
      'confirmPaymentIntent',
      'Confirm a PaymentIntent',
      'Pays it with its PaymentMethod (or the one given): a new charge each time, allowed before the first and after a decline. A second confirm while one runs is HTTP 409 `lock_timeout`.',
      { params: IdParams('pi_'), body: ConfirmIntent },
      'The PaymentIntent after the payment.',
      [400, 401, 402, 404, 409, 429],
    ),
  capture: () =>
    routeSchema(
      'capturePaymentIntent',
      'Capture a PaymentIntent',
      'Captures `amount_to_capture` (default: all) of a `requires_capture` intent, once; a smaller amount releases the rest.',
      { params: IdParams('pi_'), body: CaptureIntent },
      'The PaymentIntent, now `succeeded`.',
      [400, 401, 404, 409, 429],
    ),
  cancel: () =>
    routeSchema(
      'cancelPaymentIntent',
      'Cancel a PaymentIntent',
      'Before a payment, after a decline, while 3-D Secure is awaited, or authorised (the hold is released). A `succeeded` one must be refunded instead.',
      { params: IdParams('pi_'), body: CancelIntent },
      'The PaymentIntent, now `canceled`.',
      [400, 401, 404, 409, 429],
    ),
  list: () => ({
    operationId: 'listPaymentIntents',
    summary: 'List PaymentIntents',
    description: 'Newest first; `customer` keeps that customer’s.',
    ...doc(),
    querystring: ListIntents,
    response: { ...objectAnswers(ListEnvelope(IntentObject, 'A page of PaymentIntents.'), 'A page of PaymentIntents.'), ...errorAnswers([400, 401, 403, 429]) },
  }),
};

type Id = { Params: { id: string } };

/** The routes of /v1/payment_intents (and /v1/charges), in their order in the OpenAPI document. */
export function registerPaymentIntentRoutes(app: FastifyInstance, deps: Deps, risk: RiskEngine): void {
  const opts = genericRouteOptions(deps);
  const authorise = new AuthoriseService(deps, risk);
  const with_ = (schema: () => object) => ({ ...opts, schema: schema() });
  app.post<{ Body: CreateIntent }>('/v1/payment_intents', with_(SCHEMAS.create), (rq, rp) => createIntent(deps, authorise, rq, rp));
  app.get<Id>('/v1/payment_intents/:id', with_(SCHEMAS.retrieve), (rq, rp) => retrieveIntent(deps, rq as IdRequest, rp));
  app.post<Id & { Body: UpdateIntent }>('/v1/payment_intents/:id', with_(SCHEMAS.update), (rq, rp) => updateIntent(deps, rq, rp));
  app.post<Id & { Body: ConfirmIntent }>('/v1/payment_intents/:id/confirm', with_(SCHEMAS.confirm), (rq, rp) => confirmIntent(deps, authorise, rq, rp));
  app.post<Id & { Body: Static<typeof CaptureIntent> }>('/v1/payment_intents/:id/capture', with_(SCHEMAS.capture), (rq, rp) => captureIntent(deps, rq, rp));
  app.post<Id & { Body: Static<typeof CancelIntent> }>('/v1/payment_intents/:id/cancel', with_(SCHEMAS.cancel), (rq, rp) => cancelIntent(deps, rq, rp));
  app.get<{ Querystring: ListQuery & { customer?: string } }>('/v1/payment_intents', with_(SCHEMAS.list), (rq, rp) => listIntents(deps, rq, rp));
  registerChargeRoutes(app, deps, (request, id) => intentById(deps, request, id));
}

/** This caller's intent `id` as its wire object, or undefined (for `expand[]` and filters elsewhere). */
export async function intentById(deps: Deps, request: FastifyRequest, id: string): Promise<Record<string, unknown> | undefined> {
  const row = await findIntent(deps, callerOf(request), id).catch((e: unknown) => {
    if (e instanceof GenericError && e.http === 404) return undefined;
    throw e;
  });
  return row ? intentObject(await loadIntent(deps, row)) : undefined;
}

/** The wire object of the PaymentIntent whose confirm made payment `transaction_id` of `account_id` (undefined: none), for an event's `data.object`. */
export async function intentObjectOfPayment(db: Tx, now: number, account_id: string, transaction_id: string): Promise<Record<string, unknown> | undefined> {
  const row = await db
    .selectFrom('payment_intent_charges')
    .innerJoin('payment_intents', 'payment_intents.id', 'payment_intent_charges.intent_id')
    .selectAll('payment_intents')
    .where('payment_intent_charges.transaction_id', '=', transaction_id)
    .where('payment_intents.account_id', '=', account_id)
    .executeTakeFirst();
  if (!row) return undefined;
  return intentObject((await loadIntentsFrom(db, now, [row]))[0] as LoadedIntent);
}

/** The wire object of `account_id`'s intent `id` (undefined: none), for the event of a change of the intent itself (`intentEvent`). */
export async function intentObjectById(db: Tx, now: number, account_id: string, id: string): Promise<Record<string, unknown> | undefined> {
  const row = await db.selectFrom('payment_intents').selectAll().where('id', '=', id).where('account_id', '=', account_id).executeTakeFirst();
  if (!row) return undefined;
  return intentObject((await loadIntentsFrom(db, now, [row]))[0] as LoadedIntent);
}

/** The intent a payment was a confirm of, for the refund and charge objects (null when none). */
export async function intentIdsOf(deps: Deps, tids: readonly string[]): Promise<Map<string, string>> {
  if (tids.length === 0) return new Map();
  const rows = await deps.store.db.selectFrom('payment_intent_charges').select(['transaction_id', 'intent_id']).where('transaction_id', 'in', tids).execute();
  return new Map(rows.map((r) => [r.transaction_id, r.intent_id]));
}

/** The latest payment of this caller's intent `id`, for a refund naming `payment_intent` (a 404 on `param` when there is none). */
export async function latestPaymentOfIntent(deps: Deps, caller: KeyCaller, id: string, param: string): Promise<PaymentRow> {
  const row = await findIntent(deps, caller, id, param);
  const payment = row.transaction_id ? await modePayment(deps.store.db, row.account_id, row.livemode ? 1 : 0, row.transaction_id) : undefined;
  if (!payment) throw unexpected(`PaymentIntent ${id} has no charge to refund.`);
  return payment;
}
