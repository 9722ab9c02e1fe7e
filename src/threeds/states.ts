// The 3-D Secure challenge's transition table (docs/contract.md §10), applied by compare-and-set
// by the one mechanism (src/core/machine.ts). A challenge is created `open` with its
// payment; the shopper's submit claims it (`processing`, single use, before any processor
// call), and its end is `completed` (authenticated, whatever the issuer then answered),
// `failed` (the shopper failed it) or `expired` (15 minutes passed, still open).
import { allows, applyCounted, type Machine, type Transitions } from '../core/machine.js';
import type { DB } from '../db/schema.js';
import type { Tx } from '../db/store.js';
import type { ChallengeStatus, ThreedsChallengeRow } from './tables.js';

export const CHALLENGE_STATUSES: readonly ChallengeStatus[] = ['open', 'processing', 'completed', 'failed', 'expired'];

export type ChallengeEvent =
  | 'claim' // the shopper submitted the page's form
  | 'complete' // authenticated: the processor's answer follows on the payment
  | 'fail' // the shopper failed the challenge
  | 'expire'; // its 15 minutes passed while still open

export const CHALLENGE_TRANSITIONS = {
  claim: { from: ['open'], to: 'processing' },
  complete: { from: ['processing'], to: 'completed' },
  fail: { from: ['processing'], to: 'failed' },
  expire: { from: ['open'], to: 'expired' },
} as const satisfies Transitions<ChallengeStatus, ChallengeEvent>;

/** The challenge machine over `threeds_challenges.status`; the table has no updated_at (its end sets decided_at). */
export const CHALLENGE_MACHINE: Machine<ThreedsChallengeRow, ChallengeStatus, ChallengeEvent> = {
  noun: '3-D Secure challenge',
  table: 'threeds_challenges' satisfies keyof DB,
  key: 'id_hash',
  status: 'status',
  stamp: null,
  events: CHALLENGE_TRANSITIONS,
};

export function canApplyChallenge(event: ChallengeEvent, from: ChallengeStatus): boolean {
  return allows<ChallengeStatus, ChallengeEvent>(CHALLENGE_TRANSITIONS, event, from);
}

/** Applies `event` to the challenge if it is still `from`; false when another request or the expiry job moved it first. */
export function applyChallengeTransition(
  tx: Tx,
  id_hash: string,
  event: ChallengeEvent,
  from: ChallengeStatus,
  patch: Partial<Pick<ThreedsChallengeRow, 'decided_at'>>,
  now_ms: number,
): Promise<boolean> {
  return applyCounted(tx, CHALLENGE_MACHINE, id_hash, event, from, patch, now_ms);
}
