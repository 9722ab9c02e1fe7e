// What a command is, in its own module so capability CLI files can define theirs without
// importing main.ts. Defining a command registers nothing: commands.ts lists every command
// explicitly, so no command depends on which module was imported first (issue 30 item 3).
// Each command declares its options; main.ts parses them, answers `--help`, and refuses an
// unknown `--account` before the command runs (issue 9).
import type { Settings } from '../config/index.js';
import type { Runtime } from '../web/context.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
}
export type OptionSpecs = Record<string, OptionSpec>;

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean'
  ? O['multiple'] extends true
    ? boolean[]
    : boolean
  : O['multiple'] extends true
    ? string[]
    : string;
export type Values<T extends OptionSpecs> = { [K in keyof T]?: ValueOf<T[K]> };

export interface Input<T extends OptionSpecs> {
  values: Values<T>;
  positionals: string[];
  /** The process settings (read from the environment on first use). */
  settings(): Settings;
  /** The runtime (database opened and migrated on first use, closed after the command). */
  runtime(): Promise<Runtime>;
}

export interface Command<T extends OptionSpecs = OptionSpecs> {
  /** One or two words: "balance", "merchant create", as src/cli/commands.ts lists it (with its one-line about). */
  name: string;
  /** What follows the name in the usage line: "--account ID [--json]". */
  args: string;
  /** Further lines printed by `--help`. */
  details?: string[];
  options: T;
  /** Whether positional arguments are taken (named in `args`). */
  positionals?: boolean;
  /**
   * Whether the command may create the embedded database and its development master key
   * (`serve`, `migrate`); every other command refuses to (database.ts, issue 36 item 6).
   */
  creates?: boolean;
  run(input: Input<T>): Promise<void>;
}

/** A command, typed by its options for its own `run`; listed in commands.ts to be run at all. */
export function command<const T extends OptionSpecs>(c: Command<T>): Command {
  return c as unknown as Command;
}

export function usageLine(c: Command): string {
  return c.args ? `${c.name} ${c.args}` : c.name;
}

/** The operator got the command line wrong: exit status 2 and the usage line. */
export class UsageError extends Error {}

/** The command line was right but the thing asked for cannot be done: exit status 1. */
export class CommandError extends Error {}

/** Account ids are digits (merchants/service.ts numbers them). */
const ACCOUNT_ID = /^\d{1,20}$/;

/**
 * The one refusal of an unknown account, for every command taking `--account` (main.ts calls
 * it before the command runs): a malformed id and an unknown one read the same.
 */
export async function requireAccount(rt: Runtime, account_id: string): Promise<string> {
  const found =
    ACCOUNT_ID.test(account_id) &&
    (await rt.store.db.selectFrom('accounts').select('account_id').where('account_id', '=', account_id).executeTakeFirst()) !== undefined;
  if (!found) throw new CommandError(`no account ${JSON.stringify(account_id)} (npx tollgate merchant list shows the accounts)`);
  return account_id;
}

export function need(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

/** Runs `fn`, turning its error into a usage error (a value the operator typed was refused). */
export function asUsage<R>(fn: () => R): R {
  try {
    return fn();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
