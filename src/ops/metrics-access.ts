// Who may read /metrics (issue 29 item 5). The metrics tell request rates, routes, approval
// outcomes and process internals: nobody on the public address should read them. So:
// - TOLLGATE_METRICS_LISTEN=host:port: /metrics is served there only, by a listener that
//   serves nothing else (an address the scraper reaches and the public does not);
// - TOLLGATE_METRICS_TOKEN: /metrics asks for `Authorization: Bearer <token>` (also on that
//   listener when both are set);
// - neither, on a production start (config/index.ts `production`): /metrics answers 404;
// - neither, on the development default (loopback, embedded database): open, as before.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Settings } from '../config/index.js';
import type { Metrics } from './metrics.js';

export type MetricsAccess =
  /** The development default: anyone who reaches the loopback address. */
  | 'open'
  /** With the bearer token. */
  | 'token'
  /** Not on the main address: on TOLLGATE_METRICS_LISTEN's listener, or nowhere. */
  | 'absent';

/** How the main address answers /metrics. */
export function metricsAccess(settings: Pick<Settings, 'production' | 'metrics_token' | 'metrics_listen'>): MetricsAccess {
  if (settings.metrics_listen) return 'absent';
  if (settings.metrics_token) return 'token';
  return settings.production ? 'absent' : 'open';
}

/** The header carries exactly the token; compared in constant time (digests of equal length). */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer ([^\s]+)$/i.exec(authorization ?? '')?.[1] ?? '';
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b) && given.length > 0;
}

/** The /metrics route on `app`; `token`: required as a Bearer token when given. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined, route_options: object = {}): void {
  app.get('/metrics', route_options, async (request: FastifyRequest, reply: FastifyReply) => {
    if (token !== undefined && !bearerMatches(request.headers.authorization, token)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .send({ status: 'the metrics need Authorization: Bearer <TOLLGATE_METRICS_TOKEN>' });
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

/**
 * TOLLGATE_METRICS_LISTEN's listener: /metrics and nothing else, no logging (a scrape every
 * few seconds would drown the request log). Null when the setting is absent.
 */
export async function startMetricsListener(settings: Settings, metrics: Metrics): Promise<FastifyInstance | null> {
  if (!settings.metrics_listen) return null;
  const app = Fastify({ logger: false, return503OnClosing: true });
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
    return payload;
  });
  registerMetricsRoute(app, metrics, settings.metrics_token);
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).send({ status: 'this address serves /metrics only' }));
  await app.listen({ host: settings.metrics_listen.host, port: settings.metrics_listen.port });
  return app;
}
