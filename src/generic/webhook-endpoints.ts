// `/v1/webhook_endpoints` of the generic interface (docs/contract.md §24; issue 33 item 5): where the
// platform family's events of this account and mode are sent, signed with `Stripe-Signature`
// (src/notifications/platform.ts, worker.ts). The `whsec_` secret is made here, kept encrypted
// under the master keyring and answered once, by create. The URL passes the notify_url SSRF
// guard on create and update and again at every send. A deleted endpoint answers 404 and is
// sent nothing; its row stays for the attempt log.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { newId } from '../crypto/ids.js';
import type { Tx } from '../db/store.js';
import type { WebhookEndpointRow } from '../db/tables/webhooks.js';
import { checkTarget, UnsafeTargetError } from '../notifications/ssrf.js';
import type { Deps } from '../web/context.js';
import { callerOf, genericRouteOptions } from './auth.js';
import { errorAnswers, objectAnswers, WEBHOOKS_TAG } from './docs.js';
import { PLATFORM_EVENT_TYPES } from './event-types.js';
import {
  Expand,
  IdParams,
  invalidParam,
  ListEnvelope,
  type ListQuery,
  listObject,
  listPage,
  listParams,
  Metadata,
  type MetadataInput,
  mergeMetadata,
  newMetadata,
  noSuch,
  RetrieveQuery,
  sendObject,
  unixSeconds,
} from './wire.js';

// ---- parameters -------------------------------------------------------------------------

/** The platform family's limit on an endpoint's URL. */
const URL_MAX = 2048;
/** At most this many event types on one endpoint (the family publishes fewer than 300). */
const EVENTS_MAX = 300;

const Url = Type.String({
  minLength: 1,
  maxLength: URL_MAX,
  description: 'the http or https URL events are POSTed to; it must not resolve to a private, loopback or metadata address',
});
const EnabledEvents = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: EVENTS_MAX,
  description: 'the platform family’s event types to send (`charge.succeeded`, `refund.created`, …), or `*` for all',
});
const Description = Type.String({ maxLength: 5000, description: 'your own note on the endpoint' });
const ApiVersion = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}(\\.[a-z]+)?$', description: 'the API version you name for this endpoint (echoed)' });

const CreateEndpoint = Type.Object(
  {
    url: Url,
    enabled_events: EnabledEvents,
    description: Type.Optional(Description),
    api_version: Type.Optional(ApiVersion),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type CreateEndpoint = Static<typeof CreateEndpoint>;
const UpdateEndpoint = Type.Object(
  {
    url: Type.Optional(Url),
    enabled_events: Type.Optional(EnabledEvents),
    disabled: Type.Optional(Type.Boolean({ description: 'true stops deliveries to it (status `disabled`); false starts them again' })),
    description: Type.Optional(Description),
    metadata: Type.Optional(Metadata),
    expand: Expand,
  },
  { additionalProperties: false },
);
type UpdateEndpoint = Static<typeof UpdateEndpoint>;
const ListEndpoints = Type.Object({ ...listParams }, { additionalProperties: false });

const fields = {
  id: Type.String({ description: 'we_…' }),
  object: Type.Literal('webhook_endpoint'),
  api_version: Type.Union([Type.String(), Type.Null()]),
  application: Type.Null(),
  created: Type.Integer({ description: 'Unix seconds' }),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled_events: Type.Array(Type.String()),
  livemode: Type.Boolean(),
  metadata: Type.Record(Type.String(), Type.String()),
  status: Type.String({ enum: ['enabled', 'disabled'] }),
  url: Type.String(),
};
const EndpointObject = Type.Object(fields, { description: 'A webhook endpoint of your account (no secret: it is answered once, by create).' });
const CreatedEndpointObject = Type.Object(
  { ...fields, secret: Type.String({ description: 'whsec_…: the key of the `Stripe-Signature` HMAC; shown only here' }) },
  { description: 'The new webhook endpoint, with its signing secret (shown this once).' },
);
const DeletedEndpoint = Type.Object(
  { id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) },
  { description: 'The endpoint is deleted.' },
);

// ---- the object -------------------------------------------------------------------------

export function webhookEndpointObject(row: WebhookEndpointRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    api_version: row.api_version === '' ? null : row.api_version,
    application: null,
    created: unixSeconds(row.created_at),
    description: row.description === '' ? null : row.description,
    enabled_events: JSON.parse(row.enabled_events) as string[],
    livemode: row.livemode === 1,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    status: row.disabled === 1 ? 'disabled' : 'enabled',
    url: row.url,
  };
}

/** The given types, each known to the platform family (or `*`), once each in the order given. */
function enabledEvents(given: readonly string[]): string[] {
  given.forEach((t, i) => {
    if (t !== '*' && !PLATFORM_EVENT_TYPES.has(t))
      throw invalidParam(`enabled_events[${i}]`, `Invalid enabled_events[${i}]: "${t.slice(0, 100)}" is not an event type of the platform (or "*" for all).`);
  });
  return [...new Set(given)];
}

/** The SSRF guard of notify_url (docs/contract.md §11) on an endpoint's URL: a 400 naming `url`. */
async function safeUrl(deps: Deps, url: string): Promise<string> {
  try {
    await checkTarget(url, { allow_private: deps.settings.allow_private_webhooks });
  } catch (e) {
    if (e instanceof UnsafeTargetError) throw invalidParam('url', `Invalid url: it ${e.message}.`);
    throw e;
  }
  return url;
}

/** The endpoint's subscriptions as the fan-out reads them (src/notifications/platform.ts). */
async function subscribe(tx: Tx, endpoint_id: string, types: readonly string[]): Promise<void> {
  await tx.deleteFrom('webhook_endpoint_events').where('endpoint_id', '=', endpoint_id).execute();
  await tx
    .insertInto('webhook_endpoint_events')
    .values(types.map((event_type) => ({ endpoint_id, event_type })))
    .execute();
}

type Caller = ReturnType<typeof callerOf>;
const scope = (caller: Caller) => ({ account_id: caller.creds.account.account_id, livemode: caller.livemode ? 1 : 0 });

function endpointsOf(deps: Deps, caller: Caller) {
  const s = scope(caller);
  return deps.store.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', s.account_id)
    .where('livemode', '=', s.livemode)
    .where('deleted', '=', 0);
}

// ---- handlers ---------------------------------------------------------------------------

type IdRequest<B = unknown> = FastifyRequest<{ Params: { id: string }; Body: B }>;

/** POST /v1/webhook_endpoints */
async function createEndpoint(deps: Deps, request: FastifyRequest<{ Body: CreateEndpoint }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const types = enabledEvents(b.enabled_events);
  const url = await safeUrl(deps, b.url);
  const now = deps.now();
  const secret = newId('webhook_secret');
  const row: WebhookEndpointRow = {
    id: newId('webhook_endpoint', now),
    ...scope(caller),
    url,
    description: b.description ?? '',
    enabled_events: JSON.stringify(types),
    secret_enc: deps.keyring.encrypt(secret),
    disabled: 0,
    api_version: b.api_version ?? '',
    metadata: JSON.stringify(newMetadata(b.metadata as MetadataInput | undefined)),
    deleted: 0,
    created_at: now,
    updated_at: now,
  };
  await deps.store.transaction(async (tx) => {
    await tx.insertInto('webhook_endpoints').values(row).execute();
    await subscribe(tx, row.id, types);
  });
  return sendObject(request, reply, { ...webhookEndpointObject(row), secret });
}

/** GET /v1/webhook_endpoints/:id */
async function retrieveEndpoint(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const row = await endpointsOf(deps, callerOf(request)).where('id', '=', request.params.id).executeTakeFirst();
  if (!row) throw noSuch('webhook endpoint', request.params.id);
  return sendObject(request, reply, webhookEndpointObject(row));
}

/** POST /v1/webhook_endpoints/:id: the given fields change; metadata keys merge. */
async function updateEndpoint(deps: Deps, request: IdRequest<UpdateEndpoint>, reply: FastifyReply) {
  const caller = callerOf(request);
  const b = request.body;
  const s = scope(caller);
  const types = b.enabled_events !== undefined ? enabledEvents(b.enabled_events) : undefined;
  const url = b.url !== undefined ? await safeUrl(deps, b.url) : undefined;
  const now = deps.now();
  const updated = await deps.store.transaction(async (tx) => {
    // Lock the row first (a no-op update), then read and merge, as customers do.
    const locked = await tx
      .updateTable('webhook_endpoints')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('id', '=', request.params.id)
      .where('account_id', '=', s.account_id)
      .where('livemode', '=', s.livemode)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    const row =
      Number(locked.numUpdatedRows) === 1
        ? await tx.selectFrom('webhook_endpoints').selectAll().where('id', '=', request.params.id).executeTakeFirst()
        : undefined;
    if (!row) throw noSuch('webhook endpoint', request.params.id);
    const patch: Partial<WebhookEndpointRow> = {
      ...(url !== undefined ? { url } : {}),
      ...(types !== undefined ? { enabled_events: JSON.stringify(types) } : {}),
      ...(b.disabled !== undefined ? { disabled: b.disabled ? 1 : 0 } : {}),
      ...(b.description !== undefined ? { description: b.description } : {}),
      metadata: JSON.stringify(mergeMetadata(row.metadata, b.metadata as MetadataInput | undefined)),
      updated_at: now,
    };
    await tx.updateTable('webhook_endpoints').set(patch).where('id', '=', row.id).execute();
    if (types !== undefined) await subscribe(tx, row.id, types);
    return { ...row, ...patch };
  });
  return sendObject(request, reply, webhookEndpointObject(updated));
}

/** DELETE /v1/webhook_endpoints/:id: nothing more is sent to it (deliveries owed to it end at their next attempt). */
async function deleteEndpoint(deps: Deps, request: IdRequest, reply: FastifyReply) {
  const s = scope(callerOf(request));
  const gone = await deps.store.transaction(async (tx) => {
    const r = await tx
      .updateTable('webhook_endpoints')
      .set({ deleted: 1, updated_at: deps.now() })
      .where('id', '=', request.params.id)
      .where('account_id', '=', s.account_id)
      .where('livemode', '=', s.livemode)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await tx.deleteFrom('webhook_endpoint_events').where('endpoint_id', '=', request.params.id).execute();
    return true;
  });
  if (!gone) throw noSuch('webhook endpoint', request.params.id);
  return sendObject(request, reply, { id: request.params.id, object: 'webhook_endpoint', deleted: true });
}

/** GET /v1/webhook_endpoints */
async function listEndpoints(deps: Deps, request: FastifyRequest<{ Querystring: ListQuery }>, reply: FastifyReply) {
  const caller = callerOf(request);
  const scoped = () => endpointsOf(deps, caller);
  const page = await listPage<WebhookEndpointRow>(request.query, 'webhook endpoint', scoped, (id) => scoped().where('id', '=', id).executeTakeFirst());
  return sendObject(request, reply, listObject('/v1/webhook_endpoints', page, page.rows.map(webhookEndpointObject)));
}

// ---- routes -----------------------------------------------------------------------------

const doc = () => ({ tags: [WEBHOOKS_TAG], security: [{ bearer: [] }] });

const answers = (description: string, errors: number[]) => ({ ...objectAnswers(EndpointObject, description), ...errorAnswers(errors) });

/** The schemas of the routes, built per app (Fastify normalises a route's schema in place). */
const SCHEMAS = {
  create: () => ({
    operationId: 'createWebhookEndpoint',
    summary: 'Create a webhook endpoint',
    description:
      'Events of the types named, of your account in your key’s mode, are POSTed to `url` signed with `Stripe-Signature` (the family’s `webhooks.constructEvent` verifies them), retried for about 3 days. The answer carries the signing `secret`, shown this once. A URL resolving to a private, loopback or metadata address is refused (400 naming `url`).',
    ...doc(),
    body: CreateEndpoint,
    response: { ...objectAnswers(CreatedEndpointObject, 'The new endpoint, with its secret.'), ...errorAnswers([400, 401, 429]) },
  }),
  retrieve: () => ({
    operationId: 'retrieveWebhookEndpoint',
    summary: 'Retrieve a webhook endpoint',
    description: 'Without its secret. Another account’s id, a deleted one or one of the other mode is 404.',
    ...doc(),
    params: IdParams('we_'),
    querystring: RetrieveQuery,
    response: answers('The endpoint.', [401, 403, 404, 429]),
  }),
  update: () => ({
    operationId: 'updateWebhookEndpoint',
    summary: 'Update a webhook endpoint',
    description: 'Changes the given fields (`enabled_events` replaces the list; `metadata` keys are merged); `disabled: true` stops deliveries.',
    ...doc(),
    params: IdParams('we_'),
    body: UpdateEndpoint,
    response: answers('The endpoint as changed.', [400, 401, 404, 429]),
  }),
  delete: () => ({
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: 'Nothing more is sent to it; answered 404 afterwards.',
    ...doc(),
    params: IdParams('we_'),
    response: { ...objectAnswers(DeletedEndpoint, 'The endpoint is deleted.'), ...errorAnswers([401, 404, 429]) },
  }),
  list: () => ({
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints',
    description: 'Newest first, without their secrets.',
    ...doc(),
    querystring: ListEndpoints,
    response: { ...objectAnswers(ListEnvelope(EndpointObject, 'A page of endpoints.'), 'A page of endpoints.'), ...errorAnswers([400, 401, 403, 429]) },
  }),
};

type Id = { Params: { id: string } };

export function registerWebhookEndpointRoutes(app: FastifyInstance, deps: Deps): void {
  const opts = genericRouteOptions(deps);
  const with_ = (schema: () => object) => ({ ...opts, schema: schema() });
  app.post<{ Body: CreateEndpoint }>('/v1/webhook_endpoints', with_(SCHEMAS.create), (rq, rp) => createEndpoint(deps, rq, rp));
  app.get<Id>('/v1/webhook_endpoints/:id', with_(SCHEMAS.retrieve), (rq, rp) => retrieveEndpoint(deps, rq, rp));
  app.post<Id & { Body: UpdateEndpoint }>('/v1/webhook_endpoints/:id', with_(SCHEMAS.update), (rq, rp) => updateEndpoint(deps, rq, rp));
  app.delete<Id>('/v1/webhook_endpoints/:id', with_(SCHEMAS.delete), (rq, rp) => deleteEndpoint(deps, rq, rp));
  app.get<{ Querystring: ListQuery }>('/v1/webhook_endpoints', with_(SCHEMAS.list), (rq, rp) => listEndpoints(deps, rq, rp));
}
