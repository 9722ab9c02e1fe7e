// Templates escape by construction (issue 10): any string put into a page lands as text or
// as an attribute value, never as a tag, an attribute break or a script; holes where no
// escaping could make a value safe are refused; SafeHtml cannot be forged. The same
// property is checked against a real HTML parser in pages.browser.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { field } from './forms.js';
import { attrs, escapeHtml, hidden, html, type Interpolation, jsonData, REFUSED_URL, SafeHtml, safeUrl, trustedLiteral } from './html.js';
import { hostile } from './testing.js';

const ENTITY: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** Decodes exactly the five entities escaping writes; any other `&` means escaping failed. */
function decode(escaped: string): string {
  assert.doesNotMatch(escaped, /[<>"']/, 'no markup character survives escaping');
  assert.doesNotMatch(escaped, /&(?!amp;|lt;|gt;|quot;|#39;)/, 'every & starts one of the five entities');
  return escaped.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITY[e] as string);
}

const between = (out: string, before: string, after: string) => {
  assert.ok(out.startsWith(before) && out.endsWith(after), out);
  return out.slice(before.length, out.length - after.length);
};

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:', 'tel:', 'about:']);

describe('escaping (property)', () => {
  test('any string as element text is escaped and reads back unchanged', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        assert.equal(decode(between(html`<p id="x">${s}</p>`.toString(), '<p id="x">', '</p>')), s);
        assert.equal(decode(between(html`<title>${s}</title>`.toString(), '<title>', '</title>')), s);
      }),
      { numRuns: 1000 },
    );
  });

  test('any string as a double- or single-quoted attribute value cannot end the attribute', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        assert.equal(decode(between(html`<input name="n" value="${s}">`.toString(), '<input name="n" value="', '">')), s);
        assert.equal(decode(between(html`<input name='n' value='${s}'>`.toString(), "<input name='n' value='", "'>")), s);
        assert.equal(decode(between(hidden('f', s).toString(), '<input type="hidden" name="f" value="', '">')), s);
      }),
      { numRuns: 1000 },
    );
  });

  test('any string as a URL attribute never yields a script scheme, and a safe URL is kept as is', () => {
    const hostileUrl = fc.oneof(hostile, fc.webUrl(), fc.constantFrom('javascript:alert(1)', ' \u0001java\tscript:x', 'DATA:text/html,x', '/relative?a=1&b=2'));
    fc.assert(
      fc.property(hostileUrl, (s) => {
        const href = decode(between(html`<a href="${s}">x</a>`.toString(), '<a href="', '">x</a>'));
        let protocol = '';
        try {
          protocol = new URL(href, 'https://gateway.example/pay/1').protocol; // how a browser resolves the link
        } catch {
          return; // not a URL at all: the browser does not follow it
        }
        assert.ok(SAFE_PROTOCOLS.has(protocol), `${JSON.stringify(s)} became ${protocol}`);
        const original = (() => {
          try {
            return new URL(s, 'https://gateway.example/pay/1').protocol;
          } catch {
            return '';
          }
        })();
        if (original === 'http:' || original === 'https:') assert.equal(href, s, 'a web URL is not altered');
      }),
      { numRuns: 1000 },
    );
  });

  test('a value after a fixed path in a URL attribute is escaped like any attribute value', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        assert.equal(decode(between(html`<form action="/threeds/${s}">`.toString(), '<form action="/threeds/', '">')), s);
      }),
    );
  });
});

describe('escaping (examples)', () => {
  test('the five characters, numbers, nothing, nested and listed SafeHtml', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    assert.equal(html`<b>${42}${7n}${false}${null}${undefined}</b>`.toString(), '<b>427</b>');
    const items = ['<i>', 'b&c'].map((i) => html`<li>${i}</li>`);
    assert.equal(html`<ul>${items}</ul>`.toString(), '<ul><li>&lt;i&gt;</li><li>b&amp;c</li></ul>');
    assert.equal(html`<ul>${['<', '>']}</ul>`.toString(), '<ul>&lt;&gt;</ul>', 'listed strings are escaped each');
    assert.equal(html`<p title="${html`<b>"</b>`}">`.toString(), '<p title="&lt;b&gt;&quot;&lt;/b&gt;">', 'markup in an attribute is text');
  });

  test('safeUrl replaces every scheme but http, https, mailto and tel', () => {
    const table: Array<[string, string]> = [
      ['https://shop.example/r?a=1', 'https://shop.example/r?a=1'],
      ['HTTP://shop.example', 'HTTP://shop.example'],
      ['mailto:a@b.example', 'mailto:a@b.example'],
      ['/pay/1', '/pay/1'],
      ['?x=javascript:1', '?x=javascript:1'],
      ['javascript:alert(1)', REFUSED_URL],
      ['  JavaScript:alert(1)', REFUSED_URL],
      ['java\nscript:alert(1)', REFUSED_URL],
      ['\u0000javascript:x', REFUSED_URL],
      ['data:text/html,<script>', REFUSED_URL],
      ['vbscript:x', REFUSED_URL],
      ['blob:https://x/y', REFUSED_URL],
    ];
    for (const [given, want] of table) assert.equal(safeUrl(given), want, given);
  });

  test('jsonData cannot end its script element and reads back as the same value', () => {
    const value = { a: '</script><script>alert(1)</script>', b: '<!-- x -->', c: 'line\u2028sep&amp;', n: [1, 2] };
    const lit = trustedLiteral`window.x=1`;
    const out = html`<script type="application/json" id="d">${jsonData(value)}</script><script nonce="n">${lit}</script>`.toString();
    const inner = between(out, '<script type="application/json" id="d">', '</script><script nonce="n">window.x=1</script>');
    assert.doesNotMatch(inner, /[<>&\u2028\u2029]/);
    assert.deepEqual(JSON.parse(inner), value);
  });
});

describe('attributes from values: attrs() and field()', () => {
  test('attrs() escapes values, checks URL schemes, writes true bare and leaves out false and nothing', () => {
    const a = attrs({ name: 'card"x', required: true, disabled: false, maxlength: 19, placeholder: undefined, href: 'javascript:x', value: "<'&'>" });
    assert.equal(
      html`<input ${a}>`.toString(),
      '<input name="card&quot;x" required maxlength="19" href="about:invalid#refused" value="&lt;&#39;&amp;&#39;&gt;">',
    );
    assert.equal(html`<input type="text" ${attrs({ id: 'a' })} ${null}>`.toString(), '<input type="text" id="a" >');
    assert.throws(() => html`<input type="text"${attrs({ id: 'a' })}>`, TypeError, 'a space before attributes');
    assert.throws(() => html`<input ${attrs({ id: 'a' })}${attrs({ name: 'b' })}>`, TypeError, 'a space between attrs()');
  });

  test('attrs() refuses names that carry script or style, and names that are not names', () => {
    for (const name of ['onclick', 'OnLoad', 'style', 'srcdoc', 'a b', 'x"y', '1a', 'a=b', '']) {
      assert.throws(() => attrs({ [name]: 'v' }), TypeError, name);
    }
  });

  test('only attrs() stands between attributes: not a string, not html``', () => {
    assert.throws(() => html`<input ${'onfocus=alert(1)'}>`, TypeError);
    assert.throws(() => html`<input ${html`${'onfocus=alert(1)'}`}>`, TypeError);
    assert.throws(() => html`<p>${attrs({ id: 'x' }) as unknown as string}</p>`, TypeError, 'and attrs() only stands inside a tag');
  });

  test('field(): label bound to the input, the value escaped, an error tied to it', () => {
    const plain = field({ name: 'card_number', label: 'Card <number>', autocomplete: 'cc-number', inputmode: 'numeric', required: true, maxlength: 23 });
    assert.equal(
      plain.toString(),
      '<label for="f-card_number">Card &lt;number&gt;</label><input id="f-card_number" name="card_number" type="text" autocomplete="cc-number" inputmode="numeric" required maxlength="23">',
    );
    const failed = field({ name: 'holder', label: 'Name', value: '"><script>', error: 'Give the <name> on the card' });
    assert.ok(failed.toString().includes('value="&quot;&gt;&lt;script&gt;" aria-invalid="true" aria-describedby="f-holder-error">'));
    assert.ok(failed.toString().endsWith('<p class="error" id="f-holder-error">Give the &lt;name&gt; on the card</p>'));
  });

  test('any string as a field value or label stays inside it (property)', () => {
    fc.assert(
      fc.property(hostile, hostile, (label, value) => {
        const out = field({ name: 'n', label, value }).toString();
        assert.equal(out, `<label for="f-n">${escapeHtml(label)}</label><input id="f-n" name="n" type="text" value="${escapeHtml(value)}">`);
      }),
    );
  });
});

describe('holes that escaping cannot make safe are refused', () => {
  const x: Interpolation = 'v';
  const refused: Array<[string, () => unknown]> = [
    ['inside a tag', () => html`<p ${x}>`],
    ['as a tag name', () => html`<${x}>`],
    ['an unquoted attribute', () => html`<p class=${x}>`],
    ['an event handler', () => html`<a onclick="${x}">`],
    ['an event handler, upper case', () => html`<a ONMOUSEOVER='go(${x})'>`],
    ['a style attribute', () => html`<p style="color:${x}">`],
    ['a srcdoc', () => html`<iframe srcdoc="${x}"></iframe>`],
    ['a meta refresh', () => html`<meta http-equiv="refresh" content="0;url=${x}">`],
    ['inside a URL scheme', () => html`<a href="java${x}">`],
    ['a second value at a URL start', () => html`<a href="${x}${x}">`],
    ['a comment', () => html`<!-- ${x} -->`],
    ['a string as script', () => html`<script>${x}</script>`],
    ['a string as style', () => html`<style>${x}</style>`],
    ['html`` as script', () => html`<script>${html`alert(1)`}</script>`],
    ['a literal that ends its style', () => html`<style>${trustedLiteral`</STYLE><script>alert(1)</script>`}</style>`],
    ['a list in an attribute', () => html`<p title="${['a', 'b']}">`],
    ['true', () => html`<p>${true as unknown as Interpolation}</p>`],
    ['an object dressed as SafeHtml', () => html`<p>${Object.create(SafeHtml.prototype, { toString: { value: () => '<script>' } })}</p>`],
  ];
  for (const [name, make] of refused) {
    test(name, () => {
      assert.throws(make, TypeError);
    });
  }

  test('the tokenizer follows the static markup: after a closed script or textarea, text again', () => {
    const lit = trustedLiteral`var a = "<p>";`;
    assert.equal(html`<script nonce="n">${lit}</script><p>${'<b>'}</p>`.toString(), '<script nonce="n">var a = "<p>";</script><p>&lt;b&gt;</p>');
    assert.equal(html`<textarea name="t">${'</textarea>'}</textarea>${'<'}`.toString(), '<textarea name="t">&lt;/textarea&gt;</textarea>&lt;');
    assert.equal(html`<!doctype html><!-- note --><p data-x="a>b">${'<'}</p>`.toString(), '<!doctype html><!-- note --><p data-x="a>b">&lt;</p>');
  });
});

describe('no way to mark a runtime string safe', () => {
  test('the constructor refuses callers without the module token', () => {
    const Ctor = SafeHtml as unknown as new (...a: unknown[]) => SafeHtml;
    assert.throws(() => new Ctor(Symbol('SafeHtml'), '<script>', true), TypeError);
  });

  test('trustedLiteral takes a template literal without substitutions only', () => {
    const call = trustedLiteral as unknown as (...a: unknown[]) => SafeHtml;
    assert.throws(() => call(['<script>']), TypeError, 'a plain array is not a template literal');
    assert.throws(() => call(Object.freeze(['<b>', '</b>']), 'x'), TypeError, 'substitutions are refused');
    assert.equal(trustedLiteral`a>b`.toString(), 'a>b');
  });
});
