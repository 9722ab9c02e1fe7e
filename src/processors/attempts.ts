// Processor attempts (docs/contract.md §20, docs/attempts.md). A call to a processor is an
// attempt: its row is committed before the call (in the same write unit as whatever claims
// the object: a new payment in `processing`, a checkout payment moved there), the call is
// made outside any transaction with a deadline, and its outcome is settled afterwards by a
// compare-and-set from the statuses below, in the same unit as the object's own transition.
// An attempt left `sent` past its deadline (the process died) or `unknown` is asked about
// again by the sweeper (src/attempts/sweeper.ts), with the same attempt id.
import { allows, destination, type Machine } from '../core/machine.js';
import { newId } from '../crypto/ids.js';
import { param } from '../db/prepared.js';
import type { AttemptOperation, AttemptStatus, ProcessorAttemptRow } from '../db/tables/attempts.js';
import type { WriteUnit } from '../db/unit.js';
import type { AuthoriseOutcome, ProcessorCall } from './types.js';

export type { AttemptOperation, AttemptStatus, ProcessorAttemptRow };

export type AttemptEvent = 'answer' | 'lose' | 'void';

/** The attempt's transition table: an answer settles a sent, unknown or pending attempt; the sweeper voids one that stayed unknown. */
export const ATTEMPT_TRANSITIONS = {
  answer: { from: ['sent', 'unknown', 'pending'], to: ['approved', 'declined', 'challenge', 'pending', 'unknown'] },
  // The processor never saw it (a status query answered not found): nothing to undo.
  lose: { from: ['sent', 'unknown', 'pending'], to: 'declined' },
  void: { from: ['sent', 'unknown', 'pending'], to: 'voided' },
} as const satisfies Record<AttemptEvent, { from: readonly AttemptStatus[]; to: AttemptStatus | readonly AttemptStatus[] }>;

export const ATTEMPT_MACHINE: Machine<ProcessorAttemptRow, AttemptStatus, AttemptEvent> = {
  noun: 'processor attempt',
  table: 'processor_attempts',
  key: 'attempt_id',
  status: 'status',
  stamp: 'updated_at',
  events: ATTEMPT_TRANSITIONS,
};

/** Statuses the sweeper still asks about. */
export const OPEN_ATTEMPT: readonly AttemptStatus[] = ['sent', 'unknown', 'pending'];

/**
 * Calls waiting on a processor in this process (docs/contract.md §20: waiting costs memory,
 * not CPU). The load-shedding bound on requests in work (src/http/app.ts) leaves them out;
 * this bound (`TOLLGATE_MAX_PROCESSOR_WAITS`, set by the runtime) refuses a new attempt
 * before anything is written when that many calls wait already.
 */
export const processorWaits = { now: 0, max: 4096 };

/** A new processor call refused because `processorWaits.max` calls wait already: 503 with Retry-After, nothing written. */
export class ProcessorsBusy extends Error {
  readonly code = 'TOLLGATE_PROCESSORS_BUSY';
  constructor() {
    super(`this process has ${processorWaits.max} calls waiting on processors; retry in a moment`);
  }
}

/** The claim of an APM start on an order_no (a checkout session's too), held by its attempt. */
export function apmClaim(account_id: string, order_no: string): string {
  return `apm:${account_id}:${order_no}`;
}

/**
 * How long past its deadline an APM start still open is left before the sweeper closes it:
 * its process died at the processor (a live one settles it at its deadline). There is no
 * status to ask of a start, and the shopper never got its issuer address.
 */
export const ABANDONED_START_MS = 60_000;

/** The row of an attempt about to be made, to be written (and committed) before the call; ProcessorsBusy past the bound on waiting calls. */
export function newAttempt(
  o: {
    account_id: string;
    connector: string;
    /** The configured processor it goes to (`Processor.processor_id`). */
    processor_id?: string;
    operation: AttemptOperation;
    object_id: string;
    amount_minor: number;
    currency: string;
    claim_key?: string;
    snapshot?: string;
  },
  now_ms: number,
  timeout_ms: number,
): ProcessorAttemptRow {
  if (processorWaits.now >= processorWaits.max) throw new ProcessorsBusy();
  const deadline_at = now_ms + timeout_ms;
  const { claim_key, snapshot, processor_id, ...rest } = o;
  return {
    attempt_id: newId('processor_attempt', now_ms),
    ...rest,
    processor_id: processor_id ?? null,
    claim_key: claim_key ?? null,
    snapshot: snapshot ?? null,
    status: 'sent',
    result_code: '',
    reference: '',
    checks: 0,
    deadline_at,
    // Asked about once its deadline has passed, unless its answer settles it first.
    next_check_at: deadline_at,
    last_error: '',
    created_at: now_ms,
    updated_at: now_ms,
  };
}

/** The attempt's status for an authorisation outcome. */
export function attemptStatusOf(outcome: AuthoriseOutcome): AttemptStatus {
  switch (outcome.kind) {
    case 'approved':
    case 'declined':
    case 'pending':
    case 'unknown':
      return outcome.kind;
    case 'challenge_required':
      return 'challenge';
  }
}

/** The delay before an open attempt is asked about again: 5 s, doubling, at most 5 minutes. */
export function backoffMs(checks: number): number {
  return Math.min(5_000 * 2 ** Math.min(checks, 10), 300_000);
}

/**
 * Settles attempt `attempt_id` (still `from`) with `outcome`, in `unit`. An open outcome
 * (pending, unknown) is asked about again after `backoffMs`; a final one never.
 */
export function settleAttemptInto(
  unit: WriteUnit,
  a: Pick<ProcessorAttemptRow, 'attempt_id' | 'status' | 'checks'> & { claim_key?: string | null },
  event: AttemptEvent,
  outcome: { status: AttemptStatus; result_code?: string; reference?: string; error?: string; checks?: number; release?: boolean },
  now_ms: number,
  lost: () => Error,
): WriteUnit {
  const open = OPEN_ATTEMPT.includes(outcome.status);
  // An order_no, once claimed, stays claimed (as its payment's unique index keeps it): a
  // request arriving after the outcome must not reach the processor a second time. So does a
  // deduction's period: a job run after a crash finds its attempt instead of charging again.
  // An APM start's claim stays with the payment it started; a start that failed lets it go
  // (it wrote nothing: the merchant may try the order again).
  const keeps =
    a.claim_key?.startsWith('order:') || a.claim_key?.startsWith('deduction:') || (a.claim_key?.startsWith('apm:') && outcome.status === 'approved');
  // `release`: a call that never reached the processor hands its claim to the next one (routing).
  const letGo = !open && (!keeps || outcome.release === true);
  const checks = outcome.checks ?? a.checks;
  const patch: Partial<ProcessorAttemptRow> = {
    result_code: outcome.result_code ?? '',
    next_check_at: open ? now_ms + backoffMs(checks) : null,
    last_error: (outcome.error ?? '').slice(0, 500),
    checks,
  };
  if (!allows(ATTEMPT_TRANSITIONS, event, a.status)) throw new Error(`a processor attempt that is ${a.status} cannot take ${event}`);
  const to = destination(ATTEMPT_MACHINE.noun, ATTEMPT_TRANSITIONS, event, a.status, outcome.status);
  // Compiled once per status it moves from (it runs for every processor call).
  unit.prepared(
    'update',
    `processor_attempts.settle.${a.status}.${outcome.reference ? 'ref' : 'noref'}.${letGo ? 'release' : 'keep'}`,
    (q) =>
      q
        .updateTable('processor_attempts')
        .set({
          status: param('to'),
          result_code: param('result_code'),
          next_check_at: param('next_check_at'),
          last_error: param('last_error'),
          checks: param('checks'),
          updated_at: param('now'),
          ...(outcome.reference ? { reference: param('reference') } : {}),
          // A final outcome lets go of what the attempt held (a payment's capture or cancel).
          ...(letGo ? { claim_key: null } : {}),
          // Settled with (or after) its payment's row: the snapshot of it is no longer needed.
          snapshot: null,
        })
        .where('attempt_id', '=', param('id'))
        .where('status', '=', a.status),
    { ...patch, to, now: now_ms, id: a.attempt_id, ...(outcome.reference ? { reference: outcome.reference } : {}) },
    { rows: 1, error: lost },
  );
  return unit;
}

/**
 * Makes the call of `attempt` with its deadline, outside any transaction: what the
 * processor answered, or `unknown` when it did not answer in time or the call failed (a
 * network error, a 5xx, a connector's exception). The reason names the failure, never
 * the request: a connector's error carries no card data (docs/security.md).
 */
export async function callWithDeadline<T>(
  attempt: Pick<ProcessorAttemptRow, 'attempt_id' | 'deadline_at'>,
  now_ms: () => number,
  fn: (call: ProcessorCall) => Promise<T>,
): Promise<T | { kind: 'unknown'; reason: string }> {
  const controller = new AbortController();
  const wait = Math.max(0, attempt.deadline_at - now_ms());
  let timer: NodeJS.Timeout | undefined;
  processorWaits.now++;
  const timedOut = new Promise<{ kind: 'unknown'; reason: string }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ kind: 'unknown', reason: `no answer within ${wait} ms` });
    }, wait);
  });
  try {
    return await Promise.race([fn({ attempt_id: attempt.attempt_id, deadline_at: attempt.deadline_at, signal: controller.signal }), timedOut]);
  } catch (e) {
    return { kind: 'unknown', reason: e instanceof Error ? `${e.name}: ${e.message}`.slice(0, 300) : 'the call failed' };
  } finally {
    clearTimeout(timer);
    processorWaits.now--;
  }
}
