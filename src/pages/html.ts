// HTML that is escaped by construction (issue 10, docs/contract.md §14). A page is written as an
// `html` tagged template; what it returns is a SafeHtml, and SafeHtml is the only thing that
// passes into a page unescaped. Every other interpolated value is escaped for the place it
// lands in, and a hole where escaping cannot make a value safe (inside a tag, an unquoted or
// event-handler attribute, a comment, script or style) is refused when the template first runs.
//
// The one escape hatch is `trustedLiteral`: a template literal WITHOUT substitutions (the
// fixed CSS and scripts written in this repository), so no runtime string can become markup.
// `grep -rn trustedLiteral src` lists every use.

/** What a page value may be. `false`, `null` and `undefined` render nothing (for `cond && html`…``). */
export type Interpolation = SafeHtml | Attrs | string | number | bigint | false | null | undefined | readonly Interpolation[];

const MINT = Symbol('SafeHtml');
// Module-private: the only ways to make a SafeHtml are the three exported functions below.
let mint: (text: string, rawText: boolean) => SafeHtml;
let isRawText: (h: SafeHtml) => boolean;
/** A real SafeHtml (private-field brand), not an object dressed as one. */
let isSafe: (v: unknown) => v is SafeHtml;
let textOf: (h: SafeHtml) => string;

/**
 * Markup that is safe to place in a page as is. Only `html`…``, `trustedLiteral`…`` and
 * `jsonData()` make one; the constructor refuses every other caller.
 */
export class SafeHtml {
  readonly #text: string;
  /** May stand as the content of a `<script>` or `<style>` element (a literal, or escaped JSON). */
  readonly #rawText: boolean;

  static {
    mint = (text, rawText) => new SafeHtml(MINT, text, rawText);
    isRawText = (h) => h.#rawText;
    textOf = (h) => h.#text;
    isSafe = (v): v is SafeHtml => typeof v === 'object' && v !== null && #text in v;
  }

  private constructor(token: symbol, text: string, rawText: boolean) {
    if (token !== MINT) throw new TypeError('SafeHtml is made by html``, trustedLiteral`` or jsonData() only');
    this.#text = text;
    this.#rawText = rawText;
  }

  toString(): string {
    return this.#text;
  }
}

let mintAttrs: (text: string) => Attrs;
let attrsText: (v: unknown) => string | null;

/** Attributes for a tag, made by `attrs()` only: the one value that may stand inside a tag. */
export class Attrs {
  readonly #text: string;
  static {
    mintAttrs = (text) => new Attrs(MINT, text);
    attrsText = (v) => (typeof v === 'object' && v !== null && #text in v ? v.#text : null);
  }
  private constructor(token: symbol, text: string) {
    if (token !== MINT) throw new TypeError('Attrs are made by attrs() only');
    this.#text = text;
  }
  toString(): string {
    return this.#text;
  }
}
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text and attribute-value escaping: after it, a value cannot open a tag, end a quoted attribute or start an entity. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

// ---------------------------------------------------------------------------------------
// Where each hole of a template sits. The static parts are trusted code; a small tokenizer
// walks them once per template (cached) and classifies each hole.

type Hole =
  | { kind: 'text' }
  | { kind: 'attr' }
  /** The start of a URL attribute's value: the scheme comes from the value, so it is checked. */
  | { kind: 'url' }
  /** Between attributes inside a tag: only attrs(). */
  | { kind: 'attrs' }
  /** The content of a <script> or <style> element: only a trustedLiteral or jsonData. */
  | { kind: 'raw'; tag: string }
  | { kind: 'refused'; why: string };

/** Attributes whose value is a URL the browser may navigate to or load. */
const URL_ATTRS = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'poster',
  'cite',
  'background',
  'data',
  'xlink:href',
  'manifest',
  'icon',
  'codebase',
  'longdesc',
  'usemap',
]);
/** Attributes no escaping makes safe for a value: script, style, nested documents, URL lists, refresh. */
const refusedAttr = (name: string) => name.startsWith('on') || ['style', 'srcdoc', 'srcset', 'imagesrcset', 'ping', 'http-equiv', 'content'].includes(name);

type State =
  | 'data'
  | 'tagOpen'
  | 'bang'
  | 'decl'
  | 'comment'
  | 'endTagOpen'
  | 'tagName'
  | 'beforeAttrName'
  | 'attrName'
  | 'afterAttrName'
  | 'beforeAttrValue'
  | 'valueDq'
  | 'valueSq'
  | 'valueUnq'
  | 'rawtext'
  | 'rcdata';

const RAWTEXT = new Set(['script', 'style']);
const RCDATA = new Set(['title', 'textarea']);
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
const isLetter = (c: string) => /[A-Za-z]/.test(c);

/**
 * Walks a template's fixed parts through a small HTML tokenizer and says, for each hole,
 * the context it falls in. Longer than 70 lines on purpose (docs/style.md §16): it is one
 * switch over the tokenizer's states, in the order of the HTML standard's tokenizer, and
 * the states share the few variables above; split up, a reader would have to reassemble
 * the machine to check that no context is missed.
 */
function analyse(strings: readonly string[]): Hole[] {
  let state: State = 'data';
  let tag = '';
  let isEnd = false;
  let attr = '';
  let bang = '';
  let tail = ''; // comment end or rawtext end detection
  let valueStatic = '';
  let valueHoles = 0;
  let last = '';
  const holes: Hole[] = [];

  const endTag = (): State => {
    const name = tag.toLowerCase();
    if (isEnd) return 'data';
    tail = '';
    return RAWTEXT.has(name) ? 'rawtext' : RCDATA.has(name) ? 'rcdata' : 'data';
  };

  for (let i = 0; i < strings.length; i++) {
    const chunk = strings[i] as string;
    for (const c of chunk) {
      last = c;
      switch (state) {
        case 'data':
          if (c === '<') state = 'tagOpen';
          break;
        case 'tagOpen':
          if (c === '!') {
            bang = '';
            state = 'bang';
          } else if (c === '/') state = 'endTagOpen';
          else if (isLetter(c)) {
            tag = c;
            isEnd = false;
            state = 'tagName';
          } else state = c === '<' ? 'tagOpen' : 'data';
          break;
        case 'bang':
          bang += c;
          if (bang === '--') {
            tail = '';
            state = 'comment';
          } else if (bang !== '-') state = c === '>' ? 'data' : 'decl';
          break;
        case 'decl':
          if (c === '>') state = 'data';
          break;
        case 'comment':
          tail = (tail + c).slice(-3);
          if (tail === '-->') state = 'data';
          break;
        case 'endTagOpen':
          if (isLetter(c)) {
            tag = c;
            isEnd = true;
            state = 'tagName';
          } else state = c === '>' ? 'data' : 'decl';
          break;
        case 'tagName':
          if (isSpace(c) || c === '/') state = 'beforeAttrName';
          else if (c === '>') state = endTag();
          else tag += c;
          break;
        case 'beforeAttrName':
          if (c === '>') state = endTag();
          else if (!isSpace(c) && c !== '/') {
            attr = c;
            state = 'attrName';
          }
          break;
        case 'attrName':
          if (isSpace(c)) state = 'afterAttrName';
          else if (c === '=') state = 'beforeAttrValue';
          else if (c === '>') state = endTag();
          else if (c === '/') state = 'beforeAttrName';
          else attr += c;
          break;
        case 'afterAttrName':
          if (c === '=') state = 'beforeAttrValue';
          else if (c === '>') state = endTag();
          else if (!isSpace(c) && c !== '/') {
            attr = c;
            state = 'attrName';
          }
          break;
        case 'beforeAttrValue':
          if (c === '"' || c === "'") {
            valueStatic = '';
            valueHoles = 0;
            state = c === '"' ? 'valueDq' : 'valueSq';
          } else if (c === '>') state = endTag();
          else if (!isSpace(c)) state = 'valueUnq';
          break;
        case 'valueDq':
        case 'valueSq':
          if (c === (state === 'valueDq' ? '"' : "'")) state = 'beforeAttrName';
          else valueStatic += c;
          break;
        case 'valueUnq':
          if (isSpace(c)) state = 'beforeAttrName';
          else if (c === '>') state = endTag();
          break;
        case 'rawtext':
        case 'rcdata': {
          const close = `</${tag.toLowerCase()}`;
          tail = (tail + c.toLowerCase()).slice(-close.length);
          if (tail === close) {
            isEnd = true;
            state = 'tagName';
          }
          break;
        }
      }
    }
    if (i === strings.length - 1) break;
    holes.push(classify());
    if (state === 'valueDq' || state === 'valueSq') valueHoles++;
    last = ''; // a value is not the space the next attrs() needs
  }
  return holes;

  function classify(): Hole {
    switch (state) {
      case 'data':
      case 'rcdata':
        return { kind: 'text' };
      case 'valueDq':
      case 'valueSq': {
        const name = attr.toLowerCase();
        if (refusedAttr(name)) return { kind: 'refused', why: `a value in the ${name} attribute (script, style or refresh context)` };
        if (!URL_ATTRS.has(name)) return { kind: 'attr' };
        if (valueStatic === '' && valueHoles === 0) return { kind: 'url' };
        // Past the scheme only once the fixed part has a path, query or fragment character.
        if (/[/?#]/.test(valueStatic)) return { kind: 'attr' };
        return { kind: 'refused', why: `a value inside the scheme of the ${name} URL` };
      }
      case 'rawtext':
        return { kind: 'raw', tag: tag.toLowerCase() };
      case 'comment':
        return { kind: 'refused', why: 'a value inside an HTML comment' };
      case 'beforeAttrName':
        return isSpace(last) ? { kind: 'attrs' } : { kind: 'refused', why: 'attributes not preceded by a space' };
      case 'valueUnq':
      case 'beforeAttrValue':
        return { kind: 'refused', why: `a value in the unquoted ${attr} attribute (quote it)` };
      default:
        return { kind: 'refused', why: 'a value inside a tag, outside a quoted attribute value (use attrs() after a space)' };
    }
  }
}

const analysed = new WeakMap<readonly string[], Hole[]>();

function holesOf(strings: TemplateStringsArray): Hole[] {
  let holes = analysed.get(strings);
  if (!holes) {
    holes = analyse(strings);
    analysed.set(strings, holes);
  }
  return holes;
}

// ---------------------------------------------------------------------------------------

/** Schemes a link or form may carry; anything else (javascript:, data:, vbscript:, …) is replaced. */
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel']);
export const REFUSED_URL = 'about:invalid#refused';

/**
 * The URL as a browser reads its scheme (WHATWG URL: leading C0 controls and spaces
 * stripped, tabs and newlines removed); a scheme outside SAFE_SCHEMES becomes REFUSED_URL.
 */
export function safeUrl(url: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser strips exactly these leading C0 controls
  const t = url.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(t)?.[1];
  return scheme && !SAFE_SCHEMES.has(scheme.toLowerCase()) ? REFUSED_URL : url;
}

function scalar(v: Interpolation, where: string): string {
  if (isSafe(v)) return textOf(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v === false || v === null || v === undefined) return '';
  throw new TypeError(`html: ${Array.isArray(v) ? 'a list' : `a ${typeof v}`} cannot stand in ${where}`);
}

function render(v: Interpolation, hole: Hole): string {
  switch (hole.kind) {
    case 'text':
      if (isSafe(v)) return textOf(v);
      if (Array.isArray(v)) return v.map((x) => render(x, hole)).join('');
      return escapeHtml(scalar(v as Interpolation, 'text'));
    case 'attr':
      // SafeHtml is markup, not attribute text: escaped like any string here.
      return escapeHtml(scalar(v, 'an attribute value'));
    case 'url':
      return escapeHtml(safeUrl(scalar(v, 'a URL attribute')));
    case 'attrs': {
      if (v === false || v === null || v === undefined) return '';
      const text = attrsText(v);
      if (text === null) throw new TypeError('html: only attrs() may stand between the attributes of a tag');
      return text;
    }
    case 'raw': {
      if (!isSafe(v) || !isRawText(v)) throw new TypeError(`html: the content of <${hole.tag}> must be a trustedLiteral or jsonData`);
      const text = textOf(v);
      if (text.toLowerCase().includes(`</${hole.tag}`) || text.includes('<!--'))
        throw new TypeError(`html: <${hole.tag}> content must not contain </${hole.tag} or <!--`);
      return text;
    }
    case 'refused':
      throw new TypeError(`html: ${hole.why} cannot be escaped safely`);
  }
}

/** The page template: ``html`<p>${text}</p>` `` escapes `text`; nested html`` passes through. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  const holes = holesOf(strings);
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += render(values[i], holes[i] as Hole) + (strings[i + 1] as string);
  return mint(out, false);
}

/**
 * THE escape hatch: a template literal written in this repository (fixed CSS, a fixed
 * script), taken as is. It accepts no substitutions, so no runtime value can pass through.
 */
export function trustedLiteral(strings: TemplateStringsArray, ...none: never[]): SafeHtml {
  if (none.length > 0 || !Object.isFrozen(strings) || !Array.isArray((strings as { raw?: unknown }).raw) || strings.length !== 1)
    throw new TypeError('trustedLiteral takes a template literal without substitutions');
  return mint(strings[0] as string, true);
}

/**
 * A value as JSON that may stand inside a <script> element (a data block or a script):
 * `<`, `>`, `&` and the JavaScript line separators are \u-escaped, so it cannot end the element.
 */
export function jsonData(value: unknown): SafeHtml {
  const json = JSON.stringify(value) ?? 'null';
  return mint(
    json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    true,
  );
}

/** Attribute names attrs() writes: no event handlers, styles or other script-bearing ones. */
const ATTR_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Attributes for a tag, each escaped (URL ones scheme-checked): ``html`<input ${attrs({ name, required: true })}>` ``.
 * `true` writes a bare attribute; `false`, `null` and `undefined` leave it out.
 */
export function attrs(record: Readonly<Record<string, string | number | boolean | null | undefined>>): Attrs {
  const out: string[] = [];
  for (const [name, value] of Object.entries(record)) {
    if (!ATTR_NAME.test(name) || refusedAttr(name)) throw new TypeError(`attrs: "${name}" is not an attribute a page may set from a value`);
    if (value === false || value === null || value === undefined) continue;
    out.push(value === true ? name : `${name}="${escapeHtml(URL_ATTRS.has(name) ? safeUrl(String(value)) : String(value))}"`);
  }
  return mintAttrs(out.join(' '));
}

/** A hidden form field. */
export function hidden(name: string, value: string): SafeHtml {
  return html`<input type="hidden" name="${name}" value="${value}">`;
}
