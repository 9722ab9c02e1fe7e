// The published API description: the OpenAPI document built from the route schemas
// (`/openapi.json`), the reference page `/docs` (the description rendered on the server,
// then Swagger UI from swagger-ui-dist for the operations), and the merchant guides of
// `docs/` rendered to HTML at `/docs/<name>`. No network, no inline script, strict CSP.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BEARER_SCHEME, GENERIC_TAGS } from '../generic/docs.js';
import type { Deps } from '../web/context.js';
import { publishedRequestSchema } from '../web/route-schema.js';
import { apiDescription } from './api-description.js';
import { escapeHtml, renderMarkdown } from './markdown.js';

/** The repository's `docs/` folder (from `src/http` and from `dist/http` alike). */
export const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');

/** Merchant guides served at `/docs/<slug>` when their file exists. */
const GUIDES = [
  { slug: 'quickstart', file: 'quickstart.md', title: 'Quickstart' },
  { slug: 'interface', file: 'interface.md', title: 'Merchant interface' },
  { slug: 'platform-sdk', file: 'platform-sdk.md', title: 'Point your platform SDK at Tollgate' },
  { slug: 'disputes', file: 'disputes.md', title: 'Disputes' },
] as const;

export interface Guide {
  slug: string;
  title: string;
  href: string;
  html: string;
}

let shippedGuides: Guide[] | undefined;

/** The guides shipped in docs/, rendered once per process (every app of a process serves the same files). */
function guidesShipped(): Guide[] {
  shippedGuides ??= loadGuides();
  return shippedGuides;
}

/** The guides present in `dir`, rendered. */
export function loadGuides(dir: string = DOCS_DIR): Guide[] {
  const out: Guide[] = [];
  for (const g of GUIDES) {
    const file = path.join(dir, g.file);
    if (!fs.existsSync(file)) continue;
    out.push({ slug: g.slug, title: g.title, href: `/docs/${g.slug}`, html: renderMarkdown(fs.readFileSync(file, 'utf8')) });
  }
  return out;
}

/**
 * The signature as a security scheme. It is a body field, and OpenAPI has no scheme type
 * for a body field; an API key is the nearest, declared only so that tools and linters see
 * which operations need a signature. The description says the truth, and the gateway reads
 * no such header.
 */
const SIGNATURE_SCHEME = {
  type: 'apiKey',
  in: 'header',
  name: 'encryption_data',
  description:
    '**A body field, not a header.** Every signed request carries its signature in the body field `encryption_data`: the lowercase hex HMAC-SHA256, keyed with the account’s secret key, of the body’s canonical string (see “Signing” in the description). OpenAPI has no security scheme for a body field, so this one is declared as an API key only to mark the operations that need a signature: the gateway never reads an `encryption_data` header, and a value entered in an “Authorize” dialog has no effect. Answers that carry `encryption_data` are signed the same way.',
} as const;

const TAGS = [
  { name: 'payments', description: 'Card payments (direct and the hosted checkout), alternative-method payments, order queries, capture and cancel.' },
  { name: 'refunds', description: 'Refunds of captured payments and the refund search.' },
  { name: 'risk', description: 'Decisions on payments held for risk review.' },
  { name: 'subscriptions', description: 'Recurring payments created by a payment’s `subscription` object.' },
  {
    name: 'disputes',
    description: 'Chargebacks and inquiries of captured payments: the dispute search, evidence (text and PDF, PNG or JPEG files) and accepting a dispute.',
  },
  {
    name: 'settlement',
    description:
      'Daily settlement batches: every balance movement of a day with gross, fee and net, and when the captured money becomes available (JSON or CSV).',
  },
  {
    name: 'shopper pages',
    description:
      'Pages the gateway shows the shopper (the hosted checkout, the sandbox issuer’s 3-D Secure challenge and alternative-method pages); not signed.',
  },
];

/** Request headers every signed operation accepts (handled for all routes, documented here). */
const REQUEST_HEADERS = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      maxLength: 255,
      description:
        '1 to 255 printable ASCII characters. Within 24 hours the same key with the same body gets the stored answer (`Idempotent-Replayed: true`); with another body, HTTP 409. Refusals (4xx) store nothing.',
    },
    'x-request-id': {
      type: 'string',
      maxLength: 128,
      description: 'your id for this request (letters, digits, `._:-`), echoed in the answer; generated when absent',
    },
  },
};

const REQUEST_ID_HEADER = { 'x-request-id': { type: 'string', description: 'the request’s id, as sent or generated' } };
const REPLAYED_HEADER = {
  'idempotent-replayed': {
    type: 'string',
    enum: ['true'],
    description: 'present when this is the stored answer of an earlier request with the same Idempotency-Key',
  },
};

type RouteSchema = Record<string, unknown> & { hide?: boolean; body?: unknown; security?: unknown[]; response?: Record<string, Record<string, unknown>> };

/**
 * What the document shows of a route, beyond its own schema: batch items with their
 * per-item `required` lists, and the headers handled for every route. Copies; the route's
 * schema stays as Fastify uses it.
 */
function publish({ schema, url }: { schema: RouteSchema; url: string }): { schema: RouteSchema; url: string } {
  if (!schema || schema.hide) return { schema, url };
  const signed = Array.isArray(schema.security) && schema.security.length > 0;
  const response: Record<string, Record<string, unknown>> = {};
  for (const [status, entry] of Object.entries(schema.response ?? {})) {
    response[status] = { ...entry, headers: { ...REQUEST_ID_HEADER, ...(signed && status === '200' ? REPLAYED_HEADER : {}) } };
  }
  return {
    url,
    schema: {
      ...schema,
      ...(schema.body ? { body: publishedRequestSchema(schema.body) } : {}),
      ...(signed ? { headers: REQUEST_HEADERS } : {}),
      ...(schema.response ? { response } : {}),
    },
  };
}

export interface RegisteredRoute {
  method: string;
  url: string;
  /** Left out of the document on purpose (`schema.hide`). */
  hidden: boolean;
  schema: RouteSchema | undefined;
}

const routesOf = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route registered after `registerOpenApi` (so tests can hold the document to all of them). */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return routesOf.get(app) ?? [];
}

/** Registers the OpenAPI generator and the docs pages; call before any route so every route is described. */
export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  const routes: RegisteredRoute[] = [];
  routesOf.set(app, routes);
  app.addHook('onRoute', (r) => {
    const schema = r.schema as RouteSchema | undefined;
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, hidden: schema?.hide === true, schema });
  });

  const guides = guidesShipped();
  const description = apiDescription(guides, deps.settings.body_limit_bytes);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate payment gateway',
        version: '1',
        description,
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: deps.settings.public_url, description: 'this gateway' }],
      tags: [...TAGS, ...GENERIC_TAGS],
      components: { securitySchemes: { encryption_data: SIGNATURE_SCHEME, bearer: BEARER_SCHEME } },
    },
    transform: publish as never,
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerDocs(app, description, guides);
}

// ---- pages ----------------------------------------------------------------------------

/** Swagger UI needs script and fetch from this origin; nothing else, nothing inline. */
const REFERENCE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const GUIDE_CSP = "default-src 'none'; style-src 'self'; img-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const STYLE = `body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1b1b1b}
nav{display:flex;gap:1.5em;padding:.8em 1.5em;background:#1b2a3a}nav a{color:#fff;text-decoration:none}nav a[aria-current]{font-weight:bold;text-decoration:underline}
main{max-width:980px;margin:0 auto;padding:1em 1.5em}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
code{background:#f3f3f3;padding:0 .2em;overflow-wrap:anywhere}pre{background:#f3f3f3;padding:.8em;overflow-x:auto}pre code{padding:0}
.swagger-ui .information-container{display:none}
`;

/**
 * Starts Swagger UI; a file, not an inline script, so the CSP needs no exception. Its deep
 * linking takes over the fragment (`#sandbox-test-cards` became `#/sandbox-test-cards` and
 * the page stayed at the top, issue 36): a fragment naming a heading of the description is
 * kept aside and, once the operations are drawn, put back and scrolled to.
 */
const INIT = `(function () {
  var id = location.hash.length > 1 && location.hash.charAt(1) !== '/' ? decodeURIComponent(location.hash.slice(1)) : '';
  var target = id ? document.getElementById(id) : null;
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    onComplete: function () {
      if (!target) return;
      history.replaceState(null, '', '#' + encodeURIComponent(id));
      target.scrollIntoView();
    },
  });
  if (target) target.scrollIntoView();
})();
`;

function nav(guides: readonly Guide[], current: string): string {
  const links = [{ href: '/docs', title: 'API reference' }, ...guides];
  return `<nav>${links.map((l) => `<a href="${l.href}"${l.href === current ? ' aria-current="page"' : ''}>${escapeHtml(l.title)}</a>`).join('')}</nav>`;
}

function page(title: string, head: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>${head}<link rel="stylesheet" href="/docs/docs.css"></head><body>${body}</body></html>`;
}

function sendPage(reply: FastifyReply, csp: string, html: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .send(html);
}

function registerDocs(app: FastifyInstance, description: string, guides: readonly Guide[]): void {
  const require = createRequire(import.meta.url);
  const dir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const files: Record<string, string> = {
    'swagger-ui.css': 'text/css; charset=utf-8',
    'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
    'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  };
  const hidden = { schema: { hide: true } };

  // The description (signing, result codes, test cards) is rendered here so it reads
  // without JavaScript; Swagger UI below shows the operations (its own copy is hidden).
  const reference = page(
    'Tollgate API',
    '<link rel="stylesheet" href="/docs/swagger-ui.css">',
    `${nav(guides, '/docs')}<main><h1>Tollgate payment gateway API</h1><section id="overview">${renderMarkdown(description)}</section>
<section id="operations"><h2>Operations</h2><noscript><p>The operation reference needs JavaScript; the same document is <a href="/openapi.json">/openapi.json</a>.</p></noscript><div id="swagger-ui"></div></section></main>
<script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script>`,
  );
  app.get('/docs', hidden, async (_req, reply) => sendPage(reply, REFERENCE_CSP, reference));

  for (const g of guides) {
    const html = page(`${g.title} · Tollgate`, '', `${nav(guides, g.href)}<main>${g.html}</main>`);
    app.get(g.href, hidden, async (_req, reply) => sendPage(reply, GUIDE_CSP, html));
  }

  // The address a newcomer opens first: where the documents and the portal are.
  const home = page(
    'Tollgate',
    '',
    `${nav(guides, '/')}<main><h1>Tollgate payment gateway</h1><p>This address serves the gateway's interfaces; there is nothing to see here but where to go:</p>
<ul><li><a href="/docs">API reference</a>: signing, result codes, test cards and every operation (<a href="/openapi.json">/openapi.json</a>)</li>
${guides.map((g) => `<li><a href="${g.href}">${escapeHtml(g.title)}</a></li>`).join('\n')}
<li><a href="/portal">Merchant portal</a>: payments, refunds, payouts, settings and users for a merchant's staff</li></ul></main>`,
  );
  app.get('/', hidden, async (_req, reply) => sendPage(reply, GUIDE_CSP, home));

  app.get('/docs/init.js', hidden, async (_req, reply) => reply.type('application/javascript; charset=utf-8').send(INIT));
  app.get('/docs/docs.css', hidden, async (_req, reply) => reply.type('text/css; charset=utf-8').send(STYLE));
  for (const [file, type] of Object.entries(files)) {
    app.get(`/docs/${file}`, hidden, async (_req, reply) =>
      reply
        .type(type)
        .header('cache-control', 'public, max-age=86400')
        .send(fs.createReadStream(path.join(dir, file))),
    );
  }
}
