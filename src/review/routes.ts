// POST /v1/review (decisions §8): ACCEPT or REJECT payments held for risk review.
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { acquiringHooks, sendSigned } from '../http/acquiring.js';
import type { Deps } from '../http/context.js';
import { OrderNo } from '../payments/schema.js';
import { MAX_REVIEW_ORDERS, ReviewService } from './service.js';

export const ReviewBody = Type.Object(
  {
    merchant_id: Type.String({ pattern: '^\\d{1,20}$' }),
    account_id: Type.String({ pattern: '^\\d{1,20}$' }),
    encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
    review_orders: Type.Array(
      Type.Object(
        {
          transaction_id: Type.String({ minLength: 1, maxLength: 64 }),
          order_no: OrderNo,
          decision: Type.String({ pattern: '^(ACCEPT|REJECT)$', description: 'ACCEPT or REJECT' }),
          note: Type.Optional(Type.String({ maxLength: 1024 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_REVIEW_ORDERS },
    ),
  },
  { additionalProperties: false },
);

type ReviewInput = Static<typeof ReviewBody>;

export function registerReviewRoutes(app: FastifyInstance, deps: Deps): void {
  const reviews = new ReviewService(deps);
  app.post(
    '/v1/review',
    {
      schema: {
        summary: 'Decide payments held for risk review',
        description: `At most ${MAX_REVIEW_ORDERS} review_orders. ACCEPT continues a held payment (captured under automatic capture), REJECT cancels it and releases the funds. Each item answers review_status 1 or 0 with error_message.`,
        tags: ['risk'],
        body: ReviewBody,
      },
      config: { answer: 'json' },
      ...acquiringHooks(deps, ReviewBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const body = request.body as ReviewInput;
      const items = body.review_orders.map((o) => ({ ...o, decision: o.decision as 'ACCEPT' | 'REJECT' }));
      const results = await reviews.review(creds, items);
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        review_orders: results,
      });
    },
  );
}
