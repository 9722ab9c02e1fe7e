// Which database a command opens, and the refusal to make a new one by accident (issue 36
// item 6): run from another folder, the default `./data/tollgate.db` is a different file, and
// creating it (with a new master key beside it) only led to "no account" on an empty database.
// Only `serve` and `migrate` create a SQLite database (the default or a DATABASE_URL's) and the
// default's development key.
import fs from 'node:fs';
import path from 'node:path';
import { CommandError } from '../command/registry.js';
import type { Settings } from '../config/index.js';

/** The development master key's file in the data folder (crypto/keyring.ts loadOrCreateDevKey). */
const DEV_KEY_FILE = 'master.key';

/** The SQLite file of a `sqlite:` URL, as db/store.ts openStore reads it (absolute), or null for PostgreSQL. */
export function sqliteFile(database_url: string): string | null {
  if (!database_url.startsWith('sqlite:')) return null;
  const file = database_url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return file === ':memory:' ? file : path.resolve(file);
}

/** Where the database is (the SQLite file's absolute path, or the URL without its password) and its engine. */
export function databaseLocation(database_url: string): { where: string; engine: 'SQLite' | 'PostgreSQL' } {
  const file = sqliteFile(database_url);
  if (file !== null) return { where: file, engine: 'SQLite' };
  try {
    const u = new URL(database_url);
    u.password = '';
    u.searchParams.delete('password');
    return { where: u.toString(), engine: 'PostgreSQL' };
  } catch {
    // Not a URL at all: openStore refuses it in its own words; nothing of its text is repeated.
    return { where: 'DATABASE_URL (not a URL)', engine: 'PostgreSQL' };
  }
}

/** One line's words naming the database: `/abs/path/data/tollgate.db (SQLite)`. */
export function describeDatabase(database_url: string): string {
  const { where, engine } = databaseLocation(database_url);
  return `${where} (${engine})`;
}

/**
 * Refuses, outside `serve` and `migrate`, to open a SQLite database whose file is missing,
 * since opening would create it: the embedded default (DATABASE_URL unset) and a file a
 * DATABASE_URL names alike. The default's development master key is checked too (with a
 * DATABASE_URL the key is TOLLGATE_MASTER_KEY, required at start-up).
 */
export function requireExistingDatabase(settings: Settings, env: NodeJS.ProcessEnv = process.env): void {
  const file = sqliteFile(settings.database_url);
  if (file === null || file === ':memory:') return;
  if (env.DATABASE_URL) {
    if (!fs.existsSync(file))
      throw new CommandError(
        `no database at ${file} (DATABASE_URL): this command does not create one. Check DATABASE_URL names the gateway's database; to create a new one, run npx tollgate migrate with it (npx tollgate serve does too)`,
      );
    return;
  }
  const where = `Run it in the gateway's folder, or set TOLLGATE_DATA_DIR (or DATABASE_URL) to the gateway's database`;
  if (!fs.existsSync(file))
    throw new CommandError(
      `no database at ${file}: this command does not create one. ${where}; to create a new one, run npx tollgate migrate (npx tollgate serve does too)`,
    );
  const key = path.join(settings.data_dir, DEV_KEY_FILE);
  if (!settings.master_key && !fs.existsSync(key))
    throw new CommandError(
      `no master key at ${key} beside the database ${file}: the secrets in it cannot be read without the key that sealed them, and this command does not make one. Restore the file, or set TOLLGATE_MASTER_KEY to the gateway's key`,
    );
}
