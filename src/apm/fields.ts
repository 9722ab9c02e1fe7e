// The fields an alternative method needs besides those of every payment (docs/contract.md §15),
// checked from its catalogue row: the first field missing or wrong is named in a 400
// (`0400:Invalid input`). Pure; no value of a document is ever repeated in a message.

import type { Refused } from '../core/outcomes.js';
import type { ApmMethod, FieldRule } from '../processors/apm.js';
import { invalid } from '../web/errors.js';
import { BRAZILIAN_STATES, brazilianDocument, isBrazilianPostalCode } from './documents.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Looked = { found: true; value: unknown } | { found: false } | { error: Refused };

/** The value at `a.b` in the body; a parent that is not an object of fields is itself the fault. */
function lookUp(body: Record<string, unknown>, path: string): Looked {
  const parts = path.split('.');
  let here: unknown = body;
  for (let i = 0; i < parts.length; i++) {
    const key = parts[i] as string;
    if (here === undefined || here === null || here === '') return { found: false };
    if (typeof here !== 'object' || Array.isArray(here)) return { error: invalid(parts.slice(0, i).join('.'), 'must be an object of fields') };
    here = Object.hasOwn(here, key) ? (here as Record<string, unknown>)[key] : undefined;
  }
  return here === undefined || here === null || here === '' ? { found: false } : { found: true, value: here };
}

/** What is wrong with a present value under its rule, or null. */
export function ruleProblem(rule: FieldRule, value: string): string | null {
  switch (rule.kind) {
    case 'text':
      return value.trim() === '' ? 'must not be blank' : value.length > rule.max_length ? `must be at most ${rule.max_length} characters long` : null;
    case 'email':
      return value.length <= 254 && EMAIL.test(value) ? null : 'must be an e-mail address';
    case 'br_document':
      return brazilianDocument(value)
        ? null
        : 'must be a CPF (NNN.NNN.NNN-NN or 11 digits) or a CNPJ (NN.NNN.NNN/NNNN-NN or 14 characters) with valid check digits';
    case 'br_postal_code':
      return isBrazilianPostalCode(value) ? null : 'must be a CEP of 8 digits, such as 01310-100';
    case 'br_state':
      return BRAZILIAN_STATES.includes(value) ? null : 'must be a Brazilian state abbreviation in capitals, such as SP';
    case 'country':
      return value === rule.equals ? null : `must be "${rule.equals}"`;
    case 'one_of':
      return rule.values.includes(value) ? null : `must be a code from ${rule.list_name}: ${rule.values.join(', ')}`;
  }
}

/**
 * The first of the method's required fields that is missing or invalid, as the 400 that
 * names it; null when all are fine. `body` is the request as parsed (any shape).
 */
export function checkApmFields(method: ApmMethod, body: Record<string, unknown>): Refused | null {
  for (const { path, rule } of method.required) {
    const looked = lookUp(body, path);
    if ('error' in looked) return looked.error;
    if (!looked.found) return invalid(path, `is required for ${method.payment_method}`);
    if (typeof looked.value !== 'string') return invalid(path, 'must be a string');
    const problem = ruleProblem(rule, looked.value);
    if (problem) return invalid(path, problem);
  }
  return null;
}
