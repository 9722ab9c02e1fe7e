// The V8 heap's growth under load (issue 15): how much garbage the gateway may carry.
import v8 from 'node:v8';

/**
 * Under load V8 lets the old generation grow to about 4× its live size before a full
 * collection: at authorise load that was ~190 MB of heap for ~50 MB live, and the gateway's
 * peak RSS 360 MiB (issue 15). A growing factor of 1.5 keeps it near 230 MiB at the same
 * throughput. An operator's own `node --heap-growing-percent=N` wins.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return false;
  v8.setFlagsFromString('--heap-growing-percent=50');
  return true;
}
