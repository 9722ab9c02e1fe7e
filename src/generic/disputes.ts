// `/v1/disputes` of the generic interface (docs/contract.md §22, §24; issue 34 item 4): the disputes
// of the account and mode (src/disputes, the one aggregate the acquiring interface and the portal
// use too) as the platform family's `dispute` object. List (`charge`, `payment_intent`,
// `created`), retrieve, update (the family's text evidence, `metadata`, `submit`) and close
// (accept). The family's file evidence names File objects (`file_…`), which Tollgate does not
// offer: files go through the acquiring `POST /v1/disputeEvidence`.
//
// Statuses: ours are the family's, but for an inquiry (`kind` inquiry) under review or closed
// (`warning_under_review`, `warning_closed`) and an accepted chargeback (`lost`, as the family
// answers a closed one). An event's `data.object` carries no evidence text (events are stored and
// sent in the clear; evidence is kept encrypted): only retrieve, list and update answer it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Tx as Db } from '../db/store.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import { acceptDispute, DisputeRefused, type EvidenceItem, giveEvidence } from '../disputes/service.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { chargeId, chargeObjects, findCharge, transactionOfCharge } from './charges.js';
import { errorAnswers, objectAnswers, PAYMENTS_TAG } from './docs.js';
import { intentObjectOfPayment } from './payment-intents.js';
import {
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
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from './wire.js';

// ---- the family's evidence fields ---------------------------------------------------------

/** The family's evidence fields that take text (its documented maximum is 20,000 characters each). */
export const TEXT_EVIDENCE = [
  'access_activity_log',
  'billing_address',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'customer_email_address',
  'customer_name',
  'customer_purchase_ip',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
  'product_description',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'service_date',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_tracking_number',
  'uncategorized_text',
] as const;

/** The family's evidence fields that name a File object (`file_…`): not offered here. */
export const FILE_EVIDENCE = [
  'cancellation_policy',
  'customer_communication',
  'customer_signature',
  'duplicate_charge_documentation',
  'receipt',
  'refund_policy',
  'service_documentation',
  'shipping_documentation',
  'uncategorized_file',
] as const;

const TEXT_FIELDS: ReadonlySet<string> = new Set(TEXT_EVIDENCE);
export const EVIDENCE_TEXT_MAX = 20_000;

// ---- the object ---------------------------------------------------------------------------

type FamilyStatus = 'warning_needs_response' | 'warning_under_review' | 'warning_closed' | 'needs_response' | 'under_review' | 'won' | 'lost';

/** Our status as the family's: an inquiry's review and end are `warning_*`; an accepted chargeback is `lost`. */
export function familyStatus(d: Pick<DisputeRow, 'status' | 'kind'>): FamilyStatus {
  const inquiry = d.kind === 'inquiry';
  switch (d.status) {
    case 'warning_needs_response':
    case 'needs_response':
      return d.status;
    case 'under_review':
      return inquiry ? 'warning_under_review' : 'under_review';
    case 'won':
      return inquiry ? 'warning_closed' : 'won';
    case 'lost':
    case 'accepted':
      return inquiry ? 'warning_closed' : 'lost';
  }
}

/** What a dispute object names beside its row: its payment's card, its PaymentIntent, its evidence. */
interface DisputeContext {
  card: { brand: string; masked: string; kind: string } | null;
  intent: string | null;
  /** Evidence rows held (text and files). */
  held: number;
  /** The latest text of each of the family's text fields; null: withheld (an event's object). */
  texts: Map<string, string> | null;
}

export function disputeObject(d: DisputeRow, ctx: DisputeContext): Record<string, unknown> {
  const evidence: Record<string, unknown> = {};
  for (const f of [...TEXT_EVIDENCE, ...FILE_EVIDENCE].sort()) {
    const text = ctx.texts?.get(f);
    evidence[f] = text !== undefined && text !== '' ? text : null;
  }
  evidence.enhanced_evidence = {};
  const brand = ctx.card?.brand ? ctx.card.brand.toLowerCase() : 'unknown';
  const submitted = d.submitted_at === null ? null : Number(d.submitted_at);
  return {
    id: d.dispute_id,
    object: 'dispute',
    amount: Number(d.amount_minor),
    balance_transactions: [],
    charge: chargeId(d.transaction_id),
    created: unixSeconds(d.created_at),
    currency: lower(d.currency),
    enhanced_eligibility_types: [],
    evidence,
    evidence_details: {
      due_by: unixSeconds(d.evidence_due_by),
      enhanced_eligibility: {},
      has_evidence: ctx.held > 0,
      past_due: submitted !== null && submitted > Number(d.evidence_due_by),
      submission_count: submitted === null ? 0 : 1,
    },
    is_charge_refundable: false,
    livemode: Number(d.livemode) === 1,
    metadata: JSON.parse(d.metadata || '{}') as Record<string, string>,
    payment_intent: ctx.intent,
    payment_method_details:
      ctx.card && ctx.card.kind !== 'apm' && ctx.card.masked !== ''
        ? { card: { brand, case_type: d.kind === 'inquiry' ? 'inquiry' : 'chargeback', network_reason_code: null, network: brand }, type: 'card' }
        : { type: ctx.card?.brand ? ctx.card.brand.toLowerCase() : 'card' },
    reason: d.reason,
    status: familyStatus(d),
  };
}

/**
 * `rows` as dispute objects, in order, in four queries whatever their number. `decrypt` reads
 * the evidence text (absent: withheld, as in an event's object).
 */
export async function disputeObjects(db: Db, rows: readonly DisputeRow[], decrypt?: (enc: string) => string): Promise<Record<string, unknown>[]> {
  if (rows.length === 0) return [];
  const tids = [...new Set(rows.map((r) => r.transaction_id))];
  const ids = rows.map((r) => r.dispute_id);
  const [payments, links, evidence] = await Promise.all([
    db.selectFrom('payments').select(['transaction_id', 'card_brand', 'card_masked', 'kind']).where('transaction_id', 'in', tids).execute(),
    db.selectFrom('payment_intent_charges').select(['transaction_id', 'intent_id']).where('transaction_id', 'in', tids).execute(),
    db
      .selectFrom('dispute_evidence')
      .select(['dispute_id', 'field', 'content_type', ...(decrypt ? (['data_enc'] as const) : [])])
      .where('dispute_id', 'in', ids)
      .orderBy('created_at')
      .orderBy('evidence_id')
      .execute(),
  ]);
  const cardOf = new Map(payments.map((p) => [p.transaction_id, { brand: p.card_brand ?? '', masked: p.card_masked ?? '', kind: p.kind }]));
  const intentOf = new Map(links.map((l) => [l.transaction_id, l.intent_id]));
  const held = new Map<string, number>();
  const texts = new Map<string, Map<string, string>>();
  for (const e of evidence) {
    held.set(e.dispute_id, (held.get(e.dispute_id) ?? 0) + 1);
    if (!decrypt || e.content_type !== 'text' || !TEXT_FIELDS.has(e.field)) continue;
    const m = texts.get(e.dispute_id) ?? new Map<string, string>();
    m.set(e.field, decrypt((e as { data_enc: string }).data_enc)); // the latest given wins
    texts.set(e.dispute_id, m);
  }
  return rows.map((d) =>
    disputeObject(d, {
      card: cardOf.get(d.transaction_id) ?? null,
      intent: intentOf.get(d.transaction_id) ?? null,
      held: held.get(d.dispute_id) ?? 0,
      texts: decrypt ? (texts.get(d.dispute_id) ?? new Map()) : null,
    }),
  );
}

/** The event's object (`charge.dispute.*`; src/generic/events.ts): the dispute of `account_id`, its evidence text withheld. */
export async function disputeEventObject(db: Db, account_id: string, dispute_id: string): Promise<Record<string, unknown> | undefined> {
  const row = await db.selectFrom('disputes').selectAll().where('dispute_id', '=', dispute_id).where('account_id', '=', account_id).executeTakeFirst();
  return row ? (await disputeObjects(db, [row]))[0] : undefined;
}

// ---- parameters ---------------------------------------------------------------------------

const evidenceProps: Record<string, ReturnType<typeof Type.Optional>> = {};
for (const f of TEXT_EVIDENCE) evidenceProps[f] = Type.Optional(Type.String({ maxLength: EVIDENCE_TEXT_MAX, description: 'text ("" clears it)' }));
for (const f of FILE_EVIDENCE)
  evidenceProps[f] = Type.Optional(
    Type.String({ maxLength: 200, description: 'a File id in the family: not offered (files go through the acquiring POST /v1/disputeEvidence)' }),
  );

const Evidence = Type.Object(evidenceProps, {
  additionalProperties: false,
  description: `the family's evidence fields; the text ones (${TEXT_EVIDENCE.join(', ')}) take at most ${EVIDENCE_TEXT_MAX} characters each; the file ones (${FILE_EVIDENCE.join(', ')}) name File objects, which Tollgate does not offer`,
});

const UpdateDispute = Type.Object(
  {
    evidence: Type.Optional(Evidence),
    metadata: Type.Optional(Metadata),
    submit: Type.Optional(
      Type.Boolean({ description: 'send the evidence to the processor (`under_review`); default true when `evidence` is given, false otherwise' }),
    ),
    expand: Expand,
  },
  { additionalProperties: false },
);
type UpdateDispute = Static<typeof UpdateDispute>;

const ListDisputes = Type.Object(
  {
    ...listParams,
    charge: Type.Optional(Type.String({ maxLength: 80, description: 'only the disputes of this charge (ch_…)' })),
    payment_intent: Type.Optional(Type.String({ maxLength: 80, description: 'only the disputes of this PaymentIntent’s charges (pi_…)' })),
  },
  { additionalProperties: false },
);
type ListDisputesQuery = ListQuery & { charge?: string; payment_intent?: string };

const CloseDispute = Type.Object({ expand: Expand }, { additionalProperties: false });

const DisputeObject = Type.Object(
  {
    id: Type.String({ description: 'dp_…' }),
    object: Type.Literal('dispute'),
    amount: Type.Integer({ description: 'the disputed amount, minor units' }),
    balance_transactions: Type.Array(Type.Object({}), { description: 'always empty: Tollgate has no balance transactions' }),
    charge: Type.String({ description: 'ch_…' }),
    created: Type.Integer({ description: 'Unix seconds' }),
    currency: Type.String(),
    evidence: Type.Object({}, { additionalProperties: true, description: 'the text evidence given (the latest of each field); file fields are null' }),
    evidence_details: Type.Object(
      {
        due_by: Type.Integer({ description: 'Unix seconds' }),
        has_evidence: Type.Boolean(),
        past_due: Type.Boolean(),
        submission_count: Type.Integer(),
      },
      { additionalProperties: true },
    ),
    is_charge_refundable: Type.Boolean(),
    livemode: Type.Boolean(),
    metadata: Type.Record(Type.String(), Type.String()),
    payment_intent: Type.Union([Type.String(), Type.Null()]),
    reason: Type.String({ description: 'fraudulent, product_not_received, duplicate, general, …' }),
    status: Type.String({
      enum: ['warning_needs_response', 'warning_under_review', 'warning_closed', 'needs_response', 'under_review', 'won', 'lost'],
    }),
  },
  {
    additionalProperties: true,
    description:
      'A dispute of one of your charges in the platform family’s shape. `needs_response` (a chargeback: the amount and the dispute fee have left your balance) or `warning_needs_response` (an inquiry: no money moved) until you submit evidence (`under_review`, an inquiry’s `warning_under_review`) or close it; then `won` (the amount comes back) or `lost` (also an accepted or unanswered one); an inquiry ends `warning_closed`.',
  },
);

// ---- handlers -----------------------------------------------------------------------------

type Caller = ReturnType<typeof callerOf>;

function disputesOf(deps: Deps, caller: Caller) {
  return deps.store.db
    .selectFrom('disputes')
    .selectAll()
    .where('account_id', '=', caller.creds.account.account_id)
    .where('livemode', '=', caller.livemode ? 1 : 0);
}

async function findDispute(deps: Deps, request: FastifyRequest, id: string): Promise<DisputeRow> {
  const row = await disputesOf(deps, callerOf(request)).where('dispute_id', '=', id).executeTakeFirst();
  if (!row) throw noSuch('dispute', id);
  return row;
}

async function answer(deps: Deps, request: FastifyRequest, reply: FastifyReply, row: DisputeRow) {
  const [object] = await disputeObjects(deps.store.db, [row], (enc) => deps.keyring.decrypt(enc));
  return sendObject(request, reply, await expanded(request, object as Record<string, unknown>, expanders(deps, request)));
}

/** `expand[]` on disputes: `charge`, `payment_intent`. */
function expanders(deps: Deps, request: FastifyRequest): ExpandersOf<'dispute'> {
  const caller = callerOf(request);
  const account_id = caller.creds.account.account_id;
  return {
    charge: async (id) => {
      const tid = transactionOfCharge(id);
      const row = tid
        ? await deps.store.db
            .selectFrom('payments')
            .selectAll()
            .where('transaction_id', '=', tid)
            .where('account_id', '=', account_id)
            .where('livemode', '=', caller.livemode ? 1 : 0)
            .executeTakeFirst()
        : undefined;
      return row ? (await chargeObjects(deps.store.db, [row]))[0] : undefined;
    },
    payment_intent: async (id) => {
      const link = await deps.store.db
        .selectFrom('payment_intent_charges')
        .select('transaction_id')
        .where('intent_id', '=', id)
        .where('account_id', '=', account_id)
        .executeTakeFirst();
      return link ? intentObjectOfPayment(deps.store.db, deps.now(), account_id, link.transaction_id) : undefined;
    },
  };
}

/** A refusal of the dispute commands in the family's shape. */
function refusal(e: DisputeRefused, d: DisputeRow, items: readonly EvidenceItem[], what: string): GenericError {
  if (e.outcome === 'not_found') return noSuch('dispute', d.dispute_id);
  if (e.outcome === 'invalid_state')
    return new GenericError(400, {
      type: 'invalid_request_error',
      code: 'status_transition_invalid',
      message: `This dispute is ${familyStatus(d)}: ${what}`,
    });
  const i = /^evidence\[(\d+)\]$/.exec(e.field);
  const item = i ? items[Number(i[1])] : undefined;
  return invalidParam(item ? `evidence[${item.field}]` : e.field, e.message.charAt(0).toUpperCase() + e.message.slice(1));
}

/** GET /v1/disputes/:id */
async function retrieveDispute(deps: Deps, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
  return answer(deps, request, reply, await findDispute(deps, request, request.params.id));
}

/**
 * POST /v1/disputes/:id: text evidence and `submit` through the core's command (checked first,
 * refused with nothing kept for a dispute that takes none), then `metadata` (merged; also on a
 * closed dispute).
 */
async function updateDispute(deps: Deps, request: FastifyRequest<{ Params: { id: string }; Body: UpdateDispute }>, reply: FastifyReply) {
  const b = request.body;
  let row = await findDispute(deps, request, request.params.id);
  const given = (b.evidence ?? {}) as Record<string, string | undefined>;
  for (const f of FILE_EVIDENCE) {
    const v = given[f];
    if (v !== undefined && v !== '')
      throw invalidParam(
        `evidence[${f}]`,
        `No such file upload: '${v.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64)}'. Tollgate offers no File objects: give files (PDF, PNG, JPEG) through the acquiring POST /v1/disputeEvidence.`,
        'resource_missing',
      );
  }
  const items: EvidenceItem[] = TEXT_EVIDENCE.filter((f) => given[f] !== undefined).map((f) => ({ field: f, text: given[f] as string }));
  const submit = b.submit ?? items.length > 0;
  // Metadata is merged before anything is written, so too many keys refuses the whole update.
  const metadata = b.metadata !== undefined ? mergeMetadata(row.metadata, b.metadata as MetadataInput) : undefined;
  if (items.length > 0 || submit) {
    // The latest text of a field counts, read in (created_at, evidence_id) order; evidence ids are
    // not ordered within one millisecond, so evidence given at the same time as earlier evidence
    // (a test clock stands still) is stamped one millisecond after it.
    const last = await deps.store.db
      .selectFrom('dispute_evidence')
      .select((eb) => eb.fn.max('created_at').as('at'))
      .where('dispute_id', '=', row.dispute_id)
      .executeTakeFirst();
    const at = Math.max(deps.now(), last?.at === null || last?.at === undefined ? 0 : Number(last.at) + 1);
    try {
      row = (await giveEvidence(deps, row, items, submit, at, request.idempotency?.id ?? '')).dispute;
    } catch (e) {
      if (e instanceof DisputeRefused) throw refusal(e, row, items, 'it takes no more evidence.');
      throw e;
    }
  }
  if (metadata !== undefined) {
    const stored = await deps.store.transaction(async (tx) => {
      // Merged again on the locked row: a concurrent update's keys are kept.
      const locked = await tx
        .updateTable('disputes')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('dispute_id', '=', row.dispute_id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const merged = JSON.stringify(mergeMetadata(locked.metadata, b.metadata as MetadataInput));
      await tx.updateTable('disputes').set({ metadata: merged, updated_at: deps.now() }).where('dispute_id', '=', row.dispute_id).execute();
      return { ...locked, metadata: merged };
    });
    row = stored;
  }
  return answer(deps, request, reply, row);
}

/** POST /v1/disputes/:id/close: the merchant accepts the dispute (lost; an inquiry closes). */
async function closeDispute(deps: Deps, request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
  const row = await findDispute(deps, request, request.params.id);
  try {
    return answer(deps, request, reply, await acceptDispute(deps, row, deps.now()));
  } catch (e) {
    if (e instanceof DisputeRefused) throw refusal(e, row, [], 'only a dispute that needs a response can be closed.');
    throw e;
  }
}

/** GET /v1/disputes */
async function listDisputes(deps: Deps, request: FastifyRequest<{ Querystring: ListDisputesQuery }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const q = request.query;
  if (q.charge !== undefined) await findCharge(deps, request, q.charge, 'charge');
  if (q.payment_intent !== undefined) {
    const pi = await deps.store.db
      .selectFrom('payment_intents')
      .select('id')
      .where('id', '=', q.payment_intent)
      .where('account_id', '=', caller.creds.account.account_id)
      .where('livemode', '=', caller.livemode ? 1 : 0)
      .executeTakeFirst();
    if (!pi) throw noSuch('payment_intent', q.payment_intent, 'payment_intent');
  }
  const scoped = () => {
    let query = disputesOf(deps, caller);
    if (q.charge !== undefined) query = query.where('transaction_id', '=', transactionOfCharge(q.charge) as string);
    if (q.payment_intent !== undefined)
      query = query.where(
        'transaction_id',
        'in',
        deps.store.db.selectFrom('payment_intent_charges').select('transaction_id').where('intent_id', '=', q.payment_intent),
      );
    return query;
  };
  const page = await listPage<DisputeRow>(
    q,
    'dispute',
    scoped,
    async (id) => {
      const r = await scoped().where('dispute_id', '=', id).executeTakeFirst();
      return r ? { created_at: r.created_at, id: r.dispute_id } : undefined;
    },
    { created: 'created_at', id: 'dispute_id' },
  );
  const data = await disputeObjects(deps.store.db, page.rows, (enc) => deps.keyring.decrypt(enc));
  return sendObject(request, reply, await expanded(request, listObject('/v1/disputes', page, data), expanders(deps, request)));
}

// ---- routes -------------------------------------------------------------------------------

const doc = () => ({ tags: [PAYMENTS_TAG], security: [{ bearer: [] }] });
const answers = (description: string, errors: number[]) => ({ ...objectAnswers(DisputeObject, description), ...errorAnswers(errors) });

/** The schemas of the routes, built per app (Fastify normalises a route's schema in place). */
const SCHEMAS = {
  list: () => ({
    operationId: 'listDisputes',
    summary: 'List disputes',
    description:
      'Newest first; `charge` or `payment_intent` keeps that payment’s (another account’s or mode’s is 404); `expand[]=data.charge`, `data.payment_intent`.',
    ...doc(),
    querystring: ListDisputes,
    response: { ...objectAnswers(ListEnvelope(DisputeObject, 'A page of disputes.'), 'A page of disputes.'), ...errorAnswers([400, 401, 403, 404, 429]) },
  }),
  retrieve: () => ({
    operationId: 'retrieveDispute',
    summary: 'Retrieve a dispute',
    description: 'Another account’s id or one of the other mode is 404; `expand[]=charge`, `payment_intent`.',
    ...doc(),
    params: IdParams('dp_'),
    querystring: RetrieveQuery,
    response: answers('The dispute.', [401, 403, 404, 429]),
  }),
  update: () => ({
    operationId: 'updateDispute',
    summary: 'Update a dispute: evidence, submit, metadata',
    description:
      'Text evidence (the family’s text fields; the latest of each field counts) is kept encrypted; with `submit` (the default when evidence is given) the dispute is `under_review` until it is decided: by the sandbox on a test account; otherwise it is sent to the processor that holds the payment (Adyen, Stripe), whose notification decides (a refusal puts the dispute back to `needs_response`). A dispute under review or closed takes no evidence (400 `status_transition_invalid`, nothing kept). The family’s file fields name File objects, which Tollgate does not offer (400 `resource_missing`): give files through the acquiring `POST /v1/disputeEvidence`. `metadata` is merged, also on a closed dispute.',
    ...doc(),
    params: IdParams('dp_'),
    body: UpdateDispute,
    response: answers('The dispute as changed.', [400, 401, 404, 429]),
  }),
  close: () => ({
    operationId: 'closeDispute',
    summary: 'Close (accept) a dispute',
    description:
      'You accept the dispute: a chargeback is `lost` (its amount and fee stay out of your balance), an inquiry `warning_closed`. Only a dispute that needs a response can be closed (else 400 `status_transition_invalid`).',
    ...doc(),
    params: IdParams('dp_'),
    body: CloseDispute,
    response: answers('The closed dispute.', [400, 401, 404, 429]),
  }),
};

type Id = { Params: { id: string } };

export function registerDisputeRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  const with_ = (schema: () => object) => ({ ...opts, schema: schema() });
  app.get<{ Querystring: ListDisputesQuery }>('/v1/disputes', with_(SCHEMAS.list), (rq, rp) => listDisputes(deps, rq, rp));
  app.get<Id>('/v1/disputes/:id', with_(SCHEMAS.retrieve), (rq, rp) => retrieveDispute(deps, rq, rp));
  app.post<Id & { Body: UpdateDispute }>('/v1/disputes/:id', with_(SCHEMAS.update), (rq, rp) => updateDispute(deps, rq, rp));
  app.post<Id>('/v1/disputes/:id/close', with_(SCHEMAS.close), (rq, rp) => closeDispute(deps, rq, rp));
}
