// `npx tollgate settlement delay` and `settlement report` (docs/contract.md §23; issue 35): an
// account's settlement delay in days, and its batches of a day (or days) with their lines, as
// text, JSON or CSV.
import { command, need, out, UsageError } from '../command/registry.js';
import { formatAmount } from '../money/currency.js';
import { MAX_DELAY_DAYS, setDelayDays } from './batches.js';
import { batchRecord, lineRecord, listBatches, REPORT_BATCHES_MAX, reportCsv, reportLines } from './report.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function dayArg(v: unknown, name: string): string {
  const s = need(v as string | undefined, name);
  if (!DAY.test(s) || Number.isNaN(Date.parse(`${s}T00:00:00Z`)) || new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) !== s)
    throw new UsageError(`${name} must be a UTC day as YYYY-MM-DD; got ${JSON.stringify(s)}`);
  return s;
}

export const settlementDelayCommand = command({
  name: 'settlement delay',
  args: `--account ID --days N`,
  details: [
    `The days after a settlement batch's day (00:00 UTC) when its pending part (captures net of their fees) becomes available: 0 to ${MAX_DELAY_DAYS}; at the earliest when the batch closes, at the day's end. Default 1 (T+1). Batches closed from now on use it.`,
  ],
  options: { account: { type: 'string' }, days: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const raw = need(values.days, '--days');
    const days = /^\d{1,2}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(days >= 0 && days <= MAX_DELAY_DAYS)) throw new UsageError(`--days must be a whole number from 0 to ${MAX_DELAY_DAYS}; got ${JSON.stringify(raw)}`);
    const rt = await runtime();
    const account = await rt.store.db.selectFrom('accounts').select('account_id').where('account_id', '=', account_id).executeTakeFirst();
    if (!account) throw new UsageError(`no account ${account_id}`);
    await setDelayDays(rt.store, account_id, days, Date.now());
    out(`settlement delay for account ${account_id}: ${days} ${days === 1 ? 'day' : 'days'} (T+${days}); batches closed from now on use it`);
  },
});

export const settlementReportCommand = command({
  name: 'settlement report',
  args: '--account ID --date YYYY-MM-DD [--to YYYY-MM-DD] [--currency USD] [--format text|json|csv]',
  details: [
    `The account's settlement batches of that day (through --to, at most ${REPORT_BATCHES_MAX} batches), each with its lines: every balance movement with gross, fee and net. CSV has one row per line (columns: docs/finance.md).`,
  ],
  options: { account: { type: 'string' }, date: { type: 'string' }, to: { type: 'string' }, currency: { type: 'string' }, format: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const from = dayArg(values.date, '--date');
    const to = values.to === undefined ? from : dayArg(values.to, '--to');
    if (to < from) throw new UsageError('--to must not be before --date');
    const format = (values.format as string | undefined) ?? 'text';
    if (!['text', 'json', 'csv'].includes(format)) throw new UsageError('--format must be text, json or csv');
    const currency = (values.currency as string | undefined)?.toUpperCase();
    const db = (await runtime()).store.db;
    const batches = await listBatches(db, { account_id, from, to, currency });
    if (format === 'csv') {
      for await (const chunk of reportCsv(db, batches)) process.stdout.write(String(chunk));
      return;
    }
    if (format === 'json') {
      const all = [];
      for (const b of batches) all.push({ ...batchRecord(b), items: (await reportLines(db, b)).map((l) => lineRecord(b, l)) });
      return out(JSON.stringify(all));
    }
    if (batches.length === 0) return out(`no settlement batch of account ${account_id} from ${from} to ${to}`);
    for (const b of batches) {
      const m = (n: number) => `${formatAmount(Number(n), b.currency)} ${b.currency}`;
      out(
        `${b.batch_id}  ${b.day}  ${b.status}  ${b.lines} lines  gross ${m(b.gross_minor)}  fee ${m(b.fee_minor)}  net ${m(b.net_minor)}  available ${new Date(Number(b.available_at)).toISOString()}`,
      );
      for (const l of await reportLines(db, b))
        out(
          `  ${l.kind.padEnd(18)} ${(l.transaction_id || l.ref).padEnd(28)} ${l.order_no.padEnd(20)} ${m(l.gross_minor).padStart(16)} ${m(l.fee_minor).padStart(14)} ${m(l.net_minor).padStart(16)}`,
        );
    }
  },
});
