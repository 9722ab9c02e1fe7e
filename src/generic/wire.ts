// The wire conventions of the generic interface, from one place (docs/contract.md §12, §18; issue
// 13): the error object, the list envelope and its cursor pagination, `metadata` and its
// limits, `created` filters, ids with a type prefix, lowercase currencies, Unix seconds.
// Every generic route reads its parameters through these schemas and answers with these
// shapes, so a client library of that platform family reads every resource the same way.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { type TSchema, Type } from 'typebox';
import { STILL_RUNNING } from '../idempotency/plugin.js';
import { type AjvError, type ErrorAnswer, problemOf } from '../web/error-answer.js';
import { RESULT_CODES, type ResultCode } from '../web/errors.js';

// ---- errors -----------------------------------------------------------------------------

/** `error.type` values the platform family's client libraries map to their error classes. */
export type GenericErrorType = 'invalid_request_error' | 'card_error' | 'idempotency_error' | 'rate_limit_error' | 'api_error' | 'authentication_error';

export interface GenericErrorBody {
  type: GenericErrorType;
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
  /** Extra members (a declined payment's `payment`, a `doc_url`, …). */
  [extra: string]: unknown;
}

/** A refused generic request: thrown anywhere in a generic route, answered by `sendGenericError`. */
export class GenericError extends Error {
  constructor(
    readonly http: number,
    readonly body: GenericErrorBody,
  ) {
    super(body.message);
  }
}

/**
 * A parameter's value refused. `code` only from the platform family's published list (its
 * client libraries' `Code` union; a test holds every code we send to it): most invalid values
 * carry none there, as here.
 */
export const invalidParam = (param: string, message: string, code?: string): GenericError =>
  new GenericError(400, { type: 'invalid_request_error', ...(code ? { code } : {}), message, param });

/** The published code of a refused value, where the family has one: an empty string, or not an integer. */
function invalidValueCode(e: AjvError): string | undefined {
  if (e.data === '') return 'parameter_invalid_empty';
  if (e.keyword === 'type' && (e.params.type === 'integer' || e.params.type === 'number')) return 'parameter_invalid_integer';
  return undefined;
}

export const missingParam = (param: string): GenericError =>
  new GenericError(400, { type: 'invalid_request_error', code: 'parameter_missing', message: `Missing required param: ${param}.`, param });

/** An id of another account, another mode, or nothing at all: one answer (docs/contract.md §3). */
export const noSuch = (what: string, id: string, param = 'id'): GenericError =>
  new GenericError(404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${clip(id)}'`, param });

/** Echoed ids are clipped and stripped of anything but id characters. */
function clip(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64);
}

/** Bracket notation of a validator path: `/payment_method/card/number` → `payment_method[card][number]`. */
export function bracketParam(parts: string[]): string {
  const [first, ...rest] = parts;
  return (first ?? '') + rest.map((p) => `[${p}]`).join('');
}

/** The validator's first error as the platform family says it. */
export function validationError(errors: AjvError[], where: 'body' | 'querystring' | 'params' | string): GenericError {
  const first = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0];
  if (!first) return new GenericError(400, { type: 'invalid_request_error', message: 'The request is not valid.' });
  const parts = first.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (first.keyword === 'required') return missingParam(bracketParam([...parts, String(first.params.missingProperty)]));
  if (first.keyword === 'additionalProperties' && parts[parts.length - 1] === 'metadata') {
    return invalidParam(bracketParam(parts), `Invalid metadata key: keys are 1 to ${METADATA_KEY_MAX} characters without brackets.`);
  }
  if (first.keyword === 'additionalProperties') {
    const param = bracketParam([...parts, String(first.params.additionalProperty)]);
    return invalidParam(param, `Received unknown parameter: ${param}`, 'parameter_unknown');
  }
  const param = bracketParam(parts);
  if (!param)
    return new GenericError(400, { type: 'invalid_request_error', message: `The ${where === 'querystring' ? 'query' : 'body'} ${problemOf(first)}.` });
  return invalidParam(param, `Invalid ${param}: ${problemOf(first).replace(/^is /, '')}.`, invalidValueCode(first));
}

/** What the gateway's refusals (catalogue codes) are in the generic shape. */
const FROM_CATALOGUE: Partial<Record<ResultCode, { type: GenericErrorType; code?: string }>> = {
  '0400': { type: 'invalid_request_error' },
  '0401': { type: 'invalid_request_error' },
  '0403': { type: 'invalid_request_error' },
  '0404': { type: 'invalid_request_error', code: 'resource_missing' },
  '0405': { type: 'invalid_request_error' },
  '0413': { type: 'invalid_request_error' },
  '0415': { type: 'invalid_request_error' },
  '0429': { type: 'invalid_request_error', code: 'rate_limit' },
  '0500': { type: 'api_error' },
  '0503': { type: 'api_error' },
  '1016': { type: 'invalid_request_error' },
};

/** A refusal of the shared plumbing (body parser, idempotency, router) in the generic shape. */
export function fromCatalogue(a: ErrorAnswer): GenericError {
  if (a.code === '0409') return idempotencyConflict(a.detail ?? '');
  const http = RESULT_CODES[a.code].http;
  const mapped = FROM_CATALOGUE[a.code] ?? { type: http >= 500 ? 'api_error' : 'invalid_request_error' };
  const message = a.detail ? a.detail.charAt(0).toUpperCase() + a.detail.slice(1) : RESULT_CODES[a.code].text;
  const param = a.field ? fieldParam(a.field) : undefined;
  return new GenericError(http, { type: mapped.type, ...(mapped.code ? { code: mapped.code } : {}), message, ...(param ? { param } : {}) });
}

/**
 * An Idempotency-Key conflict as the platform family documents it: the key reused with other
 * parameters is HTTP 400 `idempotency_error`; a request under the key still running is 409
 * `idempotency_key_in_use`.
 */
function idempotencyConflict(detail: string): GenericError {
  const message = detail ? detail.charAt(0).toUpperCase() + detail.slice(1) : RESULT_CODES['0409'].text;
  return detail === STILL_RUNNING
    ? new GenericError(409, { type: 'invalid_request_error', code: 'idempotency_key_in_use', message })
    : new GenericError(400, { type: 'idempotency_error', message });
}

/** A dotted field path (`beneficiary.bank_details.iban`) as the platform family names a parameter (`beneficiary[bank_details][iban]`). */
export function fieldParam(field: string): string {
  return field.replace(/\.([^.[\]]+)/g, '[$1]').replace(/\[(\d+)\]/g, '[$1]');
}

export function sendGenericError(request: FastifyRequest, reply: FastifyReply, e: GenericError): FastifyReply {
  return reply
    .code(e.http)
    .header('request-id', request.id)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: e.body }));
}

/** Sends a generic object (always a finished JSON string; see `answersAreStrings`). */
export function sendObject(request: FastifyRequest, reply: FastifyReply, value: unknown, status = 200): FastifyReply {
  return reply.code(status).header('request-id', request.id).type('application/json; charset=utf-8').send(JSON.stringify(value));
}

// ---- shapes -----------------------------------------------------------------------------

export const unixSeconds = (ms: number | bigint): number => Math.floor(Number(ms) / 1000);
export const lower = (currency: string): string => currency.toLowerCase();

/** `metadata` (the platform family's limits): at most 50 keys of at most 40 characters, values of at most 500. */
export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_VALUE_MAX = 500;

export const Metadata = Type.Union(
  [
    Type.Unsafe<Record<string, string>>({
      type: 'object',
      patternProperties: { [`^[^\\[\\]]{1,${METADATA_KEY_MAX}}$`]: { type: 'string', maxLength: METADATA_VALUE_MAX } },
      additionalProperties: false,
      maxProperties: METADATA_MAX_KEYS,
    }),
    Type.Literal(''),
  ],
  {
    description: `a set of at most ${METADATA_MAX_KEYS} keys (1 to ${METADATA_KEY_MAX} characters, no brackets) with string values of at most ${METADATA_VALUE_MAX} characters; on update, a key set to "" is removed and metadata "" removes every key`,
  },
);

export type MetadataInput = Record<string, string> | '';

/** Metadata of a new object ('' is none). */
export function newMetadata(given: MetadataInput | undefined): Record<string, string> {
  if (!given) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(given)) if (v !== '') out[k] = String(v);
  return out;
}

/** Metadata after an update: keys merged, "" removes a key, "" for the whole removes all. */
export function mergeMetadata(stored: string, given: MetadataInput | undefined): Record<string, string> {
  const current = JSON.parse(stored || '{}') as Record<string, string>;
  if (given === undefined) return current;
  if (given === '') return {};
  const out = { ...current };
  for (const [k, v] of Object.entries(given)) {
    if (v === '') delete out[k];
    else out[k] = String(v);
  }
  if (Object.keys(out).length > METADATA_MAX_KEYS) throw invalidParam('metadata', `Metadata can have at most ${METADATA_MAX_KEYS} keys.`);
  return out;
}

/**
 * `expand[]`: the id fields a resource offers (`destination` of a transfer, …; `data.<field>`
 * on a list) are answered as their objects; any other path is refused with HTTP 400 before the
 * request runs, as the family answers it ("This property cannot be expanded (…)."; docs/contract.md §24).
 */
export const Expand = Type.Optional(
  Type.Array(Type.String({ maxLength: 200 }), {
    maxItems: 20,
    description:
      'fields to answer as their objects instead of their ids (`data.<field>` on a list); the expandable fields are named on each resource, any other is refused (400)',
  }),
);

/**
 * The id fields `expand[]` answers as objects, per object type: the one list, read by the
 * refusal below and holding each type's expanders to the same names (`ExpandersOf`).
 */
export const EXPANDABLE = {
  payment_intent: ['latest_charge', 'payment_method', 'customer'],
  charge: ['payment_intent'],
  refund: ['payment', 'charge', 'payment_intent'],
  transfer: ['destination'],
  transfer_reversal: ['transfer'],
  payment_method: ['customer'],
  dispute: ['charge', 'payment_intent'],
} as const;

type Expandable = typeof EXPANDABLE;

/** One id field's expansion for the caller (undefined: left an id, as for an object the caller cannot read). */
type Expander = (id: string) => Promise<Record<string, unknown> | undefined>;

/** How `expand[]` replaces one id field of an object type by its object, for the caller (undefined: left an id). */
export type Expanders = Readonly<Record<string, Expander>>;

/** The expanders of object type `K`: exactly its EXPANDABLE fields. */
export type ExpandersOf<K extends keyof Expandable> = Readonly<Record<Expandable[K][number], Expander>>;

/** The object type a route answers, by the last resource its path names (`/v1/transfers/:id/reversals/…`: a reversal). */
const ROUTE_OBJECT: Readonly<Record<string, keyof Expandable>> = {
  payment_intents: 'payment_intent',
  charges: 'charge',
  refunds: 'refund',
  transfers: 'transfer',
  reversals: 'transfer_reversal',
  payment_methods: 'payment_method',
  disputes: 'dispute',
};

/**
 * A 400 naming the first `expand[]` path the route's object does not offer (a list's as
 * `data.<field>`), checked before the request runs so a refused request writes nothing.
 * Nested paths (`latest_charge.payment_intent`) are not offered.
 */
export function refuseUnexpandable(request: FastifyRequest): void {
  const wanted = expansions(request);
  if (wanted.length === 0) return;
  const segments = (request.routeOptions.url ?? '').split('/').filter((x) => x !== '' && x !== 'v1');
  let offered: readonly string[] = [];
  let list = false;
  segments.forEach((segment, i) => {
    const kind = ROUTE_OBJECT[segment];
    if (kind === undefined) return;
    offered = EXPANDABLE[kind];
    list = request.method === 'GET' && i === segments.length - 1;
  });
  wanted.forEach((path, i) => {
    const field = list ? (path.startsWith('data.') ? path.slice(5) : '') : path;
    if (!offered.includes(field))
      throw new GenericError(400, { type: 'invalid_request_error', message: `This property cannot be expanded (${path}).`, param: `expand[${i}]` });
  });
}

/** The request's `expand[]`, from the query (GET) or the body. */
function expansions(request: FastifyRequest): string[] {
  const from = (request.query as { expand?: unknown } | undefined)?.expand ?? (request.body as { expand?: unknown } | undefined)?.expand;
  return Array.isArray(from) ? from.filter((x): x is string => typeof x === 'string') : [];
}

/** `value` (an object, or a list of them) with the fields `expand[]` names answered as their objects (`refuseUnexpandable` refused any other first). */
export async function expanded(request: FastifyRequest, value: Record<string, unknown>, table: Expanders): Promise<Record<string, unknown>> {
  const wanted = expansions(request);
  if (wanted.length === 0) return value;
  const list = value.object === 'list';
  const fields = [...new Set(wanted.map((p) => (list ? (p.startsWith('data.') ? p.slice(5) : '') : p)))].filter((f) => Object.hasOwn(table, f));
  if (fields.length === 0) return value;
  const one = async (o: Record<string, unknown>) => {
    const out = { ...o };
    for (const f of fields) {
      const id = o[f];
      const object = typeof id === 'string' && id !== '' ? await (table[f] as Expanders[string])(id) : undefined;
      if (object) out[f] = object;
    }
    return out;
  };
  return list ? { ...value, data: await Promise.all((value.data as Record<string, unknown>[]).map(one)) } : one(value);
}

/** The query of a retrieve: only `expand[]`; anything else is an unknown parameter. */
export const RetrieveQuery = Type.Object({ expand: Expand }, { additionalProperties: false });

export const Id = (prefix: string) =>
  Type.String({ minLength: 1, maxLength: 64, pattern: `^${prefix}[A-Za-z0-9_-]{1,60}$`, description: `an id starting with ${prefix}` });

export const IdParams = (prefix: string) =>
  Type.Object({ id: Type.String({ maxLength: 80, description: `the object's id (${prefix}…)` }) }, { additionalProperties: false });

/** A currency given in either case, answered in lowercase. */
export const CurrencyParam = Type.String({ pattern: '^[A-Za-z]{3}$', description: 'a three-letter ISO 4217 currency code (lowercase in answers)' });

/** `created` as a Unix time, or a range `{gt, gte, lt, lte}`. */
const Seconds = Type.Integer({ minimum: 0, maximum: 1e11 });
export const CreatedFilter = Type.Optional(
  Type.Union(
    [
      Seconds,
      Type.Object(
        { gt: Type.Optional(Seconds), gte: Type.Optional(Seconds), lt: Type.Optional(Seconds), lte: Type.Optional(Seconds) },
        { additionalProperties: false },
      ),
    ],
    {
      description: 'a Unix time in seconds (exactly), or an object of gt, gte, lt and lte bounds',
    },
  ),
);

export const MAX_LIMIT = 100;

/** The parameters of every list; a resource adds its own filters. */
export const listParams = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: `how many objects, 1 to ${MAX_LIMIT} (default 10)` })),
  starting_after: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'an id: the page of objects after it (older)' })),
  ending_before: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'an id: the page of objects before it (newer)' })),
  created: CreatedFilter,
  expand: Expand,
};

export interface ListQuery {
  limit?: number;
  starting_after?: string;
  ending_before?: string;
  created?: number | { gt?: number; gte?: number; lt?: number; lte?: number };
}

export const ListEnvelope = (item: TSchema, description: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      has_more: Type.Boolean({ description: 'whether more objects follow this page in the same direction' }),
      url: Type.String({ description: 'the path of this list' }),
    },
    { description },
  );

export interface ListPage<R> {
  rows: R[];
  has_more: boolean;
}

/**
 * One page of a list, newest first (created, then id, descending), by keyset: `starting_after`
 * gives the objects after that one, `ending_before` those before it (still answered newest
 * first). `base` is the caller-scoped query (account, mode, filters); `cursorOf` finds a
 * cursor object in the same scope (another account's id is "no such object").
 * Columns: `created_at` (ms) and `id` unless `cols` names others.
 */
export async function listPage<R>(
  q: ListQuery,
  what: string,
  base: () => any,
  cursorOf: (id: string) => Promise<{ created_at: number | bigint; id: string } | undefined>,
  cols: { created: string; id: string } = { created: 'created_at', id: 'id' },
): Promise<ListPage<R>> {
  const C = sql.ref(cols.created);
  const I = sql.ref(cols.id);
  if (q.starting_after && q.ending_before) throw invalidParam('ending_before', 'You may only specify one of these parameters: starting_after, ending_before.');
  const limit = q.limit ?? 10;
  let query = base();
  const created = q.created;
  if (created !== undefined) {
    if (typeof created === 'number') query = query.where(C, '>=', created * 1000).where(C, '<', (created + 1) * 1000);
    else {
      if (created.gt !== undefined) query = query.where(C, '>=', (created.gt + 1) * 1000);
      if (created.gte !== undefined) query = query.where(C, '>=', created.gte * 1000);
      if (created.lt !== undefined) query = query.where(C, '<', created.lt * 1000);
      if (created.lte !== undefined) query = query.where(C, '<', (created.lte + 1) * 1000);
    }
  }
  const cursorId = q.starting_after ?? q.ending_before;
  const backwards = q.ending_before !== undefined;
  if (cursorId !== undefined) {
    const at = await cursorOf(cursorId);
    if (!at) throw noSuch(what, cursorId, backwards ? 'ending_before' : 'starting_after');
    const c = Number(at.created_at);
    query = backwards
      ? query.where(sql`(${C} > ${c} OR (${C} = ${c} AND ${I} > ${at.id}))`)
      : query.where(sql`(${C} < ${c} OR (${C} = ${c} AND ${I} < ${at.id}))`);
  }
  const dir = backwards ? 'asc' : 'desc';
  const rows = (await query
    .orderBy(C, dir)
    .orderBy(I, dir)
    .limit(limit + 1)
    .execute()) as R[];
  const has_more = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  return { rows: page, has_more };
}

export function listObject<T>(url: string, page: { has_more: boolean }, data: T[]): { object: 'list'; data: T[]; has_more: boolean; url: string } {
  return { object: 'list', data, has_more: page.has_more, url };
}
