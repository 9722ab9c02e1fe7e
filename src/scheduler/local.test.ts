// The scheduler's process-local tasks (issue 30 item 3): each on its own interval, never
// overlapping itself, wakeable, and stopped gracefully (running steps, then what they left
// running, are waited for).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalTasks } from './local.js';

/** A step that records its runs and can be held open until released. */
function probe() {
  const p = { runs: 0, active: 0, max_active: 0, hold: null as Promise<void> | null, release: () => {} };
  const step = async () => {
    p.runs++;
    p.active++;
    p.max_active = Math.max(p.max_active, p.active);
    try {
      await p.hold;
    } finally {
      p.active--;
    }
  };
  const holdNext = () => {
    p.hold = new Promise((r) => {
      p.release = () => {
        p.hold = null;
        r();
      };
    });
  };
  return { p, step, holdNext };
}

test('a task runs at start, then every every_ms after its previous step, each task on its own interval', async () => {
  const fast = probe();
  const slow = probe();
  const tasks = new LocalTasks();
  tasks.add('fast', 10, fast.step);
  tasks.add('slow', 60_000, slow.step);
  assert.deepEqual(tasks.names(), ['fast', 'slow']);
  tasks.start();
  await sleep(120);
  await tasks.stop();
  assert.ok(fast.p.runs >= 4, `fast ran ${fast.p.runs} times`);
  assert.equal(slow.p.runs, 1, 'slow ran only at start');
});

test('wake runs an idle task at once; a wake while it runs runs it again once, right after, never overlapping', async () => {
  const t = probe();
  const tasks = new LocalTasks();
  tasks.add('t', 60_000, t.step);
  tasks.wake('t'); // before start: nothing
  assert.equal(t.p.runs, 0);
  t.holdNext();
  tasks.start();
  await sleep(5);
  assert.equal(t.p.runs, 1);
  tasks.wake('t');
  tasks.wake('t');
  tasks.wake('t');
  assert.equal(t.p.runs, 1, 'no second step while the first runs');
  t.p.release();
  await sleep(20);
  assert.equal(t.p.runs, 2, 'three wakes while running: one more step');
  tasks.wake('t');
  await sleep(20);
  assert.equal(t.p.runs, 3, 'an idle task woken runs at once, not after its 60 s');
  assert.equal(t.p.max_active, 1);
  tasks.wake('nobody'); // an unknown name is ignored
  await tasks.stop();
  tasks.wake('t');
  await sleep(20);
  assert.equal(t.p.runs, 3, 'nothing after stop');
});

test('stop signals the running step, waits for it, then for what the task left running', async () => {
  const order: string[] = [];
  let signalled = false;
  const tasks = new LocalTasks();
  tasks.add(
    'work',
    60_000,
    async (stopping) => {
      order.push('step started');
      await new Promise<void>((r) => stopping.addEventListener('abort', () => r()));
      signalled = stopping.aborted;
      await sleep(20);
      order.push('step ended');
    },
    {
      settle: async () => {
        await sleep(10);
        order.push('settled');
      },
    },
  );
  tasks.start();
  await sleep(10);
  await tasks.stop();
  assert.equal(signalled, true);
  assert.deepEqual(order, ['step started', 'step ended', 'settled']);
});

test('a failed step is reported and the next tick runs; a repeated storage fault is told once', async () => {
  const reported: string[] = [];
  const outcomes: Array<Error | null> = [
    Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }),
    Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }),
    null,
    new Error('a bug'),
    new Error('a bug'),
  ];
  let i = 0;
  const tasks = new LocalTasks((name, e) => reported.push(`${name}: ${(e as Error).message}`));
  tasks.add('probe', 5, async () => {
    const o = outcomes[i++];
    if (o) throw o;
  });
  tasks.start();
  while (i < outcomes.length) await sleep(5);
  await tasks.stop();
  assert.deepEqual(reported, ['probe: busy', 'probe: a bug', 'probe: a bug']);
});

test('a step that wakes its own task before its first await runs again after, never beside itself', async () => {
  let runs = 0;
  let active = 0;
  let max_active = 0;
  const tasks = new LocalTasks();
  tasks.add('self', 60_000, async () => {
    runs++;
    active++;
    max_active = Math.max(max_active, active);
    if (runs < 3) tasks.wake('self');
    await sleep(5);
    active--;
  });
  tasks.start();
  await sleep(100);
  await tasks.stop();
  assert.equal(runs, 3);
  assert.equal(max_active, 1);
});

test('a task is registered once, with a positive integer interval, before start', () => {
  const tasks = new LocalTasks();
  const step = async () => {};
  for (const every_ms of [0, -1, 1.5, Number.NaN]) assert.throws(() => tasks.add(`x${every_ms}`, every_ms, step), /every_ms/);
  tasks.add('a', 1, step);
  assert.throws(() => tasks.add('a', 1, step), /twice/);
  tasks.start();
  assert.throws(() => tasks.add('b', 1, step), /after start/);
  return tasks.stop();
});
