// Operator actions around payouts (docs/contract.md §17), shared by the CLI now and the portal
// later: payout pricing, the FX markup, test-account top-ups, listings.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { MAX_MARKUP_BP } from '../fx/convert.js';
import { post } from '../ledger/postings.js';
import { parsePercent } from '../ledger/pricing.js';
import { formatAmount, parseAmount } from '../money/currency.js';
import type { PayoutPricingRow, PayoutRow } from './tables.js';

export class AdminError extends Error {}

async function requireAccount(store: Store, account_id: string): Promise<{ mode: string }> {
  const account = await store.db.selectFrom('accounts').select('mode').where('account_id', '=', account_id).executeTakeFirst();
  if (!account) throw new AdminError(`account ${account_id} does not exist`);
  return account;
}

function amount(field: string, text: string, currency: string): number {
  const r = parseAmount(text, currency);
  if (!r.ok) throw new AdminError(`${field} ${r.problem}`);
  return r.minor;
}

export async function setPayoutPricing(
  store: Store,
  input: { account_id: string; currency: string; method: string; percent: string; fixed: string; swift_payer?: string },
  now_ms: number,
): Promise<PayoutPricingRow> {
  if (input.method !== 'LOCAL' && input.method !== 'SWIFT') throw new AdminError('--method must be LOCAL or SWIFT');
  let percent_bp: number;
  try {
    percent_bp = parsePercent(input.percent);
  } catch (e) {
    throw new AdminError((e as Error).message);
  }
  const fixed_minor = amount('--fixed', input.fixed, input.currency);
  const swift_payer_minor = input.swift_payer === undefined ? 0 : amount('--swift-payer', input.swift_payer, input.currency);
  if (swift_payer_minor > 0 && input.method !== 'SWIFT') throw new AdminError('--swift-payer applies to SWIFT only');
  await requireAccount(store, input.account_id);
  const row: PayoutPricingRow = {
    account_id: input.account_id,
    currency: input.currency,
    payment_method: input.method,
    percent_bp,
    fixed_minor,
    swift_payer_minor,
    updated_at: now_ms,
  };
  await store.transaction(async (tx) => {
    await tx
      .insertInto('payout_pricing')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'currency', 'payment_method']).doUpdateSet({ percent_bp, fixed_minor, swift_payer_minor, updated_at: now_ms }),
      )
      .execute();
  });
  return row;
}

export function describePayoutPrice(p: Pick<PayoutPricingRow, 'currency' | 'payment_method' | 'percent_bp' | 'fixed_minor' | 'swift_payer_minor'>): string {
  const percent = `${Math.floor(p.percent_bp / 100)}.${String(p.percent_bp % 100).padStart(2, '0')}%`;
  const swift = Number(p.swift_payer_minor) > 0 ? `, + ${formatAmount(Number(p.swift_payer_minor), p.currency)} when swift_charge_option is PAYER` : '';
  return `${p.currency} ${p.payment_method}: ${percent} + ${formatAmount(Number(p.fixed_minor), p.currency)} per payout${swift}`;
}

export async function listPayoutPricing(db: Kysely<DB>, account_id: string): Promise<PayoutPricingRow[]> {
  return db.selectFrom('payout_pricing').selectAll().where('account_id', '=', account_id).orderBy('currency').orderBy('payment_method').execute();
}

/** `--percent 0.5` → 50 basis points off the market rate for this account's conversions. */
export async function setMarkup(store: Store, account_id: string, percent: string, now_ms: number): Promise<number> {
  let markup_bp: number;
  try {
    markup_bp = parsePercent(percent);
  } catch (e) {
    throw new AdminError((e as Error).message);
  }
  if (markup_bp > MAX_MARKUP_BP) throw new AdminError(`the markup may be at most ${MAX_MARKUP_BP / 100}%`);
  await requireAccount(store, account_id);
  await store.transaction(async (tx) => {
    await tx
      .insertInto('fx_markups')
      .values({ account_id, markup_bp, updated_at: now_ms })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ markup_bp, updated_at: now_ms }))
      .execute();
  });
  return markup_bp;
}

/**
 * `balance top-up`: money into a TEST account's available balance, as if settled sales had
 * arrived (clearing −A, available +A). Live accounts are refused: their money comes from
 * real captures only.
 */
export async function topUp(store: Store, input: { account_id: string; currency: string; amount: string }, now_ms: number): Promise<number> {
  const minor = amount('--amount', input.amount, input.currency);
  if (minor <= 0) throw new AdminError('--amount must be greater than zero');
  const account = await requireAccount(store, input.account_id);
  if (account.mode !== 'test') throw new AdminError(`account ${input.account_id} is live: only test accounts can be topped up`);
  await store.transaction(async (tx) => {
    await post(
      tx,
      {
        account_id: input.account_id,
        currency: input.currency,
        reason: 'top_up',
        entries: [
          { ledger_account: 'processor_clearing', amount_minor: -minor },
          { ledger_account: 'merchant_available', amount_minor: minor },
        ],
      },
      now_ms,
    );
  });
  return minor;
}

export async function listPayouts(db: Kysely<DB>, account_id: string, opts: { status?: string; limit?: number } = {}): Promise<PayoutRow[]> {
  let q = db.selectFrom('payouts').selectAll().where('account_id', '=', account_id);
  if (opts.status) q = q.where('status', '=', opts.status as PayoutRow['status']);
  return q
    .orderBy('created_at', 'desc')
    .orderBy('transaction_id', 'desc')
    .limit(Math.min(opts.limit ?? 100, 1_000))
    .execute();
}

export async function listBeneficiaries(db: Kysely<DB>, account_id: string): Promise<Array<{ beneficiary_id: string; label: string; created_at: number }>> {
  const rows = await db
    .selectFrom('beneficiaries')
    .select(['beneficiary_id', 'label', 'created_at'])
    .where('account_id', '=', account_id)
    .orderBy('created_at')
    .limit(1_000)
    .execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at) }));
}
