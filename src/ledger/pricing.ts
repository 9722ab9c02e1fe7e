// Per-account pricing (README.md): a percentage in basis points plus a fixed amount per
// currency, set by the operator. The fee is posted at capture.
import type { Store } from '../db/store.js';
import { currencyExponent, formatAmount, parseAmount } from '../money/currency.js';

export interface Price {
  account_id: string;
  currency: string;
  percent_bp: number;
  fixed_minor: number;
}

/** "2.9" → 290 basis points, without floats. */
export function parsePercent(text: string): number {
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) throw new Error(`percent "${text}" must be a number such as 2.9 (at most two decimals)`);
  const bp = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  if (bp > 10_000) throw new Error('percent must be at most 100');
  return bp;
}

export async function setPricing(
  store: Store,
  input: { account_id: string; currency: string; percent: string; fixed: string },
  now_ms: number,
): Promise<Price> {
  if (currencyExponent(input.currency) === null) throw new Error(`currency "${input.currency}" is not a supported ISO 4217 code`);
  const percent_bp = parsePercent(input.percent);
  const fixed = parseAmount(input.fixed, input.currency);
  if (!fixed.ok) throw new Error(`fixed ${fixed.problem}`);
  const account = await store.db.selectFrom('accounts').select('account_id').where('account_id', '=', input.account_id).executeTakeFirst();
  if (!account) throw new Error(`account ${input.account_id} does not exist`);
  const row = { account_id: input.account_id, currency: input.currency, percent_bp, fixed_minor: fixed.minor, updated_at: now_ms };
  await store.transaction(async (tx) => {
    await tx
      .insertInto('pricing')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'currency']).doUpdateSet({ percent_bp, fixed_minor: fixed.minor, updated_at: now_ms }))
      .execute();
  });
  return { account_id: row.account_id, currency: row.currency, percent_bp, fixed_minor: row.fixed_minor };
}

export async function listPricing(store: Store, account_id: string): Promise<Price[]> {
  const rows = await store.db.selectFrom('pricing').selectAll().where('account_id', '=', account_id).orderBy('currency').execute();
  return rows.map((r) => ({ account_id: r.account_id, currency: r.currency, percent_bp: Number(r.percent_bp), fixed_minor: Number(r.fixed_minor) }));
}

export function describePrice(p: Price): string {
  return `${p.currency}: ${Math.floor(p.percent_bp / 100)}.${String(p.percent_bp % 100).padStart(2, '0')}% + ${formatAmount(p.fixed_minor, p.currency)}`;
}
