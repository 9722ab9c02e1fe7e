// Builds the Fastify application: parsing, errors, request ids, metrics, docs, and every
// capability's routes. Nothing here knows about payments beyond registering their routes.

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import underPressure from '@fastify/under-pressure';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import qs from 'qs';
import { registerIssuerRoutes } from '../apm/issuer-routes.js';
import { registerProcessorHooks } from '../attempts/hooks.js';
import { registerCheckoutRoutes } from '../checkout/routes.js';
import { Refused } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import { FaultLog, RETRY_AFTER_S, type StorageFault, storageFault } from '../db/faults.js';
import { registerDisputeRoutes } from '../disputes/routes.js';
import { bearerCaller, carriesApiKey } from '../generic/auth.js';
import { genericThrown } from '../generic/outcomes.js';
import { fromCatalogue, GenericError, sendGenericError, validationError } from '../generic/wire.js';
import { registerIdempotency } from '../idempotency/plugin.js';
import { registerPaymentMethodRoutes } from '../methods/routes.js';
import { metricsAccess, registerMetricsRoute } from '../ops/metrics-access.js';
import { registerLifecycleRoutes } from '../payments/lifecycle-routes.js';
import { registerPayoutRoutes } from '../payouts/routes.js';
import { registerPortal } from '../portal/routes.js';
import { ProcessorsBusy, processorWaits } from '../processors/attempts.js';
import { registerRefundRoutes } from '../refunds/routes.js';
import { registerReviewRoutes } from '../review/routes.js';
import { createRiskEngine } from '../risk/engine.js';
import { basicRiskEngine, type RiskEngine } from '../risk/index.js';
import { registerSettlementRoutes } from '../settlement/routes.js';
import { registerSubscriptionRoutes } from '../subscriptions/routes.js';
import { registerThreedsRoutes } from '../threeds/routes.js';
import { BodyParseError, parseBody } from '../web/body.js';
import type { Deps } from '../web/context.js';
import { describeValidation, sendError } from '../web/error-answer.js';
import { ApiError, type ResultCode } from '../web/errors.js';
import { loggedUrl, loggerOptions, routeWords } from '../web/logging.js';
import { asApiError } from '../web/outcomes.js';
import { runAtRequestTime } from '../web/request-time.js';
import { registerOpenApi } from './docs.js';
import { finiteNumbers } from './finite.js';
import { registerGenericRoutes } from './generic-routes.js';
import { registerPaymentRoutes } from './payment-routes.js';
import { type SchemaCompilation, schemaCompilers } from './schema-compilers.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** One year, subdomains included: the usual HSTS policy (RFC 6797 §6.1). */
const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * `log_destination`: where the log goes instead of standard output (tests read it);
 * `schemas`: when route schemas are compiled (schema-compilers.ts; a server: at `ready`).
 * Hooks run in the order they are added here.
 */
export async function buildApp(deps: Deps, opts: { log_destination?: NodeJS.WritableStream; schemas?: SchemaCompilation } = {}): Promise<FastifyInstance> {
  const compilers = schemaCompilers();
  const app = createFastify(deps, opts, compilers.compilersFactory);
  // Every route's schemas are handed to the compilers before the onReady hooks run.
  if ((opts.schemas ?? 'at_ready') === 'at_ready') app.addHook('onReady', async () => compilers.compileAll());
  registerBodyParser(app);
  const words = registerRouteHooks(app, deps);
  registerAnswerHeaders(app);
  const overloaded = await registerLoadShedding(app, deps);
  const faults = new FaultLog(app.log);
  registerRequestLog(app, deps, words, faults);
  app.setErrorHandler(errorHandler(deps, faults));
  registerNotFound(app, deps);
  await registerOpenApi(app, deps);
  registerProbes(app, deps, overloaded, faults);
  registerIdempotency(app, deps); // before the routes: its hooks apply to every POST
  // One risk engine behind the direct payment and the hosted checkout's card form.
  const risk = deps.settings.risk_rules ? createRiskEngine(deps.store.db) : basicRiskEngine;
  for (const register of routeRegistrars) await register(app, deps, risk);
  return app;
}

/** Fastify with our limits, request ids, validation, query parser and the router's refusals in our shapes. */
function createFastify(
  deps: Deps,
  opts: { log_destination?: NodeJS.WritableStream },
  compilersFactory: ReturnType<typeof schemaCompilers>['compilersFactory'],
): FastifyInstance {
  return Fastify({
    schemaController: { compilersFactory },
    logger: loggerOptions(deps.settings, opts.log_destination),
    // One line per request is written by our onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.settings.body_limit_bytes,
    trustProxy: deps.settings.trusted_proxies.length > 0 ? deps.settings.trusted_proxies : false,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId('request');
    },
    ajv: {
      customOptions: { coerceTypes: true, removeAdditional: false, allErrors: false, verbose: true, useDefaults: false },
      // Ajv lets "1e309" coerce to Infinity past minimum and maximum: refused here instead.
      onCreate: finiteNumbers,
    },
    return503OnClosing: true,
    // Bracket notation in query strings too (`created[gte]=…`, `expand[0]=…`: docs/contract.md §12), bounded.
    routerOptions: {
      querystringParser: (text: string) =>
        qs.parse(text, { depth: 4, arrayLimit: 100, parameterLimit: 200, allowPrototypes: false, plainObjects: true, charset: 'utf-8' }) as Record<
          string,
          unknown
        >,
    },
    // The router's own refusals (malformed URL, over-long path parameter) answer in our shape.
    frameworkErrors: (error, request, reply) => {
      const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL is malformed';
      if (genericRequest(request)) {
        reply.header('request-id', request.id);
        void sendGenericError(request, reply, new GenericError(400, { type: 'invalid_request_error', message: `The request URL is invalid: ${detail}.` }));
        return;
      }
      void sendError(request, reply, {
        code: '0400',
        detail: error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL is malformed',
      });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

function registerBodyParser(app: FastifyInstance): void {
  // One parser for every media type: the body's shape decides (docs/contract.md §1).
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
}

/** Every route's static words (for the request log) and every handler run at its request's time. */
function registerRouteHooks(app: FastifyInstance, deps: Deps): ReturnType<typeof routeWords> {
  // Every route's static words, so an unmatched path is logged with only those (logging.ts).
  const words = routeWords();
  app.addHook('onRoute', (route) => words.add(route.url));
  // Every handler runs at its request's time: a test account's clock, when its hook set one
  // (src/web/request-time.ts); the hooks after the handler keep the real time.
  app.addHook('onRoute', (route) => {
    route.handler = runAtRequestTime(route.handler, deps);
  });

  return words;
}

function registerAnswerHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // Issue 29 item 5. Answers carry payment state, keys and pages for one shopper: no cache
    // keeps them, unless a route chose otherwise (the docs' static assets, public and alike).
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    // Served over HTTPS (directly, or behind a trusted proxy's X-Forwarded-Proto): browsers
    // keep to HTTPS from then on. Never over plain HTTP, where the header means nothing and
    // a development setup on http://localhost must stay reachable.
    if (request.protocol === 'https') reply.header('strict-transport-security', HSTS);
    return payload;
  });
}

/** Returns whether the process sheds load now (for /readyz). */
async function registerLoadShedding(app: FastifyInstance, deps: Deps): Promise<() => boolean> {
  // Load shedding (issue 17 item 4): at most `max_in_flight` requests in work per process,
  // and none while the event loop lags past `max_event_loop_delay_ms`; past either, a fast
  // 503 with Retry-After, so the requests already accepted keep their latency. Probes and
  // metrics are never shed (their routes say so with `config.probe`).
  let inFlight = 0;
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.probe) return;
    // Requests waiting on a processor are not work (docs/contract.md §20): they have their own bound (processorWaits).
    if (inFlight - processorWaits.now >= deps.settings.max_in_flight) {
      deps.metrics.shed.inc({ reason: 'in_flight' });
      reply.header('retry-after', '1');
      throw new ApiError('0503', `this process is at its limit of ${deps.settings.max_in_flight} requests in progress; retry in a moment`);
    }
    inFlight++;
    counted.add(request);
    // Whichever comes first: the answer is sent, the client went away, or the socket closed.
    reply.raw.once('close', () => done(request));
  });
  const counted = new WeakSet<FastifyRequest>();
  const done = (request: FastifyRequest) => {
    if (counted.delete(request)) inFlight--;
  };
  app.addHook('onResponse', async (request) => done(request));
  app.addHook('onRequestAbort', async (request) => done(request));
  if (deps.settings.max_event_loop_delay_ms > 0) {
    await app.register(underPressure, { maxEventLoopDelay: deps.settings.max_event_loop_delay_ms, retryAfter: 1, sampleInterval: 250 });
  }
  return () => inFlight - processorWaits.now >= deps.settings.max_in_flight || (deps.settings.max_event_loop_delay_ms > 0 && app.isUnderPressure());
}

function registerRequestLog(app: FastifyInstance, deps: Deps, words: ReturnType<typeof routeWords>, faults: FaultLog): void {
  app.addHook('onResponse', async (request, reply) => {
    if (faults.active && request.method === 'POST' && reply.statusCode < 500) faults.recovered();
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.requests.inc({ route, status: String(reply.statusCode) });
    deps.metrics.latency.observe({ route }, reply.elapsedTime / 1000);
    const url = loggedUrl(request.url, request.routeOptions.url, words);
    request.log.info({ method: request.method, url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
  });
}

/** Every refusal and failure in the shape of the interface asked (acquiring or generic); storage faults as 503 told once. */
function errorHandler(deps: Deps, faults: FaultLog) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A generic path that matched no route (a hook refused it before the not-found handler
    // ran, e.g. a malformed Idempotency-Key) is answered in that interface's shape too.
    const genericShape = request.routeOptions.config?.answer === 'generic' || (request.is404 && genericRequest(request));
    if (genericShape && request.is404) reply.header('request-id', request.id);
    // The database's state, not the request's: 503 with Retry-After, told once (issue 17).
    const fault: StorageFault | null = storageFault(error);
    if (fault) {
      request.storageFaulted = true;
      faults.failed(fault, error);
      reply.header('retry-after', String(RETRY_AFTER_S[fault]));
      if (genericShape) return sendGenericError(request, reply, storageRefusal(fault));
      return sendError(request, reply, {
        code: fault === 'storage' ? '0507' : '0503',
        detail:
          fault === 'storage'
            ? 'the gateway cannot write to its storage (full or read-only); nothing was done; retry later with the same Idempotency-Key'
            : 'the gateway cannot reach its database; nothing was done; retry in a moment with the same Idempotency-Key',
      });
    }
    if (error.code === 'FST_UNDER_PRESSURE' || error instanceof ProcessorsBusy) {
      deps.metrics.shed.inc({ reason: error instanceof ProcessorsBusy ? 'processor_waits' : 'event_loop_delay' });
      reply.header('retry-after', '1');
      const detail = error instanceof ProcessorsBusy ? `this process is overloaded: ${error.message}` : 'this process is overloaded; retry in a moment';
      if (genericShape) return sendGenericError(request, reply, new GenericError(503, { type: 'api_error', message: `The gateway is ${detail.slice(5)}.` }));
      return sendError(request, reply, { code: '0503', detail });
    }
    if (genericShape) return genericError(error, request, reply);
    const api = asApiError(error);
    if (api) return sendError(request, reply, { code: api.code, detail: api.detail, field: api.field, extra: api.extra });
    if (error.validation) return sendError(request, reply, describeValidation(error));
    if (error instanceof BodyParseError) return sendError(request, reply, { code: '0400', detail: error.message });
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(request, reply, {
        code: '0413',
        detail: `the body is larger than ${request.routeOptions.bodyLimit ?? deps.settings.body_limit_bytes} bytes`,
      });
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      const code: ResultCode = error.statusCode === 413 ? '0413' : error.statusCode === 415 ? '0415' : error.statusCode === 429 ? '0429' : '0400';
      return sendError(request, reply, { code, detail: error.message });
    }
    // Unexpected: log without the body, answer without details.
    request.log.error({ err: { message: error.message, stack: error.stack, code: error.code } }, 'unhandled error');
    return sendError(request, reply, { code: '0500', detail: 'the request failed; it is safe to retry with the same Idempotency-Key' });
  };
}

function registerNotFound(app: FastifyInstance, deps: Deps): void {
  // An unknown generic path: the key first, before the body is parsed, as on every generic
  // route (their onRequest hook): an unknown path or a bad body tells an unknown caller nothing.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404 || !genericRequest(request)) return;
    try {
      await bearerCaller(deps, request.headers.authorization);
    } catch (e) {
      if (e instanceof GenericError) return sendGenericError(request, reply.header('request-id', request.id), e);
      throw e;
    }
  });
  app.setNotFoundHandler(async (request, reply) => {
    if (genericRequest(request)) {
      const path = request.url.split('?')[0] ?? '';
      return sendGenericError(
        request,
        reply,
        new GenericError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${path.slice(0, 200)}).` }),
      );
    }
    return sendError(request, reply, { code: '0404', detail: `no endpoint ${request.method} ${request.url.split('?')[0]}` });
  });
}

function registerProbes(app: FastifyInstance, deps: Deps, overloaded: () => boolean, faults: FaultLog): void {
  // Liveness: the process serves at all. Readiness: the database answers and the process
  // is not shedding load; both come back by themselves (issue 17 item 2).
  const probe = { schema: { hide: true }, config: { probe: true, pressureHandler: () => undefined } };
  app.get('/healthz', probe, async () => ({ status: 'ok' }));
  app.get('/readyz', probe, async (_req, reply) => {
    if (overloaded()) return reply.code(503).header('retry-after', '1').send({ status: 'shedding load' });
    const ok = await deps.store.ping();
    if (ok) faults.recovered();
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'database unreachable' });
  });
  // Open on the development default only; else a Bearer token, a listener of its own, or 404 (ops/metrics-access.ts).
  const metrics = metricsAccess(deps.settings);
  if (metrics !== 'absent') registerMetricsRoute(app, deps.metrics, metrics === 'token' ? deps.settings.metrics_token : undefined, probe);
}

type RouteRegistrar = (app: FastifyInstance, deps: Deps, risk: RiskEngine) => void | Promise<void>;

/**
 * Every capability's routes, registered in this order (it is the OpenAPI document's order):
 * the one list of the gateway's endpoints besides the probes, metrics and docs above.
 */
const routeRegistrars: readonly RouteRegistrar[] = [
  registerPaymentRoutes,
  registerCheckoutRoutes,
  registerThreedsRoutes,
  registerIssuerRoutes,
  registerReviewRoutes,
  registerSubscriptionRoutes,
  registerPayoutRoutes,
  registerLifecycleRoutes,
  registerRefundRoutes,
  registerDisputeRoutes,
  registerSettlementRoutes,
  registerPaymentMethodRoutes,
  registerGenericRoutes,
  registerPortal,
  registerProcessorHooks,
];

/** The generic interface's paths: an unknown one is answered in its shape. */
const GENERIC_PATH =
  /^\/v1\/(payments|refunds|accounts?|transfers|balance|customers|payment_methods|webhook_endpoints|events|payment_intents|charges|disputes)(\/|\?|$)/;
/** The acquiring interface's own paths (signed bodies): their refusals keep its shape whatever the headers. */
const ACQUIRING_PATH =
  /^\/v1\/(authorise|capture|cancel|refund|review|paymentmethods|checkout|cancelsubscription|payout|cancelpayout|disputeEvidence|acceptDispute|retrieval[A-Za-z]*)(\/|\?|$)/;

/**
 * A request the generic interface answers, route or not (docs/contract.md §24): its own paths,
 * and any other path under /v1 the acquiring interface does not own when it carries an API key
 * (Bearer or Basic): the platform family's clients read only their own error shape.
 */
function genericRequest(request: FastifyRequest): boolean {
  if (GENERIC_PATH.test(request.url)) return true;
  return request.url.startsWith('/v1/') && !ACQUIRING_PATH.test(request.url) && carriesApiKey(request.headers.authorization);
}

/** A storage fault as the platform family says an outage: `api_error` without a code (its published codes have none); the message tells which. */
function storageRefusal(fault: StorageFault): GenericError {
  return fault === 'storage'
    ? new GenericError(503, {
        type: 'api_error',
        message: 'The gateway cannot write to its storage (full or read-only); nothing was done. Retry later with the same Idempotency-Key.',
      })
    : new GenericError(503, {
        type: 'api_error',
        message: 'The gateway cannot reach its database; nothing was done. Retry in a moment with the same Idempotency-Key.',
      });
}

/** Any failure on a generic route, as the platform family's error object (docs/contract.md §12). */
function genericError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof GenericError) return sendGenericError(request, reply, error);
  if (error.validation) return sendGenericError(request, reply, validationError(error.validation as never, error.validationContext ?? 'body'));
  if (error instanceof Refused) return sendGenericError(request, reply, genericThrown(error.refusal));
  if (error instanceof ApiError) return sendGenericError(request, reply, fromCatalogue({ code: error.code, detail: error.detail, field: error.field }));
  if (error instanceof BodyParseError) return sendGenericError(request, reply, fromCatalogue({ code: '0400', detail: error.message }));
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return sendGenericError(request, reply, fromCatalogue({ code: '0413', detail: 'the body is larger than the limit' }));
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return sendGenericError(request, reply, new GenericError(error.statusCode, { type: 'invalid_request_error', message: error.message }));
  }
  request.log.error({ err: { message: error.message, stack: error.stack, code: error.code } }, 'unhandled error');
  return sendGenericError(
    request,
    reply,
    new GenericError(500, { type: 'api_error', message: 'The request failed and nothing was written; it is safe to retry with the same Idempotency-Key.' }),
  );
}
