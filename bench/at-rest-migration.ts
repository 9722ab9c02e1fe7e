// Issue 29: how long the at-rest migrations (0070-0072, and SQLite's VACUUM after them)
// take on a large database written in the old clear form.
//   npx tsx bench/at-rest-migration.ts [--engine sqlite|postgres] [--payments 1000000] [--payouts 200000] [--token-every 10]
// Seeds payments (every Nth answer carrying a token, with its card holding the token in
// clear), payouts with the full IBAN in their details and one payout.completed event each,
// on the schema of 0061; then times the next start's migration.
import Database from 'better-sqlite3';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { loadSettings, type Settings } from '../src/config/index.js';
import { Keyring } from '../src/crypto/keyring.js';
import { migrationsFor } from '../src/db/migrations.js';
import { migrationDb } from '../src/db/store.js';
import { createRuntime } from '../src/runtime.js';
import { freshDatabase } from '../src/test/process.js';
import { seedPayments } from './seed.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const engine = arg('engine', 'sqlite') as 'sqlite' | 'postgres';
const PAYMENTS = Number(arg('payments', '1000000'));
const PAYOUTS = Number(arg('payouts', '200000'));
const TOKEN_EVERY = Number(arg('token-every', '10'));
const KEY = `bench1:${Buffer.alloc(32, 9).toString('base64')}`;

const IBAN = 'DE89370400440532013000';
const DETAILS = JSON.stringify({
  request_id: '00000000-0000-4000-8000-000000000000',
  payment_currency: 'EUR',
  payment_method: 'LOCAL',
  reason: 'supplier invoice',
  reference: 'INV-1',
  source_currency: 'EUR',
  payment_amount: '10.00',
  beneficiary: {
    entity_type: 'PERSONAL',
    first_name: 'Lena',
    last_name: 'Schmidt',
    address: { country_code: 'DE', city: 'Berlin', street_address: 'Unter den Linden 1', postcode: '10117' },
    bank_details: { account_name: 'Lena Schmidt', iban: IBAN, bank_country_code: 'DE', account_currency: 'EUR', local_clearing_system: 'SEPA' },
  },
});
const PAYLOAD = JSON.stringify({ event_id: 'evt_P', event_type: 'payout.completed', created_at: '2026-01-01T00:00:00.000Z', data: JSON.parse(DETAILS) });

const PAYOUT_COLUMNS = `transaction_id, short_reference_id, merchant_id, account_id, livemode, request_id, request_hash, status, failure_type, failure_reason, payment_method, local_clearing_system, source_currency, payment_currency, amount_payer_pays, amount_beneficiary_receives, fee_amount, fee_paid_by, swift_charge_option, fx_rate, fx_source, payment_date, dispatch_at, beneficiary_id, details, notify_url, processor_reference, created_at, updated_at`;
const EVENT_COLUMNS = `event_id, merchant_id, account_id, event_type, object_id, notify_url, payload, status, attempts, next_attempt_at, lease_until, created_at, updated_at`;

async function main(): Promise<void> {
  const db = await freshDatabase(engine, 'atrest');
  const keyring = Keyring.parse(KEY);
  const settings: Settings = {
    ...loadSettings({}),
    database_url: db.url,
    data_dir: db.dir,
    master_key: KEY,
    log_level: 'silent',
    demo_merchant: false,
    worker_enabled: false,
  };
  try {
    const rt = await createRuntime(settings, { keyring });
    const m = await rt.merchants.createMerchant({ name: 'At-rest bench', allow_ips: ['127.0.0.1/32'] });
    const migrator = new Migrator({
      db: migrationDb(rt.store),
      provider: { getMigrations: async () => migrationsFor({ keyring, engine, rewritten: 0 }) },
    });
    const down = await migrator.migrateTo('0061_portal_search');
    if (down.error) throw down.error;
    await rt.store.close();

    const t0 = Date.now();
    await seedPayments(db, m, PAYMENTS);
    await seedOld(db.engine, db.url, db.file, m);
    const seeded = (Date.now() - t0) / 1000;
    console.log(`${engine}: seeded ${PAYMENTS} payments (every ${TOKEN_EVERY}th with a token), ${PAYOUTS} payouts + events in ${seeded.toFixed(1)} s`);

    const t1 = Date.now();
    const rt2 = await createRuntime(settings, { keyring });
    const migrated = (Date.now() - t1) / 1000;
    console.log(`${engine}: start with migrations 0070-0072${engine === 'sqlite' ? ' and VACUUM' : ''}: ${migrated.toFixed(1)} s`);
    if (engine === 'sqlite') {
      const t2 = Date.now();
      await sql`vacuum`.execute(migrationDb(rt2.store));
      console.log(`sqlite: a VACUUM of the migrated file alone: ${((Date.now() - t2) / 1000).toFixed(1)} s`);
    }
    const left = await rt2.store.db
      .selectFrom('payouts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('details', 'like', `%${IBAN}%`)
      .executeTakeFirstOrThrow();
    console.log(`${engine}: payouts still holding the IBAN: ${left.n}`);
    await rt2.store.close();
  } finally {
    await db.drop();
  }
}

async function seedOld(kind: 'sqlite' | 'postgres', url: string, file: string | undefined, m: { merchant_id: string; account_id: string }): Promise<void> {
  const now = Date.now();
  const tokenAnswer = `replace(answer, '"token_id":""', '"token_id":"tok_' || substr(transaction_id, 5) || '"')`;
  if (kind === 'sqlite') {
    const raw = new Database(file as string);
    raw.pragma('journal_mode = WAL');
    raw.pragma('foreign_keys = OFF'); // the cards are written after the payments that name them
    raw.transaction(() => {
      raw.prepare(`UPDATE payments SET answer = ${tokenAnswer}, card_id = 'card_' || transaction_id WHERE rowid % ? = 0`).run(TOKEN_EVERY);
      raw
        .prepare(`INSERT INTO cards (card_id, account_id, token_id, pan_enc, key_id, fingerprint, brand, bin, last4, exp_month, exp_year, created_at)
          SELECT card_id, account_id, 'tok_' || substr(transaction_id, 5), 'x', 'bench1', 'f', 'visa', '424242', '4242', 12, 2035, created_at FROM payments WHERE card_id IS NOT NULL`)
        .run();
      raw
        .prepare(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
          INSERT INTO payouts (${PAYOUT_COLUMNS}) SELECT printf('PO%024d', i), printf('P-%d', i), ?, ?, 0, printf('req-%d', i), 'h', 'COMPLETED', '', '', 'LOCAL', 'SEPA', 'EUR', 'EUR', 1000, 1000, 0, 'PAYER', '', '1.0', 'operator', '2026-01-01', ?, 'ben_1', ?, '', 'ref', ?, ? FROM c`)
        .run(PAYOUTS, m.merchant_id, m.account_id, now, DETAILS, now, now);
      raw
        .prepare(
          `INSERT INTO events (${EVENT_COLUMNS}) SELECT 'evt_' || transaction_id, merchant_id, account_id, 'payout.completed', transaction_id, '', ?, 'no_target', 0, created_at, 0, created_at, created_at FROM payouts`,
        )
        .run(PAYLOAD);
    })();
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
    return;
  }
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => {}); // the database is dropped under it when something failed
  await c.connect();
  await c.query('BEGIN');
  const tokened = `substr(transaction_id, 5)::bigint % ${TOKEN_EVERY} = 0`;
  // The cards first: the payments' foreign key to them is checked at once on PostgreSQL.
  await c.query(`INSERT INTO cards (card_id, account_id, token_id, pan_enc, key_id, fingerprint, brand, bin, last4, exp_month, exp_year, created_at)
    SELECT 'card_' || transaction_id, account_id, 'tok_' || substr(transaction_id, 5), 'x', 'bench1', 'f', 'visa', '424242', '4242', 12, 2035, created_at FROM payments WHERE ${tokened}`);
  await c.query(`UPDATE payments SET answer = ${tokenAnswer}, card_id = 'card_' || transaction_id WHERE ${tokened}`);
  await c.query(
    `INSERT INTO payouts (${PAYOUT_COLUMNS}) SELECT 'PO' || lpad(i::text, 24, '0'), 'P-' || i, $2, $3, 0, 'req-' || i, 'h', 'COMPLETED', '', '', 'LOCAL', 'SEPA', 'EUR', 'EUR', 1000, 1000, 0, 'PAYER', '', '1.0', 'operator', '2026-01-01', $4, 'ben_1', $5, '', 'ref', $4, $4 FROM generate_series(1, $1::bigint) AS i`,
    [PAYOUTS, m.merchant_id, m.account_id, now, DETAILS],
  );
  await c.query(
    `INSERT INTO events (${EVENT_COLUMNS}) SELECT 'evt_' || transaction_id, merchant_id, account_id, 'payout.completed', transaction_id, '', $1, 'no_target', 0, created_at, 0, created_at, created_at FROM payouts`,
    [PAYLOAD],
  );
  await c.query('COMMIT');
  await c.query('ANALYZE');
  await c.end();
}

await main();
