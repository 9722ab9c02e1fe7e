// Processor attempts (docs/contract.md §20, docs/attempts.md). A call to a processor is an
// attempt: its row is committed before the call (in the same write unit as whatever claims
// the object: a new payment in `processing`, a checkout payment moved there), the call is
// made outside any transaction with a deadline, and its outcome is settled afterwards by a
// compare-and-set from the statuses below, in the same unit as the object's own transition.
// An attempt left `sent` past its deadline (the process died) or `unknown` is asked about
// again by the sweeper (src/authorise/sweeper.ts), with the same attempt id.
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

/** The row of an attempt about to be made, to be written (and committed) before the call. */
export function newAttempt(
  o: { account_id: string; connector: string; operation: AttemptOperation; object_id: string; amount_minor: number; currency: string },
  now_ms: number,
  timeout_ms: number,
): ProcessorAttemptRow {
  const deadline_at = now_ms + timeout_ms;
  return {
    attempt_id: newId('processor_attempt', now_ms),
    ...o,
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
  a: Pick<ProcessorAttemptRow, 'attempt_id' | 'status' | 'checks'>,
  event: AttemptEvent,
  outcome: { status: AttemptStatus; result_code?: string; reference?: string; error?: string; checks?: number },
  now_ms: number,
  lost: () => Error,
): void {
  const open = OPEN_ATTEMPT.includes(outcome.status);
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
    `processor_attempts.settle.${a.status}.${outcome.reference ? 'ref' : 'noref'}`,
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
        })
        .where('attempt_id', '=', param('id'))
        .where('status', '=', a.status),
    { ...patch, to, now: now_ms, id: a.attempt_id, ...(outcome.reference ? { reference: outcome.reference } : {}) },
    { rows: 1, error: lost },
  );
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
  }
}
