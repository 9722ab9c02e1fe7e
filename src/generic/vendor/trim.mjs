#!/usr/bin/env node
// Writes the trimmed copy of the platform family's example objects and of which of their
// members may be null, that the generic interface's shape tests read (src/test/platform-shapes.ts;
// docs/contract.md §24, issue 33 item 7), so a fresh clone tests without ../shared.
//   node src/generic/vendor/trim.mjs [folder of the full documents]
// Default folder: ../shared/vendor/stripe beside the repository (stripe/openapi, MIT, LICENSE
// here): `fixtures3.json` (2026-08) gives the examples verbatim, `spec3.json` (2022-04-12) the
// `nullable` members. Then `npx biome check --write src/generic/vendor` formats the copy.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const here = import.meta.dirname;
const from = process.argv[2] ?? path.resolve(here, '../../../../shared/vendor/stripe');

/** The objects the generic interface answers. */
const OBJECTS = [
  'account',
  'balance',
  'charge',
  'customer',
  'deleted_customer',
  'dispute',
  'event',
  'payment_intent',
  'payment_method',
  'transfer',
  'transfer_reversal',
  'refund',
  'webhook_endpoint',
];

const fixtures = JSON.parse(readFileSync(path.join(from, 'fixtures3.json'), 'utf8')).resources;
const schemas = JSON.parse(readFileSync(path.join(from, 'spec3.json'), 'utf8')).components.schemas;
const out = { source: 'stripe/openapi fixtures3.json (2026-08) and spec3.json (2022-04-12), MIT', objects: {} };
for (const name of OBJECTS) {
  const example = fixtures[name];
  if (!example) throw new Error(`no example ${name} in fixtures3.json`);
  const props = schemas[name]?.properties ?? {};
  const nullable = Object.keys(props)
    .filter((k) => props[k].nullable === true)
    .sort();
  out.objects[name] = { example, nullable };
}
writeFileSync(path.join(here, 'objects.trimmed.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(`wrote ${OBJECTS.length} objects to ${path.join(here, 'objects.trimmed.json')}`);
