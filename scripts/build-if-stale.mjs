#!/usr/bin/env node
// `npm start`'s prestart and npm's prepare: compiles src to dist and bundles the CLI and server
// (`npm run build`: tsc, then scripts/bundle.mjs --shipped) only when a source is newer than the build, so a start after `npm ci` (which builds) or after `npm test` costs nothing,
// and neither a start nor an `npx tollgate` (npx installs the project as a linked package,
// which runs prepare) rewrites dist under a process that is running it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const built = 'dist/bundle/cli/run.js';

function newest(dir) {
  let max = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const s = statSync(p);
    if (s.isDirectory()) max = Math.max(max, newest(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) max = Math.max(max, s.mtimeMs);
  }
  return max;
}

const sources = Math.max(newest('src'), ...['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.mjs'].map((f) => statSync(f).mtimeMs));
if (existsSync(built) && statSync(built).mtimeMs >= sources) process.exit(0);
console.log('building (sources changed since the last build)…');
for (const args of [
  ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
  ['scripts/bundle.mjs', '--shipped'],
]) {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
