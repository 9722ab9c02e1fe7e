// Baseline: the engine's bare durable insert rate, the floor group commit has to beat.
// SQLite: WAL + synchronous=FULL, one single-row INSERT per transaction, in a loop.
// PostgreSQL: single-row INSERT commits (synchronous_commit as configured, default on)
// from 64 concurrent clients. Prints one JSON line {inserts_per_s, ...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';

const { values } = parseArgs({ options: { engine: { type: 'string' }, url: { type: 'string' }, seconds: { type: 'string' }, clients: { type: 'string' } } });
const seconds = Number(values.seconds ?? 5);
const row = () => JSON.stringify({ order_no: Math.random().toString(36), amount_minor: 1000, pad: 'x'.repeat(400) });

async function sqlite(): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-insert-'));
  const db = new Database(path.join(dir, 'insert.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO t (payload) VALUES (?)');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const end = Date.now() + seconds * 1000;
  let n = 0;
  while (Date.now() < end) {
    begin.run();
    insert.run(row());
    commit.run();
    n++;
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { engine: 'sqlite', inserts_per_s: n / seconds, transactions: n, settings: 'WAL, synchronous=FULL, 1 row per transaction, 1 writer' };
}

async function postgres(): Promise<Record<string, unknown>> {
  const clients = Number(values.clients ?? 64);
  const pool = new pg.Pool({ connectionString: values.url, max: clients });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, payload text NOT NULL)');
  const sync = (await pool.query('SHOW synchronous_commit')).rows[0]?.synchronous_commit;
  const fsync = (await pool.query('SHOW fsync')).rows[0]?.fsync;
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const c = await pool.connect();
      try {
        while (Date.now() < end) {
          await c.query('INSERT INTO bench_insert (payload) VALUES ($1)', [row()]);
          n++;
        }
      } finally {
        c.release();
      }
    }),
  );
  await pool.query('DROP TABLE bench_insert');
  await pool.end();
  return {
    engine: 'postgres',
    inserts_per_s: n / seconds,
    transactions: n,
    settings: `${clients} clients, 1 row per commit, synchronous_commit=${sync}, fsync=${fsync}`,
  };
}

const result = values.engine === 'postgres' ? await postgres() : await sqlite();
process.stdout.write(`${JSON.stringify(result)}\n`);
