// A report read on a thread of its own (reader-thread.ts, parse.ts), its lines handed to the
// reconciler a batch at a time: the reconciler's thread spends its time on the database, the
// reader's on csv-parse, at once. The reader is never more than READ_AHEAD batches ahead (it
// waits for a credit per batch taken), so memory stays bounded whatever the file's size; a
// ReportError on the reader's thread is the same ReportError here, naming the line.
import { Worker } from 'node:worker_threads';
import { ReportError } from './columns.js';
import type { Connector, ReportLine } from './format.js';
import { decodeBatch, type FileFacts } from './parse.js';
import type { ReaderMessage } from './reader-thread.js';

/** Batches parsed ahead of the reconciler at most. */
export const READ_AHEAD = 4;

/**
 * The reader's thread: dist/…/reader-thread.js, or under tsx (tests, tools) the TypeScript
 * module through tsx's loader, which a worker does not inherit (as src/db/store.ts does).
 */
function readerThread(workerData: { file: string; connector: Connector; credits: number }): Worker {
  // A small heap: the thread holds a few batches and csv-parse's buffers (a record is at most
  // parse.ts's MAX_RECORD_BYTES), and its garbage is collected sooner (peak RSS, issue 35).
  const options = { workerData, resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 64 } };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./reader-thread.js', import.meta.url), options);
  const module = JSON.stringify(new URL('./reader-thread.ts', import.meta.url).href);
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${module}); })`, { ...options, eval: true });
}

/**
 * The report's lines in batches (parse.ts's BATCH_LINES); `facts` is filled when the last
 * batch was taken. A file that cannot be read throws a ReportError naming its line.
 */
export async function* readReport(file: string, connector: Connector, facts: FileFacts): AsyncGenerator<ReportLine[]> {
  const worker = readerThread({ file, connector, credits: READ_AHEAD });
  const inbox: ReaderMessage[] = [];
  let wake: (() => void) | null = null;
  let crashed: Error | null = null;
  const nudge = () => {
    wake?.();
    wake = null;
  };
  worker.on('message', (m: ReaderMessage) => {
    inbox.push(m);
    nudge();
  });
  worker.on('error', (e) => {
    crashed = e;
    nudge();
  });
  worker.on('exit', (code) => {
    crashed ??= new Error(`the report's reader stopped (exit ${code})`);
    nudge();
  });
  try {
    for (;;) {
      const m = inbox.shift();
      if (!m) {
        if (crashed) throw crashed;
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      if ('batch' in m) {
        yield decodeBatch(m.batch);
        worker.postMessage('more');
      } else if ('done' in m) {
        Object.assign(facts, m.done);
        return;
      } else if ('report_error' in m) throw new ReportError(m.report_error.line, m.report_error.reason);
      else throw new Error(`reading the report failed: ${m.failure}`);
    }
  } finally {
    worker.removeAllListeners();
    await worker.terminate();
  }
}
