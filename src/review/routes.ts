// POST /v1/review (docs/contract.md §8): ACCEPT or REJECT payments held for risk review.
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { type Refusal, refuse } from '../core/outcomes.js';
import { accountPayment, paymentColumns } from '../payments/reader.js';
import { OrderNo } from '../payments/schema.js';
import { PAYMENT_STATUS_CODE } from '../payments/states.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { acquiringMessage } from '../web/outcomes.js';
import {
  answers,
  answersAreStrings,
  ItemError,
  oneOf,
  REQUEST_MEDIA_TYPES,
  ReturnMessage,
  ReturnStatus,
  SIGNED,
  SIGNED_REFUSALS,
  Signature,
  SignedIdentity,
  text,
} from '../web/route-schema.js';
import { MAX_REVIEW_ORDERS, ReviewService } from './service.js';

interface ReviewItem {
  transaction_id: string;
  order_no: string;
  decision: 'ACCEPT' | 'REJECT';
  note?: string;
}

type ReviewResult = Static<typeof ReviewAnswer>['review_orders'][number];

/**
 * One review item: its payment found and its order_no matched, then the review command. A
 * refusal answers the result code alone and the payment's status as it now stands.
 */
async function reviewItem(deps: Deps, reviews: ReviewService, account_id: string, item: ReviewItem): Promise<ReviewResult> {
  const failed = (r: Refusal, payment_status = ''): ReviewResult => ({
    transaction_id: item.transaction_id,
    order_no: item.order_no,
    decision: item.decision,
    review_status: '0',
    payment_status,
    error_message: acquiringMessage(r),
  });
  const row = await accountPayment(deps.store.db, account_id, item.transaction_id);
  if (!row) return failed(refuse('not_found'));
  if (row.order_no !== item.order_no) return failed(refuse('order_mismatch'), PAYMENT_STATUS_CODE[row.status]);
  const outcome = await reviews.reviewPayment({ account_id, transaction_id: row.transaction_id, decision: item.decision, note: item.note ?? '' });
  if (!outcome.ok) {
    const now = await paymentColumns(deps.store.db, row.transaction_id, ['status']);
    return failed(outcome, now ? PAYMENT_STATUS_CODE[now.status] : '');
  }
  return {
    transaction_id: row.transaction_id,
    order_no: row.order_no,
    decision: item.decision,
    // 2: the processor has not confirmed the capture or cancel yet; the payment moves (notified) when it does.
    review_status: outcome.ok === 'pending' ? '2' : '1',
    payment_status: PAYMENT_STATUS_CODE[outcome.payment.status],
    error_message: '',
  };
}

export const ReviewBody = Type.Object(
  {
    ...SignedIdentity,
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
      { minItems: 1, maxItems: MAX_REVIEW_ORDERS, description: `1 to ${MAX_REVIEW_ORDERS} held payments, each decided and answered on its own` },
    ),
  },
  { additionalProperties: false },
);

export const ReviewAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  review_orders: Type.Array(
    Type.Object({
      transaction_id: text('as sent'),
      order_no: text('as sent'),
      decision: text('as sent'),
      review_status: oneOf(
        ['0', '1', '2'],
        '`1` decided, `2` sent to the processor and not confirmed yet (the payment stays held and moves, notified, when it is), `0` failure (`error_message` says why)',
      ),
      payment_status: oneOf(['', ...Object.values(PAYMENT_STATUS_CODE)], 'the payment’s status after the decision; empty when not found'),
      error_message: ItemError,
    }),
    { description: 'one result per item, in request order' },
  ),
  encryption_data: Signature,
});

type ReviewInput = Static<typeof ReviewBody>;

export function registerReviewRoutes(app: FastifyInstance, deps: Deps): void {
  const reviews = new ReviewService(deps);
  app.post(
    '/v1/review',
    {
      schema: {
        operationId: 'review',
        summary: 'Decide payments held for risk review',
        description: `At most ${MAX_REVIEW_ORDERS} review_orders. ACCEPT continues a held payment (captured under automatic capture, at the processor first), REJECT cancels it at the processor and releases the funds. Each item answers review_status 1, 2 (the processor has not confirmed yet) or 0 with error_message.`,
        tags: ['risk'],
        security: SIGNED,
        consumes: REQUEST_MEDIA_TYPES,
        body: ReviewBody,
        response: answers({ media: 'json', ok: ReviewAnswer, ok_description: 'One result per item, signed.', refusals: SIGNED_REFUSALS }),
      },
      config: { answer: 'json' },
      ...answersAreStrings,
      ...acquiringHooks(deps, ReviewBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const body = request.body as ReviewInput;
      const items = body.review_orders.map((o) => ({ ...o, decision: o.decision as 'ACCEPT' | 'REJECT' }));
      // Each item on its own, in order: one item's failure is answered in that item.
      const results: ReviewResult[] = [];
      for (const item of items) results.push(await reviewItem(deps, reviews, creds.account.account_id, item));
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
