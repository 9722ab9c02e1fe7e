// Holds an object the generic interface answers against the platform family's example of it
// (docs/contract.md §24; issue 33 item 7): every member of the example is present with the
// same JSON type, or null where the family's document allows null, or named in `notOffered`
// (each listed in docs/interface.md, "What is not offered"). Nested objects are held the same
// way, a null inside them allowed. Members of ours the example lacks are fine.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Reference {
  example: Record<string, unknown>;
  nullable: string[];
}

let objects: Record<string, Reference> | null = null;

function reference(kind: string): Reference {
  objects ??= (JSON.parse(fs.readFileSync(path.join(ROOT, 'src/generic/vendor/objects.trimmed.json'), 'utf8')) as { objects: Record<string, Reference> })
    .objects;
  const r = objects[kind];
  if (!r) throw new Error(`no example ${kind} in src/generic/vendor/objects.trimmed.json (add it to trim.mjs)`);
  return r;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** What differs from the example, one line each; empty when the object conforms. */
export function shapeProblems(kind: string, ours: Record<string, unknown>, notOffered: readonly string[] = []): string[] {
  const { example, nullable } = reference(kind);
  const problems: string[] = [];
  const walk = (ex: Record<string, unknown>, mine: Record<string, unknown>, at: string, top: boolean) => {
    for (const [k, want] of Object.entries(ex)) {
      const name = at ? `${at}.${k}` : k;
      if (notOffered.includes(name)) continue;
      if (!(k in mine)) {
        problems.push(`${kind}.${name} is missing`);
        continue;
      }
      const got = mine[k];
      if (got === null) {
        if (want !== null && top && !nullable.includes(k)) problems.push(`${kind}.${name} is null; the family's document does not allow null`);
        continue;
      }
      if (want === null) continue; // the example shows no value: any type may stand here
      if (typeOf(got) !== typeOf(want)) {
        problems.push(`${kind}.${name} is ${typeOf(got)}, the example's is ${typeOf(want)}`);
        continue;
      }
      // metadata is the merchant's own keys: its type only.
      if (typeOf(want) === 'object' && k !== 'metadata') walk(want as Record<string, unknown>, got as Record<string, unknown>, name, false);
    }
  };
  walk(example, ours, '', true);
  return problems;
}
