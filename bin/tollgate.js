#!/usr/bin/env node
// Runs the CLI as built by `npm ci` (the prepare script) or `npm run build`: the bundle
// (dist/bundle/, a few dozen modules to load instead of ~2,300: docs/decisions/0101), or the
// compiled modules (dist/) when they are newer than the bundle (a `tsc -p tsconfig.build.json`
// on its own); from a source checkout without a build it runs the TypeScript through tsx.
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundled = join(root, 'dist', 'bundle', 'cli', 'run.js');
const built = join(root, 'dist', 'cli', 'run.js');
const mtime = (p) => statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? -1;
if (existsSync(bundled) && mtime(bundled) >= mtime(built)) {
  // Stack traces name the sources' files and lines, not the bundle's.
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundled).href);
} else if (existsSync(built)) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(root, 'src', 'cli', 'run.ts')).href);
}
