// The operator commands each capability registers ("merchant create", "blocklist add", …).
// Command files import this module, never main.ts: main.ts loads them with a top-level
// await, so importing main.ts from one of them would be a cycle that never settles.
import type { Runtime } from '../runtime.js';

export type Handler = (args: string[], rt: () => Promise<Runtime>) => Promise<void>;

export const commands = new Map<string, { usage: string; run: Handler }>();

export class UsageError extends Error {}
