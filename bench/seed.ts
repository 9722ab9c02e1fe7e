// Fills the database with stored transactions for the "1,000,000 stored" target: realistic
// payment rows (same columns, typical JSON sizes) plus one event each, written straight into
// the tables in big transactions while the gateway is stopped. The rows belong to the bench
// account, so its unique (account_id, order_no) index carries them too.
import Database from 'better-sqlite3';
import pg from 'pg';
import type { CreatedMerchant } from '../src/merchants/service.js';
import type { FreshDatabase } from '../src/test/process.js';

const DETAILS = JSON.stringify({
  website: 'shop.example.com',
  shopper_email: 'jane.doe@example.com',
  shopper_phone: '+1 415 555 0100',
  first_name: 'Jane',
  last_name: 'Doe',
  billing_country: 'US',
  billing_city: 'San Francisco',
  billing_address: '1 Market St',
  billing_postal_code: '94105',
  delivery_country: 'US',
  delivery_city: 'San Francisco',
  delivery_address: '1 Market St',
  reference_no: 'sbx_ref_0000000000',
});
const ANSWER = JSON.stringify({
  merchant_id: '1',
  account_id: '1',
  order_no: 'SEED',
  amount: '10.00',
  currency: 'USD',
  transaction_id: '01SEED0000000000000000000',
  card: '424242******4242',
  order_status: '1',
  result_info: '0000:Success',
  contract_name: '',
  recurring_id: '',
  recurring_deduction_period: '',
  recurring_deduction_time: '',
  note: '',
  token_id: '',
  connector: 'sandbox',
  threeds_result: '',
  risk_action: 'ACCEPT',
  risk_score: '0',
  risk_reasons: [{ name: 'sandbox_test_card', status: 'ACCEPT' }],
});
const REASONS = JSON.stringify([{ name: 'sandbox_test_card', status: 'ACCEPT' }]);
const PAYLOAD = JSON.stringify({ event_id: 'evt_SEED', event_type: 'payment.succeeded', created_at: '2025-01-01T00:00:00.000Z', data: JSON.parse(ANSWER) });
const CHUNK = 100_000;
const DAY_MS = 86_400_000;

/** Inserts `count` captured payments and their events; returns the seconds it took. */
export async function seedPayments(db: FreshDatabase, m: CreatedMerchant, count: number): Promise<number> {
  const t0 = Date.now();
  const since = Date.now() - 90 * DAY_MS;
  const step = Math.max(1, Math.floor((90 * DAY_MS) / count));
  if (db.engine === 'sqlite') {
    const raw = new Database(db.file as string);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    const pay = raw.prepare(`WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i < ?)
      INSERT INTO payments (transaction_id, merchant_id, account_id, order_no, kind, livemode, currency, amount_minor, authorised_minor, captured_minor, refunded_minor, status, capture_method, result_code, card_id, card_brand, card_masked, connector, is3ds, threeds_result, risk_score, risk_action, risk_reasons, notify_url, return_url, request_hash, details, answer, created_at, updated_at, expires_at) SELECT printf('SEED%022d', i), ?, ?, printf('SEED-%d', i), 'card', 0, 'USD', 1000 + (i % 9000), 0,
        1000 + (i % 9000), 0, 'captured', 'automatic', '0000', NULL, 'visa', '424242******4242', 'sandbox', 0, '', 0, 'ACCEPT',
        ?, '', '', printf('%064d', i), ?, ?, ? + i * ?, ? + i * ?, NULL FROM c`);
    const ev = raw.prepare(`WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i < ?)
      INSERT INTO events (event_id, merchant_id, account_id, event_type, object_id, notify_url, payload, status, attempts, next_attempt_at, lease_until, created_at, updated_at) SELECT printf('evt_SEED%022d', i), ?, ?, 'payment.succeeded', printf('SEED%022d', i), '', ?, 'no_target', 0,
        ? + i * ?, 0, ? + i * ?, ? + i * ? FROM c`);
    for (let from = 1; from <= count; from += CHUNK) {
      const to = Math.min(count, from + CHUNK - 1);
      raw.transaction(() => {
        pay.run(from, to, m.merchant_id, m.account_id, REASONS, DETAILS, ANSWER, since, step, since, step);
        ev.run(from, to, m.merchant_id, m.account_id, PAYLOAD, since, step, since, step, since, step);
      })();
    }
    raw.pragma('wal_checkpoint(TRUNCATE)');
    raw.close();
  } else {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    for (let from = 1; from <= count; from += CHUNK) {
      const to = Math.min(count, from + CHUNK - 1);
      await c.query('BEGIN');
      await c.query(
        `INSERT INTO payments (transaction_id, merchant_id, account_id, order_no, kind, livemode, currency, amount_minor, authorised_minor, captured_minor, refunded_minor, status, capture_method, result_code, card_id, card_brand, card_masked, connector, is3ds, threeds_result, risk_score, risk_action, risk_reasons, notify_url, return_url, request_hash, details, answer, created_at, updated_at, expires_at) SELECT 'SEED' || lpad(i::text, 22, '0'), $3, $4, 'SEED-' || i, 'card', 0, 'USD', 1000 + (i % 9000), 0,
          1000 + (i % 9000), 0, 'captured', 'automatic', '0000', NULL, 'visa', '424242******4242', 'sandbox', 0, '', 0, 'ACCEPT',
          $5, '', '', lpad(i::text, 64, '0'), $6, $7, $8::bigint + i * $9::bigint, $8::bigint + i * $9::bigint, NULL
          FROM generate_series($1::bigint, $2::bigint) AS i`,
        [from, to, m.merchant_id, m.account_id, REASONS, DETAILS, ANSWER, since, step],
      );
      await c.query(
        `INSERT INTO events (event_id, merchant_id, account_id, event_type, object_id, notify_url, payload, status, attempts, next_attempt_at, lease_until, created_at, updated_at) SELECT 'evt_SEED' || lpad(i::text, 22, '0'), $3, $4, 'payment.succeeded', 'SEED' || lpad(i::text, 22, '0'), '', $5,
          'no_target', 0, $6::bigint + i * $7::bigint, 0, $6::bigint + i * $7::bigint, $6::bigint + i * $7::bigint
          FROM generate_series($1::bigint, $2::bigint) AS i`,
        [from, to, m.merchant_id, m.account_id, PAYLOAD, since, step],
      );
      await c.query('COMMIT');
    }
    await c.query('ANALYZE payments');
    await c.query('ANALYZE events');
    await c.end();
  }
  return (Date.now() - t0) / 1000;
}
