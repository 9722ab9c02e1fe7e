// Test helpers for 3-D Secure and risk tests: reading answers and driving the challenge page.
import type { LightMyRequestResponse } from 'fastify';
import type { CreatedMerchant } from '../merchants/service.js';
import { readXml, type TestGateway } from '../test/harness.js';

export type Reasons = Array<{ name: string; status: string }>;

/** risk_reasons of a direct answer as a list (one element reads back as an object). */
export function reasonsOf(x: Record<string, any>): Reasons {
  const r = x.risk_reasons;
  if (!r) return [];
  return Array.isArray(r) ? r : [r];
}

export function statusOfRule(x: Record<string, any>, name: string): string | undefined {
  return reasonsOf(x).find((r) => r.name === name)?.status;
}

export async function authorise(gw: TestGateway, body: Record<string, unknown>, merchant?: CreatedMerchant): Promise<Record<string, any>> {
  const res = await gw.post('/v1/authorise', body, { merchant });
  if (res.statusCode !== 200) throw new Error(`authorise answered ${res.statusCode}: ${res.body}`);
  return readXml(res);
}

export async function queryOrder(gw: TestGateway, merchant: CreatedMerchant, transaction_id: string): Promise<Record<string, any>> {
  const res = await gw.post(
    '/v1/retrievalTrans',
    { merchant_id: merchant.merchant_id, account_id: merchant.account_id, transaction_ids: [transaction_id] },
    { merchant },
  );
  const body = JSON.parse(res.body);
  return body.orders_list[0];
}

export function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

export async function openPage(gw: TestGateway, threeds_url: string): Promise<LightMyRequestResponse> {
  return gw.app.inject({ method: 'GET', url: pathOf(threeds_url) });
}

export function formTokenOf(html: string): string {
  const m = /name="form_token" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no form_token on the page');
  return m[1];
}

export async function submit(gw: TestGateway, threeds_url: string, form_token: string, outcome: 'complete' | 'fail'): Promise<LightMyRequestResponse> {
  return gw.app.inject({
    method: 'POST',
    url: pathOf(threeds_url),
    payload: `form_token=${encodeURIComponent(form_token)}&outcome=${outcome}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

export async function eventsOf(gw: TestGateway, transaction_id: string): Promise<string[]> {
  const rows = await gw.runtime.store.db
    .selectFrom('events')
    .select(['event_type', 'event_id'])
    .where('object_id', '=', transaction_id)
    .orderBy('event_id')
    .execute();
  return rows.map((r) => r.event_type).sort(); // one clock tick holds many events: compare as sets
}

/** A valid mpi_info for a Visa-like card (ECI 05: authenticated). */
export function mpiInfo(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    eci: '05',
    cavv: Buffer.alloc(20, 9).toString('base64'),
    dsTransID: '4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
    ...overrides,
  };
}
