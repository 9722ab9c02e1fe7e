// One transition mechanism for every aggregate (docs/style.md §4, issue 30 item 2): a typed table of
// events (from which statuses each may fire, where it leads) over one table's status column,
// and one writer that applies an event as a compare-and-set on the current status, so two
// racing requests can never both win. Each aggregate declares its machine beside its rows
// (src/<aggregate>/states.ts); nothing else writes a status column.
//
// This file imports nothing of the project (Kysely only), so any folder may use it without
// an import cycle. The checks are pure and table-tested (src/core/machine.test.ts and each
// aggregate's states.test.ts, one line per event and status).
import type { Kysely } from 'kysely';

/** A status as stored: text for most aggregates, 0/1 for a flag column (connected accounts' `deleted`). */
export type StatusValue = string | number;

/** One event: the statuses it may fire from, and the one (or the set of) statuses it leads to. */
export interface Rule<S extends StatusValue> {
  readonly from: readonly S[];
  /** A set when the outcome is decided outside the table (a payment's `authenticate_ok`): the caller names it. */
  readonly to: S | readonly S[];
}

export type Transitions<S extends StatusValue, E extends string> = Readonly<Record<E, Rule<S>>>;

/** An aggregate's transition table and where its status lives. */
export interface Machine<Row, S extends StatusValue, E extends string> {
  /** What the aggregate is called in an error message ("payment", "payout"). */
  readonly noun: string;
  readonly table: string;
  /** The primary key column. */
  readonly key: keyof Row & string;
  /** The status column. */
  readonly status: keyof Row & string;
  /** The column stamped with the time of every transition, or null when the table has none. */
  readonly stamp: (keyof Row & string) | null;
  readonly events: Transitions<S, E>;
}

/**
 * An event the table does not allow from that status (or towards that status): a
 * programming error, never a business answer. Callers check `allows` first, or read the
 * status they pass from the row they are moving.
 */
export class TransitionError extends Error {
  constructor(
    readonly noun: string,
    readonly event: string,
    readonly current: StatusValue | undefined,
    readonly to?: StatusValue,
  ) {
    super(
      current === undefined
        ? `${noun} not found`
        : to === undefined
          ? `cannot ${event.replace('_', ' ')} a ${noun} that is ${current}`
          : `${noun} event ${event} does not lead from ${current} to ${to}`,
    );
  }
}

/** The statuses `rule` leads to, as a list. */
export function targets<S extends StatusValue>(rule: Rule<S>): readonly S[] {
  return Array.isArray(rule.to) ? (rule.to as readonly S[]) : [rule.to as S];
}

/** Whether `event` may fire from `from` (pure: the tables' tests call it for every pair). */
export function allows<S extends StatusValue, E extends string>(events: Transitions<S, E>, event: E, from: S): boolean {
  return events[event].from.includes(from);
}

/**
 * The status `event` leads to from `from`: `to` when given (it must be one of the rule's),
 * else the rule's only target. Throws TransitionError for a move the table does not allow.
 */
export function destination<S extends StatusValue, E extends string>(noun: string, events: Transitions<S, E>, event: E, from: S, to?: S): S {
  const rule = events[event];
  if (!rule.from.includes(from)) throw new TransitionError(noun, event, from);
  const all = targets(rule);
  if (to === undefined) {
    const only = all[0];
    if (all.length !== 1 || only === undefined) throw new TransitionError(noun, event, from, to);
    return only;
  }
  if (!all.includes(to)) throw new TransitionError(noun, event, from, to);
  return to;
}

export interface ApplyOptions<Row, S extends StatusValue> {
  /** The status it leads to, when the rule has several. */
  to?: S;
  /** Further equality conditions of the compare-and-set (a checkout session still unclaimed: `card_brand = ''`). */
  where?: Partial<Row>;
}

/** Kysely over an unnamed schema: the machine names its table and columns as data. */
type AnyDb = Kysely<any>;

/**
 * The compare-and-set UPDATE of `event`, built on `tx` and not run: what `apply` and
 * `applyCounted` execute, and what a write unit (src/db/unit.ts) records.
 */
export function transitionUpdate<Row, S extends StatusValue, E extends string>(
  tx: Kysely<unknown>,
  m: Machine<Row, S, E>,
  id: string,
  event: E,
  from: S,
  patch: Partial<Row>,
  now_ms: number,
  opts: ApplyOptions<Row, S>,
) {
  const to = destination(m.noun, m.events, event, from, opts.to);
  const set: Record<string, unknown> = { ...patch, [m.status]: to };
  if (m.stamp !== null) set[m.stamp] = now_ms;
  const key: string = m.key;
  const status: string = m.status;
  let q = (tx as AnyDb).updateTable(m.table).set(set).where(key, '=', id).where(status, '=', from);
  for (const [column, value] of Object.entries(opts.where ?? {})) q = q.where(column, '=', value);
  return q;
}

/**
 * Applies `event` to the row `id` if, and only if, it is still in `from` (and matches
 * `opts.where`): the updated row, or undefined when another change got there first.
 */
export async function apply<DB, Row, S extends StatusValue, E extends string>(
  tx: Kysely<DB>,
  m: Machine<Row, S, E>,
  id: string,
  event: E,
  from: S,
  patch: Partial<Row>,
  now_ms: number,
  opts: ApplyOptions<Row, S> = {},
): Promise<Row | undefined> {
  return (await transitionUpdate(tx as Kysely<unknown>, m, id, event, from, patch, now_ms, opts)
    .returningAll()
    .executeTakeFirst()) as Row | undefined;
}

/**
 * `apply` without reading the row back: true when it moved. For hot paths that already
 * hold the row.
 */
export async function applyCounted<DB, Row, S extends StatusValue, E extends string>(
  tx: Kysely<DB>,
  m: Machine<Row, S, E>,
  id: string,
  event: E,
  from: S,
  patch: Partial<Row>,
  now_ms: number,
  opts: ApplyOptions<Row, S> = {},
): Promise<boolean> {
  const r = await transitionUpdate(tx as Kysely<unknown>, m, id, event, from, patch, now_ms, opts).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
