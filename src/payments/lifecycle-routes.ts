// Routes of capture and cancel: parse, run each item, answer in request order.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { acquiringHooks, sendSigned } from '../http/acquiring.js';
import type { Deps } from '../http/context.js';
import { cancelItem } from './cancel.js';
import { captureItem } from './capture.js';
import { MAX_CANCEL_ITEMS, MAX_CAPTURE_ITEMS, type OrderItem, OrderItemFields } from './lifecycle.js';

const Identity = {
  merchant_id: Type.String({ pattern: '^\\d{1,20}$' }),
  account_id: Type.String({ pattern: '^\\d{1,20}$' }),
  encryption_data: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
};

const batch = (max: number, what: string) =>
  Type.Array(Type.Object(OrderItemFields, { additionalProperties: false }), {
    minItems: 1,
    maxItems: max,
    description: `1 to ${max} orders; each is ${what} and answered on its own`,
  });

export const CaptureBody = Type.Object(
  { ...Identity, capture_orders: batch(MAX_CAPTURE_ITEMS, 'captured (amount = the amount to capture, at most the authorised amount)') },
  { additionalProperties: false },
);
export const CancelBody = Type.Object(
  { ...Identity, cancel_orders: batch(MAX_CANCEL_ITEMS, 'cancelled (amount = the original order amount)') },
  { additionalProperties: false },
);

export function registerLifecycleRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/capture',
    {
      schema: {
        summary: 'Capture authorised payments',
        description:
          'At most 50 orders. A partial capture releases the rest of the authorisation. `capture_status` `1` success, `0` failure with `error_message`.',
        tags: ['payments'],
        body: CaptureBody,
      },
      config: { answer: 'json' },
      ...acquiringHooks(deps, CaptureBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const items = (request.body as { capture_orders: OrderItem[] }).capture_orders;
      const results = await Promise.all(items.map((item) => captureItem(deps, request.log, creds.account.account_id, item)));
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        capture_orders: results,
      });
    },
  );

  app.post(
    '/v1/cancel',
    {
      schema: {
        summary: 'Cancel authorised or pending payments',
        description: 'At most 50 orders. Releases the authorisation hold. A captured payment must be refunded instead.',
        tags: ['payments'],
        body: CancelBody,
      },
      config: { answer: 'json' },
      ...acquiringHooks(deps, CancelBody),
    },
    async (request, reply) => {
      const creds = request.account!;
      const items = (request.body as { cancel_orders: OrderItem[] }).cancel_orders;
      const results = await Promise.all(items.map((item) => cancelItem(deps, request.log, creds.account.account_id, item)));
      return sendSigned(request, reply, {
        merchant_id: creds.account.merchant_id,
        account_id: creds.account.account_id,
        return_status: '1',
        return_message: 'OK',
        cancel_orders: results,
      });
    },
  );
}
