// The `pg` driver, loaded when a PostgreSQL store is first opened: a command on the embedded
// SQLite database does not pay for loading it (issue 36 item 6: every CLI command loaded both
// engines' drivers). `pg` is CommonJS, so it loads synchronously and openStore stays synchronous.
import { createRequire } from 'node:module';
import type pgModule from 'pg';

let loaded: typeof pgModule | null = null;

export function pgDriver(): typeof pgModule {
  if (loaded === null) {
    loaded = createRequire(import.meta.url)('pg') as typeof pgModule;
    // int8 (bigint) columns hold minor units and millisecond times, all far below 2^53.
    loaded.types.setTypeParser(20, (v) => Number(v));
    loaded.types.setTypeParser(1700, (v) => Number(v));
  }
  return loaded;
}
