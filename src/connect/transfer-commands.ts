// Transfers and their reversals as typed commands of the core (issue 30 item 1; docs/contract.md
// §18): ids, amounts in minor units, the caller's platform account. A command refuses with an
// outcome of `src/core/outcomes.ts` and the facts an interface words (the generic interface's
// table is in transfers.ts); a refusal throws `Refused` inside the transaction, so the funding
// row it took is rolled back with everything else.
import { type Refusal, Refused, refuse, refusedAsValue } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import type { Store, Tx } from '../db/store.js';
import { availableMinor } from '../payouts/service.js';
import { recordConnectEvent, transferRecord } from './events.js';
import { postMove } from './ledger.js';
import { canApplyTransfer, reserveReversal, transferState } from './states.js';
import type { TransferReversalRow, TransferRow } from './tables.js';

/** Move `amount_minor` of the platform's available balance in `currency` to its connected account `destination`. */
export interface TransferCommand {
  platform_account_id: string;
  merchant_id: string;
  livemode: number;
  destination: string;
  currency: string;
  amount_minor: number;
  description: string;
  transfer_group: string;
  /** The metadata as stored (JSON). */
  metadata: string;
  /** The Idempotency-Key's row: a re-run answers the transfer it made. */
  idempotency_ref: string | null;
}

/** Take `amount_minor` (null: all that is not reversed yet) of `transfer` back from its connected account. */
export interface ReversalCommand {
  transfer: TransferRow;
  amount_minor: number | null;
  description: string;
  metadata: string;
  idempotency_ref: string | null;
}

/** Takes the funding row of one balance until commit: moves out of one balance run one after another. */
async function holdFunding(tx: Tx, account_id: string, currency: string, now_ms: number): Promise<void> {
  await tx
    .insertInto('payout_funding')
    .values({ account_id, currency, payouts: 1, updated_at: now_ms })
    .onConflict((oc) => oc.columns(['account_id', 'currency']).doUpdateSet((eb) => ({ payouts: eb('payout_funding.payouts', '+', 1), updated_at: now_ms })))
    .execute();
}

/** A balance short of `amount`: the holder is the platform (`account` is its id) or a connected account. */
function insufficient(holder: 'platform' | 'connected', account: string, currency: string, available: number, amount: number): Refused {
  return new Refused(
    refuse('insufficient_funds', `${account} has ${available} available in ${currency} (minor units), less than the ${amount} asked for`, {
      holder,
      account,
      currency,
      available,
      asked: amount,
    }),
  );
}

/** The transfer, or what the key already made; refused when the destination is gone or cannot take transfers, or the balance is short. */
export function makeTransfer(store: Store, cmd: TransferCommand, now: number): Promise<{ ok: true; row: TransferRow; made: boolean } | Refusal> {
  return refusedAsValue(() => store.transaction((tx) => transferIn(tx, cmd, now)));
}

async function transferIn(tx: Tx, cmd: TransferCommand, now: number): Promise<{ ok: true; row: TransferRow; made: boolean }> {
  const { platform_account_id: platform, currency, amount_minor: amount } = cmd;
  await holdFunding(tx, platform, currency, now);
  if (cmd.idempotency_ref) {
    const made = await tx
      .selectFrom('transfers')
      .selectAll()
      .where('idempotency_ref', '=', cmd.idempotency_ref)
      .where('platform_account_id', '=', platform)
      .executeTakeFirst();
    if (made) return { ok: true, row: made, made: true };
  }
  // The destination's row, locked until commit: a delete of the account waits for this transfer.
  const open = await tx
    .updateTable('connected_accounts')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', cmd.destination)
    .where('platform_account_id', '=', platform)
    .where('livemode', '=', cmd.livemode)
    .where('deleted', '=', 0)
    .returning(['id', 'capabilities'])
    .executeTakeFirst();
  if (!open) throw new Refused(refuse('not_found', `no connected account ${cmd.destination}`, { destination: cmd.destination }));
  // As the platform family does: only an account with the transfers capability receives transfers.
  if ((JSON.parse(open.capabilities) as Record<string, string>).transfers !== 'active') {
    throw new Refused(refuse('invalid_state', `account ${cmd.destination} does not have the transfers capability active`, { destination: cmd.destination }));
  }
  const available = await availableMinor(tx, platform, currency);
  if (amount > available) throw insufficient('platform', platform, currency, available, amount);
  const row: TransferRow = {
    id: newId('transfer', now),
    platform_account_id: platform,
    merchant_id: cmd.merchant_id,
    livemode: cmd.livemode,
    destination: cmd.destination,
    currency,
    amount_minor: amount,
    reversed_minor: 0,
    description: cmd.description,
    transfer_group: cmd.transfer_group,
    metadata: cmd.metadata,
    idempotency_ref: cmd.idempotency_ref,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('transfers').values(row).execute();
  await postMove(tx, { from: platform, to: row.destination, currency, amount_minor: amount, reason: 'transfer', ref: row.id }, now);
  await recordConnectEvent(tx, { merchant_id: row.merchant_id, account_id: platform }, 'transfer.created', row.id, transferRecord(row), now);
  return { ok: true, row, made: false };
}

/** The reversal, or what the key already made; refused past what is left of the transfer or the connected account's balance. */
export function makeReversal(store: Store, cmd: ReversalCommand, now: number): Promise<{ ok: true; row: TransferReversalRow } | Refusal> {
  return refusedAsValue(() => store.transaction((tx) => reversalIn(tx, cmd, now)));
}

async function reversalIn(tx: Tx, cmd: ReversalCommand, now: number): Promise<{ ok: true; row: TransferReversalRow }> {
  const t = cmd.transfer;
  // The connected account's balance is what this takes down: its funding row first.
  await holdFunding(tx, t.destination, t.currency, now);
  if (cmd.idempotency_ref) {
    const made = await tx
      .selectFrom('transfer_reversals')
      .selectAll()
      .where('idempotency_ref', '=', cmd.idempotency_ref)
      .where('transfer_id', '=', t.id)
      .executeTakeFirst();
    if (made) return { ok: true, row: made };
  }
  const current = await tx.selectFrom('transfers').select(['amount_minor', 'reversed_minor']).where('id', '=', t.id).executeTakeFirstOrThrow();
  const left = Number(current.amount_minor) - Number(current.reversed_minor);
  const n = cmd.amount_minor ?? left;
  const tooLarge = () =>
    new Refused(refuse('amount_exceeds', `${n} is more than the ${left} of transfer ${t.id} not reversed yet`, { transfer: t.id, asked: n, left }));
  if (!canApplyTransfer('reverse_partial', transferState(current)) || n > left) throw tooLarge();
  const available = await availableMinor(tx, t.destination, t.currency);
  if (n > available) throw insufficient('connected', t.destination, t.currency, available, n);
  // Compare-and-set bounded by the transferred amount (never read-then-write).
  if (!(await reserveReversal(tx, t.id, n, now))) throw tooLarge();
  const row: TransferReversalRow = {
    id: newId('transfer_reversal', now),
    transfer_id: t.id,
    platform_account_id: t.platform_account_id,
    livemode: t.livemode,
    currency: t.currency,
    amount_minor: n,
    description: cmd.description,
    metadata: cmd.metadata,
    idempotency_ref: cmd.idempotency_ref,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('transfer_reversals').values(row).execute();
  await postMove(tx, { from: t.destination, to: t.platform_account_id, currency: t.currency, amount_minor: n, reason: 'transfer_reversal', ref: row.id }, now);
  await recordConnectEvent(
    tx,
    { merchant_id: t.merchant_id, account_id: t.platform_account_id },
    'transfer.reversed',
    t.id,
    { ...transferRecord({ ...t, reversed_minor: Number(current.reversed_minor) + n }), reversal_id: row.id, reversal_amount_minor: n },
    now,
  );
  return { ok: true, row };
}
