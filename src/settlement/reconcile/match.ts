// One report line against Tollgate's movement, decided without I/O (issue 35 item 3). The checks
// run in a fixed order and the first that fails names the category, so a line is counted once:
//
//   1. no movement of that key in the account's ledger          missing_here
//   2. the payment went to another connector                     missing_here
//   3. a movement already named by an earlier line               missing_here (the processor reports it twice)
//   4. a refund Tollgate still holds as pending, none confirmed  missing_here
//   5. another currency, or another amount                       amount_differs
//   6. the processor's fee is not what Tollgate charged for it   fee_differs
//   7. otherwise                                                 matched
//
// Fees (6): the processor's fee for the line (Adyen's commission, markup, scheme fees and
// interchange; Stripe's Fee) is held against the fee Tollgate's ledger charged the merchant
// for the same movement (the `fee` postings of a capture from the account's pricing, a
// dispute's `dispute_fee`; refunds and wins carry none). They agree when the account's pricing
// passes the processor's fees on; a fee_differs line says by how much they do not. A fee the
// report gives in another currency than the movement's is not compared.
import type { MismatchKind } from '../../db/tables/reconciliation.js';
import type { TrackedLine } from './format.js';
import type { Movement } from './ledger.js';

export type Category = 'matched' | MismatchKind;

export interface Verdict {
  category: Category;
  /** Why, in words, for a mismatch ('' when matched). */
  detail: string;
}

const WORD: Readonly<Record<TrackedLine['movement'], string>> = {
  capture: 'capture',
  refund: 'refund',
  refund_reversal: 'reversal of a refund',
  dispute: 'chargeback',
  dispute_won: 'chargeback reversal',
};

/** Which payment or refund a line names, for a detail. */
function named(line: TrackedLine): string {
  if (line.refund_id) return `refund ${line.refund_id}`;
  if (line.transaction_id) return `payment ${line.transaction_id}`;
  return line.refs.length > 0 ? `reference ${line.refs.join(' / ')}` : 'no reference';
}

/**
 * The verdict on `line` given the movement of its key (undefined when the ledger has none) and
 * whether an earlier line named the same movement.
 */
export function judge(line: TrackedLine, movement: Movement | undefined, connector: string, namedBefore: boolean): Verdict {
  const what = `${line.type} (${WORD[line.movement]})`;
  if (!movement || (movement.amount_minor === 0 && movement.pending_minor === 0)) {
    const hint = line.transaction_id || line.refund_id ? '' : ': the line names no payment of Tollgate and its references match no attempt';
    return { category: 'missing_here', detail: `${what} of ${named(line)}: no such movement in Tollgate's ledger${hint}` };
  }
  if (movement.connector !== connector)
    return {
      category: 'missing_here',
      detail: `${what} of ${named(line)}: Tollgate sent this payment to ${movement.connector || 'no processor'}, not ${connector}`,
    };
  if (namedBefore) return { category: 'missing_here', detail: `${what} of ${named(line)}: an earlier line of the file reports the same movement` };
  if (movement.amount_minor === 0)
    return { category: 'missing_here', detail: `${what} of ${named(line)}: still pending in Tollgate (the processor's confirmation has not reached it)` };
  if (movement.currency !== line.currency)
    return { category: 'amount_differs', detail: `${what}: ${movement.currency} in Tollgate, ${line.currency} at the processor` };
  if (movement.amount_minor !== line.amount_minor) return { category: 'amount_differs', detail: `${what}: the amounts differ` };
  if (line.fee_minor !== null && line.fee_minor !== movement.fee_minor)
    return { category: 'fee_differs', detail: `${what}: the processor's fee is not the fee Tollgate charged` };
  return { category: 'matched', detail: '' };
}
