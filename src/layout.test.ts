// The folder layering (issue 30 item 5): interfaces above the core, the core above storage and
// processors, and no import circle between the top-level folders of src/ — type-only imports and
// re-exports count too, since they tie the folders together just the same. This test reads every
// non-test source file, builds the graph "folder A imports a file of folder B" and finds the
// folders that sit in a circle (a strongly connected component of more than one folder).
//
// A RATCHET: the lists below are the circles that are still there. They may only shrink; the goal
// is that both are empty. A folder that joins a circle fails the test, and so does a folder that
// leaves one until it is taken off the list (so the list never hides a regression).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// This file runs as src/layout.test.ts (tsx) or dist-test/layout.test.js (compiled): either way
// its folder's parent is the repository.
const SRC = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'src');

/**
 * Folders in a circle today. Every one of them is there only through src/cli: each
 * capability's `cli.ts` imports `src/cli/registry.ts` while `src/cli/commands.ts` and
 * `background.ts` import every capability, and nearly everything imports one of those
 * capabilities. Once nothing outside src/cli imports src/cli (the registry moved below the
 * capabilities, and `background.ts`'s helpers that notifications and the test clock use), this
 * list is empty, like the next one.
 */
const IN_A_CIRCLE = [
  '(root)',
  'apikeys',
  'apm',
  'authorise',
  'checkout',
  'cli',
  'connect',
  'fx',
  'generic',
  'http',
  'idempotency',
  'ledger',
  'merchants',
  'methods',
  'notifications',
  'pages',
  'payments',
  'payouts',
  'portal',
  'refunds',
  'review',
  'risk',
  'scheduler',
  'subscriptions',
  'threeds',
  'web',
];

/** Folders in a circle when src/cli's own imports, and the imports of src/cli, are left out: none. */
const IN_A_CIRCLE_WITHOUT_CLI: string[] = [];

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

function folderGraph(leaveOut?: string): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const spec of relativeSpecifiers(fs.readFileSync(file, 'utf8'))) {
      const to = folderOf(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      if (to === from || from === leaveOut || to === leaveOut) continue;
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
  'A folder joined an import circle: point the import down (move the type or helper to the lower folder), ' +
  'or, if a folder left one, take it off the list in src/layout.test.ts (the list only shrinks).';

test('the folders of src/ in an import circle are exactly the ones still listed (a ratchet towards none)', () => {
  const graph = folderGraph();
  assert.ok(graph.size > 20, `read ${graph.size} folders under ${SRC}`);
  assert.deepEqual(foldersInACircle(graph), [...IN_A_CIRCLE].sort(), ADVICE);
});

test('leaving src/cli out, the folders in an import circle are exactly the ones still listed', () => {
  assert.deepEqual(foldersInACircle(folderGraph('cli')), [...IN_A_CIRCLE_WITHOUT_CLI].sort(), ADVICE);
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
