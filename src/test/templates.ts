// Migrated template databases for one run of the suite (scripts/test.mjs): every test gateway
// starts from a copy (a file copy on SQLite, CREATE DATABASE … TEMPLATE on PostgreSQL)
// instead of running the 90-odd migrations again; about 0.25 s (SQLite) and 0.9 s
// (PostgreSQL) of each of some 250 gateways. The gateway still runs its migrations, which find
// nothing to do. A file run alone (node --test) migrates as before.
//
//   node dist-test/test/templates.js make DIR [PG_URL]   prints {"sqlite": FILE, "postgres": NAME | null}
//   node dist-test/test/templates.js drop PG_URL NAME
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Keyring } from '../crypto/keyring.js';
import { migrateToLatest } from '../db/migrations.js';
import { migrationDb, openStore } from '../db/store.js';

/** Where the run's templates are, for the harness (unset: no templates, migrate). */
export const TEMPLATE_ENV = { sqlite: 'TOLLGATE_TEST_SQLITE_TEMPLATE', postgres: 'TOLLGATE_TEST_PG_TEMPLATE' } as const;

/** The master key of every test gateway (harness.ts re-exports it); the templates' migrations seal with it. */
export const TEST_MASTER_KEY = `test1:${Buffer.alloc(32, 7).toString('base64')}`;

async function migrate(url: string): Promise<void> {
  const store = openStore(url, { statementTimeoutMs: 0 });
  try {
    await migrateToLatest(migrationDb(store), { keyring: Keyring.parse(TEST_MASTER_KEY), engine: store.engine });
  } finally {
    await store.close();
  }
}

export async function makeSqliteTemplate(dir: string): Promise<string> {
  const file = path.join(dir, 'template.db');
  await migrate(`sqlite:${file}`);
  for (const extra of ['-wal', '-shm'])
    if (fs.existsSync(file + extra) && fs.statSync(file + extra).size > 0) throw new Error(`${file}${extra} left after close`);
  return file;
}

export async function makePgTemplate(pgUrl: string): Promise<string> {
  const name = `tg_template_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return name;
}

export async function dropPgTemplate(pgUrl: string, name: string): Promise<void> {
  if (!/^tg_template_\w+$/.test(name)) throw new Error(`not a template's name: ${name}`);
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** A copy of the run's SQLite template at `file`; false when the run has none. */
export function copySqliteTemplate(file: string): boolean {
  const template = process.env[TEMPLATE_ENV.sqlite];
  if (!template) return false;
  fs.copyFileSync(template, file);
  return true;
}

/** The run's PostgreSQL template's name, if it has one. */
export function pgTemplate(): string | undefined {
  const name = process.env[TEMPLATE_ENV.postgres];
  return name && /^tg_template_\w+$/.test(name) ? name : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [command, a, b] = process.argv.slice(2);
  if (command === 'make' && a) {
    const sqlite = await makeSqliteTemplate(a);
    const postgres = b ? await makePgTemplate(b) : null;
    console.log(JSON.stringify({ sqlite, postgres }));
  } else if (command === 'drop' && a && b) {
    await dropPgTemplate(a, b);
  } else {
    console.error('usage: templates.js make DIR [PG_URL] | drop PG_URL NAME');
    process.exit(2);
  }
}
