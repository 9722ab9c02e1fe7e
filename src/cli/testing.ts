// Runs the operator CLI in the test's own process (fast enough to try every command), with
// its standard output and error captured apart. The database comes from the environment,
// as for `npx tollgate`: point DATABASE_URL and TOLLGATE_MASTER_KEY at a test gateway.
import { main } from './main.js';

export interface CliRun {
  code: number;
  stdout: string;
  /** The command's own errors and warnings. */
  stderr: string;
  /**
   * What main.ts says besides the command (to standard error in a real process): the
   * `database: …` line, a link's address note. Kept apart so that a command's own
   * standard error can be compared whole.
   */
  notices: string;
}

export async function runCli(...args: string[]): Promise<CliRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const notices: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  // The CLI prints strings; the test runner's own reports (buffers) pass through.
  process.stdout.write = ((c: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof c !== 'string') return (write as (...a: unknown[]) => boolean)(c, ...rest);
    stdout.push(c);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((c: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof c !== 'string') return (writeErr as (...a: unknown[]) => boolean)(c, ...rest);
    stderr.push(c);
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main(args, { notice: (line) => notices.push(`${line}\n`) });
    return { code, stdout: stdout.join(''), stderr: stderr.join(''), notices: notices.join('') };
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
}

/** Points the in-process CLI at a database (as the environment would for `npx tollgate`). */
export function useDatabase(database_url: string, master_key: string): void {
  process.env.DATABASE_URL = database_url;
  process.env.TOLLGATE_MASTER_KEY = master_key;
  process.env.TOLLGATE_LOG_LEVEL = 'silent';
}
