// Goal: the one transition mechanism: its pure checks (every event × every status of a
// sample table, allowed or refused, and the target it resolves), and its compare-and-set on
// a real engine (TOLLGATE_TEST_ENGINE): the first mover wins, a stale `from` or a failed
// extra condition changes nothing, and a move the table refuses is a programming error.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createPgDatabase, ENGINE } from '../test/harness.js';
import { allows, apply, applyCounted, destination, type Machine, TransitionError, targets } from './machine.js';

type Status = 'new' | 'open' | 'won' | 'lost';
type Event = 'open' | 'settle' | 'lose';
interface Row {
  id: string;
  status: Status;
  note: string;
  updated_at: number;
}

const MACHINE: Machine<Row, Status, Event> = {
  noun: 'widget',
  table: 'widgets',
  key: 'id',
  status: 'status',
  stamp: 'updated_at',
  events: {
    open: { from: ['new'], to: 'open' },
    settle: { from: ['open'], to: ['won', 'lost'] },
    lose: { from: ['new', 'open'], to: 'lost' },
  },
};

const STATUSES: Status[] = ['new', 'open', 'won', 'lost'];
const ALLOWED: Record<Event, Status[]> = { open: ['new'], settle: ['open'], lose: ['new', 'open'] };

describe('pure checks', () => {
  for (const [event, from] of Object.entries(ALLOWED) as Array<[Event, Status[]]>) {
    for (const status of STATUSES) {
      const ok = from.includes(status);
      test(`${event} from ${status}: ${ok ? 'allowed' : 'refused'}`, () => {
        assert.equal(allows(MACHINE.events, event, status), ok);
        if (!ok) assert.throws(() => destination('widget', MACHINE.events, event, status, event === 'settle' ? 'won' : undefined), TransitionError);
      });
    }
  }
  const cases: Array<[Event, Status, Status | undefined, Status | 'throws']> = [
    ['open', 'new', undefined, 'open'],
    ['open', 'new', 'open', 'open'],
    ['open', 'new', 'won', 'throws'], // not one of the rule's targets
    ['settle', 'open', 'won', 'won'],
    ['settle', 'open', 'lost', 'lost'],
    ['settle', 'open', undefined, 'throws'], // several targets: the caller must name one
    ['settle', 'open', 'open', 'throws'],
    ['lose', 'open', undefined, 'lost'],
  ];
  for (const [event, from, to, expected] of cases) {
    test(`${event} from ${from} to ${to ?? '(the only target)'}: ${expected}`, () => {
      if (expected === 'throws') assert.throws(() => destination('widget', MACHINE.events, event, from, to), TransitionError);
      else assert.equal(destination('widget', MACHINE.events, event, from, to), expected);
    });
  }
  test('targets lists a single target and a set alike', () => {
    assert.deepEqual(targets(MACHINE.events.open), ['open']);
    assert.deepEqual(targets(MACHINE.events.settle), ['won', 'lost']);
  });
  test('the error names the aggregate, the event and the status', () => {
    assert.equal(new TransitionError('widget', 'open', 'won').message, 'cannot open a widget that is won');
    assert.equal(new TransitionError('widget', 'settle', 'open', 'new').message, 'widget event settle does not lead from open to new');
  });
});

describe(`compare-and-set on ${ENGINE}`, () => {
  let db: Kysely<{ widgets: Row }>;
  let drop = async () => {};
  before(async () => {
    if (ENGINE === 'postgres') {
      const made = await createPgDatabase();
      drop = made.drop;
      db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: made.url, max: 2 }) }) });
    } else {
      db = new Kysely({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    }
    await db.schema
      .createTable('widgets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('note', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  });
  after(async () => {
    await db.destroy();
    await drop();
  });
  const put = (id: string, status: Status) => db.insertInto('widgets').values({ id, status, note: '', updated_at: 0 }).execute();
  const read = (id: string) => db.selectFrom('widgets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('apply moves a row still in `from`, sets the patch and the stamp, and answers the row', async () => {
    await put('a', 'new');
    const row = await apply(db, MACHINE, 'a', 'open', 'new', { note: 'first' }, 1000);
    assert.deepEqual({ ...row, updated_at: Number(row?.updated_at) }, { id: 'a', status: 'open', note: 'first', updated_at: 1000 });
  });
  test('a stale `from` loses: undefined, nothing written', async () => {
    await put('b', 'open');
    assert.equal(await apply(db, MACHINE, 'b', 'open', 'new', { note: 'late' }, 2000), undefined);
    assert.equal((await read('b')).note, '');
    assert.equal(await applyCounted(db, MACHINE, 'b', 'lose', 'new', {}, 2000), false);
    assert.equal((await read('b')).status, 'open');
  });
  test('two racing moves from the same status: exactly one wins', async () => {
    await put('c', 'open');
    const won = await Promise.all([
      applyCounted(db, MACHINE, 'c', 'settle', 'open', {}, 3000, { to: 'won' }),
      applyCounted(db, MACHINE, 'c', 'settle', 'open', {}, 3000, { to: 'lost' }),
    ]);
    assert.deepEqual(won.filter(Boolean).length, 1);
  });
  test('an extra condition of the compare-and-set must hold too', async () => {
    await put('d', 'new');
    await db.updateTable('widgets').set({ note: 'claimed' }).where('id', '=', 'd').execute();
    assert.equal(await applyCounted(db, MACHINE, 'd', 'lose', 'new', {}, 4000, { where: { note: '' } }), false);
    assert.equal(await applyCounted(db, MACHINE, 'd', 'lose', 'new', {}, 4000, { where: { note: 'claimed' } }), true);
    assert.equal((await read('d')).status, 'lost');
  });
  test('a move the table refuses throws before writing', async () => {
    await put('e', 'won');
    await assert.rejects(apply(db, MACHINE, 'e', 'open', 'won', {}, 5000), TransitionError);
    await assert.rejects(applyCounted(db, MACHINE, 'e', 'settle', 'open', {}, 5000), TransitionError);
    assert.equal((await read('e')).status, 'won');
  });
});
