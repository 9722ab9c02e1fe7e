// The faults themselves (issue 17): each prepares a fresh database and the DATABASE_URL the
// gateway gets, holds the fault while the load runs, and restores it.
//   cut       PostgreSQL behind a TCP proxy: every connection dropped, new ones refused, then
//             accepted again (a restart or failover as the gateway sees it).
//   readonly  PostgreSQL: `ALTER DATABASE … SET default_transaction_read_only = on` and the
//             gateway's sessions terminated, so new sessions cannot write; then RESET and
//             terminated again.
//   full      SQLite on a size-limited tmpfs the test mounts: filled by the load until writes
//             fail, then given room (`mount -o remount,size=256m`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type FreshDatabase, freePort, freshDatabase } from '../process.js';
import type { Load } from './load.js';
import { TcpProxy } from './proxy.js';

export type FaultName = 'cut' | 'readonly' | 'full';

export interface Injector {
  db: FreshDatabase;
  /** DATABASE_URL of the gateway (the proxy's, for `cut`). */
  gateway_url: string;
  /** Starts the fault and holds it; resolves with the moment it began once it has lasted long enough. */
  hold(load: Load, cycle: number, since: number): Promise<number>;
  /** Ends the fault; resolves once storage is usable again (the moment recovery is measured from). */
  restore(): Promise<void>;
  /** Figures of the fault's own (proxy connections, filesystem sizes). */
  notes(): string;
  dispose(): Promise<void>;
}

export class SkipFault extends Error {}

/** tmpfs mounts still in place, unmounted at exit whatever happens. */
const mounted = new Set<string>();
function umountAll(): void {
  for (const dir of mounted) {
    spawnSync('umount', [dir]);
    if (spawnSync('mountpoint', ['-q', dir]).status === 0) spawnSync('umount', ['-l', dir]);
    mounted.delete(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
process.once('exit', umountAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    umountAll();
    process.exit(130);
  });

function run(cmd: string, args: string[]): { ok: boolean; why: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) return { ok: false, why: r.error.message };
  return { ok: r.status === 0, why: (r.stderr || r.stdout || `exit ${r.status}`).trim() };
}

// ---------- PostgreSQL connections cut and restored ----------

export async function cutFault(hold_ms: number): Promise<Injector> {
  const db = await freshDatabase('postgres', 'faultcut');
  const direct = new URL(db.url);
  const proxy = await TcpProxy.start(await freePort(), { host: direct.hostname, port: Number(direct.port || 5432) });
  const via = new URL(db.url);
  via.port = String(proxy.port);
  return {
    db,
    gateway_url: via.toString(),
    async hold() {
      const start = Date.now();
      await proxy.cut();
      await sleep(hold_ms);
      return start;
    },
    restore: () => proxy.restore(),
    notes: () => `proxy: ${proxy.stats.forwarded} connections forwarded, ${proxy.stats.destroyed} sockets dropped by ${proxy.stats.cuts} cut(s)`,
    async dispose() {
      await proxy.close();
      await db.drop();
    },
  };
}

// ---------- PostgreSQL read-only ----------

export async function readonlyFault(hold_ms: number): Promise<Injector> {
  const db = await freshDatabase('postgres', 'faultro');
  const name = new URL(db.url).pathname.slice(1);
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unexpected database name ${name}`);
  let terminated = 0;
  /** On the test's own database only, from a session of its own (which the terminate spares). */
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: db.url });
    c.on('error', () => {});
    await c.connect();
    try {
      // New sessions of a read-only database are read-only, this one included.
      await c.query('SET default_transaction_read_only = off');
      await c.query(statement);
      const r = await c.query('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      terminated += Number(r.rows[0]?.n ?? 0);
    } finally {
      await c.end();
    }
  };
  return {
    db,
    gateway_url: db.url,
    async hold() {
      const start = Date.now();
      await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
      await sleep(hold_ms);
      return start;
    },
    restore: () => admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`),
    notes: () => `${terminated} gateway sessions terminated`,
    async dispose() {
      await db.drop();
    },
  };
}

// ---------- SQLite disk full ----------

function usedKiB(dir: string): { used: number; size: number } {
  const s = fs.statfsSync(dir);
  return { used: Math.ceil(((s.blocks - s.bfree) * s.bsize) / 1024), size: Math.round((s.blocks * s.bsize) / 1024) };
}

/**
 * The first cycle lets the load fill the 8 MiB filesystem (or shrinks it to what is used
 * plus 1 MiB when the load has not filled it by `fill_timeout_ms`); later cycles shrink it
 * so. The fault starts at the first 503 of the cycle (or the shrink); it is held `hold_ms`
 * after the first `0507`.
 */
export async function fullFault(o: { size: string; room: string; hold_ms: number; fill_timeout_ms: number }): Promise<Injector> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-faultfull-'));
  const m = run('mount', ['-t', 'tmpfs', '-o', `size=${o.size}`, 'tmpfs', dir]);
  if (!m.ok) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new SkipFault(`cannot mount tmpfs: ${m.why}`);
  }
  mounted.add(dir);
  const file = path.join(dir, 'tollgate.db');
  const db: FreshDatabase = {
    engine: 'sqlite',
    url: `sqlite:${file}`,
    dir,
    file,
    drop: async () => umountAll(),
  };
  const sizes: string[] = [];
  const shrink = () => {
    const { used } = usedKiB(dir);
    const r = run('mount', ['-o', `remount,size=${used + 1024}k`, dir]);
    if (!r.ok) throw new Error(`cannot shrink the tmpfs to ${used + 1024} KiB: ${r.why}`);
    sizes.push(`shrunk to ${used + 1024} KiB`);
  };
  const storageRefused = (load: Load, since: number) =>
    load.attempts.find((a) => a.start >= since && a.status === 503 && (a.code === '0507' || a.code.endsWith('/storage_unavailable')));
  const firstFailure = (load: Load, since: number) => load.attempts.find((a) => a.start >= since && a.status >= 500);
  return {
    db,
    gateway_url: db.url,
    async hold(load, cycle, since) {
      let shrunk = 0;
      if (cycle > 1) {
        shrink();
        shrunk = Date.now();
      }
      const deadline = Date.now() + o.fill_timeout_ms;
      while (!storageRefused(load, since) && Date.now() < deadline) await sleep(20);
      if (!storageRefused(load, since) && !shrunk) {
        sizes.push(`not full after ${o.fill_timeout_ms} ms of load (${usedKiB(dir).used} KiB used)`);
        shrink();
        shrunk = Date.now();
        const again = Date.now() + o.fill_timeout_ms;
        while (!storageRefused(load, since) && Date.now() < again) await sleep(20);
      }
      const full = storageRefused(load, since);
      sizes.push(
        `${usedKiB(dir).used} KiB used when ${full ? `writes were refused (${((full.end - since) / 1000).toFixed(1)} s into the cycle)` : 'the wait ended without a 0507'}`,
      );
      await sleep(o.hold_ms);
      // The disk is full when the first write fails (a shrink only makes it fill sooner).
      const first = firstFailure(load, since);
      return first ? first.end : shrunk || Date.now();
    },
    async restore() {
      const r = run('mount', ['-o', `remount,size=${o.room}`, dir]);
      if (!r.ok) throw new Error(`cannot give the tmpfs room (remount,size=${o.room}): ${r.why}`);
      sizes.push(`given room: ${Math.round(usedKiB(dir).size / 1024)} MiB`);
    },
    notes: () => `tmpfs ${o.size}: ${sizes.join('; ')}`,
    async dispose() {
      umountAll();
    },
  };
}
