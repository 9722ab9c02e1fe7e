// Body parsing (docs/contract.md §1): the body's own shape decides, not Content-Type. A JSON-shaped
// body sent as form-urlencoded (as the spec's samples do) is read as JSON.
import qs from 'qs';
import { parseXmlBody, XmlInputError } from './xml.js';

/** Form bodies: bracket levels, fields and list items at most (larger is refused, never cut). */
export const FORM_DEPTH = 8;
export const FORM_FIELDS = 5000;
export const FORM_LIST_ITEMS = 200;

export type BodyFormat = 'json' | 'form' | 'xml' | 'empty';

export interface ParsedBody {
  format: BodyFormat;
  value: Record<string, unknown>;
}

export class BodyParseError extends Error {}

const MAX_JSON_DEPTH = 32;

function depthOf(value: unknown, depth: number): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (value === null || typeof value !== 'object') return depth;
  let max = depth;
  for (const v of Object.values(value as Record<string, unknown>)) {
    max = Math.max(max, depthOf(v, depth + 1));
    if (max > MAX_JSON_DEPTH) break;
  }
  return max;
}

/** The path of the first string holding a NUL character, or null (PostgreSQL text cannot hold one). */
function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : null;
  if (value === null || typeof value !== 'object' || depth > MAX_JSON_DEPTH) return null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k.includes('\u0000')) return path ? `${path}.<key>` : '<key>';
    const found = findNul(v, Array.isArray(value) ? `${path}[${k}]` : path ? `${path}.${k}` : k, depth + 1);
    if (found) return found;
  }
  return null;
}

export function parseBody(text: string): ParsedBody {
  const parsed = parseShape(text);
  // Cheap test first: a NUL arrives raw, JSON-escaped, percent-encoded or as an XML reference.
  if (text.includes('\u0000') || /\\u0000|%00|&#0+;|&#x0+;/i.test(text)) {
    const at = findNul(parsed.value, '');
    if (at) throw new BodyParseError(`${at} holds a NUL character, which no field accepts`);
  }
  return parsed;
}

function parseShape(text: string): ParsedBody {
  const trimmed = text.trim();
  if (trimmed === '') return { format: 'empty', value: {} };
  const first = trimmed[0];
  if (first === '{' || first === '[') {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      // V8's message quotes the text around the error, which may be card data: give only where.
      const message = (e as Error).message;
      const at = /position (\d+)/.exec(message);
      const where = at ? `at position ${at[1]}` : /end of JSON/i.test(message) ? '(the body ends too early)' : '(an unexpected token)';
      throw new BodyParseError(`malformed JSON ${where}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new BodyParseError('the JSON body must be an object');
    }
    if (depthOf(value, 0) > MAX_JSON_DEPTH) throw new BodyParseError(`JSON is nested deeper than ${MAX_JSON_DEPTH} levels`);
    return { format: 'json', value: value as Record<string, unknown> };
  }
  if (first === '<') {
    try {
      return { format: 'xml', value: parseXmlBody(trimmed) };
    } catch (e) {
      if (e instanceof XmlInputError) throw new BodyParseError(e.message);
      throw new BodyParseError('malformed XML');
    }
  }
  // Bracket notation: capture_orders[0][amount]=10.00 (limits: FORM_DEPTH, FORM_FIELDS, FORM_LIST_ITEMS)
  if (!/^[^=&]+=/.test(trimmed)) throw new BodyParseError('the body is neither JSON, XML nor form-urlencoded');
  let value: Record<string, unknown>;
  try {
    value = qs.parse(trimmed, {
      depth: FORM_DEPTH,
      arrayLimit: FORM_LIST_ITEMS,
      parameterLimit: FORM_FIELDS,
      allowPrototypes: false,
      plainObjects: true,
      strictDepth: true,
      throwOnLimitExceeded: true,
      charset: 'utf-8',
    }) as Record<string, unknown>;
  } catch (e) {
    // qs's own wording names its options; say the rule instead (and never quote the body).
    const message = (e as Error).message;
    if (/depth/i.test(message)) throw new BodyParseError(`the form body nests more than ${FORM_DEPTH} levels of brackets`);
    if (/parameter limit/i.test(message)) throw new BodyParseError(`the form body has more than ${FORM_FIELDS} fields`);
    if (/array limit/i.test(message)) throw new BodyParseError(`a list in the form body has more than ${FORM_LIST_ITEMS} items`);
    throw new BodyParseError('malformed form body');
  }
  return { format: 'form', value };
}
