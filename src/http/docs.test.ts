// The merchant docs the gateway serves (issue 9): /docs reads without JavaScript (the
// description with the signing rules, the result codes and the test-card table rendered on
// the server) and loads Swagger UI from this origin only; the guides of docs/ are rendered
// to HTML at /docs/<name>, escaped; every page has a strict CSP without inline script.
// Runs on one engine: the pages are built from the route table and docs/, the same on either engine.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { publishedTestCards, TEST_CARDS } from '../processors/sandbox/cards.js';
import { type TestGateway, testGateway } from '../test/harness.js';
import { RESULT_CODES } from '../web/errors.js';
import { DOCS_DIR, loadGuides } from './docs.js';
import { escapeHtml, headingId, renderMarkdown } from './markdown.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

/** The page loads nothing from elsewhere and runs nothing inline. */
function assertSelfContained(html: string, url: string): void {
  for (const [, tag, attrs] of html.matchAll(/<(script|link|img|iframe|style)\b([^>]*)>/gi)) {
    assert.notEqual(tag?.toLowerCase(), 'style', `${url}: no inline style element`);
    assert.notEqual(tag?.toLowerCase(), 'iframe', `${url}: no frame`);
    const src = /\b(?:src|href)="([^"]*)"/.exec(attrs ?? '')?.[1];
    assert.ok(src?.startsWith('/') && !src.startsWith('//'), `${url}: <${tag}> loads ${src} from this origin`);
  }
  assert.doesNotMatch(html, /\son[a-z]+\s*=|\sstyle\s*=/i, `${url}: no inline handlers or style attributes`);
}

describe('/docs', () => {
  test('a strict CSP, no inline script, Swagger UI and its init script served from here', async () => {
    const res = await gw.app.inject('/docs');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assertSelfContained(res.body, '/docs');
    const scripts = [...res.body.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    assert.deepEqual(
      scripts.map((m) => m[1]),
      ['', ''],
      'both scripts are files',
    );
    for (const [file, type] of [
      ['/docs/init.js', /javascript/],
      ['/docs/swagger-ui-bundle.js', /javascript/],
      ['/docs/swagger-ui.css', /text\/css/],
      ['/docs/docs.css', /text\/css/],
    ] as const) {
      const asset = await gw.app.inject(file);
      assert.equal(asset.statusCode, 200, file);
      assert.match(String(asset.headers['content-type']), type, file);
    }
    assert.match((await gw.app.inject('/docs/init.js')).body, /SwaggerUIBundle\(\{\s*url: '\/openapi\.json'/);
  });

  test('reads without JavaScript: the test-card table, the result codes and the signing rules are in the HTML', async () => {
    const html = (await gw.app.inject('/docs')).body;
    const overview = html.slice(html.indexOf('<section id="overview">'), html.indexOf('<section id="operations">'));
    assert.ok(overview.length > 1000);
    assert.match(overview, /<h2[^>]*>Sandbox test cards<\/h2>/);
    const re = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (const { card, outcome } of publishedTestCards()) {
      const cell = /^\d+$/.test(card) ? `<code>${card}</code>(, <code>\\d+</code>)*` : re(card);
      assert.match(overview, new RegExp(`<td>(<code>\\d+</code>, )*${cell}</td>\\s*<td>${re(escapeHtml(outcome))}</td>`), card);
    }
    assert.equal(publishedTestCards().length, Object.keys(TEST_CARDS).length + 2);
    for (const code of Object.keys(RESULT_CODES)) assert.ok(overview.includes(`<td><code>${code}</code></td>`), code);
    assert.match(overview, /<h2[^>]*>Signing: <code>encryption_data<\/code><\/h2>/);
  });

  test('links every guide present in docs/, and each guide renders on the server', async () => {
    const html = (await gw.app.inject('/docs')).body;
    const guides = loadGuides();
    assert.ok(
      guides.some((g) => g.slug === 'interface'),
      'docs/interface.md is served',
    );
    for (const g of guides) {
      assert.ok(html.includes(`<a href="${g.href}">`), `/docs links ${g.href}`);
      const res = await gw.app.inject(g.href);
      assert.equal(res.statusCode, 200, g.href);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'; style-src 'self';/);
      assert.doesNotMatch(String(res.headers['content-security-policy']), /script-src/);
      assert.doesNotMatch(res.body, /<script/i);
      assertSelfContained(res.body, g.href);
      assert.match(res.body, /<h1[^>]*>/);
    }
    const quickstart = fs.existsSync(path.join(DOCS_DIR, 'quickstart.md'));
    assert.equal((await gw.app.inject('/docs/quickstart')).statusCode, quickstart ? 200 : 404);
    assert.equal(html.includes('href="/docs/quickstart"'), quickstart);
  });

  test('/ points to the documents and the portal (it answered 404)', async () => {
    const res = await gw.app.inject('/');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.doesNotMatch(String(res.headers['content-security-policy']), /script-src/);
    for (const href of ['/docs', '/portal', '/openapi.json', ...loadGuides().map((g) => g.href)]) assert.ok(res.body.includes(`href="${href}"`), href);
    assertSelfContained(res.body, '/');
  });

  test('every link between the served pages lands on a page and an anchor that exist (the start-up banner’s too)', async () => {
    const pages = new Map<string, string>();
    for (const href of ['/docs', ...loadGuides().map((g) => g.href)]) pages.set(href, (await gw.app.inject(href)).body);
    const targets = [...pages.values()].flatMap((body) => [...body.matchAll(/href="(\/docs[^"]*)"/g)].map((m) => m[1] as string));
    targets.push('/docs#sandbox-test-cards', '/docs/interface#sandbox-test-cards'); // named by `npm start` and the quickstart
    assert.ok(
      targets.some((t) => t.startsWith('/docs/interface#')),
      'the guides link into each other by anchor',
    );
    for (const target of targets) {
      const [page, anchor] = target.split('#') as [string, string | undefined];
      if (page.startsWith('/docs/') && /\.(css|js)$/.test(page)) continue;
      const body = pages.get(page);
      assert.ok(body !== undefined, `${target}: no such page`);
      if (anchor) assert.ok(body.includes(`id="${anchor}"`), `${target}: no element with id ${anchor}`);
    }
  });
});

describe('guides', () => {
  test('a guide is served when its file exists, and only then', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-guides-'));
    try {
      fs.writeFileSync(path.join(dir, 'interface.md'), '# Interface\n');
      assert.deepEqual(
        loadGuides(dir).map((g) => g.href),
        ['/docs/interface'],
      );
      fs.writeFileSync(path.join(dir, 'quickstart.md'), '# Quickstart\n\nStart `npm start`.\n');
      const guides = loadGuides(dir);
      assert.deepEqual(
        guides.map((g) => g.href),
        ['/docs/quickstart', '/docs/interface'],
      );
      assert.match(guides[0]?.html ?? '', /<h1 id="quickstart">Quickstart<\/h1>\s*<p>Start <code>npm start<\/code>\.<\/p>/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('markdown: headings get the ids GitHub gives them; links between guides go to their /docs page', () => {
    assert.equal(headingId('Signature: encryption_data'), 'signature-encryption_data');
    assert.equal(headingId('Capture, cancel, refund: /v1/capture, /v1/cancel'), 'capture-cancel-refund-v1capture-v1cancel');
    const html = renderMarkdown('## Sandbox test cards\n\n[cards](interface.md#sandbox-test-cards) [x](../README.md)');
    assert.match(html, /<h2 id="sandbox-test-cards">Sandbox test cards<\/h2>/);
    assert.match(html, /<a href="\/docs\/interface#sandbox-test-cards">cards<\/a>/);
    assert.doesNotMatch(html, /href="\.\.\//, 'a link outside the guides is text');
  });

  test('markdown: raw HTML is shown as text, links keep only safe targets, no images are loaded', () => {
    const html = renderMarkdown(
      '<script>alert(1)</script>\n\nText <b onclick="x()">bold</b> [docs](/docs) [site](https://example.org/a) [bad](javascript:alert(1)) [proto](//evil.example/x) ![pic](https://example.org/p.png)\n',
    );
    assert.doesNotMatch(html, /<script|<b |<img/i);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /<a href="\/docs">docs<\/a>/);
    assert.match(html, /<a href="https:\/\/example\.org\/a">site<\/a>/);
    assert.doesNotMatch(html, /href="javascript|href="\/\/evil/);
    assert.match(html, /bad proto pic/);
  });
});
