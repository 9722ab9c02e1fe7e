// Write plans as one PostgreSQL round trip (src/db/pg-plan.ts): values become literals that
// read back exactly as written (quotes, backslashes, `$1` inside values, Unicode), a guard
// or a failing statement rolls the whole unit back, a value that cannot be a literal runs
// the unit statement by statement. The store tests run on the engine under test (SQLite:
// the same contract on the writer thread); the round-trip count is checked on PostgreSQL.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createPgDatabase, ENGINE } from '../test/harness.js';
import { guardFailed, inlineParameters, planAsOneQuery } from './pg-plan.js';
import { guard, newPlan } from './plan.js';
import { migrationDb, openStore, type Store } from './store.js';

describe('inlineParameters', () => {
  test('puts each value in as the quoted text pg would send, escaping quotes and backslashes', () => {
    assert.equal(
      inlineParameters('insert into "t" ("a", "b", "c", "d", "e") values ($1, $2, $3, $4, $5)', ["it's", 'a\\b', 12.5, null, true]),
      `insert into "t" ("a", "b", "c", "d", "e") values ('it''s',  E'a\\\\b', '12.5', NULL, 'true')`,
    );
    assert.equal(inlineParameters('update "t" set "n" = "n" + $1 where "id" = $2', [10n, 'x']), `update "t" set "n" = "n" + '10' where "id" = 'x'`);
  });

  test('$n inside quoted strings and identifiers is left alone; $10 is not $1 followed by 0', () => {
    const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    assert.equal(inlineParameters(`select '$1', "$2" from t where a = $10 and b = $1`, values), `select '$1', "$2" from t where a = 'v10' and b = 'v1'`);
  });

  test('refuses what cannot be a literal: a NUL, a Buffer, a Date, NaN, a missing value', () => {
    assert.equal(inlineParameters('select $1', ['a\u0000b']), null);
    assert.equal(inlineParameters('select $1', [Buffer.from('x')]), null);
    assert.equal(inlineParameters('select $1', [new Date()]), null);
    assert.equal(inlineParameters('select $1', [Number.NaN]), null);
    assert.equal(inlineParameters('select $2', ['only one']), null);
  });

  test('a guarded statement fails with an error naming it; other errors name none', () => {
    const plan = newPlan();
    plan.statements.push({ sql: 'insert into t (id) values ($1)', parameters: ['a'], guard: false });
    plan.statements.push({ sql: 'update t set n = 1 where id = $1', parameters: ['a'], guard: true });
    const text = planAsOneQuery(plan) ?? '';
    assert.match(text, /^insert into t \(id\) values \('a'\);\nWITH g AS \(update t set n = 1 where id = 'a' RETURNING 1\) SELECT/);
    assert.equal(guardFailed(new Error('invalid input syntax for type integer: "tollgate plan guard 1: 0 rows"')), 1);
    assert.equal(guardFailed(new Error('duplicate key value violates unique constraint')), null);
  });
});

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups) await c();
});

async function fresh(): Promise<Store> {
  let url: string;
  if (ENGINE === 'postgres') {
    const db = await createPgDatabase();
    url = db.url;
    cleanups.push(db.drop);
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-pgplan-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    url = `sqlite:${path.join(dir, 'plan.db')}`;
  }
  const store = openStore(url, { threads: true });
  const blob = ENGINE === 'postgres' ? 'BYTEA' : 'BLOB';
  await sql`CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT NOT NULL CHECK (n >= 0), s TEXT, b ${sql.raw(blob)})`.execute(migrationDb(store));
  await sql`INSERT INTO t (id, n) VALUES ('config', 7)`.execute(migrationDb(store));
  return store;
}

/** Counts the statements `pg` sends while `fn` runs (PostgreSQL only). */
async function roundTrips(fn: () => Promise<unknown>): Promise<number> {
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  let n = 0;
  proto.query = function (this: unknown, ...a: unknown[]) {
    n++;
    return original.apply(this, a);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return n;
}

class Taken extends Error {}

describe(`write plans on ${ENGINE}: one round trip on PostgreSQL, the same contract on both`, () => {
  test('hostile text reads back exactly as written, and the unit is one round trip', async () => {
    const store = await fresh();
    const pieces = ["'", "''", '\\', "\\'", '$1', '$$', '"', ';', '--', '/*', 'é', '😀', '\n', ' ', 'a', "E'", 'x'];
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const values = Array.from({ length: 60 }, () => Array.from({ length: 1 + (rnd() % 8) }, () => pieces[rnd() % pieces.length]).join(''));
    const trips = await roundTrips(() =>
      store.writePlan(async (tx) => {
        for (const [i, s] of values.entries())
          await tx
            .insertInto('t' as never)
            .values({ id: `h${i}`, n: i, s } as never)
            .execute();
      }),
    );
    if (ENGINE === 'postgres') assert.equal(trips, 1, 'the whole unit went as one message');
    const got = await sql<{ id: string; s: string }>`SELECT id, s FROM t WHERE id LIKE 'h%'`.execute(store.db);
    const byId = new Map(got.rows.map((r) => [r.id, r.s]));
    for (const [i, s] of values.entries()) assert.equal(byId.get(`h${i}`), s, `value ${i}`);
    await store.close();
  });

  test('a guard that changes no row rolls the whole unit back and fails with its own error', async () => {
    const store = await fresh();
    const unit = () =>
      store.writePlan(async (tx) => {
        await sql`UPDATE t SET n = n + 100 WHERE id = 'config'`.execute(tx);
        await sql`INSERT INTO t (id, n) VALUES ('once', 1) ON CONFLICT (id) DO NOTHING`.execute(tx);
        guard(tx, () => new Taken('already there'));
        return 'done';
      });
    assert.equal(await unit(), 'done');
    await assert.rejects(unit(), (e) => e instanceof Taken);
    const rows = await sql<{ id: string; n: number }>`SELECT id, n FROM t ORDER BY id`.execute(store.db);
    assert.deepEqual(
      rows.rows.map((r) => `${r.id}=${Number(r.n)}`),
      ['config=107', 'once=1'],
    );
    await store.close();
  });

  test('a failing statement rolls back the statements before it; its error keeps its code', async () => {
    const store = await fresh();
    await assert.rejects(
      store.writePlan(async (tx) => {
        await sql`UPDATE t SET n = n + 1 WHERE id = 'config'`.execute(tx);
        await sql`INSERT INTO t (id, n) VALUES ('neg', ${-1})`.execute(tx);
      }),
      (e: { code?: string }) => (ENGINE === 'postgres' ? e.code === '23514' : String(e.code).startsWith('SQLITE_CONSTRAINT')),
    );
    const rows = await sql<{ id: string; n: number }>`SELECT id, n FROM t ORDER BY id`.execute(store.db);
    assert.deepEqual(
      rows.rows.map((r) => `${r.id}=${Number(r.n)}`),
      ['config=7'],
    );
    await store.close();
  });

  test('a value that cannot be a literal (bytes) runs statement by statement, guards still checked', async () => {
    const store = await fresh();
    const bytes = Buffer.from([0, 1, 2, 39, 92, 255]);
    const unit = () =>
      store.writePlan(async (tx) => {
        await sql`INSERT INTO t (id, n, b) VALUES ('bytes', 1, ${bytes}) ON CONFLICT (id) DO NOTHING`.execute(tx);
        guard(tx, () => new Taken('bytes already there'));
        await sql`UPDATE t SET n = n + 1 WHERE id = 'config'`.execute(tx);
      });
    const trips = await roundTrips(unit);
    if (ENGINE === 'postgres') assert.equal(trips, 4, 'BEGIN, two statements, COMMIT');
    await assert.rejects(unit(), (e) => e instanceof Taken);
    const got = await sql<{ b: Uint8Array }>`SELECT b FROM t WHERE id = 'bytes'`.execute(store.db);
    assert.deepEqual(Buffer.from(got.rows[0]?.b ?? []), bytes);
    const config = await sql<{ n: number }>`SELECT n FROM t WHERE id = 'config'`.execute(store.db);
    assert.equal(Number(config.rows[0]?.n), 8, 'the second unit rolled back');
    await store.close();
  });
});
