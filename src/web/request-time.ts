// The time a request is answered at (docs/contract.md §16; issue 36 item 1): a request on a
// test account whose clock was moved forward (`clock advance`) is answered as of the clock's
// time, wherever time decides an outcome (card expiry, session and challenge deadlines,
// capture windows, created/updated times, subscription schedules). Every other request, live
// accounts' always, is answered at the real time.
//
// One mechanism: once a request's account is known, `setRequestTime` reads the account's clock
// (test accounts only: a live account never pays for the read) and puts it on `request.now_ms`;
// the app wraps every route handler once (`runAtRequestTime`, src/http/app.ts onRoute) so that
// the handler of such a request runs inside `als.run()`, where `deps.now()` (src/runtime.ts)
// answers the clock's time. Requests without a clock never enter the storage, so production
// and the bench never turn async hooks on. Not cached: `clock advance` moves the clock from
// another process, and the very next request must see it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { Store } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { Deps } from './context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The clock's time this request is answered at: set only for a test account whose clock is ahead of the real time. */
    now_ms?: number;
  }
}

/**
 * How far the request's time is ahead of the real time. An offset rather than a fixed instant:
 * time still passes inside the request (a deadline counted on `deps.now()` is reached).
 */
const requestClock = new AsyncLocalStorage<{ offset_ms: number }>();

/** Where a test account's clock stands, or null when it was never moved. The one reader of `test_clocks` (src/scheduler/clock.ts uses it too). */
export async function storedClock(store: Store, account_id: string): Promise<number | null> {
  const row = await store.db.selectFrom('test_clocks').select('now_ms').where('account_id', '=', account_id).executeTakeFirst();
  return row ? Number(row.now_ms) : null;
}

/**
 * How long a process trusts "no test account has a clock" before it asks again. Without a clock
 * anywhere (production, the bench) a request costs no read at all: one tiny read per store per
 * this long (measured on PostgreSQL: a read per request cost authorise about 10% and the hosted
 * checkout about 9%). An advance in this process is seen at once (`clockMoved`); one from
 * another process (the CLI) within this long, which is shorter than the CLI takes to start.
 */
const NO_CLOCK_TTL_MS = 200;
const noClockUntil = new WeakMap<Store, number>();

/** Whether any test account's clock was ever moved; a "no" is trusted for NO_CLOCK_TTL_MS. */
async function anyClock(store: Store): Promise<boolean> {
  const now = performance.now();
  if ((noClockUntil.get(store) ?? 0) > now) return false;
  const row = await store.db.selectFrom('test_clocks').select('account_id').limit(1).executeTakeFirst();
  if (row) {
    noClockUntil.delete(store);
    return true;
  }
  noClockUntil.set(store, now + NO_CLOCK_TTL_MS);
  return false;
}

/** A clock was moved in this process: the next request asks again (src/scheduler/clock.ts). */
export function clockMoved(store: Store): void {
  noClockUntil.delete(store);
}

/** The account whose clock a request runs on (set with `request.now_ms`), for `runAtRequestTime`. */
const clockedAccount = new WeakMap<FastifyRequest, string>();

/**
 * Sets `request.now_ms` to the account's clock when the account is a test account whose clock
 * stands ahead of the real time; otherwise leaves it unset. Call it where the request's account
 * becomes known, before the handler runs (a hook). `deps.now()` here is the real time: no
 * handler runs yet.
 */
export async function setRequestTime(deps: Deps, request: FastifyRequest, account: Pick<AccountRow, 'account_id' | 'mode'>): Promise<void> {
  if (account.mode !== 'test' || !(await anyClock(deps.store))) return;
  const clock = await storedClock(deps.store, account.account_id);
  if (clock === null || clock <= deps.now()) return;
  request.now_ms = clock;
  clockedAccount.set(request, account.account_id);
}

/**
 * A route handler that runs at the request's time: inside the clock's storage when the request
 * has `now_ms`, else directly. `deps.now` outside the storage is the process's own time, from
 * which the offset is taken. What the handler recorded is stamped with the clock's time, its
 * notifications too: they are made due at the real time once it is done (`eventsDueNow`), as
 * an advance's are, or they would wait for the real time to reach the clock.
 */
export function runAtRequestTime(handler: RouteHandlerMethod, deps: Pick<Deps, 'store' | 'now'>): RouteHandlerMethod {
  return function atRequestTime(this: unknown, request, reply) {
    const account_id = clockedAccount.get(request);
    if (request.now_ms === undefined || account_id === undefined) return handler.call(this as never, request, reply);
    const offset_ms = request.now_ms - deps.now();
    return requestClock.run({ offset_ms }, async () => {
      try {
        return await handler.call(this as never, request, reply);
      } finally {
        try {
          await eventsDueNow(deps.store, account_id, deps.now() - offset_ms);
        } catch (e) {
          // The answer stands; the events are delivered when the real time reaches them, or at the next advance.
          request.log.warn({ err: e, account_id }, 'could not make the notifications of a clocked request due now');
        }
      }
    });
  } as RouteHandlerMethod;
}

/**
 * The account's notifications recorded as of its clock (never attempted, due after the real
 * time) are made due at the real time; their payloads keep the clock's time (issue 36 item 1).
 */
export async function eventsDueNow(store: Store, account_id: string, real_now_ms: number): Promise<void> {
  await store.transaction(async (tx) => {
    await tx
      .updateTable('events')
      .set({ next_attempt_at: real_now_ms })
      .where('account_id', '=', account_id)
      .where('status', '=', 'pending')
      .where('attempts', '=', 0)
      .where('next_attempt_at', '>', real_now_ms)
      .execute();
  });
}

/** The request's time from a time source: the source's own outside a clocked request, moved by the clock's offset inside one. */
export function clockedNow(real: () => number): () => number {
  return () => {
    const store = requestClock.getStore();
    return store === undefined ? real() : real() + store.offset_ms;
  };
}

/** The account of a shopper page's `:id` (a session, challenge or issuer page), or null when there is none. */
export type PageAccount = (id: string) => Promise<Pick<AccountRow, 'account_id' | 'mode'> | null>;

/**
 * The `preHandler` of a shopper page: the page's id names a payment, and so its account; a
 * test account's clock then answers the page (a session's or challenge's deadline, the card
 * form's expiry check). An unknown id sets nothing: the handler answers 404 as before.
 */
export function pageTime(deps: Deps, accountOf: PageAccount) {
  return {
    preHandler: async (request: FastifyRequest) => {
      const id = (request.params as { id?: unknown }).id;
      if (typeof id !== 'string' || !(await anyClock(deps.store))) return;
      const account = await accountOf(id);
      if (account) await setRequestTime(deps, request, account);
    },
  };
}

/** A payment's account and mode, for `pageTime` (payments carry `livemode`). */
export function paymentAccount(row: { account_id: string; livemode: number } | undefined): Pick<AccountRow, 'account_id' | 'mode'> | null {
  return row ? { account_id: row.account_id, mode: Number(row.livemode) === 1 ? 'live' : 'test' } : null;
}
