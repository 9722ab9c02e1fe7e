// Where a long-running command's own lines go (serve's banner and demo merchant, the cluster
// primary's lines, the worker's start line), in a module of its own so that `worker` does not
// import the HTTP application with serve.ts.
import type { Settings } from '../config/index.js';
import { createLogger } from '../web/logging.js';

/** Where the start-up lines (banner, demo merchant, cluster, worker) go; `tty`: whether secrets may be shown. */
export interface StartupOutput {
  out(line: string): void;
  warn(line: string): void;
  tty: boolean;
}

/**
 * Start-up lines follow the log format (issue 36 item 7): readable lines with readable logs;
 * with JSON logs each line is an info (or warn) record of the same logger, so a collector
 * reading standard output never meets a line it cannot parse. JSON logs are kept, so they
 * are never a terminal for the demo merchant's secrets.
 */
export function startupOutput(settings: Pick<Settings, 'log_level' | 'log_format'>): StartupOutput {
  if (settings.log_format === 'json') {
    const log = createLogger(settings);
    return {
      out: (line) => {
        const text = line.trim();
        if (text) log.info(text);
      },
      warn: (line) => log.warn(line.trim()),
      tty: false,
    };
  }
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    warn: (line) => process.stderr.write(`${line}\n`),
    tty: process.stdout.isTTY === true,
  };
}
