// Write plans (src/db/plan.ts) on SQLite, with the writer thread and without it: committed
// together, durable when they resolve, a guard or a failing statement rolls back its unit
// alone, reads inside a plan see committed data, and what a plan cannot do is refused.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { guard } from './plan.js';
import { migrationDb, openStore, type Store } from './store.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function fresh(writerThread: boolean): Promise<{ store: Store; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-plan-'));
  dirs.push(dir);
  const file = path.join(dir, 'plan.db');
  const store = openStore(`sqlite:${file}`, { threads: writerThread });
  await sql`CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n >= 0))`.execute(migrationDb(store));
  await sql`INSERT INTO t (id, n) VALUES ('config', 7)`.execute(migrationDb(store));
  return { store, file };
}

const rows = async (store: Store) =>
  (await sql<{ id: string; n: number }>`SELECT id, n FROM t ORDER BY id`.execute(store.db)).rows.map((r) => `${r.id}=${r.n}`);

class Taken extends Error {}

for (const writerThread of [true, false]) {
  describe(`write plans, ${writerThread ? 'on the writer thread' : 'on the event loop'}`, () => {
    test('units sent together commit together; each resolves with its value once durable (the file reopened has them)', async () => {
      const { store, file } = await fresh(writerThread);
      assert.equal((store as unknown as { writerThread: boolean }).writerThread, writerThread);
      const values = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.writePlan(async (tx) => {
            await sql`INSERT INTO t (id, n) VALUES (${`a${String(i).padStart(2, '0')}`}, ${i})`.execute(tx);
            return i * 2;
          }),
        ),
      );
      assert.deepEqual(
        values,
        Array.from({ length: 50 }, (_, i) => i * 2),
      );
      assert.equal((await rows(store)).length, 51);
      await store.close();
      const again = openStore(`sqlite:${file}`);
      assert.equal((await rows(again)).length, 51);
      await again.close();
    });

    test('a guarded statement that changes no row fails its unit with the guard’s error, the unit’s other writes undone; the batch’s other units stand', async () => {
      const { store } = await fresh(writerThread);
      const unit = (id: string, side: string) =>
        store.writePlan(async (tx) => {
          await sql`INSERT INTO t (id, n) VALUES (${side}, 1)`.execute(tx);
          await sql`INSERT INTO t (id, n) VALUES (${id}, 2) ON CONFLICT (id) DO NOTHING`.execute(tx);
          guard(tx, () => new Taken(id));
          return id;
        });
      const results = await Promise.allSettled([unit('x', 'side1'), unit('x', 'side2'), unit('y', 'side3')]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const lost = results[1] as PromiseRejectedResult;
      assert.ok(lost.reason instanceof Taken, String(lost.reason));
      assert.deepEqual(await rows(store), ['config=7', 'side1=1', 'side3=1', 'x=2', 'y=2']);
      await store.close();
    });

    test('a failing statement fails its unit with the database’s error and code, nothing of it written', async () => {
      const { store } = await fresh(writerThread);
      const bad = store.writePlan(async (tx) => {
        await sql`INSERT INTO t (id, n) VALUES ('b1', 1)`.execute(tx);
        await sql`INSERT INTO t (id, n) VALUES ('b2', -1)`.execute(tx);
      });
      const good = store.writePlan(async (tx) => {
        await sql`UPDATE t SET n = n + 1 WHERE id = 'config'`.execute(tx);
      });
      await assert.rejects(bad, (e: { code?: string; message: string }) => e.code === 'SQLITE_CONSTRAINT_CHECK' && /CHECK constraint failed/.test(e.message));
      await good;
      assert.deepEqual(await rows(store), ['config=8']);
      await store.close();
    });

    test('a read inside a plan sees committed data; a throw before anything runs writes nothing; RETURNING is refused', async () => {
      const { store } = await fresh(writerThread);
      const seen = await store.writePlan(async (tx) => {
        const r = await sql<{ n: number }>`SELECT n FROM t WHERE id = 'config'`.execute(tx);
        await sql`INSERT INTO t (id, n) VALUES ('copy', ${r.rows[0]?.n ?? -1})`.execute(tx);
        return r.rows[0]?.n;
      });
      assert.equal(seen, 7);
      await assert.rejects(
        store.writePlan(async (tx) => {
          await sql`INSERT INTO t (id, n) VALUES ('never', 1)`.execute(tx);
          throw new Taken('before');
        }),
        Taken,
      );
      await assert.rejects(
        store.writePlan(async (tx) => {
          await tx.updateTable('payments').set({ status: 'captured' }).where('transaction_id', '=', 'x').returningAll().execute();
        }),
        /cannot use RETURNING/,
      );
      assert.deepEqual(await rows(store), ['config=7', 'copy=7']);
      await store.close();
    });

    test('reads of Store.db see every acknowledged write; a failing read fails with the database’s error and code', async () => {
      const { store } = await fresh(writerThread);
      for (let i = 0; i < 20; i++) {
        await store.writePlan(async (tx) => sql`INSERT INTO t (id, n) VALUES (${`w${i}`}, ${i})`.execute(tx));
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
      await store.writePlan(async (tx) => {
        for (let i = 0; i < 50; i++) await sql`INSERT INTO t (id, n) VALUES (${`r${i}`}, ${i * 3})`.execute(tx);
      });
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

    test('plans and transaction functions interleave in one queue without waiting on each other’s lock', async () => {
      const { store } = await fresh(writerThread);
      const work: Array<Promise<unknown>> = [];
      for (let i = 0; i < 40; i++) {
        work.push(
          i % 2 === 0
            ? store.writePlan(async (tx) => sql`UPDATE t SET n = n + 1 WHERE id = 'config'`.execute(tx))
            : store.transaction(async (tx) => {
                const r = await sql<{ n: number }>`SELECT n FROM t WHERE id = 'config'`.execute(tx);
                await sql`INSERT INTO t (id, n) VALUES (${`r${i}`}, ${r.rows[0]?.n ?? 0})`.execute(tx);
              }),
        );
      }
      await Promise.all(work);
      const all = await rows(store);
      assert.ok(all.includes('config=27'), all.join(' '));
      assert.equal(all.length, 21);
      await store.close();
    });
  });
}
