// The page layer in a real browser (Chromium): the HTML parser sees hostile strings only
// as text and attribute values; a page is framed by an origin the account registered and
// refused by any other; and a page works on a 390 px phone with JavaScript off, in the
// browser's language.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type Browser, chromium } from 'playwright-core';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { authorise } from '../threeds/testing.js';
import { field } from './forms.js';
import { frameOriginsOf } from './frame-origins.js';
import { html } from './html.js';
import { renderDocument } from './layout.js';
import { hostile } from './testing.js';

let gw: TestGateway;
let browser: Browser;
const shops: http.Server[] = [];

/** A merchant's site: `/embed?src=URL` frames URL; anything else is the landing page. */
async function shop(): Promise<string> {
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const src = u.searchParams.get('src');
    const body = src
      ? `<!doctype html><title>Shop checkout</title><iframe id="pay" width="400" height="600" src="${encodeURI(src)}"></iframe>`
      : '<!doctype html><title>Thanks</title><h1>Back at the shop</h1>';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  shops.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

before(async () => {
  gw = await testGateway();
  gw.settings.public_url = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({
    executablePath: process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

after(async () => {
  await browser?.close();
  for (const s of shops) await new Promise((r) => s.close(r));
  await gw.close();
});

describe('escaping under a real HTML parser (property)', () => {
  const template = (s: string) =>
    renderDocument(
      {
        lang: 'en',
        title: s,
        body: html`<div id="t">${s}</div><input id="v" value="${s}"><input id="w" value='${s}'><a id="u" href="${s}">x</a><form id="f" action="/p/${s}">${field({ name: 'n', label: s, value: s, error: `!${s}` })}</form>`,
      },
      'nonce',
    );

  test('every hostile string stays text or an attribute value: same elements, same attributes, same values', async () => {
    const samples = fc.sample(hostile, { numRuns: 600, seed: 10 });
    samples.push(
      '</div><script>alert(1)</script>',
      '" onfocus="alert(1)" autofocus x="',
      "' onmouseover='x",
      'javascript:alert(1)',
      '<!--',
      ']]><svg onload=alert(1)>',
    );
    const docs = [template('x'), ...samples.map(template)]; // the first is the baseline
    const page = await browser.newPage();
    const parsed = await page.evaluate((list: string[]) => {
      const parser = new (globalThis as any).DOMParser(); // browser code: this project's types have no DOM
      return list.map((doc) => {
        const d = parser.parseFromString(doc, 'text/html');
        const elements: string[] = [...d.querySelectorAll('*')].map((e: any) => `${e.tagName}[${[...e.attributes].map((a: any) => a.name).join(',')}]`);
        const a = d.getElementById('u');
        let protocol: string | null = null;
        try {
          protocol = a ? new URL(a.getAttribute('href') ?? '', 'https://gateway.example/pay/1').protocol : null;
        } catch {
          protocol = 'invalid'; // not a URL: the browser does not follow it
        }
        return {
          elements,
          title: (d.querySelector('title')?.textContent ?? null) as string | null,
          text: (d.getElementById('t')?.textContent ?? null) as string | null,
          v: (d.getElementById('v')?.getAttribute('value') ?? null) as string | null,
          w: (d.getElementById('w')?.getAttribute('value') ?? null) as string | null,
          protocol,
          action: (d.getElementById('f')?.getAttribute('action') ?? null) as string | null,
          label: (d.querySelector('label')?.textContent ?? null) as string | null,
          field: (d.getElementById('f-n')?.getAttribute('value') ?? null) as string | null,
          error: (d.getElementById('f-n-error')?.textContent ?? null) as string | null,
        };
      });
    }, docs);
    await page.close();

    const expected = parsed.shift()?.elements ?? assert.fail('no baseline');
    assert.ok(expected.length >= 10 && expected.includes('A[id,href]'), expected.join(' '));
    // The parser's own normalisations: CR and CRLF become LF; NUL is dropped from body text and
    // replaced by U+FFFD in titles and attribute values.
    const lf = (s: string) => s.replace(/\r\n?/g, '\n');
    const inText = (s: string) => lf(s).replaceAll('\0', '');
    const inAttr = (s: string) => lf(s).replaceAll('\0', '\uFFFD');
    parsed.forEach((p, i) => {
      const s = samples[i] as string;
      const name = JSON.stringify(s);
      assert.deepEqual(p.elements, expected, `${name}: no element or attribute added`);
      assert.equal(p.text, inText(s), name);
      assert.equal(p.title, inAttr(s), name);
      assert.equal(p.v, inAttr(s), name);
      assert.equal(p.w, inAttr(s), name);
      assert.equal(p.action, inAttr(`/p/${s}`), name);
      assert.deepEqual([p.label, p.field, p.error], [inText(s), inAttr(s), inText(`!${s}`)], name);
      assert.ok(['http:', 'https:', 'mailto:', 'tel:', 'about:', 'invalid'].includes(p.protocol as string), `${name} linked as ${p.protocol}`);
    });
  });
});

describe('framing from the account’s registered origins (the 3-D Secure page)', () => {
  async function framed(shopUrl: string, threeds_url: string) {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) refused.push(m.text());
    });
    await page.goto(`${shopUrl}/embed?src=${encodeURIComponent(threeds_url)}`);
    const frame = (await (await page.waitForSelector('#pay')).contentFrame()) ?? assert.fail('no frame');
    await frame.waitForLoadState();
    return { page, frame, refused };
  }

  test('an allowed origin shows the page in its iframe, and the shopper completes the challenge inside it', async () => {
    const allowed = await shop();
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, allowed);
    const x = await authorise(gw, directPayment(m, { card: '4000000000003220', return_url: `${allowed}/return` }), m);
    const { page, frame, refused } = await framed(allowed, x.threeds_url);
    assert.equal(await frame.textContent('#card'), '400000******3220');
    await Promise.all([frame.waitForURL(`${allowed}/return?**`), frame.click('#complete')]);
    assert.equal(await frame.textContent('h1'), 'Back at the shop');
    assert.deepEqual(refused, []);
    await page.close();
  });

  test('another origin is refused by the browser', async () => {
    const allowed = await shop();
    const other = await shop();
    const m = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(m.account_id, allowed);
    const x = await authorise(gw, directPayment(m, { card: '4000000000003220' }), m);
    const { page, frame, refused } = await framed(other, x.threeds_url);
    assert.equal(await frame.$('#card'), null, 'the page is not shown');
    assert.ok(!frame.url().startsWith(gw.settings.public_url), `the frame stayed off the gateway (${frame.url()})`);
    await page.waitForTimeout(100); // the console report can trail the navigation
    assert.ok(refused.length > 0, 'Chromium reports the frame-ancestors refusal');
    await page.close();
  });

  test('an account with no origins is framed by no one, not even an origin another account registered', async () => {
    const allowed = await shop();
    await frameOriginsOf(gw.runtime.store).add(gw.merchant.account_id, 'https://unrelated.example');
    const m = await gw.newMerchant();
    const other = await gw.newMerchant();
    await frameOriginsOf(gw.runtime.store).add(other.account_id, allowed);
    const x = await authorise(gw, directPayment(m, { card: '4000000000003220' }), m);
    const { page, frame } = await framed(allowed, x.threeds_url);
    assert.equal(await frame.$('#card'), null);
    await page.close();
  });
});

test('on a 390 px phone, JavaScript off, in the browser’s language: readable and usable', async () => {
  const back = await shop();
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, locale: 'de-DE' });
  const page = await context.newPage();
  const x = await authorise(gw, directPayment(gw.merchant, { card: '4000000000003220', amount: '1234567.89', return_url: `${back}/return` }));
  await page.goto(x.threeds_url);
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await page.textContent('h1'), 'Bestätigen Sie diese Zahlung');
  const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number).catch(() => null);
  // evaluate runs even with page JavaScript off (Playwright's own isolated world).
  assert.ok(width !== null && width <= 390, `no sideways scrolling (${width} px)`);
  for (const id of ['#complete', '#fail']) {
    const box = (await page.locator(id).boundingBox()) ?? assert.fail(`${id} not laid out`);
    assert.ok(box.x >= 0 && box.x + box.width <= 390, `${id} fits the width`);
    assert.ok(box.height >= 44, `${id} is a comfortable touch target (${box.height} px)`);
  }
  await Promise.all([page.waitForURL(`${back}/return?**`), page.click('#complete')]);
  assert.equal(await page.textContent('h1'), 'Back at the shop');
  await context.close();
});
