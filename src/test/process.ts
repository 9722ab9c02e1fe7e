// A real gateway in its own process, for the bench, the crash test and the socket part of
// the fuzz run: a fresh database (SQLite file or PostgreSQL database), the compiled build,
// merchants provisioned through the operator CLI, the client library pointed at it, and
// peak memory from /proc.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { TollgateClient, type TollgateClientOptions } from '../client/index.js';
import type { CreatedMerchant } from '../merchants/service.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MASTER_KEY = `harness1:${Buffer.alloc(32, 9).toString('base64')}`;

export type Engine = 'sqlite' | 'postgres';

/** Whether this process runs the compiled tests (dist-test/, `npm test`) or the sources through tsx. */
export const COMPILED = !import.meta.url.endsWith('.ts');

/**
 * The module `src/…` as this process would run it: the compiled twin in dist-test/ when the
 * tests run compiled, else the source (imported through tsx).
 */
export function runnable(srcFile: string): string {
  const rel = path.relative(path.join(ROOT, 'src'), path.resolve(ROOT, srcFile));
  return COMPILED ? path.join(ROOT, 'dist-test', rel.replace(/\.ts$/, '.js')) : path.join(ROOT, 'src', rel);
}

/** `node` arguments that run the module `src/…` (a file of `runnable`) the way this process runs its own. */
export function nodeArgs(srcFile: string): string[] {
  return COMPILED ? [runnable(srcFile)] : ['--import', 'tsx', runnable(srcFile)];
}

/** Compiles src to dist and bundles the CLI (`npm run build`) so the gateway under load runs the build as shipped, not tsx. */
export function buildDist(): void {
  for (const args of [
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')],
    [path.join(ROOT, 'scripts/bundle.mjs'), '--shipped'],
  ]) {
    const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: ROOT });
    if (r.status !== 0) throw new Error(`build failed (${path.basename(args[0] as string)})`);
  }
}

export function pgReachable(url = PG_URL, timeout_ms = 1500): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port || 5432) });
    s.setTimeout(timeout_ms);
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

export interface FreshDatabase {
  engine: Engine;
  url: string;
  /** Data folder (the SQLite file lives here). */
  dir: string;
  /** Path of the SQLite file (sqlite only). */
  file?: string;
  drop(): Promise<void>;
}

/** A new empty database: a file in a temp folder, or `CREATE DATABASE` on the server. */
export async function freshDatabase(engine: Engine, label = 'h', admin_url = PG_URL): Promise<FreshDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tollgate-${label}-`));
  if (engine === 'sqlite') {
    const file = path.join(dir, 'tollgate.db');
    return { engine, url: `sqlite:${file}`, dir, file, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `tg_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: admin_url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(admin_url);
  u.pathname = `/${name}`;
  return {
    engine,
    url: u.toString(),
    dir,
    drop: async () => {
      const c = new pg.Client({ connectionString: admin_url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Environment for a gateway process on `db`. */
export function gatewayEnv(db: FreshDatabase, port: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: db.url,
    TOLLGATE_DATA_DIR: db.dir,
    TOLLGATE_MASTER_KEY: MASTER_KEY,
    TOLLGATE_DEMO_MERCHANT: '0',
    TOLLGATE_LOG_LEVEL: 'warn',
    // Each route's schemas compiled on its first request: a test gateway calls a few routes of
    // ~200, and compiling them all cost a second of CPU per start (README, Settings).
    TOLLGATE_ROUTE_SCHEMAS: 'on_first_use',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...extra,
  };
}

/** Runs the operator CLI (compiled build) and returns its stdout; throws on a non-zero exit. */
export function cli(env: NodeJS.ProcessEnv, args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), ...args], { env, cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status ?? 1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** `merchant create --json` through the CLI, as an operator would. */
export function createMerchant(env: NodeJS.ProcessEnv, name: string, extra: string[] = []): CreatedMerchant {
  // Only serve and migrate create a database (issue 36 item 6): a fresh SQLite file is migrated first, as an operator would.
  const file = env.DATABASE_URL?.startsWith('sqlite:') ? env.DATABASE_URL.slice('sqlite:'.length) : null;
  if (file && !fs.existsSync(path.resolve(ROOT, file))) {
    const m = cli(env, ['migrate']);
    if (m.status !== 0) throw new Error(`migrate failed: ${m.stderr}`);
  }
  const r = cli(env, ['merchant', 'create', '--name', name, '--json', '--allow-ip', '127.0.0.1/32', ...extra]);
  if (r.status !== 0) throw new Error(`merchant create failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as CreatedMerchant;
}

/** The client library for merchant `m` of the gateway at `url` (answers verified; retries as `o` says). */
export function gatewayClient(url: string, m: CreatedMerchant, o: Partial<TollgateClientOptions> = {}): TollgateClient {
  return new TollgateClient({
    base_url: url,
    merchant_id: m.merchant_id,
    account_id: m.account_id,
    secret: m.secret_key,
    webhook_secret: m.webhook_secret,
    ...o,
  });
}

/** The commands `tollgate help` lists (first two words of each usage line). */
export function cliCommands(env: NodeJS.ProcessEnv): Set<string> {
  const r = cli(env, ['help']);
  const out = new Set<string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^\s{2}([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?/.exec(line);
    if (!m) continue;
    out.add(m[1] as string);
    if (m[2]) out.add(`${m[1]} ${m[2]}`);
  }
  return out;
}

export interface GatewayProcess {
  pid: number;
  port: number;
  url: string;
  child: ChildProcess;
  /** stderr lines kept for the report (bounded). */
  errors: string[];
  /** Everything the process wrote to stdout and stderr (only with `capture_output`). */
  output(): string;
  exited: Promise<number | null>;
  /** SIGKILL the whole process group (primary and cluster workers): a crash. */
  crash(): Promise<void>;
  /** SIGTERM and wait (graceful). */
  stop(): Promise<void>;
}

/** Starts `node bin/tollgate.js serve` (the build as shipped: dist/bundle/) in its own process group and waits for /readyz. */
export async function startGateway(
  env: NodeJS.ProcessEnv,
  opts: { ready_timeout_ms?: number; node_args?: string[]; capture_output?: boolean } = {},
): Promise<GatewayProcess> {
  const port = Number(env.PORT);
  const child = spawn(process.execPath, [...(opts.node_args ?? []), path.join(ROOT, 'bin/tollgate.js'), 'serve'], {
    env,
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', opts.capture_output ? 'pipe' : 'ignore', 'pipe'],
  });
  const errors: string[] = [];
  let output = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    if (errors.length < 200) errors.push(d);
    if (opts.capture_output) output += d;
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = child.pid as number;
  const url = `http://127.0.0.1:${port}`;
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  };
  const gw: GatewayProcess = {
    pid,
    port,
    url,
    child,
    errors,
    output: () => output,
    exited,
    async crash() {
      killGroup('SIGKILL');
      await exited;
    },
    async stop() {
      killGroup('SIGTERM');
      const t = setTimeout(() => killGroup('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
  const deadline = Date.now() + (opts.ready_timeout_ms ?? 60_000);
  let done = false;
  void exited.then(() => {
    done = true;
  });
  while (Date.now() < deadline) {
    if (done) throw new Error(`gateway exited before it was ready: ${errors.join('').slice(0, 2000)}`);
    try {
      const r = await fetch(`${url}/readyz`);
      if (r.status === 200) return gw;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await gw.crash();
  throw new Error(`gateway not ready within the timeout: ${errors.join('').slice(0, 2000)}`);
}

/** Pids of a process and all its descendants (cluster workers). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length && out.length < 1000) {
    const p = stack.pop() as number;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Peak resident memory (VmHWM) in MiB, summed over the process tree. */
export function peakRssMiB(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + statusKb(p, 'VmHWM'), 0) / 1024;
}

/** Resets VmHWM so the next reading is the peak of the next scenario (Linux clear_refs). */
export function resetPeakRss(pid: number): void {
  for (const p of processTree(pid)) {
    try {
      fs.writeFileSync(`/proc/${p}/clear_refs`, '5');
    } catch {
      // not permitted: the peak then covers the whole life of the process
    }
  }
}

/** Every row of every table as text (PostgreSQL), or the raw database files (SQLite). */
export async function databaseDump(db: FreshDatabase): Promise<string> {
  if (db.engine === 'sqlite') {
    return fs
      .readdirSync(db.dir)
      .filter((f) => f.startsWith('tollgate.db'))
      .map((f) => fs.readFileSync(path.join(db.dir, f)).toString('latin1'))
      .join('\n');
  }
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const tables = await c.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    const parts: string[] = [];
    for (const t of tables.rows as Array<{ table_name: string }>) {
      const rows = await c.query(`SELECT t::text AS row FROM "${t.table_name}" t`);
      for (const r of rows.rows as Array<{ row: string }>) parts.push(r.row);
    }
    return parts.join('\n');
  } finally {
    await c.end();
  }
}
