// What a platform is told of its connected accounts (docs/contract.md §24; issue 33 item 5): a
// transfer made (`transfer.created`), a transfer reversed in part or whole (`transfer.reversed`)
// and a connected account changed (`account.updated`), each an outbox event written in the
// transaction of the change (src/notifications/outbox.ts), told as the platform family's event
// of the same name with the transfer or account object. There is no notify_url for them: they
// reach a platform through its webhook endpoints and `/v1/events`.
import type { Tx } from '../db/store.js';
import type { PlatformEventRow } from '../db/tables/webhooks.js';
import type { MoreObjects } from '../generic/events.js';
import { formatAmount } from '../money/currency.js';
import { type EventType, recordEvent } from '../notifications/outbox.js';
import { accountObject } from './accounts.js';
import type { TransferRow } from './tables.js';
import { embeddedReversals, transferObject } from './transfers.js';

/** A transfer's record in the outbox event (the platform event carries the transfer object instead). */
export function transferRecord(t: Pick<TransferRow, 'id' | 'destination' | 'currency' | 'amount_minor' | 'reversed_minor'>) {
  return {
    transfer_id: t.id,
    destination: t.destination,
    currency: t.currency,
    amount: formatAmount(Number(t.amount_minor), t.currency),
    amount_minor: Number(t.amount_minor),
    reversed_minor: Number(t.reversed_minor),
  };
}

export async function recordConnectEvent(
  tx: Tx,
  owner: { merchant_id: string; account_id: string },
  event_type: Extract<EventType, 'transfer.created' | 'transfer.reversed' | 'account.updated'>,
  object_id: string,
  data: Record<string, unknown>,
  now_ms: number,
): Promise<void> {
  await recordEvent(tx, { merchant_id: owner.merchant_id, account_id: owner.account_id, event_type, object_id, notify_url: '', data }, now_ms);
}

/** The transfer or connected account a platform event is about, as `/v1/transfers/:id` and `/v1/accounts/:id` answer it (src/generic/events.ts). */
export const connectObjectOf: MoreObjects = async (db, event: PlatformEventRow) => {
  if (event.type.startsWith('transfer.')) {
    const t = await db
      .selectFrom('transfers')
      .selectAll()
      .where('id', '=', event.object_id)
      .where('platform_account_id', '=', event.account_id)
      .executeTakeFirst();
    if (!t) return undefined;
    return transferObject(t, (await embeddedReversals(db, [t.id])).get(t.id));
  }
  if (event.type === 'account.updated') {
    const a = await db
      .selectFrom('connected_accounts')
      .selectAll()
      .where('id', '=', event.object_id)
      .where('platform_account_id', '=', event.account_id)
      .executeTakeFirst();
    return a ? accountObject(a) : undefined;
  }
  return undefined;
};
