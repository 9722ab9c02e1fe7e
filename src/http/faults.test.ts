// Storage faults and load shedding at the HTTP edge (issue 17): the storage's state answers
// 503 with Retry-After and a catalogue code (0503 unreachable, 0507 cannot write), in the
// route's own shape, and nothing is written; past the in-flight bound new requests are shed
// at once while the accepted ones finish; /readyz follows both and comes back by itself.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type StorageFault, storageFault } from '../db/faults.js';
import type { Store } from '../db/store.js';
import { applyUnit } from '../db/unit.js';
import { paymentRequest, readXml, type TestGateway, testGateway } from '../test/harness.js';

describe('storageFault: which database errors are the storage’s state', () => {
  const cases: Array<[string, unknown, StorageFault | null]> = [
    ['PostgreSQL restart (admin shutdown)', { code: '57P01', message: 'terminating connection due to administrator command' }, 'unavailable'],
    ['PostgreSQL starting up', { code: '57P03', message: 'the database system is starting up' }, 'unavailable'],
    ['connection exception class 08', { code: '08006', message: 'connection failure' }, 'unavailable'],
    ['statement timeout', { code: '57014', message: 'canceling statement due to statement timeout' }, 'unavailable'],
    ['refused socket', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }, 'unavailable'],
    ['pool acquire timeout', { message: 'timeout exceeded when trying to connect' }, 'unavailable'],
    ['connection ended mid-query', { message: 'Connection terminated unexpectedly' }, 'unavailable'],
    ['PostgreSQL disk full', { code: '53100', message: 'could not extend file' }, 'storage'],
    ['PostgreSQL read-only', { code: '25006', message: 'cannot execute INSERT in a read-only transaction' }, 'storage'],
    ['SQLite full', { code: 'SQLITE_FULL', message: 'database or disk is full' }, 'storage'],
    ['SQLite read-only', { code: 'SQLITE_READONLY', message: 'attempt to write a readonly database' }, 'storage'],
    ['SQLite I/O error', { code: 'SQLITE_IOERR_WRITE', message: 'disk I/O error' }, 'storage'],
    ['SQLite busy', { code: 'SQLITE_BUSY', message: 'database is locked' }, 'unavailable'],
    ['a unique violation is a bug or a race, not a fault', { code: '23505', message: 'duplicate key' }, null],
    ['a SQLite constraint is not a fault', { code: 'SQLITE_CONSTRAINT_PRIMARYKEY', message: 'UNIQUE constraint failed' }, null],
    ['a plain error is not a fault', new Error('boom'), null],
  ];
  for (const [what, e, want] of cases) test(`${what} → ${want}`, () => assert.equal(storageFault(e), want));
});

let gw: TestGateway;
let key: string;
let real: Store['transaction'];
let realWrite: Store['write'];
before(async () => {
  gw = await testGateway({ settings: { max_in_flight: 3 } });
  key = await gw.apiKey();
  real = gw.runtime.store.transaction.bind(gw.runtime.store);
  realWrite = gw.runtime.store.write.bind(gw.runtime.store);
});
after(async () => {
  restoreWrites();
  await gw.close();
});

/** Every way to write (transactions and write units, run in a transaction) goes through `fn` until restored. */
function setWrites(fn: Store['transaction']): void {
  gw.runtime.store.transaction = fn;
  gw.runtime.store.write = (unit) => fn((tx) => applyUnit(tx, unit));
}

function restoreWrites(): void {
  gw.runtime.store.transaction = real;
  gw.runtime.store.write = realWrite;
}

/** Every write fails the way the storage would, until restored. */
function breakWrites(error: { code?: string; message: string }): void {
  setWrites(async () => {
    throw Object.assign(new Error(error.message), error.code ? { code: error.code } : {});
  });
}

describe('storage faults answer 503 with Retry-After, and recover by themselves', () => {
  test('a full disk: 0507 with Retry-After on the acquiring interface (XML for authorise) and api_error naming the storage on the generic one; nothing written', async () => {
    const before = await gw.runtime.store.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    breakWrites({ code: 'SQLITE_FULL', message: 'database or disk is full' });
    const body = paymentRequest();
    const r = await gw.post('/v1/authorise', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...body });
    assert.equal(r.statusCode, 503, r.body);
    assert.equal(r.headers['retry-after'], '5');
    assert.equal(readXml(r).return_message, '0507:Storage unavailable');
    const g = await gw.generic('POST', '/v1/accounts', key, { country: 'US' });
    assert.equal(g.statusCode, 503);
    assert.equal(g.json().error.type, 'api_error');
    assert.equal(g.json().error.code, undefined, 'the family publishes no code for an outage');
    assert.match(g.json().error.message, /cannot write to its storage/);
    assert.ok(g.headers['retry-after']);
    restoreWrites();
    const after = await gw.runtime.store.db
      .selectFrom('payments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n));
    // Room again: the same request goes through at once.
    const ok = await gw.post('/v1/authorise', { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id, ...body });
    assert.equal(readXml(ok).result_info, '0000:Success');
  });

  test('a dropped connection: 0503 with Retry-After 1, also for a batch (never a per-item processing error)', async () => {
    // An authorised payment, so the capture item reaches its write (an unknown one is answered 0404 from a read).
    const ids = { merchant_id: gw.merchant.merchant_id, account_id: gw.merchant.account_id };
    const paid = readXml(await gw.post('/v1/authorise', { ...ids, ...paymentRequest({ capture_method: 'manual' }) }));
    assert.equal(paid.result_info, '0000:Success');
    breakWrites({ code: '57P01', message: 'terminating connection due to administrator command' });
    try {
      const r = await gw.post('/v1/capture', {
        ...ids,
        capture_orders: [{ transaction_id: paid.transaction_id, order_no: paid.order_no, currency: 'USD', amount: '1.00' }],
      });
      assert.equal(r.statusCode, 503, r.body);
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(r.json().return_message, '0503:Service unavailable');
    } finally {
      restoreWrites();
    }
  });
});

describe('a key whose outcome the storage refused is settled when the storage is back', () => {
  test('the answer still goes out; a retry with the same key replays it (one payment), not a 409 for the lease', async () => {
    const m = gw.merchant;
    const body = { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest() };
    let calls = 0;
    let first_tid = '';
    // The key's claim, the payment sent to the processor with its attempt, and its answer commit; the write of the
    // answer under the key fails (the storage went away just then).
    setWrites(async (fn) => {
      calls++;
      if (calls === 4) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return real(fn);
    });
    try {
      const first = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': 'repair-1' } });
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(readXml(first).result_info, '0000:Success');
      assert.equal(calls, 4, 'claim, payment sent, payment answered, then the answer under the key');
      first_tid = readXml(first).transaction_id;
    } finally {
      restoreWrites();
    }
    await new Promise((r) => setTimeout(r, 400)); // the repair runs every 200 ms
    const again = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': 'repair-1' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(readXml(again).transaction_id, first_tid);
  });
});

describe('a connection lost at COMMIT (the work may be done): a retry with the same key never does it twice', () => {
  test('refund and generic payment: 503 first, then the retry answers what the first attempt made', async () => {
    const m = gw.merchant;
    const pay = readXml(await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest() }));
    // The next write commits, then the driver reports the connection gone: the caller cannot know it committed.
    const commitThenLose = () => {
      let armed = true;
      setWrites(async (fn) => {
        const value = await real(fn);
        if (
          armed &&
          (await gw.runtime.store.db.selectFrom('refunds').select('refund_reference_id').where('transaction_id', '=', pay.transaction_id).execute()).length > 0
        ) {
          armed = false;
          throw Object.assign(new Error('Connection terminated unexpectedly'), {});
        }
        return value;
      });
    };
    const refund = {
      merchant_id: m.merchant_id,
      account_id: m.account_id,
      refund_orders: [{ transaction_id: pay.transaction_id, order_no: pay.order_no, currency: pay.currency, amount: pay.amount, refund_amount: '1.00' }],
    };
    commitThenLose();
    try {
      const first = await gw.post('/v1/refund', refund, { headers: { 'idempotency-key': 'lost-commit-refund' } });
      assert.equal(first.statusCode, 503, first.body);
    } finally {
      restoreWrites();
    }
    await new Promise((r) => setTimeout(r, 400));
    const again = await gw.post('/v1/refund', refund, { headers: { 'idempotency-key': 'lost-commit-refund' } });
    assert.equal(again.statusCode, 200, again.body);
    const refunds = await gw.runtime.store.db.selectFrom('refunds').selectAll().where('transaction_id', '=', pay.transaction_id).execute();
    assert.equal(refunds.length, 1, 'one refund, however many attempts');

    // The generic payment: its id comes from the key's row, which the retry takes over.
    let armed = true;
    setWrites(async (fn) => {
      const value = await real(fn);
      const n = await gw.runtime.store.db.selectFrom('payments').select('transaction_id').where('amount_minor', '=', 4321).execute();
      if (armed && n.length > 0) {
        armed = false;
        throw Object.assign(new Error('Connection terminated unexpectedly'), {});
      }
      return value;
    });
    const body = {
      amount: 4321,
      currency: 'usd',
      payment_method: { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' } },
    };
    try {
      const first = await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'lost-commit-pay' } });
      assert.equal(first.statusCode, 503, first.body);
    } finally {
      restoreWrites();
    }
    await new Promise((r) => setTimeout(r, 400));
    const retry = await gw.generic('POST', '/v1/payments', key, body, { headers: { 'idempotency-key': 'lost-commit-pay' } });
    assert.equal(retry.statusCode, 200, retry.body);
    const rows = await gw.runtime.store.db.selectFrom('payments').select('transaction_id').where('amount_minor', '=', 4321).execute();
    assert.equal(rows.length, 1, 'one payment, however many attempts');
    assert.equal(retry.json().transaction_id, rows[0]?.transaction_id);
  });
});

describe('an Idempotency-Key claim whose COMMIT lost its answer', () => {
  test('the key is let go once the storage is back: the retry runs (one payment), never a 409 "still being processed" for the lease', async () => {
    const m = gw.merchant;
    const body = { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest() };
    let armed = true;
    // The first write of the request is the key's claim: it commits, then the connection is reported lost.
    setWrites(async (fn) => {
      const value = await real(fn);
      if (armed) {
        armed = false;
        throw new Error('Connection terminated unexpectedly');
      }
      return value;
    });
    try {
      const first = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': 'lost-claim' } });
      assert.equal(first.statusCode, 503, first.body);
    } finally {
      restoreWrites();
    }
    await new Promise((r) => setTimeout(r, 400)); // the repair runs every 200 ms
    const again = await gw.post('/v1/authorise', body, { headers: { 'idempotency-key': 'lost-claim' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(readXml(again).result_info, '0000:Success');
    const rows = await gw.runtime.store.db.selectFrom('payments').select('transaction_id').where('order_no', '=', body.order_no).execute();
    assert.equal(rows.length, 1);
  });
});

describe('a capture whose COMMIT lost its answer', () => {
  test('the retry under the same key answers it captured (capture_status 1), not 1012', async () => {
    const manual = await gw.newMerchant({ capture_method: 'manual' });
    const pay = readXml(
      await gw.post('/v1/authorise', { merchant_id: manual.merchant_id, account_id: manual.account_id, ...paymentRequest() }, { merchant: manual }),
    );
    assert.equal(pay.order_status, '1');
    let armed = true;
    setWrites(async (fn) => {
      const value = await real(fn);
      const row = await gw.runtime.store.db.selectFrom('payments').select('status').where('transaction_id', '=', pay.transaction_id).executeTakeFirstOrThrow();
      if (armed && row.status === 'captured') {
        armed = false;
        throw new Error('Connection terminated unexpectedly');
      }
      return value;
    });
    const body = {
      merchant_id: manual.merchant_id,
      account_id: manual.account_id,
      capture_orders: [{ transaction_id: pay.transaction_id, order_no: pay.order_no, currency: pay.currency, amount: pay.amount }],
    };
    try {
      const first = await gw.post('/v1/capture', body, { merchant: manual, headers: { 'idempotency-key': 'lost-commit-capture' } });
      assert.equal(first.statusCode, 503, first.body);
    } finally {
      restoreWrites();
    }
    await new Promise((r) => setTimeout(r, 400));
    const again = await gw.post('/v1/capture', body, { merchant: manual, headers: { 'idempotency-key': 'lost-commit-capture' } });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().capture_orders?.[0]?.capture_status ?? again.json().results?.[0]?.capture_status, '1', again.body);
  });
});

describe('load shedding', () => {
  test('past the in-flight bound new requests get a fast 503 + Retry-After; the accepted ones finish; /readyz says so and comes back', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // Writes wait at the gate: three requests stay in flight.
    setWrites(async (fn) => {
      await gate;
      return real(fn);
    });
    try {
      const m = gw.merchant;
      const held = [1, 2, 3].map(() => gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest() }));
      await new Promise((r) => setTimeout(r, 50));
      const shed = await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest() });
      assert.equal(shed.statusCode, 503);
      assert.equal(shed.headers['retry-after'], '1');
      assert.equal(readXml(shed).return_message, '0503:Service unavailable');
      const ready = await gw.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, 'not ready while shedding');
      assert.equal((await gw.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'alive all along');
      release();
      for (const r of await Promise.all(held)) assert.equal(readXml(r).result_info, '0000:Success');
      assert.equal((await gw.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready again by itself');
      const metrics = await gw.app.inject({ method: 'GET', url: '/metrics' });
      assert.match(metrics.body, /tollgate_requests_shed_total\{reason="in_flight"\} 1/);
    } finally {
      release();
      restoreWrites();
    }
  });
});

describe('background tasks tell a storage fault once', () => {
  test('a step failing on the storage every tick is reported once per episode; other failures every time', async () => {
    const { LocalTasks } = await import('../scheduler/local.js');
    const reported: string[] = [];
    const outcomes: Array<Error | null> = [
      Object.assign(new Error('full'), { code: 'SQLITE_FULL' }),
      Object.assign(new Error('full'), { code: 'SQLITE_FULL' }),
      Object.assign(new Error('full'), { code: 'SQLITE_FULL' }),
      null,
      Object.assign(new Error('full'), { code: 'SQLITE_FULL' }),
      new Error('a bug'),
      new Error('a bug'),
    ];
    let i = 0;
    const task = new LocalTasks((_n, e) => reported.push((e as Error).message));
    task.add('probe', 5, async () => {
      const o = outcomes[i++];
      if (o) throw o;
    });
    task.start();
    while (i < outcomes.length) await new Promise((r) => setTimeout(r, 5));
    await task.stop();
    assert.deepEqual(reported, ['full', 'full', 'a bug', 'a bug']);
  });
});
