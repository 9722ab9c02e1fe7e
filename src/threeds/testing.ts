// Test helpers for 3-D Secure and risk tests: reading answers and driving the challenge page.
import { encodeBody, signBody } from '../client/index.js';
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

/** An answer read off a real socket (fetch), shaped like an injected one. */
export interface HttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

async function answerOf(r: Response): Promise<HttpAnswer> {
  return { statusCode: r.status, headers: Object.fromEntries(r.headers), body: await r.text() };
}

/**
 * Puts the test gateway on a real listening socket (127.0.0.1, a free port) and points
 * settings.public_url at it, so threeds_url in answers is a link a shopper could follow.
 * Returns the origin.
 */
export async function listenGateway(gw: TestGateway): Promise<string> {
  const origin = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  gw.settings.public_url = origin;
  return origin;
}

/** A signed acquiring request over the socket (JSON body), as a merchant's server sends it. */
export async function httpPost(origin: string, path: string, body: Record<string, unknown>, merchant: CreatedMerchant): Promise<HttpAnswer> {
  const r = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: encodeBody(signBody(body, merchant.secret_key), 'json').payload,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  return answerOf(r);
}

/** Opens the challenge page the way the shopper's browser does: GET threeds_url, no redirects followed. */
export async function openPage(threeds_url: string): Promise<HttpAnswer> {
  return answerOf(await fetch(threeds_url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) }));
}

export function formTokenOf(html: string): string {
  const m = /name="form_token" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no form_token on the page');
  return m[1];
}

/** The page's form posted back to threeds_url (urlencoded, like a browser), no redirects followed. */
export async function submit(threeds_url: string, form_token: string, outcome: 'complete' | 'fail'): Promise<HttpAnswer> {
  const r = await fetch(threeds_url, {
    method: 'POST',
    body: new URLSearchParams({ form_token, outcome }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  return answerOf(r);
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
