// Reconciling a processor's settlement report with Tollgate's ledger (issue 35 item 3;
// decisions.md §23; docs/finance.md "Reconciling with your processor"). The report is read as a
// stream, BATCH_LINES lines at a time: the lines that name no payment of ours by themselves are
// named through our attempts' and disputes' processor references, the batch's payments'
// movements are read in one query, and each line is judged (match.ts). What the file lacks is
// found after it: Tollgate's movements of the connector and account within the file's date
// range (its first to last tracked line) that no line named. Nothing is written until the file
// was read to its end; then the run and its mismatches in one transaction.
import path from 'node:path';
import { newId } from '../../crypto/ids.js';
import type { Store } from '../../db/store.js';
import type { MismatchKind, ReconciliationItemRow, ReconciliationRunRow } from '../../db/tables/reconciliation.js';
import type { Connector, ReportLine, TrackedLine } from './format.js';
import { amountsOf, countReported, type Movement, movementKey, movementsOf, namedBy, type ReportedPosting, reportedPage } from './ledger.js';
import { type Category, judge } from './match.js';
import type { FileFacts } from './parse.js';
import { readReport } from './reader.js';
import { saveRun } from './runs.js';
import { KeySet, NumberList } from './seen.js';

/** Mismatch rows kept per run (docs/style.md §9); past it they are counted (`items_dropped`), not kept. */
export const MAX_ITEMS = 10_000;

export type WarnLog = (fields: Record<string, unknown>, message: string) => void;

export interface ReconcileInput {
  account_id: string;
  connector: Connector;
  file: string;
  max_items?: number;
  now?: () => number;
  /** Where the one line of a run with mismatches goes (warn). */
  warn?: WarnLog;
}

type Counts = Record<Category | 'not_applicable', number>;

/** One run's state while the file is read. */
class Run {
  readonly counts: Counts = { matched: 0, missing_here: 0, missing_at_processor: 0, amount_differs: 0, fee_differs: 0, not_applicable: 0 };
  readonly items: ReconciliationItemRow[] = [];
  dropped = 0;
  /** The movements named by a line so far, and the times of their reported postings. */
  readonly named = new KeySet();
  readonly namedTimes = new NumberList();
  from_ms: number | null = null;
  to_ms: number | null = null;

  constructor(
    readonly run_id: string,
    readonly connector: Connector,
    readonly max_items: number,
  ) {}

  keep(item: Omit<ReconciliationItemRow, 'run_id' | 'seq'>): void {
    this.counts[item.kind]++;
    if (this.items.length >= this.max_items) this.dropped++;
    else this.items.push({ run_id: this.run_id, seq: this.items.length + 1, ...item });
  }

  /** A line against the movement of its key (already read). */
  take(line: TrackedLine, movements: ReadonlyMap<string, Movement>): void {
    this.from_ms = Math.min(this.from_ms ?? line.at_ms, line.at_ms);
    this.to_ms = Math.max(this.to_ms ?? line.end_ms, line.end_ms);
    const key = movementKey(line.movement, line.transaction_id, line.refund_id, line.ordinal);
    const m = movements.get(key);
    const ours = m !== undefined && m.connector === this.connector && m.amount_minor > 0;
    const before = ours && !this.named.add(key);
    if (ours && !before) for (const t of m.times) this.namedTimes.push(t);
    const verdict = judge(line, m, this.connector, before);
    if (verdict.category === 'matched') {
      this.counts.matched++;
      return;
    }
    const found = verdict.category !== 'missing_here' ? m : undefined;
    this.keep({
      kind: verdict.category as MismatchKind,
      movement: line.movement,
      line_no: line.line,
      reference: line.reference,
      transaction_id: line.transaction_id || (m?.transaction_id ?? ''),
      refund_id: line.refund_id || (m?.refund_id ?? ''),
      ours_amount_minor: found ? found.amount_minor : null,
      theirs_amount_minor: line.amount_minor,
      ours_fee_minor: found ? found.fee_minor : null,
      theirs_fee_minor: line.fee_minor,
      currency: line.currency,
      detail: verdict.detail,
    });
  }
}

/** Names the lines that carry no payment (or no refund) of ours through their processor references. */
async function nameLines(store: Store, input: ReconcileInput, lines: TrackedLine[]): Promise<void> {
  const unnamed = lines.filter((l) => l.transaction_id === '' || ((l.movement === 'refund' || l.movement === 'refund_reversal') && l.refund_id === ''));
  if (unnamed.length === 0) return;
  const refs = [...new Set(unnamed.flatMap((l) => l.refs))];
  const named = await namedBy(store.db, input.account_id, input.connector, refs);
  for (const l of unnamed) {
    for (const ref of l.refs) {
      const n = named.get(ref);
      if (!n) continue;
      if (l.transaction_id === '') l.transaction_id = n.transaction_id;
      if (l.refund_id === '' && (l.movement === 'refund' || l.movement === 'refund_reversal')) l.refund_id = n.refund_id;
      if (l.transaction_id !== '' && (l.refund_id !== '' || (l.movement !== 'refund' && l.movement !== 'refund_reversal'))) break;
    }
  }
}

async function takeBatch(store: Store, input: ReconcileInput, run: Run, batch: ReportLine[]): Promise<void> {
  const tracked: TrackedLine[] = [];
  for (const l of batch) {
    if (l.movement === null) run.counts.not_applicable++;
    else tracked.push(l);
  }
  await nameLines(store, input, tracked);
  const ids = [...new Set(tracked.map((l) => l.transaction_id).filter((t) => t !== ''))];
  const movements = await movementsOf(store.db, input.account_id, ids);
  for (const l of tracked) run.take(l, movements);
}

/**
 * Tollgate's movements of the range that no line named. When the range holds no more reported
 * postings than the lines named, there is nothing to look for; otherwise the range is read a
 * page at a time, and only the postings no line named are looked at further (their connector,
 * their amount).
 */
async function findMissing(store: Store, input: ReconcileInput, run: Run): Promise<void> {
  if (run.from_ms === null || run.to_ms === null) return;
  const range = { from_ms: run.from_ms, to_ms: run.to_ms };
  const expected = await countReported(store.db, input.account_id, range.from_ms, range.to_ms);
  if (expected === run.namedTimes.countWithin(range.from_ms, range.to_ms)) return;
  const told = new KeySet();
  let after = '';
  for (;;) {
    const page = await reportedPage(store.db, input.account_id, range, after);
    if (page.length === 0) break;
    after = (page[page.length - 1] as ReportedPosting).posting_id;
    const unnamed = page.filter((p) => !run.named.has(p.key));
    const amounts = await amountsOf(
      store.db,
      input.connector,
      unnamed.map((p) => p.posting_id),
    );
    for (const p of unnamed) {
      const amount = amounts.get(p.posting_id);
      if (amount === undefined || !told.add(p.key)) continue;
      run.keep({
        kind: 'missing_at_processor',
        movement: p.kind,
        line_no: null,
        reference: p.posting_id,
        transaction_id: p.transaction_id,
        refund_id: p.refund_id,
        ours_amount_minor: amount,
        theirs_amount_minor: null,
        ours_fee_minor: null,
        theirs_fee_minor: null,
        currency: p.currency,
        detail: `in Tollgate's ledger within the file's dates (posting ${p.posting_id}), not in the file`,
      });
    }
  }
}

/** The run as it is kept. */
function runRow(input: ReconcileInput, run: Run, facts: FileFacts, started_at: number, finished_at: number): ReconciliationRunRow {
  const c = run.counts;
  return {
    run_id: run.run_id,
    account_id: input.account_id,
    connector: input.connector,
    file_name: path.basename(input.file),
    file_sha256: facts.sha256,
    file_bytes: facts.bytes,
    lines: facts.lines,
    from_ms: run.from_ms,
    to_ms: run.to_ms,
    ...c,
    mismatches: c.missing_here + c.missing_at_processor + c.amount_differs + c.fee_differs,
    items_kept: run.items.length,
    items_dropped: run.dropped,
    started_at,
    finished_at,
  };
}

/** The one line an operator sees for a run with mismatches. */
export function mismatchLine(r: ReconciliationRunRow): string {
  return (
    `reconciliation of account ${r.account_id} with ${r.connector}: ${r.mismatches} mismatch${r.mismatches === 1 ? '' : 'es'} in ${r.file_name} ` +
    `(${r.missing_here} missing here, ${r.missing_at_processor} missing at the processor, ${r.amount_differs} amount differs, ${r.fee_differs} fee differs; ` +
    `${r.matched} matched); run ${r.run_id}: npx tollgate reconcile show --run ${r.run_id}`
  );
}

/**
 * Reads `input.file` as `input.connector`'s report and reconciles it with the account's ledger;
 * keeps the run and answers it. A file that cannot be read throws a ReportError naming the line,
 * and nothing is written.
 */
export async function reconcileFile(store: Store, input: ReconcileInput): Promise<ReconciliationRunRow> {
  const now = input.now ?? Date.now;
  const started_at = now();
  const run = new Run(newId('reconciliation_run', started_at), input.connector, input.max_items ?? MAX_ITEMS);
  const facts: FileFacts = { bytes: 0, sha256: '', lines: 0 };
  for await (const batch of readReport(input.file, input.connector, facts)) await takeBatch(store, input, run, batch);
  await findMissing(store, input, run);
  const row = runRow(input, run, facts, started_at, now());
  await saveRun(store, row, run.items);
  if (row.mismatches > 0) {
    const { run_id, account_id, connector, mismatches, missing_here, missing_at_processor, amount_differs, fee_differs, file_name } = row;
    input.warn?.({ run_id, account_id, connector, mismatches, missing_here, missing_at_processor, amount_differs, fee_differs, file_name }, mismatchLine(row));
  }
  return row;
}
