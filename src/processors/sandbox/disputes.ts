// The sandbox's dispute cards (docs/contract.md §22): a captured test payment of one of them is
// disputed a few seconds later. The capture's own write unit (src/payments/events.ts) adds the
// scheduled job that opens the dispute, so it exists exactly when the capture commits and a
// repeated capture event schedules nothing twice (the job's key). The job itself is the
// disputes capability's (src/disputes/tasks.ts); test clocks move it like every account job.
import type { PaymentRow } from '../../db/tables/payments.js';
import type { WriteUnit } from '../../db/unit.js';
import { TEST_CARDS } from './cards.js';

export const SANDBOX_DISPUTE_KIND = 'dispute.sandbox_open';
export const DEFAULT_SANDBOX_DISPUTE_DELAY_MS = 5_000;

/** TOLLGATE_SANDBOX_DISPUTE_DELAY_MS, milliseconds from capture to the sandbox's dispute. */
export function sandboxDisputeDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.TOLLGATE_SANDBOX_DISPUTE_DELAY_MS;
  if (v === undefined || v === '') return DEFAULT_SANDBOX_DISPUTE_DELAY_MS;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`TOLLGATE_SANDBOX_DISPUTE_DELAY_MS must be a whole number of milliseconds, not ${JSON.stringify(v)}`);
  return n;
}

/** The masked form (BIN and last four) of each dispute card: what a payment row keeps of its card. */
const BY_MASK: ReadonlyMap<string, NonNullable<(typeof TEST_CARDS)[string]['dispute']>> = new Map(
  Object.entries(TEST_CARDS)
    .filter(([, c]) => c.dispute !== undefined)
    .map(([pan, c]) => [`${pan.slice(0, 6)}${'*'.repeat(pan.length - 10)}${pan.slice(-4)}`, c.dispute as NonNullable<typeof c.dispute>]),
);

/** The dispute the sandbox opens for this payment, or undefined (a live payment, another processor, another card). */
export function sandboxDisputeOf(row: Pick<PaymentRow, 'livemode' | 'connector' | 'card_masked'>) {
  if (Number(row.livemode) !== 0 || row.connector !== 'sandbox') return undefined;
  return BY_MASK.get(row.card_masked ?? '');
}

/** Adds to `unit` the job that disputes `row`, when it is a captured sandbox payment of a dispute card. */
export function sandboxDisputeDueInto(unit: WriteUnit, row: PaymentRow, now_ms: number, delay_ms = sandboxDisputeDelayMs()): void {
  if (Number(row.captured_minor) <= 0 || !sandboxDisputeOf(row)) return;
  unit.insertRows(
    'scheduled_jobs',
    [
      {
        job_key: `${SANDBOX_DISPUTE_KIND}:${row.transaction_id}`,
        kind: SANDBOX_DISPUTE_KIND,
        account_id: row.account_id,
        due_at: now_ms + delay_ms,
        status: 'due',
        attempts: 0,
        lease_until: 0,
        lease_token: null,
        payload: JSON.stringify({ transaction_id: row.transaction_id }),
        last_error: '',
        created_at: now_ms,
        updated_at: now_ms,
      },
    ],
    { ignoreConflictOn: ['job_key'] },
  );
}
