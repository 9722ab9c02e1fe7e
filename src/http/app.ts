// Builds the Fastify application: parsing, errors, request ids, metrics, docs, and every
// capability's routes. Nothing here knows about payments beyond registering their routes.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { timeOrderedId } from '../crypto/ids.js';
import { registerIdempotency } from '../idempotency/plugin.js';
import { registerLifecycleRoutes } from '../payments/lifecycle-routes.js';
import { registerPaymentRoutes } from '../payments/routes.js';
import { registerRefundRoutes } from '../refunds/routes.js';
import { registerReviewRoutes } from '../review/routes.js';
import { registerThreedsRoutes } from '../threeds/routes.js';
import { BodyParseError, parseBody } from './body.js';
import type { Deps } from './context.js';
import { ApiError, RESULT_CODES, type ResultCode, resultText } from './errors.js';
import { redactPaths } from './logging.js';
import { toXml } from './xml.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface ErrorAnswer {
  code: ResultCode;
  detail?: string;
  field?: string;
}

/** Turns an Ajv error into "field: problem" with the field in the spec's own notation. */
function describeValidation(error: FastifyError): ErrorAnswer {
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

function sendError(request: FastifyRequest, reply: FastifyReply, answer: ErrorAnswer): FastifyReply {
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
  };
  if (request.routeOptions.config?.answer === 'xml') {
    return reply.code(http).type('application/xml; charset=utf-8').send(toXml('respon', record));
  }
  return reply.code(http).type('application/json; charset=utf-8').send(JSON.stringify(record));
}

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: deps.settings.log_level,
      redact: { paths: redactPaths, censor: '[redacted]' },
    },
    // One line per request is written by our onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.settings.body_limit_bytes,
    trustProxy: deps.settings.trusted_proxies.length > 0 ? deps.settings.trusted_proxies : false,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : timeOrderedId();
    },
    ajv: {
      customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false, verbose: true, useDefaults: false },
    },
    return503OnClosing: true,
    // The router's own refusals (malformed URL, over-long path parameter) answer in our shape.
    frameworkErrors: (error, request, reply) => {
      void sendError(request, reply, {
        code: '0400',
        detail: error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL is malformed',
      });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // One parser for every media type: the body's shape decides (decisions §1).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, text, done) => {
    try {
      const parsed = parseBody(text as string);
      request.bodyFormat = parsed.format;
      done(null, parsed.value);
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.requests.inc({ route, status: String(reply.statusCode) });
    deps.metrics.latency.observe({ route }, reply.elapsedTime / 1000);
    request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) return sendError(request, reply, { code: error.code, detail: error.detail, field: error.field });
    if (error.validation) return sendError(request, reply, describeValidation(error));
    if (error instanceof BodyParseError) return sendError(request, reply, { code: '0400', detail: error.message });
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(request, reply, { code: '0413', detail: `the body is larger than ${deps.settings.body_limit_bytes} bytes` });
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      const code: ResultCode = error.statusCode === 413 ? '0413' : error.statusCode === 415 ? '0415' : error.statusCode === 429 ? '0429' : '0400';
      return sendError(request, reply, { code, detail: error.message });
    }
    // Unexpected: log without the body, answer without details.
    request.log.error({ err: { message: error.message, stack: error.stack, code: error.code } }, 'unhandled error');
    return sendError(request, reply, { code: '0500', detail: 'the request failed; it is safe to retry with the same Idempotency-Key' });
  });

  app.setNotFoundHandler((request, reply) => sendError(request, reply, { code: '0404', detail: `no endpoint ${request.method} ${request.url.split('?')[0]}` }));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate payment gateway',
        version: '1',
        description:
          'Merchant-facing acquiring interface. Every acquiring request is signed with `encryption_data` (HMAC-SHA256 over the canonical string, see docs/interface.md). Bodies may be JSON, form-urlencoded (bracket notation) or XML.',
      },
      servers: [{ url: deps.settings.public_url }],
    },
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    const ok = await deps.store.ping();
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
  });
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerDocs(app);

  registerIdempotency(app, deps); // before the routes: its hooks apply to every POST
  registerPaymentRoutes(app, deps);
  registerThreedsRoutes(app, deps);
  registerReviewRoutes(app, deps);
  registerLifecycleRoutes(app, deps);
  registerRefundRoutes(app, deps);
  return app;
}

/** Serves Swagger UI from the swagger-ui-dist package (no network needed). */
function registerDocs(app: FastifyInstance): void {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const files: Record<string, string> = {
    'swagger-ui.css': 'text/css; charset=utf-8',
    'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
    'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  };
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Tollgate API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head><body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body></html>`;
  const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui' });`;
  app.get('/docs', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(page));
  app.get('/docs/init.js', { schema: { hide: true } }, async (_req, reply) => reply.type('application/javascript').send(init));
  for (const [file, type] of Object.entries(files)) {
    app.get(`/docs/${file}`, { schema: { hide: true } }, async (_req, reply) =>
      reply
        .type(type)
        .header('cache-control', 'public, max-age=86400')
        .send(fs.createReadStream(path.join(dir, file))),
    );
  }
}
