// Baseline: the machine's limit for one HTTP route with this stack. A bare Fastify app that
// parses the same JSON body the gateway gets and answers a small XML document. With
// `--workers N` it runs N processes through node:cluster, like the gateway on PostgreSQL.
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const { values } = parseArgs({ options: { port: { type: 'string' }, workers: { type: 'string' } } });
const port = Number(values.port ?? 8090);
const workers = Math.max(1, Number(values.workers ?? 1));

const XML = (order_no: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><respon><order_no>${order_no}</order_no><order_status>1</order_status><result_info>0000:Success</result_info></respon>`;

if (workers > 1 && cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  app.get('/readyz', async () => ({ status: 'ready' }));
  app.post('/v1/authorise', async (request, reply) => {
    const body = request.body as { order_no?: unknown };
    return reply.type('application/xml; charset=utf-8').send(XML(String(body.order_no ?? '')));
  });
  await app.listen({ host: '127.0.0.1', port });
}
