// The command list is the whole tool (issue 30 item 3): a command a capability exports but
// nobody lists would silently not exist. Every module that defines commands is read here
// and each command it exports must be in `commandList`, once, under a name of its own; each
// listed loader must find its command (the list names modules, issue 36 item 6).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT, runnable } from '../test/process.js';
import { commandList, type loadAll } from './commands.js';

const SRC = path.join(ROOT, 'src');

/** Files that define commands: those that call `command({` (registry.ts's constructor). */
function commandModules(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'test' && e.name !== 'client') walk(p);
      } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && fs.readFileSync(p, 'utf8').includes('command({')) out.push(p);
    }
  };
  walk(SRC);
  return out;
}

function looksLikeCommand(v: unknown): v is { name: string; run: unknown } {
  return typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string' && typeof (v as { run?: unknown }).run === 'function';
}

test('every exported command is in commandList, once, and every name is unique', async () => {
  // The list loaded from the same build as the modules below (this file may run bundled), so
  // a command is the same object in both.
  const list = (await import(pathToFileURL(runnable(path.join(SRC, 'cli/commands.ts'))).href)) as { loadAll: typeof loadAll };
  const listed = new Set(await list.loadAll());
  const missing: string[] = [];
  let found = 0;
  for (const file of commandModules()) {
    const mod = (await import(pathToFileURL(runnable(file)).href)) as Record<string, unknown>;
    for (const [exported, value] of Object.entries(mod)) {
      if (!looksLikeCommand(value)) continue;
      found++;
      if (!listed.has(value as never)) missing.push(`${path.relative(SRC, file)}: ${exported} ("${value.name}")`);
    }
  }
  assert.ok(commandModules().length >= 10, 'the modules that define commands are found');
  assert.deepEqual(missing, [], 'exported but not listed in src/cli/commands.ts');
  assert.ok(found >= commandList.length, `read ${found} exported commands for ${commandList.length} listed`);
  const names = commandList.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, `a name is listed twice: ${names.join(', ')}`);
  assert.equal(listed.size, commandList.length, 'each entry loads a command of its own');
});

test('each listed command loads under its own name, with the one line help shows', async () => {
  for (const entry of commandList) {
    const c = await entry.load();
    assert.equal(c.name, entry.name);
    assert.match(entry.about, /^[^\n]{10,200}$/, `${entry.name}: one line`);
  }
});

test("the README's operator's tool names every command, and its group list every group (issue 36 item 7)", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /## The operator's tool\n+```sh\n([\s\S]*?)\n```/.exec(readme)?.[1];
  assert.ok(block, "README.md has the operator's tool block");
  // `npx tollgate ip add|remove --account …` names "ip add" and "ip remove"; `npx tollgate balance --account …` names "balance".
  const named = new Set<string>();
  for (const line of block.split('\n')) {
    const m = /npx tollgate ([a-z][a-z-]*)(?: ([a-z][a-z|-]*)(?=\s|$))?/.exec(line);
    if (!m) continue;
    named.add(m[1] as string);
    for (const sub of m[2]?.split('|') ?? []) named.add(`${m[1]} ${sub}`);
  }
  assert.deepEqual(
    commandList.map((c) => c.name).filter((n) => !named.has(n)),
    [],
    "commands missing from the README's list",
  );
  const listed = /npx tollgate <group>\s+# a group's commands: (.*)/.exec(block)?.[1]?.split(', ');
  const groups = new Set(commandList.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]));
  assert.deepEqual(new Set(listed), groups, "the README's group list");
});
