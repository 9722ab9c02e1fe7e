// Write units (src/db/unit.ts) on SQLite, with the writer thread and without it: committed
// together, durable when they resolve; an operation whose row count is not the expected one
// (or that fails) rolls back its unit alone, with its own error, while the batch's other
// units commit; `applyUnit` runs a unit inside a real transaction with the same checks; a
// unit is not a transaction (types) and refuses what it cannot honestly carry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { migrationDb, openStore, type Store, type Tx } from './store.js';
import { applyUnit, type Engine, WriteUnit } from './unit.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function fresh(writerThread: boolean): Promise<{ store: Store; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-unit-'));
  dirs.push(dir);
  const file = path.join(dir, 'unit.db');
  const store = openStore(`sqlite:${file}`, { threads: writerThread });
  await sql`CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n >= 0))`.execute(migrationDb(store));
  await sql`INSERT INTO t (id, n) VALUES ('config', 7)`.execute(migrationDb(store));
  return { store, file };
}

const rows = async (store: Store) =>
  (await sql<{ id: string; n: number }>`SELECT id, n FROM t ORDER BY id`.execute(store.db)).rows.map((r) => `${r.id}=${r.n}`);

/** The test table's builder (it is not in the gateway's schema). */
const T = (u: WriteUnit) => u.q as unknown as Kysely<{ t: { id: string; n: number } }>;
const insert = (u: WriteUnit, id: string, n: number) => u.insert(T(u).insertInto('t').values({ id, n }));
/** Adds 1 to config's n while it is still `was`: a compare-and-set that must change one row. */
const bumpConfig = (u: WriteUnit, was: number, error: () => Error) =>
  u.compareAndSet(
    T(u)
      .updateTable('t')
      .set({ n: was + 1 })
      .where('id', '=', 'config')
      .where('n', '=', was),
    error,
  );

class Lost extends Error {}

for (const writerThread of [true, false]) {
  describe(`write units, ${writerThread ? 'on the writer thread' : 'on the event loop'}`, () => {
    test('units sent together commit together and resolve once durable (the file reopened has them)', async () => {
      const { store, file } = await fresh(writerThread);
      assert.equal((store as unknown as { writerThread: boolean }).writerThread, writerThread);
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.write(insert(new WriteUnit('sqlite'), `a${String(i).padStart(2, '0')}`, i))));
      assert.equal((await rows(store)).length, 51);
      await store.close();
      const again = openStore(`sqlite:${file}`);
      assert.equal((await rows(again)).length, 51);
      await again.close();
    });

    test('a compare-and-set that changes no row fails its unit alone with its own error, the unit’s other writes undone; the batch’s other units commit', async () => {
      const { store } = await fresh(writerThread);
      // Three units in one group commit: the first wins the compare-and-set on n = 7, the second
      // (which expects 7 too) changes no row, the third expects what the first leaves.
      const unit = (side: string, was: number) => bumpConfig(insert(new WriteUnit('sqlite'), side, 1), was, () => new Lost(side));
      const results = await Promise.allSettled([store.write(unit('side1', 7)), store.write(unit('side2', 7)), store.write(unit('side3', 8))]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const lost = (results[1] as PromiseRejectedResult).reason;
      assert.ok(lost instanceof Lost && lost.message === 'side2', String(lost));
      assert.deepEqual(await rows(store), ['config=9', 'side1=1', 'side3=1']);
      await store.close();
    });

    test('an insert that must go in and meets its conflict fails the unit; an expected count of 0 is checked too', async () => {
      const { store } = await fresh(writerThread);
      const once = (side: string) => {
        const u = insert(new WriteUnit('sqlite'), side, 1);
        const q = T(u)
          .insertInto('t')
          .values({ id: 'once', n: 2 })
          .onConflict((oc) => oc.column('id').doNothing());
        return u.insert(q, { rows: 1, error: () => new Lost(side) });
      };
      await store.write(once('s1'));
      await assert.rejects(store.write(once('s2')), (e) => e instanceof Lost && e.message === 's2');
      // An update that must change nothing (a guard that the row is not there yet).
      const u = new WriteUnit('sqlite');
      const none = u.add('update', T(u).updateTable('t').set({ n: 0 }).where('id', '=', 'once'), { rows: 0, error: () => new Lost('once exists') });
      await assert.rejects(store.write(none), (e) => e instanceof Lost && e.message === 'once exists');
      assert.deepEqual(await rows(store), ['config=7', 'once=2', 's1=1']);
      await store.close();
    });

    test('a failing statement fails its unit with the database’s error and code, nothing of it written; the others commit', async () => {
      const { store } = await fresh(writerThread);
      const bad = store.write(insert(insert(new WriteUnit('sqlite'), 'b1', 1), 'b2', -1));
      const good = store.write(bumpConfig(new WriteUnit('sqlite'), 7, () => new Lost('good')));
      await assert.rejects(bad, (e: { code?: string; message: string }) => e.code === 'SQLITE_CONSTRAINT_CHECK' && /CHECK constraint failed/.test(e.message));
      await good;
      assert.deepEqual(await rows(store), ['config=8']);
      await store.close();
    });

    test('applyUnit inside a transaction: the transaction reads the unit’s writes; a failed count throws the op’s error and the transaction rolls back', async () => {
      const { store } = await fresh(writerThread);
      const seen = await store.transaction(async (tx) => {
        await applyUnit(
          tx,
          bumpConfig(insert(new WriteUnit('sqlite'), 'in-tx', 3), 7, () => new Lost('tx')),
        );
        return (await sql<{ n: number }>`SELECT sum(n) AS n FROM t`.execute(tx)).rows[0]?.n;
      });
      assert.equal(seen, 11, 'config=8 and in-tx=3 read back inside the transaction');
      await assert.rejects(
        store.transaction(async (tx) => {
          await sql`INSERT INTO t (id, n) VALUES ('before', 1)`.execute(tx);
          await applyUnit(
            tx,
            bumpConfig(insert(new WriteUnit('sqlite'), 'never', 1), 7, () => new Lost('stale')),
          );
        }),
        (e) => e instanceof Lost && e.message === 'stale',
      );
      assert.deepEqual(await rows(store), ['config=8', 'in-tx=3']);
      await store.close();
    });

    test('units and transaction functions interleave in one queue without waiting on each other’s lock', async () => {
      const { store } = await fresh(writerThread);
      const work: Array<Promise<unknown>> = [];
      for (let i = 0; i < 40; i++) {
        work.push(
          i % 2 === 0
            ? store.write(increment(new WriteUnit('sqlite')))
            : store.transaction(async (tx) => {
                const r = await sql<{ n: number }>`SELECT n FROM t WHERE id = 'config'`.execute(tx);
                await sql`INSERT INTO t (id, n) VALUES (${`r${i}`}, ${r.rows[0]?.n ?? 0})`.execute(tx);
              }),
        );
      }
      await Promise.all(work).catch((e) => assert.fail(String(e)));
      const all = await rows(store);
      assert.ok(all.includes('config=27'), all.join(' '));
      assert.equal(all.length, 21);
      await store.close();
    });

    test('reads of Store.db see every acknowledged write; a failing read fails with the database’s error and code', async () => {
      const { store } = await fresh(writerThread);
      for (let i = 0; i < 20; i++) {
        await store.write(insert(new WriteUnit('sqlite'), `w${i}`, i));
        const r = await sql<{ n: number }>`SELECT n FROM t WHERE id = ${`w${i}`}`.execute(store.db);
        assert.deepEqual(r.rows, [{ n: i }]);
      }
      await assert.rejects(
        sql`SELECT * FROM no_such_table`.execute(store.db),
        (e: { code?: string; message: string }) => e.code === 'SQLITE_ERROR' && /no such table/.test(e.message),
      );
      await store.close();
    });

    test('reads asked for together (batched while the reader is busy) each get their own rows or error', async () => {
      const { store } = await fresh(writerThread);
      const u = new WriteUnit('sqlite');
      for (let i = 0; i < 50; i++) insert(u, `r${i}`, i * 3);
      await store.write(u);
      const reads = Array.from({ length: 50 }, (_, i) =>
        i === 25
          ? sql`SELECT * FROM no_such_table`.execute(store.db).then(
              () => 'no error',
              (e: { code?: string }) => e.code,
            )
          : sql<{ n: number }>`SELECT n FROM t WHERE id = ${`r${i}`}`.execute(store.db).then((r) => r.rows[0]?.n),
      );
      const got = await Promise.all(reads);
      assert.deepEqual(
        got,
        Array.from({ length: 50 }, (_, i) => (i === 25 ? 'SQLITE_ERROR' : i * 3)),
      );
      await store.close();
    });

    test('reads still waiting when the store closes are answered, not left hanging', async () => {
      const { store } = await fresh(writerThread);
      // A slow read keeps the reader busy; the others wait behind it as its next batch.
      const slow = sql<{ n: number }>`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) AS n FROM c`
        .execute(store.db)
        .then((r) => r.rows[0]?.n);
      await new Promise((r) => setImmediate(r));
      const reads = Array.from({ length: 20 }, () =>
        sql<{ n: number }>`SELECT n FROM t WHERE id = 'config'`.execute(store.db).then(
          (r) => r.rows[0]?.n,
          (e: Error) => e.message,
        ),
      );
      const closed = store.close().then(() => 'closed');
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((resolve) => {
        timer = setTimeout(() => resolve('hung'), 5_000);
      });
      const got = await Promise.race([Promise.all([slow, ...reads, closed]), hung]).finally(() => clearTimeout(timer));
      assert.notEqual(got, 'hung');
      // The reader thread answers what it was asked before it closes. Without it the reads
      // race Kysely's own close of the connection: each settles, with rows or an error.
      if (writerThread) assert.deepEqual(got, [2_000_000, ...Array.from({ length: 20 }, () => 7), 'closed']);
      else assert.equal((got as unknown[]).at(-1), 'closed');
    });
  });
}

/** An update without a row count to check (any number will do). */
const increment = (u: WriteUnit) =>
  u.add(
    'update',
    T(u)
      .updateTable('t')
      .set((eb) => ({ n: eb('n', '+', 1) }))
      .where('id', '=', 'config'),
  );

describe('what a unit is not, and what it refuses', () => {
  test('a unit is not a transaction, nor a transaction a unit (the compiler refuses both)', () => {
    const takesTx = (_tx: Tx) => {};
    const takesUnit = (_u: WriteUnit) => {};
    const unit = new WriteUnit('sqlite');
    // @ts-expect-error a write unit is not a Tx
    takesTx(unit);
    // @ts-expect-error a Tx is not a write unit
    takesUnit(unit.q);
    assert.ok(!(unit instanceof Kysely) && unit.q instanceof Kysely);
  });

  test('its builder compiles and never runs: executing through it fails, nothing is answered', async () => {
    const u = new WriteUnit('sqlite');
    await assert.rejects(u.q.selectFrom('payments').selectAll().execute(), /only compiles statements/);
    await assert.rejects(T(u).insertInto('t').values({ id: 'x', n: 1 }).execute(), /only compiles statements/);
  });

  test('it refuses RETURNING, reads, a statement of another kind, values the drivers would bind differently', () => {
    const u = new WriteUnit('sqlite');
    assert.throws(() => u.insert(T(u).insertInto('t').values({ id: 'x', n: 1 }).returningAll()), /RETURNING/);
    assert.throws(() => u.add('insert', T(u).selectFrom('t').selectAll()), /insert is a read/);
    assert.throws(() => u.upsert(T(u).insertInto('t').values({ id: 'x', n: 1 })), /upsert is a insert/);
    assert.throws(() => u.compareAndSet(T(u).deleteFrom('t'), () => new Lost('x')), /update is a delete/);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, true, new Date(0), Buffer.from('x'), { a: 1 }]) {
      assert.throws(
        () =>
          u.insert(
            T(u)
              .insertInto('t')
              .values({ id: 'x', n: bad as never }),
          ),
        /cannot carry/,
        String(bad),
      );
    }
    assert.equal(u.ops.length, 0, 'nothing refused was added');
    assert.equal(u.delete(T(u).deleteFrom('t').where('id', '=', 'x')).ops[0]?.kind, 'delete');
  });

  test('a unit runs only on the engine it was compiled for', async () => {
    const { store } = await fresh(false);
    const other: Engine = 'postgres';
    const u = insert(new WriteUnit(other), 'pg', 1);
    await assert.rejects(store.write(u), /postgres write unit cannot run on SQLite/);
    await assert.rejects(
      store.transaction((tx) => applyUnit(tx, u)),
      /postgres write unit cannot run on sqlite/,
    );
    assert.deepEqual(await rows(store), ['config=7']);
    await store.close();
  });
});
