#!/usr/bin/env node
// `npm test`: lint + format check, typecheck, then the whole suite on SQLite, again on
// PostgreSQL, and the browser tests on both engines. Without PostgreSQL or Chromium those parts are
// skipped and named; with CI=true nothing may be skipped.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const CI = process.env.CI === 'true' || process.env.CI === '1';
const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CHROMIUM = process.env.TOLLGATE_CHROMIUM ?? '/usr/bin/chromium';
const only = process.argv.slice(2); // optional file filters

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

function files(dir, suffix, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) files(p, suffix, out);
    else if (name.endsWith(suffix)) out.push(p);
  }
  return out;
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

const totals = { passed: 0, failed: 0, skipped: 0 };
const skippedParts = [];
const failedParts = [];

function suite(label, testFiles, env) {
  const selected = only.length ? testFiles.filter((f) => only.some((o) => f.includes(o))) : testFiles;
  if (selected.length === 0) return;
  console.log(`\n=== ${label}: ${selected.length} test files ===`);
  const tap = path.join(mkdtempSync(path.join(os.tmpdir(), 'tollgate-tap-')), 'out.tap');
  const status = run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=2',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...selected,
    ],
    env,
  );
  const text = existsSync(tap) ? readFileSync(tap, 'utf8') : '';
  const n = (k) => Number((new RegExp(`^# ${k} (\\d+)$`, 'm').exec(text) ?? [])[1] ?? 0);
  totals.passed += n('pass');
  totals.failed += n('fail') + n('cancelled');
  totals.skipped += n('skipped') + n('todo');
  if (status !== 0) failedParts.push(label);
}

const step = (label, cmd, args) => {
  console.log(`\n=== ${label} ===`);
  if (run(cmd, args) !== 0) failedParts.push(label);
};

if (only.length === 0) {
  step('lint and format (biome)', process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'check', 'src', 'scripts', 'bin', 'bench']);
  step('typecheck (tsc)', process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.json']);
}
// bin/tollgate.js runs the compiled build, so tests that call the CLI need it current.
step('build (tsc)', process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json']);

const unit = files('src', '.test.ts').filter((f) => !f.endsWith('.browser.test.ts'));
const browser = files('src', '.browser.test.ts');

suite('suite on SQLite', unit, { TOLLGATE_TEST_ENGINE: 'sqlite' });

if (await reachable(PG_URL)) {
  suite('suite on PostgreSQL', unit, { TOLLGATE_TEST_ENGINE: 'postgres', TOLLGATE_TEST_PG_URL: PG_URL });
} else {
  skippedParts.push(`PostgreSQL suite (no server at ${PG_URL}; set TOLLGATE_TEST_PG_URL)`);
}

// The browser tests on both engines too (issue 14: the portal's pages read and write through either).
if (browser.length) {
  if (existsSync(CHROMIUM)) {
    suite('browser tests (Chromium) on SQLite', browser, { TOLLGATE_TEST_ENGINE: 'sqlite', TOLLGATE_CHROMIUM: CHROMIUM });
    if (await reachable(PG_URL)) {
      suite('browser tests (Chromium) on PostgreSQL', browser, { TOLLGATE_TEST_ENGINE: 'postgres', TOLLGATE_TEST_PG_URL: PG_URL, TOLLGATE_CHROMIUM: CHROMIUM });
    } else skippedParts.push(`browser tests on PostgreSQL (no server at ${PG_URL})`);
  } else skippedParts.push(`browser tests (no Chromium at ${CHROMIUM}; apt-get install -y chromium)`);
}

if (totals.skipped > 0) skippedParts.push(`${totals.skipped} test(s) skipped themselves (their "# SKIP" line above says why)`);

console.log('\n=== summary ===');
for (const s of skippedParts) console.log(`SKIPPED: ${s}`);
for (const f of failedParts) console.log(`FAILED: ${f}`);
if (CI && skippedParts.length) console.log('CI=true: skipping is not allowed, so this run fails.');
console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failedParts.length || totals.failed || (CI && skippedParts.length) ? 1 : 0);
