// The folder layering (issue 30 item 5): interfaces above the core, the core above storage and
// processors, and no import circle between the top-level folders of src/ — type-only imports,
// re-exports and dynamic imports count too, since they tie the folders together just the same.
// This test reads every non-test source file, builds the graph "folder A imports a file of
// folder B", and checks that no folder is in a circle, that the bottom (foundation, storage,
// processors) imports nothing above it, and that nothing below imports the interfaces.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// This file runs as src/layout.test.ts (tsx) or dist-test/layout.test.js (compiled): either way
// its folder's parent is the repository.
const SRC = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'src');

/**
 * The bottom: values, crypto, settings and the rules every capability shares (core, money, cards,
 * config, crypto), then storage and the processors (db, processors). They import only each other.
 */
const BOTTOM = ['cards', 'config', 'core', 'crypto', 'db', 'money', 'processors'];
/** The interfaces' assembly: the HTTP app with its route lists (http) and the operator's tool (cli). Only they import them. */
const TOP = ['cli', 'http'];

/** Every non-test .ts file under src/, but src/test (the harness imports whatever it tests). */
function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'test') sourceFiles(p, out);
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** The top-level folder of src/ a file is in; files directly in src/ are "(root)". */
function folderOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length > 1 ? parts[0]! : '(root)';
}

/**
 * Relative module specifiers of a file: `import … from`, `import type … from`, `export … from`,
 * side-effect `import '…'` and dynamic `import('…')`. Packages (no leading dot) are not folders.
 */
function relativeSpecifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)) out.push(m[1]!);
  for (const m of source.matchAll(/(?:^|[\s;])import\s*\(?\s*'(\.[^']+)'/g)) out.push(m[1]!);
  return out;
}

type Graph = Map<string, Set<string>>;

function folderGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const spec of relativeSpecifiers(fs.readFileSync(file, 'utf8'))) {
      const to = folderOf(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      if (to === from) continue;
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Folders in a strongly connected component of more than one folder (Tarjan), sorted. */
function foldersInACircle(graph: Graph): string[] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const inCircle: string[] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) inCircle.push(...component);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return inCircle.sort();
}

const ADVICE =
  'A folder joined an import circle: point the import down (move the type or helper to the lower folder, as src/db/tables/ and src/web/ were made).';

test('no folder of src/ is in an import circle', () => {
  const graph = folderGraph();
  assert.ok(graph.size > 20, `read ${graph.size} folders under ${SRC}`);
  assert.deepEqual(foldersInACircle(graph), [], ADVICE);
});

test('the bottom imports nothing above it, and only the interfaces import the interfaces', () => {
  const graph = folderGraph();
  for (const folder of BOTTOM) assert.ok(graph.has(folder), `src/${folder} exists`);
  const upward: string[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      if (BOTTOM.includes(from) && !BOTTOM.includes(to)) upward.push(`${from} -> ${to}`);
      if (TOP.includes(to) && !TOP.includes(from)) upward.push(`${from} -> ${to}`);
    }
  }
  assert.deepEqual(upward, [], 'an import points up a layer');
});

test('the circle finder finds a circle, and only folders in one', () => {
  const graph: Graph = new Map([
    ['a', new Set(['b'])],
    ['b', new Set(['c'])],
    ['c', new Set(['a', 'd'])],
    ['d', new Set<string>()],
  ]);
  assert.deepEqual(foldersInACircle(graph), ['a', 'b', 'c']);
  graph.get('c')!.delete('a');
  assert.deepEqual(foldersInACircle(graph), []);
});
