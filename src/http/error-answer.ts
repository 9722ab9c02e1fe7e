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

/** Turns an Ajv error into "field: problem" with the field in the spec's own notation. */
export function describeValidation(error: FastifyError): ErrorAnswer {
  const first = error.validation?.[0];
  if (!first) return { code: '0400', detail: error.message };
  const parts = first.instancePath
    .split('/')
    .filter(Boolean)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
  const params = first.params as Record<string, unknown>;
  let problem = first.message ?? 'is invalid';
  if (first.keyword === 'required') {
    const missing = String(params.missingProperty);
    field = field ? `${field}.${missing}` : missing;
    problem = 'is required';
  } else if (first.keyword === 'additionalProperties') {
    const extra = String(params.additionalProperty);
    field = field ? `${field}.${extra}` : extra;
    problem = 'is not a known field';
  } else if (first.keyword === 'pattern' || first.keyword === 'format') {
    const hint = ((first as { parentSchema?: unknown }).parentSchema as { description?: string } | undefined)?.description;
    problem = hint ? `must be ${hint}` : problem;
  }
  return { code: '0400', detail: `${field || 'body'} ${problem}`, field: field || undefined };
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
