// The record of each processor notification (`processor_notifications`), kept once per
// processor and notification id, for the webhooks of attempts (hooks.ts) and of disputes
// (dispute-hooks.ts). Deliveries of one notification can run at once: each applies it through
// the same transition, so one moves the object and the others find it moved already
// (`stale`). The record is the one that moved it, whichever finished first.
import type { ProcessorNotificationRow } from '../db/tables/processors.js';
import type { Deps } from '../web/context.js';

export async function keepNotification(deps: Deps, row: ProcessorNotificationRow): Promise<void> {
  await deps.store.transaction((tx) =>
    tx
      .insertInto('processor_notifications')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['processor_id', 'notification_id'])
          .doUpdateSet({ result: (eb) => eb.ref('excluded.result'), received_at: (eb) => eb.ref('excluded.received_at') })
          .where('processor_notifications.result', '=', 'stale')
          .where('excluded.result', '!=', 'stale'),
      )
      .execute(),
  );
}
