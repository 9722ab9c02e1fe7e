// Which processor serves an account (docs/contract.md §21): the processors set for it, in
// priority order, the first that takes the payment's currency and brand; with none set, a
// test account is served by the in-process sandbox and a live account by nothing (1016).
// Each configured processor is called through its guard (circuit breaker, metrics).
// The settings are read from the database into memory (`reload`), so the hot path asks a
// Map; a process re-reads them every 2 s (`serve`'s local task) and at once after a change
// it made itself, so a `processor set` in another process takes effect within 2 s.
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { ProcessorConfigRow } from '../db/tables/processors.js';
import { guardProcessor, type ProcessorObserver } from './guard.js';
import type { Processor } from './types.js';

/** Makes the connector of a stored setting, with its credentials decrypted. */
export type ConnectorFactory = (row: ProcessorConfigRow, credentials: Readonly<Record<string, string>>) => Processor;

interface Route {
  row: ProcessorConfigRow;
  processor: Processor;
  currencies: ReadonlySet<string> | null;
  brands: ReadonlySet<string> | null;
}

export class ProcessorDirectory {
  private routes = new Map<string, Route[]>();
  /** The connectors made from the settings as last read, by processor id. */
  private byId = new Map<string, Route>();
  private stamp = '';
  /** Reloads started, and the latest one whose reading was applied: an older reading that ends later is dropped. */
  private started = 0;
  private applied = 0;

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly sandbox: Processor,
    private readonly build: ConnectorFactory,
    /** Where each processor's guard reports its calls and circuit (src/processors/guard.ts). */
    private readonly observer: ProcessorObserver | null = null,
  ) {}

  /** The processor for a payment of `account` (its currency and card brand when known): the first of `candidates`. */
  for(account: Pick<AccountRow, 'account_id' | 'mode'>, want: { currency?: string; brand?: string } = {}): Processor | null {
    return this.candidates(account, want)[0] ?? null;
  }

  /**
   * The processors that take a payment of `account` (its currency and card brand when known),
   * in priority order: the payment goes to the first, and to the next only when one failed
   * before it could have authorised (docs/contract.md §21). A test account with none set has
   * the in-process sandbox; a live account with none, nothing (1016).
   */
  candidates(account: Pick<AccountRow, 'account_id' | 'mode'>, want: { currency?: string; brand?: string } = {}): Processor[] {
    const routes = this.routes.get(account.account_id);
    if (!routes) return account.mode === 'test' ? [this.sandbox] : [];
    const out: Processor[] = [];
    for (const r of routes) {
      if (want.currency && r.currencies && !r.currencies.has(want.currency)) continue;
      if (want.brand && r.brands && !r.brands.has(want.brand)) continue;
      out.push(r.processor);
    }
    return out;
  }

  /** The connector of a stored processor (a webhook names it by id), as last read. */
  byProcessorId(processor_id: string): { row: ProcessorConfigRow; processor: Processor } | undefined {
    return this.byId.get(processor_id);
  }

  /**
   * Reads the settings again; connectors are made anew only for settings that changed. Reloads
   * overlap (the 2 s poll, an explicit one after a change): a reading older than one already
   * applied is dropped, so the poll's stale reading cannot undo a change just read.
   */
  async reload(): Promise<void> {
    const mine = ++this.started;
    const rows = await this.store.db.selectFrom('processors').selectAll().orderBy('priority').orderBy('processor_id').execute();
    if (mine < this.applied) return;
    this.applied = mine;
    const stamp = rows.map((r) => `${r.processor_id}:${r.updated_at}`).join(',');
    if (stamp === this.stamp) return;
    const routes = new Map<string, Route[]>();
    const byId = new Map<string, Route>();
    for (const row of rows) {
      const before = this.byId.get(row.processor_id);
      const route: Route =
        before && Number(before.row.updated_at) === Number(row.updated_at)
          ? before
          : {
              row,
              processor: guardProcessor(
                this.build(row, JSON.parse(this.keyring.decrypt(row.credentials_enc)) as Record<string, string>),
                row.processor_id,
                this.observer,
              ),
              currencies: row.currencies ? new Set(row.currencies.split(',')) : null,
              brands: row.brands ? new Set(row.brands.split(',')) : null,
            };
      byId.set(row.processor_id, route);
      const list = routes.get(row.account_id) ?? [];
      list.push(route);
      routes.set(row.account_id, list);
    }
    this.routes = routes;
    this.byId = byId;
    this.stamp = stamp;
  }
}
