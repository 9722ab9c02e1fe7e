// XML in and out (docs/contract.md §1). Requests: any root element, child elements are fields,
// repeated siblings form an array. No DTD, no entities, no external resources.
import { XMLParser, XMLValidator } from 'fast-xml-parser';

const MAX_DEPTH = 32;

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  htmlEntities: false,
});

export class XmlInputError extends Error {}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Only the five predefined entities and numeric references, nothing that expands. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]{2,4});/g, (whole, name: string) => {
    if (name.startsWith('#x')) return safeCodePoint(Number.parseInt(name.slice(2), 16), whole);
    if (name.startsWith('#')) return safeCodePoint(Number.parseInt(name.slice(1), 10), whole);
    return PREDEFINED[name] ?? whole;
  });
}

function safeCodePoint(cp: number, fallback: string): string {
  return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : fallback;
}

function normalise(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new XmlInputError(`XML is nested deeper than ${MAX_DEPTH} levels`);
  if (typeof value === 'string') return decodeEntities(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => normalise(v, depth + 1));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === '#text') continue; // mixed content: text beside child elements is ignored
      out[k] = normalise(v, depth + 1);
    }
    // An element with only text and ignored parts reads as its text.
    const text = (value as Record<string, unknown>)['#text'];
    if (Object.keys(out).length === 0 && text !== undefined) return decodeEntities(String(text));
    return out;
  }
  return String(value);
}

/** Parses an XML request body into a plain object of its root element's children. */
export function parseXmlBody(text: string): Record<string, unknown> {
  // Hostile XML (billion laughs, XXE) needs a DTD; refuse any.
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) {
    throw new XmlInputError('XML with a DOCTYPE or ENTITY declaration is not accepted');
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw new XmlInputError(`malformed XML at line ${valid.err.line}: ${valid.err.msg}`);
  }
  const doc = parser.parse(text) as Record<string, unknown>;
  const roots = Object.keys(doc).filter((k) => !k.startsWith('?'));
  if (roots.length !== 1) throw new XmlInputError('XML must have exactly one root element');
  const root = doc[roots[0] as string];
  if (root === '' || root === undefined) return {};
  if (typeof root !== 'object' || Array.isArray(root)) throw new XmlInputError('the XML root element must contain fields');
  return normalise(root, 0) as Record<string, unknown>;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : c === '"' ? '&quot;' : '&apos;'));
}

function writeElement(name: string, value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`<${name}/>`);
    for (const v of value) writeElement(name, v, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    out.push(`<${name}>`);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) writeElement(k, v, out);
    out.push(`</${name}>`);
    return;
  }
  const text = value === null || value === undefined ? '' : String(value);
  out.push(text === '' ? `<${name}/>` : `<${name}>${escapeXml(text)}</${name}>`);
}

/** Serialises a record as `<?xml …?><root>…</root>`. Arrays become repeated elements. */
export function toXml(root: string, record: Record<string, unknown>): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  writeElement(root, record, out);
  return out.join('');
}
