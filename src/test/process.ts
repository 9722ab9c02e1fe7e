// Runs the real gateway as a child process, for tests that need a process boundary
// (logs, SIGTERM, kill -9). Uses the TypeScript sources through tsx.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { CreatedMerchant } from '../merchants/service.js';
import { ENGINE, PG_URL, TEST_MASTER_KEY } from './harness.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  url: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export interface Env {
  env: NodeJS.ProcessEnv;
  dir: string;
  /** Every row of every table as text (PostgreSQL) or the raw database files (SQLite). */
  dump(): Promise<string>;
  cleanup(): Promise<void>;
}

export async function processEnv(extra: NodeJS.ProcessEnv = {}): Promise<Env> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-proc-'));
  let database_url = `sqlite:${path.join(dir, 'tollgate.db')}`;
  let dbName = '';
  if (ENGINE === 'postgres') {
    dbName = `tgp_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`CREATE DATABASE ${dbName}`);
    await c.end();
    const u = new URL(PG_URL);
    u.pathname = `/${dbName}`;
    database_url = u.toString();
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database_url,
    TOLLGATE_DATA_DIR: dir,
    TOLLGATE_MASTER_KEY: TEST_MASTER_KEY,
    TOLLGATE_DEMO_MERCHANT: '0',
    TOLLGATE_ALLOW_PRIVATE_WEBHOOKS: '1',
    ...extra,
  };
  return {
    env,
    dir,
    async dump() {
      if (ENGINE === 'sqlite') {
        return fs
          .readdirSync(dir)
          .filter((f) => f.startsWith('tollgate.db'))
          .map((f) => fs.readFileSync(path.join(dir, f)).toString('latin1'))
          .join('\n');
      }
      const c = new pg.Client({ connectionString: database_url });
      await c.connect();
      const tables = await c.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
      const parts: string[] = [];
      for (const t of tables.rows as Array<{ table_name: string }>) {
        const rows = await c.query(`SELECT t::text AS row FROM "${t.table_name}" t`);
        for (const r of rows.rows as Array<{ row: string }>) parts.push(r.row);
      }
      await c.end();
      return parts.join('\n');
    },
    async cleanup() {
      if (dbName) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await c.end();
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `tollgate <args>` with the given environment; returns stdout. */
export async function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/run.ts'), ...args], { env, cwd: ROOT });
  return stdout;
}

export async function createMerchantCli(env: NodeJS.ProcessEnv, extra: string[] = []): Promise<CreatedMerchant> {
  return JSON.parse(await cli(env, ['merchant', 'create', '--name', 'Process test', '--allow-ip', '127.0.0.1/32', '--json', ...extra])) as CreatedMerchant;
}

export async function startGatewayProcess(env: NodeJS.ProcessEnv, timeout_ms = 20_000): Promise<GatewayProcess> {
  const port = await freePort();
  const fullEnv = { ...env, PORT: String(port), HOST: '127.0.0.1' };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/run.ts'), 'serve'], {
    env: fullEnv,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited early:\n${out}`);
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway did not become ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, env: fullEnv, child, output: () => out, exited };
}
