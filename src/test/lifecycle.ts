// Test helpers for the payment lifecycle: make payments in a given state and drive
// capture, cancel and refund through the public API.
import assert from 'node:assert/strict';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, readXml, type TestGateway } from './harness.js';

export interface Paid {
  transaction_id: string;
  order_no: string;
  currency: string;
  amount: string;
}

export async function pay(
  gw: TestGateway,
  opts: { manual?: boolean; amount?: string; currency?: string; card?: string; merchant?: CreatedMerchant; order_no?: string } = {},
): Promise<Paid> {
  const merchant = opts.merchant ?? gw.merchant;
  const body = directPayment(merchant, {
    amount: opts.amount ?? '10.00',
    currency: opts.currency ?? 'USD',
    ...(opts.card ? { card: opts.card } : {}),
    ...(opts.order_no ? { order_no: opts.order_no } : {}),
    ...(opts.manual ? { capture_method: 'manual' } : {}),
  });
  const x = readXml(await gw.post('/v1/authorise', body, { merchant }));
  assert.ok(x.transaction_id, `authorise answered ${JSON.stringify(x)}`);
  return { transaction_id: x.transaction_id, order_no: body.order_no as string, currency: body.currency as string, amount: body.amount as string };
}

type Json = Record<string, any>;

async function batch(gw: TestGateway, path: string, field: string, items: Json[], merchant?: CreatedMerchant, headers?: Record<string, string>): Promise<Json> {
  const m = merchant ?? gw.merchant;
  const res = await gw.post(path, { merchant_id: m.merchant_id, account_id: m.account_id, [field]: items }, { merchant: m, headers });
  const body = JSON.parse(res.body) as Json;
  return { status: res.statusCode, ...body };
}

export const captureBatch = (gw: TestGateway, items: Json[], merchant?: CreatedMerchant) => batch(gw, '/v1/capture', 'capture_orders', items, merchant);
export const cancelBatch = (gw: TestGateway, items: Json[], merchant?: CreatedMerchant) => batch(gw, '/v1/cancel', 'cancel_orders', items, merchant);
export const refundBatch = (gw: TestGateway, items: Json[], merchant?: CreatedMerchant, headers?: Record<string, string>) =>
  batch(gw, '/v1/refund', 'refund_orders', items, merchant, headers);

export const item = (p: Paid, extra: Json = {}): Json => ({
  transaction_id: p.transaction_id,
  order_no: p.order_no,
  currency: p.currency,
  amount: p.amount,
  ...extra,
});

/** The order record of one transaction, through the order query. */
export async function orderOf(gw: TestGateway, transaction_id: string, merchant?: CreatedMerchant): Promise<Json> {
  const m = merchant ?? gw.merchant;
  const res = await gw.post('/v1/retrievalTrans', { merchant_id: m.merchant_id, account_id: m.account_id, transaction_ids: [transaction_id] }, { merchant: m });
  const order = (JSON.parse(res.body) as Json).orders_list?.[0];
  assert.ok(order, res.body);
  return order;
}
