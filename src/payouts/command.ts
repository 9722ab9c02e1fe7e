// A payout as the core takes it (issue 30 item 1; docs/contract.md §17): currencies checked,
// the amount in minor units, enums for the method and who bears the fee, the beneficiary saved
// or given. A payout's record is its request as the merchant stated it (answers and
// `/v1/retrievalPayout` echo it), so the command carries that record (`echo`) beside the terms
// the core reads. The acquiring body and the portal's form (which fills in the same request)
// are mapped here: the checks of the amounts, same order and same errors as before.
import type { Keyring } from '../crypto/keyring.js';
import { amountField, requireCurrency } from '../payments/validate.js';
import { invalid } from '../web/errors.js';
import type { BeneficiaryInput, PayoutRequest } from './schema.js';

export type PayoutMethod = 'LOCAL' | 'SWIFT';

export interface PayoutCommand {
  /** In lower case (a UUID names the same payout in either case). */
  request_id: string;
  /** The keyed fingerprint of the request, which a replay of its request_id is compared with. */
  request_hash: string;
  source_currency: string;
  payment_currency: string;
  /** What the beneficiary receives, or what the merchant sends, in that currency's minor units. */
  amount: { payment_minor: number } | { source_minor: number };
  payment_method: PayoutMethod;
  fee_paid_by: 'PAYER' | 'BENEFICIARY';
  swift_charge_option: 'SHARED' | 'PAYER';
  /** `YYYY-MM-DD` as sent (checked by the core against today), or null for today. */
  payment_date: string | null;
  /** A saved beneficiary's id, or one given in full; the core refuses both or neither. */
  beneficiary: { saved?: string; given?: BeneficiaryInput };
  payer: PayoutRequest['payer'];
  notify_url: string | null;
  /** The request as the payout's record echoes it, without the ids, the signature and the beneficiary. */
  echo: Record<string, unknown>;
}

/** A UUID names the same payout in either letter case: request_ids are kept in lower case. */
export function normaliseRequestId(request_id: string): string {
  return request_id.toLowerCase();
}

/**
 * The body as one unambiguous string for comparing requests: objects with sorted keys, empty
 * and null values left out (as the signature leaves them out), JSON-escaped. The signing
 * string cannot serve: a value holding `&key=value` reads like two fields there.
 */
export function stableBody(value: unknown): string {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(norm);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[k];
        if (x === null || x === undefined || x === '') continue;
        out[k] = norm(x);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(norm(value));
}

/** The request's id and fingerprint: what a replay is recognised by, before anything else is read of it. */
export function payoutIdentity(keyring: Keyring, sent: PayoutRequest): { request_id: string; request_hash: string } {
  const request_id = normaliseRequestId(sent.request_id);
  const { encryption_data: _signature, ...signed } = { ...sent, request_id };
  return { request_id, request_hash: keyring.fingerprint(`payout:${stableBody(signed)}`) };
}

/** Currencies known, exactly one of payment_amount and source_amount and in its currency's minor units, swift_charge_option only on SWIFT. */
function amountOf(body: PayoutRequest, payment_method: PayoutMethod): PayoutCommand['amount'] {
  requireCurrency('source_currency', body.source_currency);
  requireCurrency('payment_currency', body.payment_currency);
  if (body.payment_amount === undefined && body.source_amount === undefined) {
    throw invalid('payment_amount', 'or source_amount is required: what the beneficiary receives, or what you send');
  }
  if (body.payment_amount !== undefined && body.source_amount !== undefined) {
    throw invalid('source_amount', 'cannot be sent with payment_amount: send exactly one of them');
  }
  const payment_minor = body.payment_amount !== undefined ? amountField('payment_amount', body.payment_amount, body.payment_currency) : undefined;
  const source_minor = body.source_amount !== undefined ? amountField('source_amount', body.source_amount, body.source_currency) : undefined;
  if (body.swift_charge_option !== undefined && payment_method !== 'SWIFT') throw invalid('swift_charge_option', 'applies to SWIFT payouts only');
  return payment_minor !== undefined ? { payment_minor } : { source_minor: source_minor as number };
}

/** A payout request (the acquiring body, or the one the portal's form fills in) as the command; a 400 names the field. */
export function payoutCommandOf(keyring: Keyring, sent: PayoutRequest): PayoutCommand {
  const identity = payoutIdentity(keyring, sent);
  const body = { ...sent, request_id: identity.request_id };
  const payment_method = body.payment_method as PayoutMethod;
  const { merchant_id: _m, account_id: _a, encryption_data: _e, beneficiary: _b, ...echo } = body as PayoutRequest & Record<string, unknown>;
  return {
    ...identity,
    source_currency: body.source_currency,
    payment_currency: body.payment_currency,
    amount: amountOf(body, payment_method),
    payment_method,
    fee_paid_by: (body.fee_paid_by ?? 'PAYER') as PayoutCommand['fee_paid_by'],
    swift_charge_option: (body.swift_charge_option ?? 'SHARED') as PayoutCommand['swift_charge_option'],
    payment_date: body.payment_date ?? null,
    beneficiary: { saved: body.beneficiary_id, given: body.beneficiary },
    payer: body.payer,
    notify_url: body.notify_url ?? null,
    echo,
  };
}
