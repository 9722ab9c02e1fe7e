// Routes of the refunds capability: parse, call the domain, answer.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { acquiringHooks, sendSigned } from '../http/acquiring.js';
import type { Deps } from '../http/context.js';
import { MAX_REFUND_ITEMS } from '../payments/lifecycle.js';
import { type RefundItem, RefundItemSchema, refundItem } from './refund.js';
import { RefundSearchBody, type RefundSearchInput, searchRefunds } from './search.js';

export const RefundBody = Type.Object(
  {
    merchant_id: Type.String({ pattern: '^\\d{1,20}$' }),
    account_id: Type.String({ pattern: '^\\d{1,20}$' }),
    encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    refund_orders: Type.Array(RefundItemSchema, {
      minItems: 1,
      maxItems: MAX_REFUND_ITEMS,
      description: `1 to ${MAX_REFUND_ITEMS} refunds; amount = the original order amount, refund_amount = the amount to refund`,
    }),
  },
  { additionalProperties: false },
);

export function registerRefundRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/refund',
    {
      schema: {
        summary: 'Refund captured payments',
        description:
          'At most 50 refunds. Several partial refunds may be made up to the captured amount. `refund_status` `1` refunded, `0` failed (`refund_message` says why), `2` pending.',
        tags: ['refunds'],
        body: RefundBody,
      },
      config: { answer: 'json' },
      ...acquiringHooks(deps, RefundBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const items = (request.body as { refund_orders: RefundItem[] }).refund_orders;
      const idem = request.idempotency?.id;
      const results = await Promise.all(items.map((item, i) => refundItem(deps, request.log, creds.account, item, idem ? `${idem}:${i}` : null)));
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        refund_orders: results,
      });
    },
  );

  app.post(
    '/v1/retrievalRefund',
    {
      schema: {
        summary: 'Search refunds',
        description:
          'Select by `refund_reference_ids`, `transaction_ids` or `order_nos` (at most 100 ids), or by `start_date` and `end_date` over refund_date; at most 100 refunds per answer, `next_cursor` when there are more.',
        tags: ['refunds'],
        body: RefundSearchBody,
      },
      config: { answer: 'json' },
      ...acquiringHooks(deps, RefundSearchBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const { refunds, next_cursor } = await searchRefunds(deps.store, creds.account.account_id, request.body as RefundSearchInput);
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        refund_orders: refunds,
        ...(next_cursor ? { next_cursor } : {}),
      });
    },
  );
}
