// The payout record (interface.md "Payout record"; docs/contract.md §17): what `POST /v1/payout`,
// `/v1/retrievalPayout` and the payout events carry. The request as sent (less
// `bank_details.bank_code`, with `local_clearing_system`), then the payout's own fields;
// amounts the gateway computed are integers in minor units.
import type { PayoutRow } from './tables.js';

/** ISO 8601 with a numeric offset (docs/contract.md §5): `2026-11-24T10:15:30+00:00`. */
export function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

export function payoutRecord(row: PayoutRow): Record<string, unknown> {
  const echo = JSON.parse(row.details) as Record<string, unknown>;
  return {
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    ...echo,
    beneficiary_id: row.beneficiary_id,
    fee_paid_by: row.fee_paid_by,
    ...(row.swift_charge_option ? { swift_charge_option: row.swift_charge_option } : {}),
    payment_date: row.payment_date,
    transaction_id: row.transaction_id,
    short_reference_id: row.short_reference_id,
    payer_id: row.account_id,
    status: row.status,
    failure_type: row.failure_type,
    failure_reason: row.failure_reason,
    amount_payer_pays: Number(row.amount_payer_pays),
    amount_beneficiary_receives: Number(row.amount_beneficiary_receives),
    fee_amount: Number(row.fee_amount),
    fee_currency: row.source_currency,
    fx_rate: row.fx_rate,
    settlement_batches: JSON.parse(row.settlement_batches ?? '[]'),
    created_at: isoWithOffset(Number(row.created_at)),
    last_updated_at: isoWithOffset(Number(row.updated_at)),
  };
}
