// The reader's thread (reader.ts): parses the report (parse.ts) while the reconciler's thread
// looks the previous batches up in the database, so a 1,000,000-line file costs the slower of
// the two, not their sum (issue 35 item 3: ≥ 50,000 lines/s). At most `credits` batches are
// ahead of the reconciler at any time: the file is read no faster than it is reconciled, and
// memory stays bounded.
import { parentPort, workerData } from 'node:worker_threads';
import { ReportError } from './columns.js';
import type { Connector } from './format.js';
import { FORMATS } from './formats.js';
import { encodeBatch, type FileFacts, parseReport } from './parse.js';

/** What the reader's thread says: a batch, the end with the file's facts, or why it stopped. */
export type ReaderMessage =
  | { batch: ReturnType<typeof encodeBatch> }
  | { done: FileFacts }
  | { report_error: { line: number; reason: string } }
  | { failure: string };

const port = parentPort;
if (!port) throw new Error('reader-thread.ts runs as a worker thread');
const { file, connector, credits: first } = workerData as { file: string; connector: Connector; credits: number };

let credits = first;
let resume: (() => void) | null = null;
port.on('message', () => {
  credits++;
  resume?.();
  resume = null;
});

async function run(): Promise<ReaderMessage> {
  const facts: FileFacts = { bytes: 0, sha256: '', lines: 0 };
  try {
    for await (const lines of parseReport(file, FORMATS[connector], facts)) {
      while (credits === 0) await new Promise<void>((r) => (resume = r));
      credits--;
      const batch = encodeBatch(lines);
      port?.postMessage({ batch } satisfies ReaderMessage, [batch.num.buffer as ArrayBuffer]);
    }
    return { done: facts };
  } catch (e) {
    if (e instanceof ReportError) return { report_error: { line: e.line, reason: e.reason } };
    return { failure: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
  }
}

port.postMessage(await run());
port.close();
