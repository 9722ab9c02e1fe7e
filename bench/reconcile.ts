// Reconciling a 1,000,000-line Adyen settlement details report (issue 35: target ≥ 50,000
// lines/s and peak RSS ≤ 256 MiB). A step of `npm run bench` (bench/finance.ts), or standalone:
//
//   node --import tsx bench/reconcile.ts [--lines 1000000] [--engine sqlite|postgres] [--missing 0] [--build dist]
//
// `--build DIR`: src already compiled there (the bench's `dist/`), else it is compiled into the
// run's folder. The last line, `BENCH_RESULT {…}`, is what `npm run bench` reads.
// A fresh database gets, by SQL inserts (a recursive CTE on SQLite, generate_series on
// PostgreSQL), N captured EUR payments of an Adyen account with their ledger postings as
// `postInto` writes them (a capture from outside: processor_clearing −A, merchant_pending +A;
// its fee at 2.9% + 0.30: merchant_pending −F, fees +F; posting ids time-ordered as `newId`
// makes them), one a day's 86 ms apart. The report has one Settled line per payment (Creation
// Date in CET, the fee in Commission (NC)); `--missing K` leaves out every K-th, so the run
// also reads the ledger's range for what the file lacks. The reconciliation runs in a child
// process, whose own peak RSS is what is reported (the seeding does not count); the run must
// come out with every line matched (and the left-out ones missing at the processor), or the
// bench fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Keyring } from '../src/crypto/keyring.js';
import { migrateToLatest } from '../src/db/migrations.js';
import { migrationDb, openStore } from '../src/db/store.js';
import { computeFee } from '../src/ledger/postings.js';
import { MerchantService } from '../src/merchants/service.js';
import { type FreshDatabase, freshDatabase, MASTER_KEY } from '../src/test/process.js';

const BASE_MS = Date.UTC(2026, 4, 1);
const DAY_MS = 86_400_000;
const CHUNK = 100_000;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const amountOf = (i: number) => 1000 + (i % 9000);
const txOf = (i: number) => `T${String(i).padStart(25, '0')}`;

/** The ten Crockford characters of a ms time (the time part of `timeOrderedId`) as SQL over `t`. */
function time10(engine: 'sqlite' | 'postgres', t: string): string {
  const parts: string[] = [];
  for (let k = 9; k >= 0; k--) {
    const digit = `((${t}) / ${32 ** k}) % 32`;
    parts.push(engine === 'sqlite' ? `substr('${CROCKFORD}', ${digit} + 1, 1)` : `substr('${CROCKFORD}', (${digit})::int + 1, 1)`);
  }
  return parts.join(' || ');
}

/** The statements that write payments [from, to]: payments, postings, entries, as SQL generating the rows. */
function seedSql(engine: 'sqlite' | 'postgres', step: number): string[] {
  const pad = (w: number) => (engine === 'sqlite' ? (x: string) => `printf('%0${w}d', ${x})` : (x: string) => `lpad((${x})::text, ${w}, '0')`);
  const tx = `'T' || ${pad(25)('i')}`;
  const at = `(${BASE_MS} + i * ${step})`;
  const amount = '(1000 + (i % 9000))';
  const fee = `((${amount} * 290 + 5000) / 10000 + 30)`;
  const rows = engine === 'sqlite' ? 'WITH RECURSIVE c(i) AS (SELECT $1 UNION ALL SELECT i + 1 FROM c WHERE i < $2)' : '';
  const from = engine === 'sqlite' ? 'FROM c' : 'FROM generate_series($1::bigint, $2::bigint) AS i';
  const posting = (letter: string) => `'pst_' || ${time10(engine, at)} || '${letter}' || ${pad(15)('i')}`;
  const entry = (letter: string, n: number, account: string, amountSql: string) =>
    `${rows} INSERT INTO ledger_entries (entry_id, posting_id, account_id, currency, ledger_account, amount_minor, transaction_id, settled, created_at)
     SELECT ${posting(letter)} || '.${n}', ${posting(letter)}, $3, 'EUR', '${account}', ${amountSql}, ${tx}, 0, ${at} ${from}`;
  return [
    `${rows} INSERT INTO payments (transaction_id, merchant_id, account_id, order_no, kind, livemode, currency, amount_minor, authorised_minor, captured_minor, refunded_minor, status, capture_method, result_code, card_id, card_brand, card_masked, connector, is3ds, threeds_result, risk_score, risk_action, risk_reasons, notify_url, return_url, request_hash, details, answer, created_at, updated_at, expires_at)
     SELECT ${tx}, $4, $3, 'R-' || i, 'card', 1, 'EUR', ${amount}, 0, ${amount}, 0, 'captured', 'automatic', '0000', NULL, 'visa', '411111******1111', 'adyen', 0, '', 0, 'ACCEPT', '[]', '', '', ${pad(64)('i')}, '{}', '{}', ${at}, ${at}, NULL ${from}`,
    `${rows} INSERT INTO ledger_postings (posting_id, account_id, currency, reason, transaction_id, ref, created_at) SELECT ${posting('C')}, $3, 'EUR', 'capture', ${tx}, '', ${at} ${from}`,
    `${rows} INSERT INTO ledger_postings (posting_id, account_id, currency, reason, transaction_id, ref, created_at) SELECT ${posting('F')}, $3, 'EUR', 'fee', ${tx}, '', ${at} ${from}`,
    entry('C', 0, 'merchant_pending', amount),
    entry('C', 1, 'processor_clearing', `-${amount}`),
    entry('F', 0, 'fees', fee),
    entry('F', 1, 'merchant_pending', `-${fee}`),
  ];
}

async function seed(db: FreshDatabase, lines: number, account_id: string, merchant_id: string): Promise<number> {
  const t0 = Date.now();
  const statements = seedSql(db.engine, Math.floor(DAY_MS / lines));
  if (db.engine === 'sqlite') {
    const raw = new Database(db.file as string);
    raw.pragma('journal_mode = WAL');
    const prepared = statements.map((s) => raw.prepare(s.replaceAll(/\$(\d)/g, '?$1')));
    for (let from = 1; from <= lines; from += CHUNK) {
      const to = Math.min(lines, from + CHUNK - 1);
      raw.transaction(() => {
        for (const p of prepared) p.run({ 1: BigInt(from), 2: BigInt(to), 3: account_id, 4: merchant_id } as never);
      })();
    }
    raw.exec('ANALYZE');
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
  } else {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      for (let from = 1; from <= lines; from += CHUNK) {
        const to = Math.min(lines, from + CHUNK - 1);
        await c.query('BEGIN');
        for (const s of statements) await c.query(s, [from, to, account_id, merchant_id].slice(0, s.includes('$4') ? 4 : 3));
        await c.query('COMMIT');
      }
      await c.query('ANALYZE');
    } finally {
      await c.end();
    }
  }
  return (Date.now() - t0) / 1000;
}

const HEADER =
  'Company Account,Merchant Account,Psp Reference,Merchant Reference,Payment Method,Creation Date,TimeZone,Type,Modification Reference,Gross Currency,Gross Debit (GC),Gross Credit (GC),Exchange Rate,Net Currency,Net Debit (NC),Net Credit (NC),Commission (NC),Markup (NC),Scheme Fees (NC),Interchange (NC),Payment Method Variant,Modification Merchant Reference,Batch Number,Reserved4,Reserved5,Reserved6,Reserved7,Reserved8,Reserved9,Reserved10';
const euros = (minor: number) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/**
 * The report: one Settled line per payment but every `missing`-th. Answers the lines written and
 * how many left out lie within the file's dates (one after its last line is not missing: the
 * file's dates end before it).
 */
async function writeReport(file: string, lines: number, missing: number): Promise<{ written: number; missing_within: number }> {
  const out = fs.createWriteStream(file);
  const step = Math.floor(DAY_MS / lines);
  let written = 0;
  let left_out = 0;
  let last = 0;
  let buf = `${HEADER}\n`;
  for (let i = 1; i <= lines; i++) {
    if (missing > 0 && i % missing === 0) {
      left_out++;
      continue;
    }
    last = i;
    const a = amountOf(i);
    const f = computeFee(a, 290, 30);
    const cet = new Date(BASE_MS + i * step + 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
    const psp = String(8_800_000_000_000_000 + i);
    buf += `TollgateCo,TollgateECOM,${psp},${txOf(i)},visa,${cet},CET,Settled,${psp},EUR,,${euros(a)},1,EUR,,${euros(a - f)},${euros(f)},,,,visa,${txOf(i)},42,,,,,,,\n`;
    written++;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.on('finish', () => r()));
  const after_last = missing > 0 ? Math.floor(lines / missing) - Math.floor(last / missing) : 0;
  return { written, missing_within: left_out - after_last };
}

/**
 * The child: one reconciliation from the compiled build (as `npx tollgate reconcile` runs, without
 * tsx's loader in either thread), its time and its own peak RSS as one JSON line.
 */
const CHILD = `
import fs from 'node:fs';
const [build, url, account_id, file] = process.argv.slice(2);
const { openStore } = await import(build + '/db/store.js');
const { reconcileFile } = await import(build + '/settlement/reconcile/reconcile.js');
// CPU seconds of each thread (Linux: /proc/self/task), sampled: the reconciler's (the process's
// own id) and the busiest other, the reader's, whatever else the machine runs at the time.
const ticks = new Map();
const sample = () => {
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      const f = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ');
      ticks.set(tid, Number(f[11]) + Number(f[12]));
    }
  } catch {}
};
const timer = setInterval(sample, 100);
const store = openStore(url);
const t0 = performance.now();
const run = await reconcileFile(store, { account_id, connector: 'adyen', file });
const seconds = (performance.now() - t0) / 1000;
clearInterval(timer);
sample();
await store.close();
const cpu = process.cpuUsage();
const main_s = (ticks.get(String(process.pid)) ?? 0) / 100;
ticks.delete(String(process.pid));
const threads_s = [main_s, Math.max(0, ...ticks.values()) / 100];
process.stdout.write(JSON.stringify({ run, seconds, cpu_s: (cpu.user + cpu.system) / 1e6, threads_s, max_rss_kib: process.resourceUsage().maxRSS }) + '\\n');
`;

/** src compiled as `npm run build` does, into `dir` (node_modules linked beside it). */
function build(dir: string): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json'), '--outDir', dir], {
    encoding: 'utf8',
  });
  if (!fs.existsSync(path.join(dir, 'settlement/reconcile/reconcile.js'))) throw new Error(`the build failed: ${r.stdout}${r.stderr}`);
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { lines: { type: 'string' }, engine: { type: 'string' }, missing: { type: 'string' }, build: { type: 'string' } } });
  const lines = Number(values.lines ?? 1_000_000);
  const missing = Number(values.missing ?? 0);
  const engine = (values.engine ?? 'sqlite') as 'sqlite' | 'postgres';
  const db = await freshDatabase(engine, 'rec');
  try {
    const store = openStore(db.url);
    await migrateToLatest(migrationDb(store), { keyring: Keyring.parse(MASTER_KEY), engine });
    const m = await new MerchantService(store, Keyring.parse(MASTER_KEY)).createMerchant({ name: 'Reconciled', mode: 'live', allow_ips: [] });
    await store.close();
    const seeded = await seed(db, lines, m.account_id, m.merchant_id);
    const file = path.join(db.dir, 'settlement_detail_report_batch_1.csv');
    const { written, missing_within } = await writeReport(file, lines, missing);
    console.log(
      `${engine}: ${lines.toLocaleString('en-US')} payments seeded in ${seeded.toFixed(1)} s; report of ${written.toLocaleString('en-US')} lines, ${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MiB`,
    );
    const compiled = values.build ? path.resolve(values.build) : path.join(db.dir, 'build');
    if (!values.build) build(compiled);
    else if (!fs.existsSync(path.join(compiled, 'settlement/reconcile/reconcile.js')))
      throw new Error(`--build ${values.build}: no compiled reconcile.js there`);
    // A file, not `node -e`: the reader's worker thread would inherit `--input-type`, which a file worker refuses.
    const child = path.join(db.dir, 'bench-child.mjs');
    fs.writeFileSync(child, CHILD);
    const r = spawnSync(process.execPath, [child, compiled, db.url, m.account_id, file], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) throw new Error(`the reconciliation failed: ${r.stderr}`);
    const { run, seconds, cpu_s, threads_s, max_rss_kib } = JSON.parse(r.stdout.trim().split('\n').pop() as string);
    const expectMissing = missing_within;
    if (run.matched !== written || run.missing_at_processor !== expectMissing || run.mismatches !== expectMissing) {
      throw new Error(`the run is not what the data says: ${JSON.stringify(run)}`);
    }
    const rate = written / seconds;
    const rss = max_rss_kib / 1024;
    console.log(
      `reconcile: ${written.toLocaleString('en-US')} lines in ${seconds.toFixed(2)} s = ${Math.round(rate).toLocaleString('en-US')} lines/s (target ≥ 50,000); peak RSS ${rss.toFixed(0)} MiB (target ≤ 256)`,
    );
    const [main_s, reader_s] = threads_s as number[];
    console.log(
      `  matched ${run.matched}, missing at processor ${run.missing_at_processor}, mismatches ${run.mismatches}; CPU ${cpu_s.toFixed(1)} s in all, the reconciler's thread ${main_s?.toFixed(1)} s, the reader's ${reader_s?.toFixed(1)} s (load average ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} cores)`,
    );
    console.log(
      `BENCH_RESULT ${JSON.stringify({ engine, lines: written, seeded_s: seeded, seconds, lines_per_s: rate, peak_rss_mib: rss, cpu_s, threads_s })}`,
    );
    if (rate < 50_000 || rss > 256) process.exitCode = 1;
  } finally {
    if (!process.env.BENCH_KEEP) await db.drop();
    else console.log(`kept ${db.url}`);
  }
}

await main();
