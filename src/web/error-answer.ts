// How a refused request is answered: the error record in the route's media type (JSON or
// XML `respon`), with validator errors turned into "field problem" in the spec's notation.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { RESULT_CODES, type ResultCode, resultText } from './errors.js';
import { toXml } from './xml.js';

export interface ErrorAnswer {
  code: ResultCode;
  detail?: string;
  field?: string;
  extra?: Readonly<Record<string, string>>;
}

/** What Ajv tells about one failed keyword (the parts the messages below read). */
export interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: { description?: string; pattern?: string; properties?: Record<string, unknown> };
  data?: unknown;
}

const TYPE_TEXT: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  finite: 'a finite number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object of fields',
  array: 'a list (a JSON array, or repeated form or XML fields)',
  null: 'empty',
};

/** Patterns declared without a description, said in words. */
const PATTERN_TEXT: Record<string, string> = {
  '^\\d{1,20}$': 'a string of 1 to 20 digits',
  '^[0-9a-fA-F]{64}$': '64 hexadecimal characters (HMAC-SHA256)',
};

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const list = (values: unknown[]) => {
  const words = values.map((v) => String(v));
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
};

/** The rule a value broke, in words a merchant reads: "must not be empty", "must be at most 64 characters long". */
export function problemOf(e: AjvError): string {
  const p = e.params;
  const limit = Number(p.limit);
  const described = e.parentSchema?.description;
  switch (e.keyword) {
    case 'required': {
      // An empty list counts as absent (docs/contract.md §2), so a list that needs items says so here.
      const missing = e.parentSchema?.properties?.[String(p.missingProperty)] as { type?: string; minItems?: number } | undefined;
      const least = missing?.type === 'array' ? Number(missing.minItems ?? 0) : 0;
      return least > 0 ? `is required: give at least ${plural(least, 'item', 'items')}` : 'is required';
    }
    case 'additionalProperties':
      return 'is not a known field';
    case 'type':
      return `must be ${list(
        String(p.type)
          .split(',')
          .map((t) => TYPE_TEXT[t] ?? t),
      )}`;
    case 'minItems':
      return limit === 1 ? 'must not be empty: give at least 1 item' : `must have at least ${plural(limit, 'item', 'items')}`;
    case 'maxItems': {
      const got = Array.isArray(e.data) ? ` (got ${e.data.length})` : '';
      return `must have at most ${plural(limit, 'item', 'items')}${got}`;
    }
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character', 'characters')} long`;
    case 'maxLength':
      return `must be at most ${plural(limit, 'character', 'characters')} long`;
    case 'minimum':
      return `must be at least ${limit}`;
    case 'maximum':
      return `must be at most ${limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${limit}`;
    case 'exclusiveMaximum':
      return `must be less than ${limit}`;
    case 'enum':
      return `must be ${list(p.allowedValues as unknown[])}`;
    case 'const':
      return `must be ${String(p.allowedValue)}`;
    case 'pattern':
    case 'format': {
      const words = described ?? PATTERN_TEXT[String(p.pattern ?? e.parentSchema?.pattern)];
      return words ? `must be ${words}` : e.keyword === 'format' ? `must be a valid ${String(p.format)}` : 'is not in the expected form';
    }
    case 'anyOf':
    case 'oneOf':
      return described ? `must be ${described}` : 'does not have any of the accepted shapes';
    case 'minProperties':
      return limit === 1 ? 'must not be empty' : `must have at least ${limit} fields`;
    case 'maxProperties':
      return `must have at most ${limit} fields`;
    case 'uniqueItems':
      return 'must not hold the same item twice';
    default:
      return 'is not valid here';
  }
}

/** Turns Ajv's errors into "field problem", with the field in the spec's own notation. */
export function describeValidation(error: FastifyError): ErrorAnswer {
  const errors = (error.validation ?? []) as unknown as AjvError[];
  // A union reports each failed branch, then itself: its own description says it best.
  const first = errors.find((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf') ?? errors[0];
  if (!first) return { code: '0400', detail: 'the body is not valid' };
  const parts = first.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
  if (first.keyword === 'required' || first.keyword === 'additionalProperties') {
    const name = String(first.keyword === 'required' ? first.params.missingProperty : first.params.additionalProperty);
    field = field ? `${field}.${name}` : name;
  }
  return { code: '0400', detail: `${field || 'the body'} ${problemOf(first)}`, field: field || undefined };
}

export function sendError(request: FastifyRequest, reply: FastifyReply, answer: ErrorAnswer): FastifyReply {
  const http = RESULT_CODES[answer.code].http;
  const body = request.body as Record<string, unknown> | undefined;
  // Echo the ids only when they are ids: an error never repeats arbitrary input.
  const id = (v: unknown) => (typeof v === 'string' && /^\d{1,20}$/.test(v) ? v : '');
  const record: Record<string, unknown> = {
    merchant_id: id(body?.merchant_id),
    account_id: id(body?.account_id),
    return_status: '0',
    return_message: resultText(answer.code),
    error_message: answer.detail ?? '',
    error_field: answer.field ?? '',
    request_id: request.id,
    ...answer.extra,
  };
  if (request.routeOptions.config?.answer === 'xml') {
    return reply.code(http).type('application/xml; charset=utf-8').send(toXml('respon', record));
  }
  return reply.code(http).type('application/json; charset=utf-8').send(JSON.stringify(record));
}
