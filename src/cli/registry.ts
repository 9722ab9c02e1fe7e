// The command table, in its own module so capability CLI files (loaded by main.ts through
// commands.ts) can register without importing main.ts, which would deadlock on its
// top-level await.
import type { Runtime } from '../runtime.js';

export type Handler = (args: string[], rt: () => Promise<Runtime>) => Promise<void>;

/** Commands each capability registers: "merchant create", "ledger verify", … */
export const commands = new Map<string, { usage: string; run: Handler }>();

export class UsageError extends Error {}
