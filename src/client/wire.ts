// The client's lower-level pieces: signing (docs/contract.md §2), encoding a body as JSON, form or
// XML (docs/contract.md §1), and reading answers back exactly as the gateway signed them. Exported
// so tests, the bench and the fuzz run build raw and hostile requests with the same code.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { asXmlReadBack, canonicalString, sign, verify } from '../crypto/signature.js';
import type { AuthoriseAnswer, RiskReason } from './types.js';

export { canonicalString, sign };

export type BodyFormat = 'json' | 'form' | 'xml';

/**
 * The body with its `encryption_data` (any `encryption_data` already in it is replaced), for
 * the shape it will be sent in: the gateway checks the signature on the body as it reads it,
 * and an XML body reads back with a one-item list as a single element, numbers as text.
 */
export function signBody<T extends Record<string, unknown>>(body: T, secret: string, format: BodyFormat = 'json'): T & { encryption_data: string } {
  const { encryption_data: _replaced, ...fields } = body;
  const read = format === 'xml' ? (asXmlReadBack(fields) as Record<string, unknown>) : fields;
  return { ...body, encryption_data: sign(read, secret) };
}

/** True when `encryption_data` of `signed` matches its other fields under one of `secrets` (constant time). */
export function verifySignature(signed: Record<string, unknown>, secrets: readonly string[]): boolean {
  return verify(signed, signed.encryption_data, secrets);
}

function toForm(value: unknown, prefix: string, out: string[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value))
    value.forEach((v, i) => {
      toForm(v, `${prefix}[${i}]`, out);
    });
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) toForm(v, prefix ? `${prefix}[${k}]` : k, out);
  else out.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(value))}`);
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function toXmlElement(value: unknown, name: string): string {
  if (Array.isArray(value)) return value.map((v) => toXmlElement(v, name)).join('');
  if (value !== null && typeof value === 'object')
    return `<${name}>${Object.entries(value)
      .map(([k, v]) => toXmlElement(v, k))
      .join('')}</${name}>`;
  return `<${name}>${escapeXml(String(value ?? ''))}</${name}>`;
}

/**
 * A body as the gateway accepts it: JSON, form-urlencoded in bracket notation
 * (`capture_orders[0][amount]=10.00`), or XML with root `request` (arrays as repeated
 * elements). Form encoding throws URIError on a lone surrogate, as encodeURIComponent does.
 */
export function encodeBody(body: Record<string, unknown>, format: BodyFormat = 'json'): { payload: string; contentType: string } {
  if (format === 'json') return { payload: JSON.stringify(body), contentType: 'application/json' };
  if (format === 'xml') return { payload: `<?xml version="1.0"?>${toXmlElement(body, 'request')}`, contentType: 'application/xml' };
  const parts: string[] = [];
  toForm(body, '', parts);
  return { payload: parts.join('&'), contentType: 'application/x-www-form-urlencoded' };
}

// ---------- reading answers ----------

const MAX_DEPTH = 32;

// Values untrimmed and unconverted: the gateway signs the text as it wrote it.
const xmlParser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  htmlEntities: false,
});

export class AnswerFormatError extends Error {
  override name = 'AnswerFormatError';
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The five predefined entities and numeric references; nothing that expands. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]{2,4});/g, (whole, name: string) => {
    const cp = name.startsWith('#x') ? Number.parseInt(name.slice(2), 16) : name.startsWith('#') ? Number.parseInt(name.slice(1), 10) : -1;
    if (cp === -1) return PREDEFINED[name] ?? whole;
    return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

function readBack(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new AnswerFormatError(`the XML answer is nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return decodeEntities(value);
  if (Array.isArray(value)) return value.map((v) => readBack(v, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value as Record<string, unknown>);
    for (const [k, v] of entries) if (k !== '#text') out[k] = readBack(v, depth + 1);
    // An element with text only (and nothing else) reads as its text; whitespace between
    // child elements is not a value.
    const text = (value as Record<string, unknown>)['#text'];
    if (entries.length === 1 && text !== undefined) return decodeEntities(String(text));
    return out;
  }
  return String(value);
}

/**
 * Reads an XML answer (root `respon`) as a merchant reads it back, which is also what its
 * `encryption_data` signs (docs/contract.md §2): an element with children is an object, one that
 * occurs once is a member, several times an array, an empty element `''`. No DTD, no
 * entity expansion.
 */
export function parseXmlAnswer(text: string): Record<string, unknown> {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new AnswerFormatError('the XML answer has a DOCTYPE or ENTITY declaration');
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new AnswerFormatError(`malformed XML answer at line ${valid.err.line}: ${valid.err.msg}`);
  const doc = xmlParser.parse(text) as Record<string, unknown>;
  const roots = Object.keys(doc).filter((k) => !k.startsWith('?') && k !== '#text');
  if (roots.length !== 1) throw new AnswerFormatError('the XML answer must have exactly one root element');
  const root = readBack(doc[roots[0] as string], 0);
  if (root === '') return {};
  if (typeof root !== 'object' || Array.isArray(root)) throw new AnswerFormatError('the XML answer root holds no fields');
  return root as Record<string, unknown>;
}

/** Reads an answer body by its shape (`<` XML, `{` JSON), whatever its Content-Type says. */
export function parseAnswer(text: string): Record<string, unknown> {
  const first = text.trimStart()[0];
  if (first === '<') return parseXmlAnswer(text);
  if (first === '{') {
    const v = JSON.parse(text) as unknown;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  }
  throw new AnswerFormatError(`the answer is neither a JSON object nor XML: ${JSON.stringify(text.slice(0, 120))}`);
}

// ---------- result helpers ----------

/**
 * The result code of `<code>:<text>` (`1002` of `1002:Card declined`), of an answer's
 * `result_info`, or of a batch item's `error_message` / `refund_message`. Empty when there
 * is none (a successful capture item has an empty `error_message`).
 */
export function resultCode(x: string | { result_info: string } | { error_message: string } | { refund_message: string } | { return_message: string }): string {
  const texts = typeof x === 'string' ? [x] : RESULT_FIELDS.map((f) => (x as Record<string, unknown>)[f]);
  for (const text of texts) {
    const code = typeof text === 'string' ? /^(\d{4}):/.exec(text)?.[1] : undefined;
    if (code) return code;
  }
  return '';
}

const RESULT_FIELDS = ['result_info', 'refund_message', 'error_message', 'return_message'] as const;

/** `risk_reasons` of a direct answer as a list (one element reads back as an object, none as ''). */
export function riskReasons(answer: Pick<AuthoriseAnswer, 'risk_reasons'>): RiskReason[] {
  const r = answer.risk_reasons;
  if (!r) return [];
  return Array.isArray(r) ? r : [r];
}
