// The platform family's published error codes, as its official Node library lists them (the
// `stripe` package's types: `PaymentIntent.LastPaymentError.Code`, the same list as the
// family's error-codes page). The generic interface's `error.code` is held to it
// (docs/contract.md §24; issue 33): src/generic/codes.test.ts over the source, the generic
// fuzz over every answer.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// src/test or dist-test/test: either way two folders below the repository.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let cached: ReadonlySet<string> | null = null;

export function publishedErrorCodes(): ReadonlySet<string> {
  if (cached) return cached;
  const text = fs.readFileSync(path.join(ROOT, 'node_modules/stripe/esm/resources/PaymentIntents.d.ts'), 'utf8');
  const m = /namespace LastPaymentError \{\s*type Code = ([^;]+);/.exec(text);
  if (!m?.[1]) throw new Error('the stripe package no longer lists PaymentIntent.LastPaymentError.Code where this reads it');
  const codes = new Set([...m[1].matchAll(/'([a-z0-9_]+)'/g)].map((x) => x[1] as string));
  if (codes.size < 100) throw new Error(`only ${codes.size} codes read from the stripe package's types`);
  cached = codes;
  return codes;
}
