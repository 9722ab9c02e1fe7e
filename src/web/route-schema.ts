// Shared pieces of the signed routes' schemas (docs/style.md §2): the identity fields of every
// request, batch items, the refusal record of `error-answer.ts` per HTTP status in the
// route's media type, and the helper every route declares its answers with. The answers
// are the route's `schema.response`, so they reach `/openapi.json` from the route itself.
//
// They describe; they never serialise. Every answer here is a finished string (signed by
// `sendSigned`, or the record of `sendError`), and its signature covers every byte, so a
// serializer built from a schema must never get the chance to drop or reorder a field.
// Fastify only serialises objects, and `answersAreStrings` makes an object answer on these
// routes a loud failure instead of a silently filtered one (and compiles nothing at start).
import { type TObject, type TProperties, type TSchema, Type } from 'typebox';
import { RESULT_CODES, type ResultCode, resultText } from './errors.js';

export type AnswerMedia = 'xml' | 'json';

const MEDIA_TYPE: Record<AnswerMedia, string> = { xml: 'application/xml', json: 'application/json' };

/** The media types every signed route reads; the body's shape decides, not Content-Type. */
export const REQUEST_MEDIA_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'application/xml'];

/** The security requirement of every signed operation (the scheme is declared in docs.ts). */
export const SIGNED = [{ encryption_data: [] }];

/** Route option: the response schemas document the answer and are never used to serialise it. */
export const answersAreStrings = {
  serializerCompiler: () => (): string => {
    throw new Error('answers of this route are finished strings (sendSigned / sendError); an object answer would go out unsigned');
  },
};

/** The identity and signature fields of every signed request body. */
export const SignedIdentity = {
  merchant_id: Type.String({ pattern: '^\\d{1,20}$', description: 'a string of 1 to 20 digits' }),
  account_id: Type.String({ pattern: '^\\d{1,20}$', description: 'a string of 1 to 20 digits' }),
  encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: '64 hexadecimal characters (HMAC-SHA256)' }),
};

// ---- fields shared by answers --------------------------------------------------------

/** A field of an answer; `description` says what it holds. */
export const text = (description: string) => Type.String({ description });
export const oneOf = (values: readonly string[], description: string) => Type.String({ enum: [...values], description });

export const Signature = Type.String({
  pattern: '^[0-9a-f]{64}$',
  description: 'HMAC-SHA256 of this answer under your secret key (lowercase hex), computed like a request signature',
});
export const ReturnStatus = oneOf(['1'], '`1`: the request was processed; look at each item');
export const ReturnMessage = oneOf(['OK'], '`OK` when processed');
export const ItemError = text('empty on success, else why the item failed, as `<code>:<text>` plus a detail');
export const NextCursor = text('present when more records match: send it back as `cursor` with the same dates for the next page');

// ---- refusals -------------------------------------------------------------------------

/** HTTP statuses a request can be refused with as a whole (`return_status` `0`). */
export type Refusal = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;

/** What each refusal means on any signed route; a route may say more (`refusals` below). */
const REFUSAL_MEANING: Record<Refusal, string> = {
  400: 'The body cannot be read, or a field breaks its rule: `error_field` names the field, `error_message` the rule. Nothing was done.',
  401: '`encryption_data` is missing or does not verify. On a test account `error_message` says whether the account belongs to another merchant, is not an account of this merchant, or the signature differs; in the last case `canonical_string` shows the string the gateway signed (card data masked). Nothing more is said where it could confirm that a live merchant or account exists.',
  403: 'Refused for this account.',
  404: 'The record does not exist for this account.',
  409: 'The `Idempotency-Key` was already used with another request, or its first request is still running.',
  413: 'The body is larger than the limit (1 MiB unless the operator set another).',
  429: 'Too many requests; retry later.',
  500: 'The request failed unexpectedly and nothing was written; retrying with the same `Idempotency-Key` is safe.',
  503: '`0503`: the database cannot be reached at this moment, or this process is at its limit of requests in progress; `0507`: the storage cannot write (full or read-only). Nothing was done: retry after `Retry-After` seconds with the same `Idempotency-Key`.',
};

/** The refusal record of `sendError`: the same fields in JSON and in XML `respon`. */
function refusalRecord(status: Refusal, media: AnswerMedia): TObject {
  const codes = (Object.keys(RESULT_CODES) as ResultCode[]).filter((c) => RESULT_CODES[c].http === status);
  return Type.Object(
    {
      merchant_id: text('the request’s `merchant_id` when it is a digit string, else empty'),
      account_id: text('the request’s `account_id` when it is a digit string, else empty'),
      return_status: oneOf(['0'], '`0`: the request was refused as a whole'),
      return_message: oneOf(codes.map(resultText), '`<code>:<text>` from the result-code catalogue'),
      error_message: text('what is wrong, naming the field and the rule'),
      error_field: text('the field at fault in the request’s own notation (`capture_orders[0].amount`), or empty'),
      request_id: text('this request’s `X-Request-Id`: quote it when asking for help'),
      ...(status === 401
        ? { canonical_string: Type.Optional(text('test accounts only, when the signature differs: the canonical string the gateway signed, card data masked')) }
        : {}),
    },
    {
      description: 'A refused request: not signed, and nothing was stored.',
      ...(media === 'xml' ? { xml: { name: 'respon' } } : {}),
    },
  );
}

export interface AnswersOf {
  /** The media type of every answer of the route. */
  media: AnswerMedia;
  /** The 200 answer. */
  ok: TSchema;
  ok_description: string;
  /** The refusals this route can answer, each with what it means here (empty: the general meaning). */
  refusals: Partial<Record<Refusal, string>>;
}

/** One refusal's entry in `schema.response`: its meaning and the record in the media type. */
export function refusal(status: Refusal, media: AnswerMedia, meaning = '') {
  return { description: meaning || REFUSAL_MEANING[status], content: { [MEDIA_TYPE[media]]: { schema: refusalRecord(status, media) } } };
}

/** `schema.response` of a signed route: the 200 answer and its refusals, in its media type. */
export function answers(a: AnswersOf): Record<string, { description: string; content: Record<string, { schema: TSchema }> }> {
  const type = MEDIA_TYPE[a.media];
  const out: Record<string, { description: string; content: Record<string, { schema: TSchema }> }> = {
    200: { description: a.ok_description, content: { [type]: { schema: a.ok } } },
  };
  for (const [status, said] of Object.entries(a.refusals) as Array<[`${Refusal}`, string]>) out[status] = refusal(Number(status) as Refusal, a.media, said);
  return out;
}

/** The refusals every signed route can answer, with their general meaning. */
export const SIGNED_REFUSALS = { 400: '', 401: '', 409: '', 413: '', 500: '', 503: '' } as const satisfies Partial<Record<Refusal, string>>;

// ---- batch items ----------------------------------------------------------------------

const ITEM_REQUIRED = Symbol('tollgate.itemRequired');

/**
 * A batch item (capture, cancel, refund). Its fields are checked one item at a time: an
 * item that lacks a field fails alone (`0400:… is required` in its own answer) and the
 * others still run, so the validator must not require them (it would refuse the whole
 * batch). The published document still lists them in `required`: `publishedRequestSchema`
 * adds the list kept here (a symbol key, which neither Ajv nor JSON sees).
 */
export function batchItem<P extends TProperties>(properties: P, required: ReadonlyArray<keyof P & string>, description: string): TObject<P> {
  const schema = Type.Object(properties, { additionalProperties: false, description });
  Object.defineProperty(schema, ITEM_REQUIRED, { value: [...required], enumerable: false });
  return schema;
}

/** The per-item required fields of a batch item schema, if it is one. */
export function itemRequired(schema: unknown): readonly string[] | undefined {
  return schema !== null && typeof schema === 'object' ? (schema as { [ITEM_REQUIRED]?: string[] })[ITEM_REQUIRED] : undefined;
}

/** A request body schema as published: a copy in which batch items carry their `required` list. */
export function publishedRequestSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(publishedRequestSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = publishedRequestSchema(v);
  const required = itemRequired(schema);
  if (required) out.required = [...required];
  return out;
}
