// `npx tollgate <command>`: the operator's tool (docs/contract.md §13). Each capability defines its
// commands and commands.ts lists them all, in help order; this file parses a command
// line, prints help, refuses an unknown account, and maps errors to exit statuses:
// 0 done (or help asked for), 1 refused (unknown account, bad input), 2 usage mistake.
import { parseArgs } from 'node:util';
import { type Command, type OptionSpecs, out, requireAccount, UsageError, usageLine, type Values } from '../command/registry.js';
import { loadSettings, type Settings } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import { commands, type Listed, printsLinks } from './commands.js';
import { describeDatabase, requireExistingDatabase } from './database.js';

export { commands, UsageError };

/** Where `main` says what it did besides the command's own output: which database it opened, a link's address. */
export interface MainOutput {
  notice(line: string): void;
}

const STDERR: MainOutput = { notice: (line) => process.stderr.write(`${line}\n`) };

const err = (line = ''): void => {
  process.stderr.write(`${line}\n`);
};

/** A group is the first word of two-word commands: "merchant", "ledger", … */
function groups(): Map<string, Listed[]> {
  const map = new Map<string, Listed[]>();
  for (const c of commands.values()) {
    const [group, sub] = c.name.split(' ');
    if (!sub) continue;
    const list = map.get(group as string) ?? [];
    list.push(c);
    map.set(group as string, list);
  }
  return map;
}

async function commandHelp(listed: Listed, print: (line?: string) => void): Promise<void> {
  const c = await listed.load();
  print(`usage: npx tollgate ${usageLine(c)}`);
  print(`  ${listed.about}`);
  for (const line of c.details ?? []) print(`  ${line}`);
  print('  -h, --help   this help');
  // A command that is also a group's name (`balance`, `balance top-up`): the group too.
  if (groups().has(c.name)) {
    print();
    await groupHelp(c.name, print);
  }
}

/** A group's commands with their usage lines: only that group's modules are loaded. */
async function groupHelp(group: string, print: (line?: string) => void): Promise<void> {
  const listed = groups().get(group) ?? [];
  const loaded = await Promise.all(listed.map((l) => l.load()));
  print(`npx tollgate ${group} <command>:`);
  listed.forEach((l, i) => {
    print(`  ${usageLine(loaded[i] as Command)}`);
    print(`      ${l.about}`);
  });
  print(`\nnpx tollgate ${group} <command> --help shows one command's usage.`);
}

/** Every command's name and line: from the list alone, no command's module is loaded. */
function topHelp(print: (line?: string) => void): void {
  print('Usage: npx tollgate <command> [options]');
  print('       npx tollgate <command> --help    one command: its options and what they mean');
  print(`       npx tollgate <group>             a group's commands (${[...groups().keys()].join(', ')})\n`);
  print('Commands:');
  const width = Math.max(...[...commands.keys()].map((name) => name.length));
  for (const c of commands.values()) print(`  ${c.name.padEnd(width)}  ${c.about}`);
}

/** `--help` or `-h` anywhere before a `--` terminator. */
function asksHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** The command named by the first one or two words, and the arguments after its name. */
function resolve(argv: string[]): { listed: Listed; args: string[] } | null {
  const [first, second] = argv;
  const two = commands.get(`${first} ${second}`);
  if (two) return { listed: two, args: argv.slice(2) };
  const one = commands.get(first as string);
  return one ? { listed: one, args: argv.slice(1) } : null;
}

async function help(topic: string[]): Promise<number> {
  if (topic.length === 0) {
    topHelp(out);
    return 0;
  }
  const found = resolve(topic);
  if (found) {
    await commandHelp(found.listed, out);
    return 0;
  }
  if (groups().has(topic[0] as string)) {
    await groupHelp(topic[0] as string, out);
    return 0;
  }
  err(`no command "${topic.join(' ')}"\n`);
  topHelp(err);
  return 2;
}

function parse(cmd: Command, args: string[]) {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: cmd.options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(argumentProblem(e as Error & { code?: string }));
  }
  if (!cmd.positionals && parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  return parsed;
}

/** node:util's parseArgs refusals in the CLI's own words (its texts name its API). */
export function argumentProblem(e: Error & { code?: string }): string {
  const option = /'(-{1,2}[^' <]+)/.exec(e.message)?.[1] ?? 'an option';
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}`;
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return /does not take an argument/.test(e.message) ? `${option} takes no value` : `${option} needs a value`;
  }
  return e.message;
}

/**
 * The database, opened and migrated on first use. Outside `serve` and `migrate` the embedded
 * default is not created (database.ts); the line naming it goes to standard error, apart from
 * the command's output (which may be --json). The runtime module, with the database drivers, is
 * imported here, so a command that needs no database does not load them (issue 36 item 6).
 */
async function openRuntime(cmd: Command, settings: Settings, output: MainOutput): Promise<Runtime> {
  if (!cmd.creates) requireExistingDatabase(settings);
  output.notice(`database: ${describeDatabase(settings.database_url)}`);
  const { createRuntime } = await import('../runtime.js');
  // The CLI runs SQLite on its own thread (docs/ARCHITECTURE.md, Storage): the reader and writer
  // threads serve a gateway's hot path, and starting them cost a command two more isolates.
  return createRuntime({ ...settings, sqlite_threads: false }, { metricsDefaults: false });
}

/** After a command that printed a link: the address it used, when TOLLGATE_PUBLIC_URL did not give it. */
function linkNote(settings: Settings, output: MainOutput): void {
  if (process.env.TOLLGATE_PUBLIC_URL) return;
  output.notice(
    `note: the link uses ${settings.public_url}, made of HOST and PORT as this command sees them; if the gateway is reached at another address, set TOLLGATE_PUBLIC_URL to it (e.g. TOLLGATE_PUBLIC_URL=https://pay.example.com) and run the command again`,
  );
}

export async function main(argv: string[], output: MainOutput = STDERR): Promise<number> {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h') return help([]);
  if (first === 'help') return help(argv.slice(1));
  const found = resolve(argv);
  if (!found) {
    if (groups().has(first)) {
      // `npx tollgate merchant` (or `merchant --help`): the group's commands.
      if (second === undefined || asksHelp([second])) return help([first]);
      err(`no command "${first} ${second}"\n`);
      await groupHelp(first, err);
      return 2;
    }
    err(`unknown command "${first}"\n`);
    topHelp(err);
    return 2;
  }
  const { listed, args } = found;
  const cmd = await listed.load();
  // A command that is also a group, called bare but needing options: its usage and the group's commands.
  if (args.length === 0 && groups().has(cmd.name) && Object.keys(cmd.options).length > 0 && !cmd.positionals) return help([first]);
  if (asksHelp(args)) {
    await commandHelp(listed, out);
    return 0;
  }
  let settings: Settings | null = null;
  let runtime: Runtime | null = null;
  const input = {
    settings: () => {
      settings ??= loadSettings();
      return settings;
    },
    runtime: async () => {
      runtime ??= await openRuntime(cmd, input.settings(), output);
      return runtime;
    },
  };
  try {
    const { values, positionals } = parse(cmd, args);
    // Every command taking --account refuses an unknown one the same way, before it runs.
    if ('account' in cmd.options && typeof values.account === 'string') await requireAccount(await input.runtime(), values.account);
    await cmd.run({ values: values as Values<OptionSpecs>, positionals, ...input });
    if (printsLinks.has(cmd.name)) linkNote(input.settings(), output);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err(`${e.message}\nusage: npx tollgate ${usageLine(cmd)}   (--help for more)`);
      return 2;
    }
    err(`error: ${(e as Error).message}`);
    return 1;
  } finally {
    const r = runtime as Runtime | null;
    if (r) await r.store.close();
  }
}
