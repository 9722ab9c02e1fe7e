// The published API description: the OpenAPI document built from the route schemas
// (`/openapi.json`) and the reference page at `/docs` (Swagger UI from swagger-ui-dist,
// no network needed).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Deps } from './context.js';

/** Registers the OpenAPI generator; call before any route so every route is described. */
export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
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

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerDocs(app);
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
