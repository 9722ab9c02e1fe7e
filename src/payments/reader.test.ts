// The reader's statements, pinned as text on both engines' dialects: the order query of 100
// ids and the portal's searches are performance targets, and their plans follow from these
// exact statements (src/payments/reader.ts). A change here is a change of plan: measure it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { DB } from '../db/schema.js';
import * as reader from './reader.js';

/** A Kysely of `engine`'s dialect that runs nothing (every read answers no rows) and records each statement. */
function recording(engine: 'sqlite' | 'postgres') {
  const seen: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const pg = engine === 'postgres';
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => (pg ? new PostgresAdapter() : new SqliteAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (k) => (pg ? new PostgresIntrospector(k) : new SqliteIntrospector(k)),
      createQueryCompiler: () => (pg ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
    },
    log: (e) => {
      if (e.level === 'query') seen.push({ sql: e.query.sql, parameters: e.query.parameters });
    },
  });
  return { db, seen };
}

const ORDER_COLUMNS =
  '"transaction_id", "order_no", "amount_minor", "currency", "captured_minor", "refunded_minor", "status", "is3ds", "risk_action", "risk_reasons", "details", "created_at", "card_masked", "result_code"';

/** Each read, what it runs, and its statement with SQLite's placeholders (`?`; PostgreSQL numbers them). */
const CASES: Array<{ name: string; run: (db: Kysely<DB>) => Promise<unknown>; sql: string; parameters: unknown[] }> = [
  { name: 'paymentById', run: (db) => reader.paymentById(db, 'T1'), sql: 'select * from "payments" where "transaction_id" = ?', parameters: ['T1'] },
  {
    name: 'requirePayment',
    run: (db) => reader.requirePayment(db, 'T1').catch(() => undefined),
    sql: 'select * from "payments" where "transaction_id" = ?',
    parameters: ['T1'],
  },
  {
    name: 'paymentColumns',
    run: (db) => reader.paymentColumns(db, 'T1', ['status']),
    sql: 'select "status" from "payments" where "transaction_id" = ?',
    parameters: ['T1'],
  },
  {
    name: 'requirePaymentColumns',
    run: (db) => reader.requirePaymentColumns(db, 'T1', ['details']).catch(() => undefined),
    sql: 'select "details" from "payments" where "transaction_id" = ?',
    parameters: ['T1'],
  },
  {
    name: 'accountPaymentColumns',
    run: (db) => reader.accountPaymentColumns(db, 'A1', 'T1', ['status', 'captured_minor', 'currency']),
    sql: 'select "status", "captured_minor", "currency" from "payments" where "transaction_id" = ? and "account_id" = ?',
    parameters: ['T1', 'A1'],
  },
  {
    name: 'accountPayment',
    run: (db) => reader.accountPayment(db, 'A1', 'T1'),
    sql: 'select * from "payments" where "transaction_id" = ? and "account_id" = ?',
    parameters: ['T1', 'A1'],
  },
  {
    name: 'paymentByOrderNo',
    run: (db) => reader.paymentByOrderNo(db, 'A1', 'O1'),
    sql: 'select * from "payments" where "account_id" = ? and "order_no" = ?',
    parameters: ['A1', 'O1'],
  },
  {
    name: 'orderRowsByIds',
    run: (db) => reader.orderRowsByIds(db, 'A1', ['T1', 'T2']),
    sql: `select ${ORDER_COLUMNS} from "payments" where "account_id" = ? and "transaction_id" in (?, ?)`,
    parameters: ['A1', 'T1', 'T2'],
  },
  {
    name: 'orderRowsByOrderNos',
    run: (db) => reader.orderRowsByOrderNos(db, 'A1', ['O1']),
    sql: `select ${ORDER_COLUMNS} from "payments" where "account_id" = ? and "order_no" in (?)`,
    parameters: ['A1', 'O1'],
  },
  {
    name: 'orderRowsCreatedIn, first page',
    run: (db) => reader.orderRowsCreatedIn(db, 'A1', 10, 20, undefined, 101),
    sql: `select ${ORDER_COLUMNS} from "payments" where "account_id" = ? and "created_at" >= ? and "created_at" <= ? order by "created_at", "transaction_id" limit ?`,
    parameters: ['A1', 10, 20, 101],
  },
  {
    name: 'orderRowsCreatedIn, after a cursor',
    run: (db) => reader.orderRowsCreatedIn(db, 'A1', 10, 20, { created_at: 15, transaction_id: 'T1' }, 101),
    sql: `select ${ORDER_COLUMNS} from "payments" where "account_id" = ? and "created_at" >= ? and "created_at" <= ? and ("created_at" > ? or ("created_at" = ? and "transaction_id" > ?)) order by "created_at", "transaction_id" limit ?`,
    parameters: ['A1', 10, 20, 15, 15, 'T1', 101],
  },
  {
    name: 'modePaymentsQuery',
    run: (db) => reader.modePaymentsQuery(db, 'A1', 1).execute(),
    sql: 'select * from "payments" where "account_id" = ? and "livemode" = ?',
    parameters: ['A1', 1],
  },
  {
    name: 'modePayment',
    run: (db) => reader.modePayment(db, 'A1', 0, 'T1'),
    sql: 'select * from "payments" where "transaction_id" = ? and "account_id" = ? and "livemode" = ?',
    parameters: ['T1', 'A1', 0],
  },
  {
    name: 'accountPaymentsQuery',
    run: (db) => reader.accountPaymentsQuery(db, 'A1').select('status').execute(),
    sql: 'select "status" from "payments" where "account_id" = ?',
    parameters: ['A1'],
  },
  {
    name: 'paymentCursor',
    run: (db) => reader.paymentCursor(db, 'A1', 'T1'),
    sql: 'select "created_at", "transaction_id" from "payments" where "transaction_id" = ? and "account_id" = ?',
    parameters: ['T1', 'A1'],
  },
  {
    name: 'reviewsDue, every account',
    run: (db) => reader.reviewsDue(db, 99, 100),
    sql: 'select * from "payments" where "status" = ? and "expires_at" <= ? order by "expires_at" limit ?',
    parameters: ['review', 99, 100],
  },
  {
    name: 'reviewsDue, one account',
    run: (db) => reader.reviewsDue(db, 99, 100, 'A1'),
    sql: 'select * from "payments" where "status" = ? and "expires_at" <= ? and "account_id" = ? order by "expires_at" limit ?',
    parameters: ['review', 99, 'A1', 100],
  },
  {
    name: 'expiringIds, every account',
    run: (db) => reader.expiringIds(db, 'authorised', 99, 50),
    sql: 'select "transaction_id" from "payments" where "status" = ? and "expires_at" <= ? order by "expires_at" limit ?',
    parameters: ['authorised', 99, 50],
  },
  {
    name: 'expiringIds, one account',
    run: (db) => reader.expiringIds(db, 'pending', 99, 50, 'A1'),
    sql: 'select "transaction_id" from "payments" where "status" = ? and "expires_at" <= ? and "account_id" = ? order by "expires_at" limit ?',
    parameters: ['pending', 99, 'A1', 50],
  },
];

/** SQLite's `?` placeholders as PostgreSQL's `$1, $2, …`. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`payments reader statements (${engine})`, () => {
    for (const c of CASES) {
      test(c.name, async () => {
        const { db, seen } = recording(engine);
        await c.run(db);
        assert.deepEqual(seen, [{ sql: engine === 'sqlite' ? c.sql : numbered(c.sql), parameters: c.parameters }]);
      });
    }
  });
}
