// The remote sandbox's request bodies (docs/remote-sandbox.md), checked field by field into
// the connector interface's inputs (types.ts). A refusal names the field and what it must
// be, never the value (a card number must not come back in an error or a log).
import type { MinorUnits } from '../../money/currency.js';
import type { ApmStartInput, AuthoriseInput, CancelInput, CaptureInput, PayoutInput, RefundInput } from '../types.js';

/** A body the sandbox cannot take: 400 with this message. */
export class BadRequest extends Error {}

type Body = Record<string, unknown>;
type Check<T> = (v: unknown, name: string) => T;

const fail = (name: string, what: string): never => {
  throw new BadRequest(`${name} ${what}`);
};

/** Control characters (a log line's newline among them) are refused in every text field. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

const text =
  (max: number, opts: { empty?: boolean } = {}): Check<string> =>
  (v, name) =>
    typeof v === 'string' && v.length <= max && (opts.empty || v.length > 0) && !CONTROL.test(v)
      ? v
      : fail(name, `must be a string of ${opts.empty ? 0 : 1} to ${max} characters`);
const id = text(100);
const reference = text(100, { empty: true });
const digits =
  (min: number, max: number): Check<string> =>
  (v, name) =>
    typeof v === 'string' && new RegExp(`^\\d{${min},${max}}$`).test(v) ? v : fail(name, `must be ${min} to ${max} digits`);
const whole =
  (min: number, max: number): Check<number> =>
  (v, name) =>
    Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? (v as number) : fail(name, `must be a whole number from ${min} to ${max}`);
const amount: Check<MinorUnits> = (v, name) => whole(1, Number.MAX_SAFE_INTEGER)(v, name) as MinorUnits;
const currency: Check<string> = (v, name) => (typeof v === 'string' && /^[A-Z]{3}$/.test(v) ? v : fail(name, 'must be an ISO 4217 code such as USD'));
const object: Check<Body> = (v, name) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : fail(name, 'must be an object'));
const optional =
  <T>(check: Check<T>): Check<T | undefined> =>
  (v, name) =>
    v === undefined ? undefined : check(v, name);

export function authoriseInput(b: Body): AuthoriseInput {
  const card = object(b.card, 'card');
  const threeds = optional(object)(b.threeds, 'threeds');
  const mit = b.merchant_initiated;
  if (mit !== undefined && typeof mit !== 'boolean') fail('merchant_initiated', 'must be true or false');
  const security_code = optional(digits(3, 4))(card.security_code, 'card.security_code');
  return {
    transaction_id: id(b.transaction_id, 'transaction_id'),
    amount_minor: amount(b.amount_minor, 'amount_minor'),
    currency: currency(b.currency, 'currency'),
    card: {
      pan: digits(12, 19)(card.number, 'card.number'),
      brand: text(40)(card.brand, 'card.brand'),
      exp_month: whole(1, 12)(card.exp_month, 'card.exp_month'),
      exp_year: whole(2000, 2199)(card.exp_year, 'card.exp_year'),
      ...(security_code === undefined ? {} : { security_code }),
    },
    ...(threeds
      ? {
          threeds: {
            eci: text(4, { empty: true })(threeds.eci, 'threeds.eci'),
            cavv: text(100, { empty: true })(threeds.cavv, 'threeds.cavv'),
            xid: text(100, { empty: true })(threeds.xid, 'threeds.xid'),
            ds_trans_id: text(100, { empty: true })(threeds.ds_trans_id, 'threeds.ds_trans_id'),
          },
        }
      : {}),
    ...(mit === undefined ? {} : { merchant_initiated: mit as boolean }),
  };
}

export function captureInput(b: Body): CaptureInput {
  return {
    transaction_id: id(b.transaction_id, 'transaction_id'),
    reference: reference(b.reference, 'reference'),
    amount_minor: amount(b.amount_minor, 'amount_minor'),
    currency: currency(b.currency, 'currency'),
  };
}

export function cancelInput(b: Body): CancelInput {
  return { transaction_id: id(b.transaction_id, 'transaction_id'), reference: reference(b.reference, 'reference') };
}

export function refundInput(b: Body): RefundInput {
  return { ...captureInput(b), refund_id: id(b.refund_id, 'refund_id') };
}

export function apmInput(b: Body): ApmStartInput {
  const fields = object(b.fields ?? {}, 'fields');
  const checked: Record<string, string> = {};
  const names = Object.keys(fields);
  if (names.length > 50) fail('fields', 'must hold at most 50 fields');
  for (const k of names) checked[text(60)(k, 'a field name')] = text(500, { empty: true })(fields[k], `fields.${k}`);
  return {
    transaction_id: id(b.transaction_id, 'transaction_id'),
    payment_method: text(40)(b.payment_method, 'payment_method'),
    amount_minor: amount(b.amount_minor, 'amount_minor'),
    currency: currency(b.currency, 'currency'),
    fields: checked,
  };
}

export function payoutInput(b: Body): PayoutInput {
  const method = b.payment_method;
  if (method !== 'LOCAL' && method !== 'SWIFT') fail('payment_method', 'must be LOCAL or SWIFT');
  const account = object(b.account, 'account');
  const opt = (k: string) => optional(text(40))(account[k], `account.${k}`);
  const out: PayoutInput['account'] = { country: text(2)(account.country, 'account.country') };
  for (const k of ['iban', 'account_number', 'swift_code', 'bank_code'] as const) {
    const v = opt(k);
    if (v !== undefined) out[k] = v;
  }
  if (!out.iban && !out.account_number) fail('account', 'must have an iban or an account_number');
  return {
    transaction_id: id(b.transaction_id, 'transaction_id'),
    payment_method: method as 'LOCAL' | 'SWIFT',
    local_clearing_system: text(40, { empty: true })(b.local_clearing_system, 'local_clearing_system'),
    amount_minor: amount(b.amount_minor, 'amount_minor'),
    currency: currency(b.currency, 'currency'),
    account: out,
    swift_charge_option: text(40, { empty: true })(b.swift_charge_option, 'swift_charge_option'),
  };
}
