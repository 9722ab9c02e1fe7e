// The bench's own child processes (the deductions' seed and run, the settlement batch, the
// reconciliation) start from one bundle made at the start of the run (scripts/bundle.mjs,
// against the compiled dist/), not through tsx: tsx compiled and loaded ~2,300 modules in each,
// 5–10 s a process (issue 36 item 9: the quick bench's deductions step 59 s → 8 s, the whole
// quick run 225 s → 149 s). A step run on its own (`node --import tsx bench/deductions.ts`), or
// a failed bundle, uses tsx as before.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../src/test/process.js';

const CHILDREN = ['deductions-child.ts', 'settlement.ts', 'reconcile.ts'];
const OUT = path.join(ROOT, '.tmp', 'bench-bundle');
let bundled = false;

/** Bundles the child scripts once (3 s on a quiet machine, 12 s on a busy one); says so, or why they will run through tsx. */
export function bundleChildren(log: (line: string) => void): void {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts/bundle.mjs'), '--out', OUT, '--twin', 'dist', ...CHILDREN.map((c) => path.join('bench', c))],
    { cwd: ROOT, encoding: 'utf8' },
  );
  bundled = r.status === 0;
  log(
    bundled
      ? `  ${r.stdout.trim()}`
      : `  the child scripts run through tsx (bundle failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' | ')})`,
  );
}

/** The node arguments that run `bench/<script>`: its bundle when this run made one, else the source through tsx. */
export function childArgs(script: string): string[] {
  if (bundled && CHILDREN.includes(script)) return [path.join(OUT, 'bench', script.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', path.join(ROOT, 'bench', script)];
}
