// The refund routes' request and answer schemas (interface.md "Refund record"): one schema
// per endpoint validates the request and documents both (docs/style.md §2).
import { Type } from 'typebox';
import { MAX_REFUND_ITEMS } from '../payments/lifecycle.js';
import { PAYMENT_STATUS_CODE } from '../payments/states.js';
import { batchItem, NextCursor, oneOf, ReturnMessage, ReturnStatus, Signature, SignedIdentity, text } from '../web/route-schema.js';
import { REFUND_ITEM_REQUIRED, RefundItemFields } from './refund.js';

export const RefundBody = Type.Object(
  {
    ...SignedIdentity,
    refund_orders: Type.Array(
      batchItem(RefundItemFields, REFUND_ITEM_REQUIRED, 'An item missing a required field fails alone with `0400`; the others still run.'),
      {
        minItems: 1,
        maxItems: MAX_REFUND_ITEMS,
        description: `1 to ${MAX_REFUND_ITEMS} refunds; amount = the original order amount, refund_amount = the amount to refund`,
      },
    ),
  },
  { additionalProperties: false },
);

const RefundStatus = oneOf(['0', '1', '2'], '`1` refunded, `0` failed, `2` pending at the processor');

/** Fields of both the refund answer item and the search item. */
const common = {
  transaction_id: text('the payment’s transaction_id'),
  order_no: text('the payment’s order number'),
  currency: text('ISO 4217 code'),
  amount: text('the original order amount'),
  refund_amount: text('the amount of this refund'),
  refund_reason: text('as sent'),
  refund_reference: text('the processor’s reference, or empty'),
  refund_reference_id: text('`<transaction_id>-NN`: this refund’s id; empty when no refund was made'),
};

export const RefundAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  refund_orders: Type.Array(
    Type.Object({
      ...common,
      refund_status: RefundStatus,
      refund_message: text('the outcome as `<code>:<text>` (`0000:Success`), with a detail when it failed'),
    }),
    { description: 'one result per item, in request order' },
  ),
  encryption_data: Signature,
});

/** A refund search item: also the `data` of refund notifications. */
export const RefundSearchItem = Type.Object({
  ...common,
  refund_status: oneOf(['', '0', '1', '2'], '`1` refunded, `0` failed, `2` pending at the processor; empty when not found'),
  payment_status: oneOf(['', ...Object.values(PAYMENT_STATUS_CODE)], 'the payment’s status now (see the order record); empty when not found'),
  refund_date: text('`YYYYMMDDhhmmss` (UTC) when the refund was made'),
  refund_processing_date: text('`YYYYMMDDhhmmss` (UTC) when the processor settled it, or empty'),
  query_result: oneOf(['0', '1'], '`1` found, `0` not found (the item still names the requested id)'),
});

export const RefundSearchAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  refund_orders: Type.Array(RefundSearchItem, {
    description: 'the matching refunds (up to 100), then one `query_result` `0` item per requested id that matches none',
  }),
  next_cursor: Type.Optional(NextCursor),
  encryption_data: Signature,
});
