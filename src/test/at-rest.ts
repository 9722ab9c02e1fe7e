// What a database keeps at rest, for tests that prove a secret is not in it (issue 29): the
// SQLite file with its WAL (and rollback journal, if any), byte for byte, or `pg_dump`'s
// text of the PostgreSQL database (every live row of every table).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** The stored bytes of the database at `database_url` as latin1 text (SQLite) or the dump (PostgreSQL). */
export function storedText(database_url: string): string {
  if (database_url.startsWith('sqlite:')) {
    const file = database_url.slice('sqlite:'.length);
    return ['', '-wal', '-journal']
      .map((suffix) => `${file}${suffix}`)
      .filter((f) => fs.existsSync(f))
      .map((f) => fs.readFileSync(f).toString('latin1'))
      .join('\n');
  }
  // pg_dump must be at least the server's version (CI installs Debian's postgresql-client).
  return execFileSync('pg_dump', ['--no-owner', '--no-privileges', database_url], { encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
}

/** Which of `secrets` the stored bytes hold (as UTF-8 text; on SQLite also as UTF-16 text). */
export function secretsAtRest(database_url: string, secrets: readonly string[]): string[] {
  const text = storedText(database_url);
  return secrets.filter((s) => text.includes(s) || text.includes(Buffer.from(s, 'utf16le').toString('latin1')));
}
