// A report file parsed as a stream (issue 35 item 3: a 1,000,000-line file in bounded memory):
// the bytes go through SHA-256 and csv-parse (RFC 4180 quoting, a byte-order mark dropped,
// blank lines skipped), the header row picks the format's columns, and the lines come out in
// batches. A structural fault (an unclosed quote, a row with another number of cells than the
// header, a line the format refuses) ends the reading with a ReportError naming the line. This
// runs on the reader's thread (reader-thread.ts); lines go to the reconciler as columns
// (`encodeBatch`), which cost the receiving thread far less than objects would.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { parse } from 'csv-parse';
import type { MovementKind } from '../../db/tables/reconciliation.js';
import { indexColumns, ReportError } from './columns.js';
import type { ReportFormat, ReportLine } from './format.js';

/** Lines handed over at a time: the reconciler's lookups take this many references per query. */
export const BATCH_LINES = 500;

/** The longest record read (a report line is a few hundred bytes): past it the file is refused at that line. */
export const MAX_RECORD_BYTES = 1 << 20;

/** What the reading found besides the lines, final once the batches are done. */
export interface FileFacts {
  bytes: number;
  sha256: string;
  /** Data lines (the header row not counted). */
  lines: number;
}

/** csv-parse's errors carry the line they stopped at; anything else is the file system's. */
export function asReportError(e: unknown, line: number): Error {
  if (e instanceof ReportError) return e;
  const err = e as Error & { code?: string; lines?: number };
  if (typeof err.code === 'string' && err.code.startsWith('CSV_')) {
    const reason = err.message.replace(/ (?:on|at) line \d+$/, '');
    return new ReportError(err.lines ?? line, `the file is not well-formed CSV: ${reason}`);
  }
  return err;
}

/** Newlines inside a record's cells (a quoted cell may hold some): the lines it spans past its first. */
function innerNewlines(record: readonly string[]): number {
  let n = 0;
  for (const cell of record) {
    if (cell.length === 0 || cell.indexOf('\n') === -1) continue;
    for (let i = cell.indexOf('\n'); i !== -1; i = cell.indexOf('\n', i + 1)) n++;
  }
  return n;
}

/**
 * Records into batches of lines, counting lines as it goes: csv-parse's own line count comes
 * only with an info object per record (`on_record`, `info`), which took a third of the parsing
 * time, so this counts a record's lines itself (one, plus newlines inside its cells; a blank
 * line is one) and checks each row's width against the header's.
 */
class Batcher {
  at: Record<string, number> | null = null;
  width = 0;
  line = 0;
  batch: ReportLine[] = [];
  readonly full: ReportLine[][] = [];

  constructor(
    readonly format: ReportFormat,
    readonly facts: FileFacts,
  ) {}

  take(record: string[]): void {
    if (record.length === 1 && record[0] === '') {
      this.line++;
      return;
    }
    this.line += 1 + innerNewlines(record);
    if (this.at === null) {
      this.at = indexColumns(record, this.format.columns, this.format.title);
      this.width = record.length;
      return;
    }
    if (record.length !== this.width)
      throw new ReportError(this.line, `the file is not well-formed CSV: a row of ${record.length} cells where the header row has ${this.width}`);
    this.facts.lines++;
    this.batch.push(this.format.read(record, this.at, this.line));
    if (this.batch.length === BATCH_LINES) this.flush();
  }

  flush(): void {
    if (this.batch.length > 0) this.full.push(this.batch);
    this.batch = [];
  }
}

/** Batches parsed ahead of the one taken at most; past it the parser pauses (and so the file). */
const PARSED_AHEAD = 2;

/**
 * The report's lines in batches of at most BATCH_LINES; `facts` is filled as the file is read
 * (its hash once the last batch was taken). An empty file or one whose header is not the
 * format's fails on line 1. Records are taken as csv-parse emits them (no promise per record).
 */
export async function* parseReport(file: string, format: ReportFormat, facts: FileFacts): AsyncGenerator<ReportLine[]> {
  const hash = createHash('sha256');
  const input = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  const parser = parse({ bom: true, relax_column_count: true, max_record_size: MAX_RECORD_BYTES });
  const batcher = new Batcher(format, facts);
  let failed: Error | null = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const nudge = () => {
    wake?.();
    wake = null;
  };
  const fail = (e: unknown) => {
    failed ??= asReportError(e, batcher.line);
    input.destroy();
    nudge();
  };
  input.on('data', (chunk) => {
    hash.update(chunk as Buffer);
    facts.bytes += chunk.length;
  });
  input.on('error', fail);
  parser.on('data', (record: string[]) => {
    if (failed) return;
    try {
      batcher.take(record);
    } catch (e) {
      return fail(e);
    }
    if (batcher.full.length >= PARSED_AHEAD) parser.pause();
    if (batcher.full.length > 0) nudge();
  });
  parser.on('error', fail);
  parser.on('end', () => {
    batcher.flush();
    ended = true;
    nudge();
  });
  input.pipe(parser);
  try {
    for (;;) {
      const next = batcher.full.shift();
      if (next) {
        if (parser.isPaused()) parser.resume();
        yield next;
      } else if (failed) throw failed;
      else if (ended) break;
      else await new Promise<void>((r) => (wake = r));
    }
  } finally {
    input.destroy();
    parser.destroy();
  }
  if (batcher.at === null) throw new ReportError(1, `the file is empty: ${format.title} starts with its header row`);
  facts.sha256 = hash.digest('hex');
}

const KINDS: readonly (MovementKind | null)[] = [null, 'capture', 'refund', 'refund_reversal', 'dispute', 'dispute_won'];
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));

/** A batch as columns: numbers in typed arrays (transferred, not copied), texts in arrays. */
export interface EncodedBatch {
  n: number;
  num: Float64Array;
  text: string[];
}

/** Numbers per line in `num`: line, kind, amount, fee (NaN: none), at, end, ordinal. Texts: type, transaction, refund, refs, reference, currency. */
const NUMS = 7;
const TEXTS = 6;
const REF_SEPARATOR = '\u0000';

export function encodeBatch(lines: readonly ReportLine[]): EncodedBatch {
  const num = new Float64Array(lines.length * NUMS);
  const text: string[] = new Array(lines.length * TEXTS).fill('');
  lines.forEach((l, i) => {
    const o = i * NUMS;
    const t = i * TEXTS;
    num[o] = l.line;
    num[o + 1] = KIND_CODE.get(l.movement) as number;
    text[t] = l.type;
    if (l.movement === null) return;
    num[o + 2] = l.amount_minor;
    num[o + 3] = l.fee_minor ?? Number.NaN;
    num[o + 4] = l.at_ms;
    num[o + 5] = l.end_ms;
    num[o + 6] = l.ordinal;
    text[t + 1] = l.transaction_id;
    text[t + 2] = l.refund_id;
    text[t + 3] = l.refs.join(REF_SEPARATOR);
    text[t + 4] = l.reference;
    text[t + 5] = l.currency;
  });
  return { n: lines.length, num, text };
}

export function decodeBatch(b: EncodedBatch): ReportLine[] {
  const out: ReportLine[] = new Array(b.n);
  for (let i = 0; i < b.n; i++) {
    const o = i * NUMS;
    const t = i * TEXTS;
    const movement = KINDS[b.num[o + 1] as number] ?? null;
    const line = b.num[o] as number;
    const type = b.text[t] as string;
    if (movement === null) {
      out[i] = { line, movement: null, type };
      continue;
    }
    const fee = b.num[o + 3] as number;
    const refs = b.text[t + 3] as string;
    out[i] = {
      line,
      movement,
      type,
      transaction_id: b.text[t + 1] as string,
      refund_id: b.text[t + 2] as string,
      refs: refs === '' ? [] : refs.split(REF_SEPARATOR),
      reference: b.text[t + 4] as string,
      amount_minor: b.num[o + 2] as number,
      currency: b.text[t + 5] as string,
      fee_minor: Number.isNaN(fee) ? null : fee,
      at_ms: b.num[o + 4] as number,
      end_ms: b.num[o + 5] as number,
      ordinal: b.num[o + 6] as number,
    };
  }
  return out;
}
