// docs/platform-sdk.md is run exactly as written (issue 33 "Done when": a migration guide with
// a working example): the official `stripe` package pointed at a started gateway, a webhook
// receiver verifying with `stripe.webhooks.constructEvent`, PaymentIntents, a decline, a
// manual capture, a refund by PaymentIntent, a saved card. Then what the page promises is
// checked: the printed lines, and the events the receiver verified. Both engines.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fencedBlocks, LINKED, scriptOf } from './docs-runner.js';
import { ENGINE } from './harness.js';
import { type FreshDatabase, freePort, freshDatabase, MASTER_KEY, ROOT } from './process.js';

let work: string | null = null;
let db: FreshDatabase | null = null;
let pgid: number | null = null;
after(async () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    if (!pgid) break;
    try {
      process.kill(-pgid, signal);
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  if (db) await db.drop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('docs/platform-sdk.md runs exactly as written and does what it says', { timeout: 180_000 }, async () => {
  const page = fs.readFileSync(path.join(ROOT, 'docs/platform-sdk.md'), 'utf8');
  const blocks = fencedBlocks(page);
  assert.ok(
    blocks.some((b) => b.attrs.file === 'pay.mjs'),
    'the page has its example',
  );
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-platform-guide-'));
  for (const name of LINKED) fs.symlinkSync(path.join(ROOT, name), path.join(work, name));
  fs.writeFileSync(path.join(work, 'guide.sh'), scriptOf(blocks));

  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(await freePort()), RECEIVER_PORT: String(await freePort()) };
  for (const k of Object.keys(env)) if (k.startsWith('TOLLGATE_') || k === 'DATABASE_URL') delete env[k];
  if (ENGINE === 'postgres') {
    db = await freshDatabase('postgres', 'pg_guide');
    env.DATABASE_URL = db.url;
    env.TOLLGATE_MASTER_KEY = MASTER_KEY;
  }
  const child = spawn('bash', ['guide.sh'], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  pgid = child.pid ?? null;
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const status = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  const logs = () =>
    fs
      .readdirSync(work as string)
      .filter((f) => f.startsWith('server-'))
      .map((f) => `--- ${f}\n${fs.readFileSync(path.join(work as string, f), 'utf8').slice(-3000)}`)
      .join('\n');
  assert.equal(status, 0, `the guide failed:\n${out}\n${logs()}`);

  // What the page says pay.mjs prints, line for line.
  const promised = (/It prints:\s*```text\n([\s\S]*?)```/.exec(page)?.[1] ?? '').trim().split('\n');
  assert.ok(promised.length >= 5, 'the page says what it prints');
  for (const line of promised) assert.ok(out.split('\n').includes(line), `"${line}" printed:\n${out}`);
  assert.match(out, /^endpoint enabled$/m);

  // The receiver verified every event the page lists.
  const log = path.join(work, 'events.log');
  const want = { 'payment_intent.succeeded': 3, 'payment_intent.payment_failed': 1, 'charge.refunded': 1 };
  const deadline = Date.now() + 20_000;
  let seen = '';
  const count = (type: string) => seen.split('\n').filter((l) => l.startsWith(`${type} `)).length;
  while (Date.now() < deadline) {
    seen = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    if (Object.entries(want).every(([t, n]) => count(t) >= n)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const [type, n] of Object.entries(want)) assert.equal(count(type), n, `${type} in events.log:\n${seen}\n${logs()}`);
  assert.match(seen, /^payment_intent\.succeeded pi_/m);
  assert.match(seen, /^charge\.refunded ch_/m);
});
