#!/usr/bin/env node
// `npm test`: lint and format check, one TypeScript compile (the typecheck, the build the CLI
// runs, and the compiled tests), then every test file on SQLite and on PostgreSQL and the
// browser tests on both, as one pool of processes: the longest files first, as many at once
// as the machine has cores plus two (files wait on their databases, timers and child processes:
// with 3 on 2 cores the CPU was 138% busy, with 4 154%, 1,294 s → 1,097 s), at most one
// Chromium at a time. Without PostgreSQL or Chromium those parts are skipped and named; with
// CI=true nothing may be skipped.
//
//   node scripts/test.mjs [substring…]   only the files whose path contains one of them
//   TOLLGATE_TEST_JOBS=N                  processes at once (default: cores + 2)
//   TOLLGATE_TEST_TSX=1                   run the sources through tsx instead of the compiled tests
//   TOLLGATE_TEST_BUNDLE=0                run the compiled tests unbundled (dist-test/, not dist-bundle/)
//   TOLLGATE_TEST_VERBOSE=1               print every file's output, not only a failing one's
//   --record-times                        write this run's durations to scripts/test-times.json
//
// Test databases live on tmpfs (/dev/shm) where the machine has one: durability is what the
// crash and fault runs test, not the suite. Every file's temporary files go under one folder
// of this run, removed at the end.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const CI = process.env.CI === 'true' || process.env.CI === '1';
const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CHROMIUM = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium';
const TSX = process.env.TOLLGATE_TEST_TSX === '1';
/** Test files run from dist-bundle/ (scripts/bundle.mjs) unless TOLLGATE_TEST_BUNDLE=0 (then from dist-test/). */
const BUNDLE = !TSX && process.env.TOLLGATE_TEST_BUNDLE !== '0';
const VERBOSE = process.env.TOLLGATE_TEST_VERBOSE === '1';
const JOBS = Math.max(1, Number(process.env.TOLLGATE_TEST_JOBS) || os.availableParallelism() + 2);
/** A file still running after this long is killed and counted as failed. */
const FILE_TIMEOUT_MS = 20 * 60_000;
const TIMES_FILE = path.join(ROOT, 'scripts', 'test-times.json');
const argv = process.argv.slice(2);
const RECORD = argv.includes('--record-times');
const only = argv.filter((a) => !a.startsWith('--'));

const started = Date.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function files(dir, suffix, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) files(p, suffix, out);
    else if (name.endsWith(suffix)) out.push(path.relative(ROOT, p));
  }
  return out.sort();
}

function reachable(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || 5432) });
    s.setTimeout(1500);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(false));
  });
}

/** Runs a command to its end, its output captured; resolves with the status and the output. */
function capture(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr.on('data', (d) => chunks.push(d));
    const timer = opts.timeout_ms ? setTimeout(() => child.kill('SIGKILL'), opts.timeout_ms) : null;
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ status: code ?? 1, signal, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

const failedParts = [];
const skippedParts = [];

// 1. Lint and one compile, side by side. tsc emits even on a type error, so the suite still
//    runs and says what else is wrong; the type error fails the run.
const node = process.execPath;
const bin = (p) => path.join(ROOT, 'node_modules', p);
const prep = await Promise.all([
  only.length === 0 ? capture(node, [bin('@biomejs/biome/bin/biome'), 'check', 'src', 'scripts', 'bin', 'bench']) : null,
  // The build as shipped (`npm run build`): dist/, then the CLI and server bundled into
  // dist/bundle/ (bin/tollgate.js runs it; the CLI tests and every spawned gateway use it). The
  // test files run bundled too, the rest of the compiled tests (worker threads, scripts a test
  // runs) from dist-test/.
  capture(node, [bin('typescript/bin/tsc'), '-p', 'tsconfig.build.json']).then(async (r) => {
    if (r.status !== 0) return r;
    const b = await capture(node, [path.join(ROOT, 'scripts', 'bundle.mjs'), '--shipped']);
    return { status: b.status, output: r.output + b.output };
  }),
  TSX ? null : capture(node, [bin('typescript/bin/tsc'), '-p', 'tsconfig.test.json']),
  // The test files bundled (scripts/bundle.mjs): a few dozen modules to load per file instead of ~2,300.
  BUNDLE ? capture(node, [path.join(ROOT, 'scripts', 'bundle.mjs')]) : null,
  // bench/ runs through tsx, which does not typecheck: a refactor that breaks it shows here.
  only.length === 0 ? capture(node, [bin('typescript/bin/tsc'), '-p', 'tsconfig.bench.json']) : null,
]);
// A failed bundle fails the run; its files still run, unbundled.
const bundled = BUNDLE && prep[3]?.status === 0;
for (const [label, r] of [
  ['lint and format (biome)', prep[0]],
  ['build (npm run build: tsc -p tsconfig.build.json, scripts/bundle.mjs --shipped)', prep[1]],
  ['typecheck and compiled tests (tsc -p tsconfig.test.json)', prep[2]],
  ['typecheck of bench/ (tsc -p tsconfig.bench.json)', prep[4]],
  ['test files bundled (scripts/bundle.mjs)', prep[3]],
]) {
  if (!r) continue;
  console.log(`=== ${label}: ${r.status === 0 ? 'ok' : 'FAILED'} ===`);
  if (r.status !== 0) {
    process.stdout.write(r.output);
    failedParts.push(label);
  }
}

// 2. The jobs: every test file on each engine that is here.
const unit = files('src', '.test.ts').filter((f) => !f.endsWith('.browser.test.ts'));
const browser = files('src', '.browser.test.ts');
const select = (list) => (only.length ? list.filter((f) => only.some((o) => f.includes(o))) : list);
const pg = await reachable(PG_URL);
const chromium = existsSync(CHROMIUM);
const engines = pg ? ['sqlite', 'postgres'] : ['sqlite'];
if (!pg) skippedParts.push(`PostgreSQL suite and browser tests on PostgreSQL (no server at ${PG_URL}; set TOLLGATE_TEST_PG_URL)`);
if (!chromium && select(browser).length) skippedParts.push(`browser tests (no Chromium at ${CHROMIUM}; apt-get install -y chromium)`);

const times = existsSync(TIMES_FILE) ? JSON.parse(readFileSync(TIMES_FILE, 'utf8')) : {};
// A file whose subject no database touches (the served document, Swagger UI, the signature's
// properties) says so in its opening comment, with why, and runs on the first engine only.
const ONE_ENGINE = /^\/\/ Runs on one engine: \S/m;
const oneEngine = (file) => ONE_ENGINE.test(readFileSync(path.join(ROOT, file), 'utf8').slice(0, 4_000));
const jobs = [];
for (const engine of engines) {
  const here = (file) => engine === engines[0] || !oneEngine(file);
  for (const file of select(unit).filter(here)) jobs.push({ file, engine, browser: false });
  if (chromium) for (const file of select(browser).filter(here)) jobs.push({ file, engine, browser: true });
}
const onEngineOne = [...select(unit), ...(chromium ? select(browser) : [])].filter(oneEngine);
const key = (j) => `${j.engine} ${j.file}`;
// Longest first, so the last minutes are not one long file alone; an unknown file counts as 20 s.
const expected = (j) => times[key(j)] ?? 20_000;
jobs.sort((a, b) => expected(b) - expected(a));

// One folder for every file's temporary files (databases, browser profiles), on tmpfs if there is one.
const shm = '/dev/shm';
const tmpBase = existsSync(shm) && statSync(shm).isDirectory() ? shm : os.tmpdir();
const runTmp = mkdtempSync(path.join(tmpBase, 'tollgate-test-run-'));

// Migrated templates for this run's test gateways (src/test/templates.ts): a copy each instead of
// the migrations each. Without them (a failed make) every gateway migrates, as a file run alone does.
const templates = { sqlite: null, postgres: null };
if (jobs.length) {
  const r = await capture(node, [...argsFor('src/test/templates.ts'), 'make', runTmp, ...(pg ? [PG_URL] : [])]);
  const line = r.output.split('\n').find((l) => l.startsWith('{'));
  if (r.status === 0 && line) Object.assign(templates, JSON.parse(line));
  else console.log(`=== migrated templates: not made, every gateway migrates ===\n${r.output}`);
}

function argsFor(file) {
  if (TSX) return ['--import', 'tsx', file];
  const dir = bundled && file.endsWith('.test.ts') ? 'dist-bundle' : 'dist-test';
  return ['--enable-source-maps', path.join(dir, file.replace(/^src\//, '').replace(/\.ts$/, '.js'))];
}

/** The spec reporter's closing figures (`ℹ pass 12`); null when the file never got that far. */
function figures(output) {
  const n = (k) => {
    const all = [...output.matchAll(new RegExp(`^ℹ ${k} (\\d+)$`, 'gm'))];
    return all.length ? Number(all[all.length - 1][1]) : null;
  };
  const tests = n('tests');
  if (tests === null) return null;
  return { passed: n('pass') ?? 0, failed: (n('fail') ?? 0) + (n('cancelled') ?? 0), skipped: (n('skipped') ?? 0) + (n('todo') ?? 0) };
}

const totals = { passed: 0, failed: 0, skipped: 0 };
const results = [];
const failedFiles = [];
const failureDigests = [];

/** A failed file's reasons in a few lines (the spec reporter's "failing tests" part), repeated at the end where a truncated log still shows them. */
function digest(output, why) {
  const at = output.lastIndexOf('✖ failing tests:');
  const part = at >= 0 ? output.slice(at) : output.slice(-2_000);
  const lines = part.split('\n').filter((l) => l.trim() && !/^\s+at /.test(l));
  return [...(why ? [why.trim()] : []), ...lines.slice(0, 30)].map((l) => l.slice(0, 300));
}

async function runJob(j) {
  const dir = mkdtempSync(path.join(runTmp, `${j.engine}-`));
  const env = {
    ...process.env,
    TMPDIR: dir,
    TOLLGATE_TEST_ENGINE: j.engine,
    TOLLGATE_TEST_PG_URL: PG_URL,
    ...(templates.sqlite ? { TOLLGATE_TEST_SQLITE_TEMPLATE: templates.sqlite } : {}),
    ...(templates.postgres ? { TOLLGATE_TEST_PG_TEMPLATE: templates.postgres } : {}),
    ...(j.browser ? { TOLLGATE_CHROMIUM: CHROMIUM } : {}),
  };
  const t0 = Date.now();
  const r = await capture(node, ['--test-reporter=spec', '--test-reporter-destination=stdout', ...argsFor(j.file)], { env, timeout_ms: FILE_TIMEOUT_MS });
  const ms = Date.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  const f = figures(r.output);
  const ok = r.status === 0 && f !== null && f.failed === 0;
  if (f) {
    totals.passed += f.passed;
    totals.failed += f.failed;
    totals.skipped += f.skipped;
  }
  if (!ok && (!f || f.failed === 0)) totals.failed++; // a file that crashed or hung counts once
  results.push({ ...j, ms, ok });
  const what = f ? `${f.passed} passed${f.failed ? `, ${f.failed} failed` : ''}${f.skipped ? `, ${f.skipped} skipped` : ''}` : 'no results';
  const why = r.signal ? ` (killed by ${r.signal}${ms >= FILE_TIMEOUT_MS ? ` after ${seconds(FILE_TIMEOUT_MS)}` : ''})` : '';
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${j.engine.padEnd(8)} ${j.file}  ${what}  ${seconds(ms)}${why}`);
  if (!ok) {
    failedFiles.push(key(j));
    failureDigests.push({ file: key(j), digest: digest(r.output, why) });
  }
  if (!ok || VERBOSE || f?.skipped) process.stdout.write(`${r.output.replace(/^/gm, '     │ ')}\n`);
}

// 3. The pool: JOBS at once, at most one browser file at a time (Chromium wants the cores).
console.log(`\n=== ${jobs.length} test files (${engines.join(' and ')}${chromium ? ', browser tests included' : ''}), ${JOBS} at once ===`);
if (engines.length > 1 && onEngineOne.length)
  console.log(`(${onEngineOne.length} of them on ${engines[0]} only, as their opening comment says: ${onEngineOne.join(', ')})`);
let browserBusy = false;
const queue = [...jobs];
async function worker() {
  for (;;) {
    const i = queue.findIndex((j) => !j.browser || !browserBusy);
    if (i < 0) {
      if (queue.length === 0) return;
      await new Promise((r) => setTimeout(r, 200)); // only browser files are left and one runs
      continue;
    }
    const [j] = queue.splice(i, 1);
    if (j.browser) browserBusy = true;
    try {
      await runJob(j);
    } finally {
      if (j.browser) browserBusy = false;
    }
  }
}
await Promise.all(Array.from({ length: Math.min(JOBS, jobs.length) }, worker));
if (templates.postgres) await capture(node, [...argsFor('src/test/templates.ts'), 'drop', PG_URL, templates.postgres]);
rmSync(runTmp, { recursive: true, force: true });

if (RECORD) {
  const next = { ...times };
  for (const r of results) next[key(r)] = r.ms;
  writeFileSync(TIMES_FILE, `${JSON.stringify(Object.fromEntries(Object.entries(next).sort()), null, 2)}\n`);
  console.log(`\nwrote ${path.relative(ROOT, TIMES_FILE)}`);
}

if (totals.skipped > 0) skippedParts.push(`${totals.skipped} test(s) skipped themselves (their output above says why)`);
if (failedFiles.length) failedParts.push(`${failedFiles.length} test file(s): ${failedFiles.join(', ')}`);

console.log('\n=== slowest 10 files ===');
for (const r of [...results].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`${seconds(r.ms).padStart(8)}  ${r.engine.padEnd(8)} ${r.file}`);
if (failureDigests.length) {
  console.log('\n=== failures: the failing tests of each failed file, again ===');
  for (const f of failureDigests) console.log(`${f.file}\n${f.digest.map((l) => `   ${l}`).join('\n')}`);
}
const byEngine = (e) => results.filter((r) => r.engine === e).reduce((s, r) => s + r.ms, 0);
console.log('\n=== summary ===');
console.log(`files: ${results.length} in ${seconds(Date.now() - started)} (${engines.map((e) => `${e} ${seconds(byEngine(e))} of file time`).join(', ')})`);
for (const s of skippedParts) console.log(`SKIPPED: ${s}`);
for (const f of failedParts) console.log(`FAILED: ${f}`);
if (CI && skippedParts.length) console.log('CI=true: skipping is not allowed, so this run fails.');
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failedParts.length || totals.failed || (CI && skippedParts.length) ? 1 : 0);
