// A day's settlement batch of 100,000 payments (issue 35: built in ≤ 10 s). Standalone:
//
//   node --import tsx bench/settlement.ts [--payments 100000] [--engine sqlite|postgres]
//
// A fresh database gets, by SQL inserts, N captured USD payments of one account within one UTC
// day with their ledger postings as `postInto` writes them (a capture from outside:
// processor_clearing −A, merchant_pending +A; its fee: merchant_pending −F, fees +F), and the
// sweep then closes that day (`closeBatches` just after midnight) and makes it available
// (`settleBatches`). Reports each step's seconds; fails unless the batch holds N capture lines
// whose sums are the seeded ones and `ledger verify`'s settlement checks pass. The last line,
// `BENCH_RESULT {…}`, is what `npm run bench` reads (bench/finance.ts).
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Keyring } from '../src/crypto/keyring.js';
import { migrateToLatest } from '../src/db/migrations.js';
import { migrationDb, openStore } from '../src/db/store.js';
import { verifySettlement } from '../src/ledger/settlement-verify.js';
import { MerchantService } from '../src/merchants/service.js';
import { closeBatches, settleBatches } from '../src/settlement/batches.js';
import { freshDatabase, MASTER_KEY } from '../src/test/process.js';

const { values: args } = parseArgs({ options: { payments: { type: 'string' }, engine: { type: 'string' } } });
const N = Number(args.payments ?? 100_000);
const ENGINE = (args.engine ?? 'sqlite') as 'sqlite' | 'postgres';
const DAY_START = Date.UTC(2026, 4, 1);
const STEP = Math.floor((86_400_000 - 1) / N);

/** Postings and entries of payments [1, N]: each a capture of 10.00–99.99 and its fee (2.9% + 0.30). */
function seedSql(engine: 'sqlite' | 'postgres'): string[] {
  const rows = engine === 'sqlite' ? 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $1)' : '';
  const from = engine === 'sqlite' ? 'FROM c' : 'FROM generate_series(1, $1::bigint) AS i';
  const pad = (x: string) => (engine === 'sqlite' ? `printf('%025d', ${x})` : `lpad((${x})::text, 25, '0')`);
  const tx = `'T' || ${pad('i')}`;
  const at = `(${DAY_START} + i * ${STEP})`;
  const amount = '(1000 + (i % 9000))';
  const fee = `((${amount} * 290 + 5000) / 10000 + 30)`;
  const posting = (k: string) => `'pst_${k}' || ${pad('i')}`;
  const p = (k: string, reason: string) =>
    `${rows} INSERT INTO ledger_postings (posting_id, account_id, currency, reason, transaction_id, ref, created_at) SELECT ${posting(k)}, $2, 'USD', '${reason}', ${tx}, '', ${at} ${from}`;
  const e = (k: string, n: number, account: string, sum: string) =>
    `${rows} INSERT INTO ledger_entries (entry_id, posting_id, account_id, currency, ledger_account, amount_minor, transaction_id, settled, created_at) SELECT ${posting(k)} || '.${n}', ${posting(k)}, $2, 'USD', '${account}', ${sum}, ${tx}, 0, ${at} ${from}`;
  return [
    p('c', 'capture'),
    e('c', 0, 'merchant_pending', amount),
    e('c', 1, 'processor_clearing', `-${amount}`),
    p('f', 'fee'),
    e('f', 0, 'fees', fee),
    e('f', 1, 'merchant_pending', `-${fee}`),
  ];
}

async function seed(url: string, account_id: string): Promise<void> {
  if (ENGINE === 'sqlite') {
    const raw = new Database(url.replace(/^sqlite:/, ''));
    raw.transaction(() => {
      for (const s of seedSql('sqlite')) raw.prepare(s.replaceAll('$1', '@n').replaceAll('$2', '@a')).run({ n: N, a: account_id });
    })();
    raw.close();
    return;
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  for (const s of seedSql('postgres')) await c.query(s, [N, account_id]);
  // Statistics, as autovacuum would gather them on a ledger that grew over days: without them the planner takes the
  // freshly filled tables for empty ones and joins them by nested scans (an hour for 100,000 payments).
  await c.query('ANALYZE ledger_postings, ledger_entries');
  await c.end();
}

async function main(): Promise<void> {
  const db = await freshDatabase(ENGINE, 'stl');
  const keyring = Keyring.parse(MASTER_KEY);
  let store = openStore(db.url);
  await migrateToLatest(migrationDb(store), { keyring, engine: ENGINE });
  const m = await new MerchantService(store, keyring).createMerchant({ name: 'settlement bench', mode: 'test', allow_ips: [] });
  await store.close();
  const t0 = performance.now();
  await seed(db.url, m.account_id);
  store = openStore(db.url);
  const seeded = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  const closed = await closeBatches(store, DAY_START + 86_400_000 + 60_000, m.account_id);
  const built = (performance.now() - t1) / 1000;
  const t2 = performance.now();
  const moved = await settleBatches(store, DAY_START + 86_400_000 + 60_000, m.account_id);
  const settled = (performance.now() - t2) / 1000;
  const b = closed[0];
  const problems: string[] = [];
  await verifySettlement(store.db, (p) => problems.push(p));
  await store.close();
  await db.drop();
  const ok = closed.length === 1 && Number(b?.lines) === N && moved === 2 * N && problems.length === 0;
  console.log(
    `settlement: ${N.toLocaleString('en')} payments in one day on ${ENGINE}: seeded in ${seeded.toFixed(1)} s; the day's batch built in ${built.toFixed(2)} s (target ≤ 10 s), made available in ${settled.toFixed(2)} s; ${b?.lines} lines, net ${b?.net_minor}; ${ok ? 'OK' : `FAILED ${JSON.stringify({ closed: closed.length, moved, problems: problems.slice(0, 3) })}`}`,
  );
  console.log(
    `BENCH_RESULT ${JSON.stringify({ engine: ENGINE, payments: N, seeded_s: seeded, built_s: built, settled_s: settled, lines: Number(b?.lines ?? 0), ok })}`,
  );
  if (!ok || built > 10) process.exitCode = 1;
}

await main();
