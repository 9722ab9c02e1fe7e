// The items of a capture, cancel or refund batch (eachItem, src/payments/lifecycle.ts): in
// order, at most the store's concurrentTransactions at once, and on PostgreSQL a healthy
// database never answers a batch 503 because its own items queued past the pool's acquire
// timeout (the full bench's 64 concurrent batches of 50 did: 158 and 385 non-2xx answers).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { storageFault } from '../db/faults.js';
import { migrationDb, openStore, type Store } from '../db/store.js';
import { createPgDatabase, ENGINE } from '../test/harness.js';
import { eachItem } from './lifecycle.js';

const limited = (n: number) => ({ concurrentTransactions: n }) as Store;
const tick = () => new Promise((r) => setTimeout(r, 1));

describe('eachItem', () => {
  test('answers in the items’ order with at most concurrentTransactions running at once', async () => {
    let active = 0;
    let most = 0;
    const out = await eachItem(limited(3), [...Array(20).keys()], async (x, i) => {
      active++;
      most = Math.max(most, active);
      await new Promise((r) => setTimeout(r, (x * 7) % 5));
      active--;
      return `${x}:${i}`;
    });
    assert.deepEqual(
      out,
      [...Array(20).keys()].map((x) => `${x}:${x}`),
    );
    assert.equal(most, 3);
  });

  test('without a limit (SQLite) every item starts at once', async () => {
    let started = 0;
    const seen: number[] = [];
    await eachItem(limited(Number.POSITIVE_INFINITY), [...Array(50).keys()], async () => {
      started++;
      await tick();
      seen.push(started);
    });
    assert.equal(Math.min(...seen), 50, 'all 50 had started before the first finished');
  });

  test('after a failure no further item starts, the running ones finish, and the first error is thrown', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const boom = new Error('storage fault');
    await assert.rejects(
      eachItem(limited(2), [...Array(10).keys()], async (x) => {
        started.push(x);
        await tick();
        if (x === 2) throw boom;
        if (x === 3) throw new Error('a later failure');
        await tick();
        finished.push(x);
      }),
      (e) => e === boom,
    );
    assert.deepEqual(started, [0, 1, 2, 3], 'nothing started after item 2 failed but the one already running');
    assert.deepEqual(finished, [0, 1]);
  });

  test('an empty batch runs nothing', async () => {
    assert.deepEqual(await eachItem(limited(4), [], async () => assert.fail('ran')), []);
  });
});

describe(`batch items on ${ENGINE} with a small pool and a short acquire timeout`, () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  async function store(): Promise<Store> {
    let url: string;
    if (ENGINE === 'postgres') {
      const db = await createPgDatabase();
      url = db.url;
      cleanups.push(db.drop);
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-items-'));
      cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
      url = `sqlite:${path.join(dir, 'items.db')}`;
    }
    const s = openStore(url, { poolSize: 4, acquireTimeoutMs: 300 });
    cleanups.push(() => s.close());
    await sql`CREATE TABLE item_done (id INTEGER PRIMARY KEY)`.execute(migrationDb(s));
    return s;
  }

  /** One item: its own transaction holding the connection ~10 ms, as a capture's reads and writes do under load. */
  const item = (s: Store) => async (id: number) =>
    s.transaction(async (tx) => {
      if (s.engine === 'postgres') await sql`SELECT pg_sleep(0.01)`.execute(tx);
      await sql`INSERT INTO item_done (id) VALUES (${id})`.execute(tx);
      return id;
    });

  test('four batches of 50 at once: every item is done, none waits past the acquire timeout', async () => {
    const s = await store();
    const batches = [0, 1, 2, 3].map((b) =>
      eachItem(
        s,
        [...Array(50).keys()].map((i) => b * 50 + i),
        item(s),
      ),
    );
    const done = (await Promise.all(batches)).flat();
    assert.equal(done.length, 200);
    const rows = await sql<{ n: number }>`SELECT COUNT(*) AS n FROM item_done`.execute(s.db);
    assert.equal(Number(rows.rows[0]?.n), 200);
  });

  test('on PostgreSQL the same items all at once queue past the acquire timeout (what eachItem prevents)', async (t) => {
    if (ENGINE !== 'postgres') {
      // SQLite has no pool: its group commit takes every item of a batch together.
      assert.equal(limited(Number.POSITIVE_INFINITY).concurrentTransactions, Number.POSITIVE_INFINITY);
      return;
    }
    t.diagnostic('200 transactions of ~10 ms for 4 connections: the last waits ~500 ms for one');
    const s = await store();
    assert.equal(s.concurrentTransactions, 1);
    const settled = await Promise.allSettled([...Array(200).keys()].map((i) => item(s)(1000 + i)));
    const refused = settled.filter((r) => r.status === 'rejected');
    assert.ok(refused.length > 0, 'some waited past the acquire timeout');
    for (const r of refused) assert.equal(storageFault((r as PromiseRejectedResult).reason), 'unavailable');
  });
});
