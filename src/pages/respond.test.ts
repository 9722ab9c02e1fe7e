// The one page response (docs/contract.md §14): every page gets the same headers; the CSP nonce
// is fresh per response and is the one on the page's style (and script); frame-ancestors
// lists the registered origins or is 'none' (then X-Frame-Options: DENY); nothing is
// loaded from elsewhere. Driven through a Fastify app, as routes use it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { messagePage, resultPage, standardMessage } from './common.js';
import { html, trustedLiteral } from './html.js';
import { LANGS } from './i18n.js';
import { type PageResponse, sendPage, sendRedirect } from './respond.js';

let app: FastifyInstance;
const pages: Record<string, PageResponse> = {
  '/plain': { lang: 'en', title: 'Plain <page>', body: html`<h1>${'Hello & welcome'}</h1>`, frameAncestors: [] },
  '/full': {
    lang: 'pt',
    title: 'Full',
    body: html`<form method="post" action="https://pay.example/x"><button>Go</button></form>`,
    script: trustedLiteral`document.getElementById('page-data');`,
    data: { fields: { a: '</script><script>alert(1)</script>' } },
    images: true,
    status: 201,
    formTargets: ['https://pay.example'],
    frameAncestors: ['https://shop.example', 'https://*.shop.example:8443', 'http://localhost:3000'],
  },
  '/tampered': {
    lang: 'en',
    title: 'Tampered',
    body: html``,
    // Rows edited by hand in the database: what is not an origin never reaches the header.
    frameAncestors: ["https://shop.example; script-src 'unsafe-inline'", 'https://x.example/path', '*'],
    formTargets: ["'unsafe-inline'", 'javascript:'],
  },
};

before(async () => {
  app = Fastify();
  for (const [url, page] of Object.entries(pages)) app.get(url, (_req, reply) => sendPage(reply, page));
  app.get('/back', (_req, reply) => sendRedirect(reply, 'https://shop.example/return?x=1'));
  await app.ready();
});
after(async () => {
  await app.close();
});

const get = async (url: string) => {
  const r = await app.inject({ url });
  return { status: r.statusCode, headers: r.headers as Record<string, string>, body: r.body };
};
const nonceOf = (csp: string) => /style-src 'nonce-([A-Za-z0-9_-]+)'/.exec(csp)?.[1] as string;

describe('headers every page gets', () => {
  test('a page without script or framing: the strict policy, DENY, no-store, no-referrer, nosniff, UTF-8 HTML', async () => {
    const r = await get('/plain');
    assert.equal(r.status, 200);
    const nonce = nonceOf(r.headers['content-security-policy'] as string);
    assert.equal(
      r.headers['content-security-policy'],
      `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    assert.equal(r.headers['x-frame-options'], 'DENY');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  });

  test('the document: language, viewport, the nonce on the only style, escaped title and body, no script', async () => {
    const r = await get('/plain');
    const nonce = nonceOf(r.headers['content-security-policy'] as string);
    assert.match(r.body, /^<!doctype html>\n<html lang="en"><head><meta charset="utf-8">/);
    assert.ok(r.body.includes('<meta name="viewport" content="width=device-width,initial-scale=1">'));
    assert.ok(r.body.includes('<title>Plain &lt;page&gt;</title>'));
    assert.ok(r.body.includes('<h1>Hello &amp; welcome</h1>'));
    assert.deepEqual(
      [...r.body.matchAll(/<style nonce="([^"]+)">/g)].map((m) => m[1]),
      [nonce],
    );
    assert.ok(!r.body.includes('<script'));
  });

  test('the nonce is fresh for every response', async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const r = await get(i % 2 ? '/plain' : '/full');
      const nonce = nonceOf(r.headers['content-security-policy'] as string);
      assert.match(nonce, /^[A-Za-z0-9_-]{22,}$/, '128 bits or more');
      assert.ok(r.body.includes(`<style nonce="${nonce}">`));
      nonces.add(nonce);
    }
    assert.equal(nonces.size, 50);
  });

  test('nothing is loaded from anywhere: no external href, src, @import or url()', async () => {
    for (const url of Object.keys(pages)) {
      const { body } = await get(url);
      assert.doesNotMatch(body, /<link|<img|<iframe|\ssrc=|@import|url\(/i, url);
    }
  });
});

describe('a page with a script, images, form targets and frame origins', () => {
  test('script-src carries the same nonce as the script element; the data block cannot end early', async () => {
    const r = await get('/full');
    assert.equal(r.status, 201);
    const csp = r.headers['content-security-policy'] as string;
    const nonce = nonceOf(csp);
    assert.equal(
      csp,
      `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self' https://pay.example; frame-ancestors https://shop.example https://*.shop.example:8443 http://localhost:3000; base-uri 'none'`,
    );
    assert.deepEqual(
      [...r.body.matchAll(/<script nonce="([^"]+)">/g)].map((m) => m[1]),
      [nonce],
    );
    assert.equal((r.body.match(/<script/g) ?? []).length, 2, 'the nonce’d script and the data block, nothing injected');
    const data = /<script type="application\/json" id="page-data">([^<]*)<\/script>/.exec(r.body)?.[1] as string;
    assert.deepEqual(JSON.parse(data), pages['/full']?.data);
    assert.match(r.body, /<html lang="pt">/);
  });

  test('framing allowed: no X-Frame-Options (it cannot name origins), frame-ancestors does', async () => {
    const r = await get('/full');
    assert.equal(r.headers['x-frame-options'], undefined);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.equal(r.headers['referrer-policy'], 'no-referrer');
  });

  test('values that are not origins never reach the header; with none left, no framing', async () => {
    const r = await get('/tampered');
    const csp = r.headers['content-security-policy'] as string;
    assert.match(csp, /form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
    assert.doesNotMatch(csp, /unsafe-inline|javascript|\*|x\.example/);
    assert.equal(r.headers['x-frame-options'], 'DENY');
  });
});

test('a redirect after a form: 303, no-store, no-referrer', async () => {
  const r = await get('/back');
  assert.equal(r.status, 303);
  assert.equal(r.headers.location, 'https://shop.example/return?x=1');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers['referrer-policy'], 'no-referrer');
});

describe('generic pages', () => {
  test('a standard message in each language', () => {
    const titles = LANGS.map((lang) => standardMessage(lang, 'used').title);
    assert.deepEqual(titles, ['Already used', 'Ya utilizado', 'Já utilizado', 'Déjà utilisé', 'Bereits verwendet']);
    assert.equal(standardMessage('fr', 'not_found').body.toString(), '<h1>Introuvable</h1><p id="message">Cette page n’existe pas.</p>');
  });

  test('a message with a link back: the link is escaped and its scheme checked', () => {
    const page = messagePage('en', 'T', 'x', { href: 'javascript:alert(1)', label: '<b>' });
    assert.ok(page.body.toString().includes('href="about:invalid#refused">&lt;b&gt;</a>'));
  });

  test('a result page shows the outcome, order, merchant, amount and the way back, escaped', () => {
    const body = resultPage('es', {
      outcome: 'declined',
      order_no: 'A"1',
      merchant_name: '<Shop>',
      amount: '42.00 USD',
      return_url: 'https://shop.example/r?a=1&b=2',
    }).body.toString();
    assert.ok(body.includes('<h1 id="outcome" data-outcome="declined">Pago rechazado</h1>'));
    assert.ok(body.includes('<dt>Pedido</dt><dd id="order">A&quot;1</dd>'));
    assert.ok(body.includes('<dd id="merchant">&lt;Shop&gt;</dd>'));
    assert.ok(body.includes('<dd id="amount">42.00 USD</dd>'));
    assert.ok(body.includes('href="https://shop.example/r?a=1&amp;b=2">Volver al comercio</a>'));
    const bare = resultPage('en', { outcome: 'pending', order_no: '1' }).body.toString();
    assert.ok(!bare.includes('id="merchant"') && !bare.includes('id="return"'), 'what is not given is not shown');
  });
});
