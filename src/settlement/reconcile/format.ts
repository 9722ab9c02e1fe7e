// What the reconciler reads from one line of a processor's report, whatever the processor
// (issue 35 item 3): which movement it is, what names it in Tollgate (our transaction id, our
// refund id, or only the processor's references), and its amount and fee in minor units.
import type { MovementKind } from '../../db/tables/reconciliation.js';
import type { MinorUnits } from '../../money/currency.js';
import type { ColumnIndex, ColumnSpec } from './columns.js';

export type Connector = 'adyen' | 'stripe';

/** A line of a type Tollgate tracks: a movement to find in the ledger. */
export interface TrackedLine {
  line: number;
  movement: MovementKind;
  /** The processor's word for the line (`Settled`, `charge`, …), for the mismatch's detail. */
  type: string;
  /** Our payment, when the line carries it ('' otherwise: found by `refs`). */
  transaction_id: string;
  /** Our refund's `refund_reference_id` for refund movements, when the line carries it. */
  refund_id: string;
  /** The processor's references that may name one of our attempts or disputes (PaymentIntent, refund, dispute ids), most specific first. */
  refs: string[];
  /** Shown with a mismatch: the processor's own reference of this line. */
  reference: string;
  /** Always positive: the money the movement moved, in `currency`. */
  amount_minor: MinorUnits;
  currency: string;
  /** The processor's fee for the line in `currency` (positive: charged); null when the report gives it in another currency. */
  fee_minor: MinorUnits | null;
  at_ms: number;
  /** The last ms the line's time may stand for (a time written to the second or the minute). */
  end_ms: number;
  /** 1 for a first chargeback, 2 for Adyen's SecondChargeback: which of a payment's dispute postings it is. */
  ordinal: number;
}

/** A line of a type Tollgate does not track (fees invoiced, payouts, transfers, …): counted as not applicable. */
export interface UntrackedLine {
  line: number;
  movement: null;
  type: string;
}

export type ReportLine = TrackedLine | UntrackedLine;

/** A processor's report: its columns and how one row reads. */
export interface ReportFormat<K extends string = string> {
  connector: Connector;
  /** "an Adyen settlement details report": said when the header row is not this format's. */
  title: string;
  columns: readonly ColumnSpec<K>[];
  read(cells: readonly string[], at: ColumnIndex<K>, line: number): ReportLine;
}
