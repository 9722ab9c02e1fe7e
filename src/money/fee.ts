// Fee rounding, in one place (issue 30 item 3): a payment's fee and a payout's fee are both
// a percentage in basis points of an amount in minor units, rounded half up, plus a fixed
// part. Exact integer arithmetic (BigInt: amount × basis points can pass 2^53).

/** `percent_bp` basis points of `amount_minor`, rounded half up, plus `fixed_minor`. */
export function feeMinor(amount_minor: number, percent_bp: number, fixed_minor: number): number {
  return Number((BigInt(amount_minor) * BigInt(percent_bp) + 5000n) / 10_000n) + fixed_minor;
}
