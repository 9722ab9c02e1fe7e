// Which alternative methods an account offers (docs/contract.md §13, §15). The operator switches
// them per account (`npx tollgate methods enable|disable`); without a choice, the account's
// mode decides: on a test account every catalogue method is on, so the sandbox works out
// of the box; on a live account none is, until the operator turns it on for a processor.
// Cards are not switched here: they always apply.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { APM_METHODS, type ApmMethod, apmMethod, appliesTo } from './catalogue.js';

export interface MethodSetting {
  method: ApmMethod;
  enabled: boolean;
  /** `default`: no choice made, the mode decides; `operator`: switched by the operator. */
  source: 'default' | 'operator';
}

type Account = Pick<AccountRow, 'account_id' | 'mode'>;

/** The default of a method nobody has switched for the account. */
export function enabledByDefault(mode: AccountRow['mode']): boolean {
  return mode === 'test';
}

/** Every catalogue method with its state for the account, in catalogue order. */
export async function methodSettings(db: Kysely<DB>, account: Account): Promise<MethodSetting[]> {
  const rows = await db.selectFrom('account_payment_methods').select(['payment_method', 'enabled']).where('account_id', '=', account.account_id).execute();
  const chosen = new Map(rows.map((r) => [r.payment_method, Number(r.enabled) === 1]));
  return APM_METHODS.map((method) => {
    const choice = chosen.get(method.payment_method);
    return choice === undefined ? { method, enabled: enabledByDefault(account.mode), source: 'default' } : { method, enabled: choice, source: 'operator' };
  });
}

/**
 * The alternative methods the account offers for this currency and billing country:
 * enabled, taking the currency, serving the country. An APM payment for any other method
 * is answered `0404:Record not found`.
 */
export async function enabledMethods(db: Kysely<DB>, account: Account, currency: string, billing_country: string): Promise<ApmMethod[]> {
  return (await methodSettings(db, account)).filter((s) => s.enabled && appliesTo(s.method, currency, billing_country)).map((s) => s.method);
}

export class UnknownMethodError extends Error {
  constructor(readonly payment_method: string) {
    super(`"${payment_method}" is not in the payment-method catalogue (${APM_METHODS.map((m) => m.payment_method).join(', ')})`);
  }
}

/** Switches methods on or off for an account (an upsert per method, one transaction). */
export async function setMethodsEnabled(store: Store, account_id: string, payment_methods: readonly string[], enabled: boolean, now_ms: number): Promise<void> {
  for (const name of payment_methods) if (!apmMethod(name)) throw new UnknownMethodError(name);
  const value = enabled ? 1 : 0;
  await store.transaction(async (tx) => {
    for (const payment_method of new Set(payment_methods)) {
      await tx
        .insertInto('account_payment_methods')
        .values({ account_id, payment_method, enabled: value, created_at: now_ms, updated_at: now_ms })
        .onConflict((oc) => oc.columns(['account_id', 'payment_method']).doUpdateSet({ enabled: value, updated_at: now_ms }))
        .execute();
    }
  });
}
