// Every `error.code` the generic interface can answer is one of the platform family's published
// codes (docs/contract.md §24; issue 33: `parameter_invalid`, `api_key_invalid`,
// `payment_unexpected_state` and `body_too_large` were not): read from the source of every
// file that builds its errors, so a new refusal with an invented code fails here before any
// merchant sees it. The generic fuzz checks the answers themselves.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { publishedErrorCodes } from '../test/published-codes.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** The files that answer in the generic shape: the generic interface, connected accounts and transfers, the app's refusals. */
function generic(): string[] {
  const out: string[] = [];
  for (const dir of ['generic', 'connect']) {
    for (const f of fs.readdirSync(path.join(SRC, dir))) if (f.endsWith('.ts') && !f.endsWith('.test.ts')) out.push(path.join(SRC, dir, f));
  }
  out.push(path.join(SRC, 'http', 'app.ts'));
  return out;
}

test('every error code the generic interface writes is a published one', () => {
  const published = publishedErrorCodes();
  const seen = new Map<string, string>();
  for (const file of generic()) {
    const text = fs.readFileSync(file, 'utf8');
    // `code: 'x'` and a code passed to invalidParam(…, 'x'); decline codes are another list.
    for (const m of text.matchAll(/(?<![a-z_])code: '([a-z][a-z0-9_]+)'/g)) seen.set(m[1] as string, path.relative(SRC, file));
    for (const m of text.matchAll(/invalidParam\([^;]*?,\s*'([a-z][a-z0-9_]+)',?\s*\)/g)) seen.set(m[1] as string, path.relative(SRC, file));
  }
  assert.ok(seen.size >= 8, `only ${seen.size} codes found: the scan no longer reads the files`);
  const invented = [...seen].filter(([code]) => !published.has(code)).map(([code, file]) => `${code} (${file})`);
  assert.deepEqual(invented, [], 'codes outside the published list');
});
