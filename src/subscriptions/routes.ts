// `POST /v1/cancelsubscription` (interface.md "Cancel a subscription"; docs/contract.md §16): any
// body format, signed answer in JSON. Only parses, calls the domain and answers.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { resultText } from '../web/errors.js';
import { answers, answersAreStrings, oneOf, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS, Signature, SignedIdentity, text } from '../web/route-schema.js';
import { cancelSubscription } from './service.js';

export const CancelSubscriptionBody = Type.Object(
  {
    ...SignedIdentity,
    recurring_id: Type.String({ minLength: 1, maxLength: 64, description: 'the subscription’s recurring_id' }),
    contract_name: Type.String({ minLength: 1, maxLength: 128, description: 'its contract_name' }),
  },
  { additionalProperties: false },
);

const CancelSubscriptionAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  recurring_id: text('as sent'),
  contract_name: text('as sent'),
  cancel_status: oneOf(['0', '1'], '`1` the subscription is inactive (now or already); `0` not found'),
  error_message: text('empty, or `0404:Record not found`'),
  encryption_data: Signature,
});

export function registerSubscriptionRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/cancelsubscription',
    {
      schema: {
        operationId: 'cancelSubscription',
        summary: 'Cancel a subscription',
        description:
          'The subscription named by `recurring_id` and `contract_name` becomes `Inactived` at once: no later deduction, nothing prorated or refunded. Cancelling one that already ended answers `cancel_status` `1` again (safe to retry); an unknown pair answers `0` with `0404:Record not found`.',
        tags: ['subscriptions'],
        security: SIGNED,
        consumes: REQUEST_MEDIA_TYPES,
        body: CancelSubscriptionBody,
        response: answers({ media: 'json', ok: CancelSubscriptionAnswer, ok_description: 'The outcome, signed.', refusals: SIGNED_REFUSALS }),
      },
      config: { answer: 'json' },
      ...answersAreStrings,
      ...acquiringHooks(deps, CancelSubscriptionBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const body = request.body as { recurring_id: string; contract_name: string };
      const out = await cancelSubscription(deps.store, creds.account.account_id, body.recurring_id, body.contract_name, deps.now());
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        recurring_id: body.recurring_id,
        contract_name: body.contract_name,
        cancel_status: out.kind === 'not_found' ? '0' : '1',
        error_message: out.kind === 'not_found' ? resultText('0404') : '',
      });
    },
  );
}
