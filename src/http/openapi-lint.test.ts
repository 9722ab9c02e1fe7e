// `@redocly/cli lint` with its recommended rules passes on the document the gateway serves
// (issue 9): no error and no warning. Offline: with REDOCLY_TELEMETRY=off the CLI opens no
// network connection (checked under strace), and the update notice is off too. It runs in
// a temporary folder so that no configuration file of the repository changes the rules.
// Runs on one engine: the linted document is built from the route table, the same on either engine.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { type TestGateway, testGateway } from '../test/harness.js';

const run = promisify(execFile);
const CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

let gw: TestGateway;
let dir: string;
before(async () => {
  gw = await testGateway();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-openapi-'));
});
after(async () => {
  await gw.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

async function lint(document: string, name: string): Promise<LintReport> {
  const file = path.join(dir, name);
  fs.writeFileSync(file, document);
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };
  const args = [CLI, 'lint', '--extends=recommended', '--format=json', file];
  // Exit status 1 means problems were found: the report on stdout says which.
  const out = await run(process.execPath, args, { cwd: dir, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).catch((e: { stdout?: string }) => ({
    stdout: e.stdout ?? '',
  }));
  return JSON.parse(out.stdout) as LintReport;
}

const summary = (r: LintReport) => r.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`).join('\n');

test('the served /openapi.json passes redocly lint (recommended): no error, no warning', async () => {
  const res = await gw.app.inject('/openapi.json');
  assert.equal(res.statusCode, 200);
  const report = await lint(res.body, 'openapi.json');
  assert.deepEqual([report.totals.errors, report.totals.warnings], [0, 0], summary(report));
});

test('control: the same lint finds an operation without its security requirement and a missing license', async () => {
  const doc = (await gw.app.inject('/openapi.json')).json();
  delete doc.paths['/v1/capture'].post.security;
  delete doc.info.license;
  const report = await lint(JSON.stringify(doc), 'broken.json');
  assert.deepEqual(report.problems.map((p) => p.ruleId).sort(), ['info-license', 'security-defined']);
});
