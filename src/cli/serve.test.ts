// Stopping the gateway as a process manager or a person does (issue 9): SIGTERM to `npm start`
// or to `npx tollgate serve`, and Ctrl-C (SIGINT to the whole process group). Each time the
// request in flight is answered, the process that was signalled exits, the port stops
// answering, the database is closed and no process of the tree is left behind. On PostgreSQL
// the gateway runs as a cluster (a primary and two workers), so the primary must stop them.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { sign } from '../crypto/signature.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, ENGINE } from '../test/harness.js';
import { createMerchant, type FreshDatabase, freePort, freshDatabase, gatewayEnv, processTree, ROOT } from '../test/process.js';

const WORKERS = ENGINE === 'postgres' ? 2 : 1;

let db: FreshDatabase;
let merchant: CreatedMerchant;
before(async () => {
  db = await freshDatabase(ENGINE, 'stop');
  merchant = createMerchant(gatewayEnv(db, 0), 'stop');
});
after(async () => {
  await db.drop();
});

interface Launched {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Starts a command in its own process group (so the test can clean up whatever it leaves). */
async function launch(cmd: string, args: string[]): Promise<Launched> {
  const port = await freePort();
  // npm_config_yes: npx would ask before linking the project into its cache on a terminal.
  const env = gatewayEnv(db, port, { TOLLGATE_WORKERS: String(WORKERS), npm_config_yes: 'true', TOLLGATE_LOG_FORMAT: 'json', TOLLGATE_LOG_LEVEL: 'info' });
  const child = spawn(cmd, args, { env, cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString('utf8');
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString('utf8');
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const launched = { child, port, exited, output: () => output };
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !done) {
    if ((await answers(port)) === 200) return launched;
    await new Promise((r) => setTimeout(r, 100));
  }
  killGroup(child);
  throw new Error(`${cmd} ${args.join(' ')} did not come up: ${output.slice(-2000)}`);
}

/** The status of GET /readyz, or null when nothing answers. */
async function answers(port: number): Promise<number | null> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await r.text();
    return r.status;
  } catch {
    return null;
  }
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/** Alive: the process exists and is not a zombie waiting for a parent that will never reap it. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function waitGone(pids: number[], timeout_ms: number): Promise<number[]> {
  const deadline = Date.now() + timeout_ms;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = left.filter(alive);
  }
  return left;
}

/** A payment whose body is half sent: the request is in flight until `finish()`. */
async function startRequest(port: number): Promise<{ finish(): Promise<string> }> {
  const body = directPayment(merchant);
  body.encryption_data = sign(body, merchant.secret_key);
  const payload = JSON.stringify(body);
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let response = '';
  socket.on('data', (d: Buffer) => {
    response += d.toString('utf8');
  });
  const closed = once(socket, 'close');
  socket.write(`POST /v1/authorise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`);
  socket.write(payload.slice(0, 40));
  await new Promise((r) => setTimeout(r, 300));
  return {
    async finish() {
      socket.write(payload.slice(40));
      await closed;
      return response;
    },
  };
}

async function databaseConnections(): Promise<number> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const r = await c.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return (r.rows[0] as { n: number }).n;
  } finally {
    await c.end();
  }
}

/**
 * Signals a running gateway and checks the stop: `how` is a signal to the one process that
 * was started (npm or npx), or SIGINT to its whole group as a terminal's Ctrl-C sends it.
 */
async function stopAndCheck(g: Launched, how: 'SIGTERM' | 'Ctrl-C', expected_exit: { code: number | null; signal: NodeJS.Signals | null }): Promise<void> {
  const pid = g.child.pid as number;
  const tree = processTree(pid);
  try {
    // npm (and sh for npx), the gateway, and on PostgreSQL its workers.
    assert.ok(tree.length >= 1 + WORKERS + (WORKERS > 1 ? 1 : 0), `process tree ${tree.join(' ')}`);
    const inFlight = await startRequest(g.port);
    if (how === 'SIGTERM') process.kill(pid, 'SIGTERM');
    else process.kill(-pid, 'SIGINT');
    // Under npx the gateway learns of the stop when the shell npm killed is gone (≤ 250 ms).
    await new Promise((r) => setTimeout(r, 1_000));
    assert.notEqual(await answers(g.port), 200, 'a new request is not served once the stop has begun');
    const response = await inFlight.finish();
    assert.match(response, /^HTTP\/1\.1 200 /, 'the request in flight is answered');
    assert.match(response, /<result_info>0000:Success<\/result_info>/);
    assert.deepEqual(await g.exited, expected_exit, g.output().slice(-2000));
    assert.deepEqual(await waitGone(tree, 20_000), [], 'no process of the tree is left');
    assert.equal(await answers(g.port), null, 'the port no longer answers');
    if (ENGINE === 'sqlite') assert.equal(fs.existsSync(`${db.file}-wal`), false, 'SQLite was closed (its WAL checkpointed and removed)');
    else assert.equal(await databaseConnections(), 0, 'every PostgreSQL connection was closed');
    assert.match(g.output(), /shutting down/);
  } finally {
    killGroup(g.child);
  }
}

// `--ignore-scripts` skips only prestart (the build, done by `npm test` already; running it
// here would rewrite dist/ under the other test files). The start script runs as written.
test('SIGTERM to `npm start`: graceful stop, npm exits 0', { timeout: 180_000 }, async () => {
  const g = await launch('npm', ['start', '--ignore-scripts']);
  await stopAndCheck(g, 'SIGTERM', { code: 0, signal: null });
});

// npx runs the bin under `sh -c`, forwards SIGTERM to that shell only (which dies at once)
// and then dies of the signal itself: a shell reports 143 (128 + SIGTERM), and nothing we
// run can change that. The gateway notices its parent is gone and stops gracefully.
test('SIGTERM to `npx tollgate serve`: graceful stop, nothing left behind (npx itself dies of the signal: 143)', { timeout: 180_000 }, async () => {
  const g = await launch('npx', ['tollgate', 'serve']);
  await stopAndCheck(g, 'SIGTERM', { code: null, signal: 'SIGTERM' });
});

test('Ctrl-C (SIGINT to the process group) on `npm start`: every process gets it, the stop stays graceful', { timeout: 180_000 }, async () => {
  const g = await launch('npm', ['start', '--ignore-scripts']);
  await stopAndCheck(g, 'Ctrl-C', { code: 0, signal: null });
});
