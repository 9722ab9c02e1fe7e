// `npx tollgate reconcile`, `reconcile show` and `reconcile list` (issue 35 item 3; decisions.md
// §23; docs/finance.md "Reconciling with your processor"): reconcile a processor's settlement
// report with an account's ledger and keep the run; read kept runs back.
import fs from 'node:fs';
import { CommandError, command, need, out, UsageError } from '../../command/registry.js';
import type { ReconciliationItemRow, ReconciliationRunRow } from '../../db/tables/reconciliation.js';
import { formatAmount } from '../../money/currency.js';
import { createLogger } from '../../web/logging.js';
import { ReportError } from './columns.js';
import type { Connector } from './format.js';
import { FORMATS } from './formats.js';
import { MAX_ITEMS, reconcileFile } from './reconcile.js';
import { listRuns, readRun } from './runs.js';

/** What each category of a run means, as `reconcile --help` and the summary say it. */
export const CATEGORIES: ReadonlyArray<readonly [key: keyof ReconciliationRunRow, label: string, meaning: string]> = [
  ['matched', 'matched', 'the line and a Tollgate movement agree: same payment, amount, currency and fee'],
  ['missing_here', 'missing here', 'a line of the processor Tollgate has no movement for (of this account and connector)'],
  ['missing_at_processor', 'missing at processor', "a Tollgate movement within the file's dates that no line reports"],
  ['amount_differs', 'amount differs', 'the same movement, another amount or currency'],
  ['fee_differs', 'fee differs', "the processor's fee for the movement is not the fee Tollgate charged the merchant for it"],
  ['not_applicable', 'not applicable', 'lines of types Tollgate does not track (fees invoiced, payouts, transfers, …)'],
];

const LIST_MAX = 100;
const SHOW_DEFAULT = 100;

const when = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString().replace('.000Z', 'Z'));
const count = (n: number) => n.toLocaleString('en-US');

function summary(r: ReconciliationRunRow): string[] {
  const lines = [
    `${r.file_name} (${count(r.lines)} lines, sha256 ${r.file_sha256.slice(0, 16)}…) against account ${r.account_id}'s ${r.connector} movements, ${when(r.from_ms)} to ${when(r.to_ms)}:`,
  ];
  for (const [key, label, meaning] of CATEGORIES) lines.push(`  ${label.padEnd(22)}${count(Number(r[key])).padStart(11)}   ${meaning}`);
  const dropped = r.items_dropped > 0 ? ` (the first ${count(r.items_kept)} kept, ${count(r.items_dropped)} more counted only)` : '';
  lines.push(
    r.mismatches === 0
      ? `run ${r.run_id}: no mismatches`
      : `run ${r.run_id}: ${count(r.mismatches)} mismatch${r.mismatches === 1 ? '' : 'es'}${dropped}: npx tollgate reconcile show --run ${r.run_id}`,
  );
  return lines;
}

const money = (minor: number | null, currency: string) => (minor === null ? '-' : formatAmount(minor, currency));

function itemLine(i: ReconciliationItemRow): string {
  const amounts = `amount ${money(i.ours_amount_minor, i.currency)} here / ${money(i.theirs_amount_minor, i.currency)} there`;
  const fees =
    i.ours_fee_minor === null && i.theirs_fee_minor === null ? '' : `, fee ${money(i.ours_fee_minor, i.currency)} / ${money(i.theirs_fee_minor, i.currency)}`;
  const line = i.line_no === null ? 'ledger' : `line ${i.line_no}`;
  const ids = [i.transaction_id, i.refund_id].filter((x) => x !== '').join(' ');
  return `${i.kind.padEnd(21)} ${line.padEnd(12)} ${i.movement.padEnd(15)} ${i.reference} ${ids || '-'} ${i.currency} ${amounts}${fees}: ${i.detail}`;
}

export const reconcileCommand = command({
  name: 'reconcile',
  args: '--account ID --connector adyen|stripe --file REPORT.csv [--json]',
  details: [
    "Reads the processor's settlement report (adyen: the Settlement details report CSV; stripe: the balance transactions export, or an itemised balance report) as a stream and matches every line to the account's ledger; the run and its mismatches are kept (the first 10,000).",
    ...CATEGORIES.map(([, label, meaning]) => `${label.padEnd(22)}${meaning}`),
    'A file that cannot be read (bad CSV, a missing column, a bad amount or time) is refused naming its line, and nothing is kept. Columns read: docs/finance.md.',
  ],
  options: { account: { type: 'string' }, connector: { type: 'string' }, file: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const connector = need(values.connector, '--connector');
    if (!(connector in FORMATS)) throw new UsageError(`--connector must be one of ${Object.keys(FORMATS).join(', ')}`);
    const file = need(values.file, '--file');
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CommandError(`no file ${JSON.stringify(file)}`);
    const rt = await runtime();
    // To standard error: standard output is the command's own (its --json).
    const log = createLogger(rt.settings, process.stderr);
    let run: ReconciliationRunRow;
    try {
      run = await reconcileFile(rt.store, { account_id, connector: connector as Connector, file, max_items: MAX_ITEMS, warn: (f, m) => log.warn(f, m) });
    } catch (e) {
      if (e instanceof ReportError) throw new CommandError(`${file}: ${e.message}; nothing was kept`);
      throw e;
    }
    if (values.json) return out(JSON.stringify(run));
    for (const line of summary(run)) out(line);
  },
});

export const reconcileShowCommand = command({
  name: 'reconcile show',
  args: `--run ID [--limit ${SHOW_DEFAULT}] [--json]`,
  details: ['A kept run: its counts, then its mismatches in the order found (file order, then the ledger’s movements the file lacks).'],
  options: { run: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const run_id = need(values.run, '--run');
    const limit = values.limit === undefined ? SHOW_DEFAULT : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_ITEMS) throw new UsageError(`--limit must be a whole number from 0 to ${MAX_ITEMS}`);
    const found = await readRun((await runtime()).store.db, run_id, limit);
    if (!found) throw new CommandError(`no reconciliation run ${JSON.stringify(run_id)} (npx tollgate reconcile list --account ID lists them)`);
    if (values.json) return out(JSON.stringify(found));
    for (const line of summary(found.run)) out(line);
    for (const i of found.items) out(itemLine(i));
    const more = found.run.items_kept - found.items.length;
    if (more > 0) out(`… ${count(more)} more kept (--limit N shows more)`);
  },
});

export const reconcileListCommand = command({
  name: 'reconcile list',
  args: '--account ID [--json]',
  details: [`The account's reconciliation runs, newest first (at most ${LIST_MAX}).`],
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const runs = await listRuns((await runtime()).store.db, need(values.account, '--account'), LIST_MAX);
    if (values.json) return out(JSON.stringify(runs));
    if (runs.length === 0) return out('no reconciliation runs');
    for (const r of runs) {
      out(
        `${r.run_id}  ${when(r.started_at)}  ${r.connector.padEnd(6)}  ${r.file_name}  ${count(r.lines)} lines  ${count(r.matched)} matched  ${count(r.mismatches)} mismatches`,
      );
    }
  },
});
