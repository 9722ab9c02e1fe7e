// The command registry, apart from main.ts: a capability's CLI file imports this, never
// main.ts, because main.ts loads those files with a top-level `await import` and an import
// back into main.ts would wait on itself forever (an ESM cycle through top-level await).
import type { Runtime } from '../runtime.js';

export type Handler = (args: string[], rt: () => Promise<Runtime>) => Promise<void>;

/** Commands each capability registers: "merchant create", "ledger verify", … */
export const commands = new Map<string, { usage: string; run: Handler }>();

export class UsageError extends Error {}
