// The money core's outcome catalogue (issue 30 item 1): what a command refuses with, in the
// domain's words. No wire code and no HTTP status here: each interface maps an outcome out
// with a table of its own (acquiring: `src/web/outcomes.ts`; generic: `src/generic/outcomes.ts`;
// portal: `src/portal/transaction.ts`). `text` is the outcome's short name as merchants read it;
// the acquiring catalogue's text of the code an outcome maps to is the same words (a test holds it).

export const OUTCOMES = {
  /** The command itself is malformed (an amount that is not positive, a missing field). */
  invalid_input: { text: 'Invalid input' },
  /** No such object on the caller's account (another account's object is not found too). */
  not_found: { text: 'Record not found' },
  /** The object's state does not allow the command (capture a cancelled payment, refund an authorised one). */
  invalid_state: { text: 'Invalid state for this operation' },
  /** More than the authorised, captured, refundable or reversible amount. */
  amount_exceeds: { text: 'Amount exceeds the available amount' },
  /** A balance smaller than the amount the command would take from it. */
  insufficient_funds: { text: 'Insufficient funds' },
  /** What the caller said of the object (its order number, currency, amount) is not what it is. */
  order_mismatch: { text: 'Order does not match the transaction' },
  /** The authorisation's capture window passed. */
  authorisation_expired: { text: 'Authorisation expired' },
  /** A live account with no processor to send the command to. */
  no_processor: { text: 'No processor configured for live mode' },
  /** The request's id was used before for another request. */
  conflict: { text: 'Conflict' },
  /** The processor refused the capture, cancel or refund (its result code in `facts.code`). */
  processor_declined: { text: 'Card declined' },
  /** Something unexpected stopped the command before anything was written: safe to retry. */
  not_processed: { text: 'Processing error' },
} as const satisfies Record<string, { text: string }>;

export type Outcome = keyof typeof OUTCOMES;

/**
 * A command's refusal: the outcome, a sentence of detail, and the facts an interface may word
 * in its own way (amounts in minor units, ids). Never card data or secrets.
 */
export interface Refusal {
  readonly ok: false;
  readonly outcome: Outcome;
  readonly detail: string;
  readonly facts?: Readonly<Record<string, string | number>>;
}

export function refuse(outcome: Outcome, detail = '', facts?: Record<string, string | number>): Refusal {
  return facts ? { ok: false, outcome, detail, facts } : { ok: false, outcome, detail };
}

/** `<text>: <detail>`, the sentence every interface starts from. */
export function describeRefusal(r: Refusal): string {
  return r.detail ? `${OUTCOMES[r.outcome].text}: ${r.detail}` : OUTCOMES[r.outcome].text;
}

/** Thrown inside a command's unit of writes to undo what it wrote and answer with the refusal. */
export class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(describeRefusal(refusal));
  }
}

/**
 * The refusal of one input field: `<field> <problem>`, with the field in its facts so each
 * interface can name it its own way (the acquiring `error_field`, the generic `param`).
 */
export function invalidInput(field: string, problem: string): Refused {
  return new Refused(refuse('invalid_input', `${field} ${problem}`, { field }));
}

/** A missing object the request named in `field` (a payment method of the catalogue, say). */
export function notFound(field: string, detail: string): Refused {
  return new Refused(refuse('not_found', detail, { field }));
}

/** A live account with no processor for the command. */
export function noProcessor(detail = 'this account is in live mode and no processor is configured for it'): Refused {
  return new Refused(refuse('no_processor', detail));
}

/** Runs a command whose transaction throws `Refused` to undo its writes, answering the refusal as a value. */
export async function refusedAsValue<T>(run: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof Refused) return e.refusal;
    throw e;
  }
}
