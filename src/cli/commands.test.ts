// The command list is the whole tool (issue 30 item 3): a command a capability exports but
// nobody lists would silently not exist. Every module that defines commands is read here
// and each command it exports must be in `commandList`, once, under a name of its own.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT, runnable } from '../test/process.js';
import { commandList } from './commands.js';

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
  const listed = new Set(commandList);
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
});
