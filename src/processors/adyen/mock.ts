// A stateful mock of Adyen's Checkout API v71 for tests (docs/processors.md#adyen): the five
// operations the connector calls, written from the published document, and the Disputes API
// v30 under /ca/services/DisputeService/v30 (DisputeService-v30.json). It keeps payments by
// pspReference, replays the first answer for a repeated Idempotency-Key, refuses a wrong
// X-API-Key (401), decides a card by its last four digits (DECLINES), and queues the
// standard notifications Adyen would send (AUTHORISATION, CAPTURE, CANCELLATION, REFUND),
// signed with the HMAC key, until the test delivers them (`deliver`, in order, reversed or
// twice). `fault` makes the next answers fail: 401, 500, malformed JSON after acting, or no
// answer at all after acting. Every request is kept (`requests`) for the contract tests.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type NotificationRequestItem, signItem } from './webhooks.js';

/** Cards the mock refuses, by their last four digits: Adyen's refusal reason code and words. */
export const DECLINES: Readonly<Record<string, { code: string; reason: string; raw?: string }>> = {
  '0002': { code: '2', reason: 'Refused' },
  '9995': { code: '12', reason: 'Not enough balance' },
  '9987': { code: '5', reason: 'Blocked Card', raw: 'LOST CARD' },
  '0069': { code: '6', reason: 'Expired Card' },
  '0127': { code: '24', reason: 'CVC Declined' },
  '0119': { code: '9', reason: 'Issuer Unavailable' },
};
/**
 * A card whose issuer wants Adyen's own 3-D Secure (`RedirectShopper`), as does any payment
 * sent with `authenticationData.attemptAuthentication: always`. With the gateway's return URL
 * the redirect goes to the mock's issuer page (`GET /3ds/<pspReference>?outcome=pass|fail`),
 * which sends the shopper back with a `redirectResult` that `/payments/details` reads.
 */
export const REDIRECT_LAST4 = '3220';
/** The placeholder return URL the connector sends when it wants no redirect. */
const NO_REDIRECT = 'https://tollgate.invalid/adyen/no-redirect';

export type MockFault = '401' | '500' | 'malformed-after' | 'hang-after';

export interface MockRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

interface Payment {
  psp: string;
  reference: string;
  amount: { currency: string; value: number };
  manual: boolean;
  authorised: boolean;
  /** Set while Adyen's own 3-D Secure waits for the shopper: where the shopper goes back. */
  returnUrl?: string;
  /** The issuer page's outcome, once the shopper went through it. */
  authenticated?: 'pass' | 'fail';
}

/** A dispute at the mock's Disputes API v30 (`openDispute`): what the merchant sent it, and where it stands. */
export interface MockDispute {
  psp: string;
  payment: string;
  status: 'open' | 'defended' | 'accepted';
  documents: Array<{ defenseDocumentTypeCode: string; contentType: string; content: string }>;
  reason?: string;
}

/** The defense reasons the mock offers for every dispute, in this order (the shapes of DisputeService-v30.json's examples). */
export const MOCK_DEFENSE_REASONS = [
  {
    defenseReasonCode: 'GoodsWereAsDescribed',
    satisfied: false,
    defenseDocumentTypes: [
      { defenseDocumentTypeCode: 'TIDorInvoice', requirementLevel: 'Required', available: false },
      { defenseDocumentTypeCode: 'GoodsWereAsDescribed', requirementLevel: 'Optional', available: false },
    ],
  },
  {
    defenseReasonCode: 'SupplyDefenseMaterial',
    satisfied: false,
    defenseDocumentTypes: [{ defenseDocumentTypeCode: 'DefenseMaterial', requirementLevel: 'Required', available: false }],
  },
];

const DISPUTES_PATH = '/ca/services/DisputeService/v30';

export interface AdyenMock {
  url: string;
  /** Where notifications go (the gateway's `/hooks/adyen/<processor_id>`). */
  webhook_url: string;
  requests: MockRequest[];
  payments: Map<string, Payment>;
  /** Notifications made and not yet delivered. */
  queued: NotificationRequestItem[];
  /** Disputes by their pspReference, as the Disputes API keeps them. */
  disputes: Map<string, MockDispute>;
  /** A new dispute of payment `payment` (its pspReference): the dispute's pspReference, for the test's notifications. */
  openDispute(payment: string): string;
  /** The next requests fail so, one fault each. */
  fault(...faults: MockFault[]): void;
  /** Delivers the queued notifications, one delivery each; answers the gateway's HTTP statuses. */
  deliver(opts?: { reverse?: boolean; twice?: boolean; only?: (n: NotificationRequestItem) => boolean }): Promise<number[]>;
  /** Sends one delivery of these items as they are (a forged one too). */
  post(items: NotificationRequestItem[]): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

// Longer than docs/style.md §16's 70 lines: a test tool, one closure over the mock's state.
export async function startAdyenMock(o: {
  api_key: string;
  merchant_account: string;
  hmac_key: string;
  webhook_url?: string;
  /** The bench's processor latency (bench/connector-mock.ts): ms to wait before reading a request, and each answer's time from arrival to sent. */
  latency?: { delay: () => number; served?: (ms: number) => void };
}): Promise<AdyenMock> {
  const payments = new Map<string, Payment>();
  const disputes = new Map<string, MockDispute>();
  const answered = new Map<string, { status: number; body: unknown }>();
  const faults: MockFault[] = [];
  const hanging = new Set<http.ServerResponse>();
  const psp = () => randomBytes(10).toString('hex').toUpperCase().slice(0, 16);

  const notify = (item: Omit<NotificationRequestItem, 'merchantAccountCode' | 'eventDate'>) => {
    const n: NotificationRequestItem = { merchantAccountCode: o.merchant_account, eventDate: new Date().toISOString(), ...item };
    n.additionalData = { ...(n.additionalData ?? {}), hmacSignature: signItem(o.hmac_key, n) };
    mock.queued.push(n);
  };

  // Longer than docs/style.md §16's 70 lines: a test tool, one branch a path, each the few lines of what Adyen answers there.
  function act(path: string, body: Record<string, any>): { status: number; body: unknown } {
    if (path.startsWith(`${DISPUTES_PATH}/`)) return actDispute(path.slice(DISPUTES_PATH.length), body);
    if (path === '/payments') {
      const pan = String(body.paymentMethod?.number ?? '');
      const p: Payment = {
        psp: psp(),
        reference: String(body.reference),
        amount: body.amount,
        manual: body.additionalData?.manualCapture === 'true',
        authorised: false,
      };
      payments.set(p.psp, p);
      const base = { pspReference: p.psp, merchantReference: p.reference, amount: p.amount };
      const wantsAuthentication = pan.endsWith(REDIRECT_LAST4) || body.authenticationData?.attemptAuthentication === 'always';
      if (wantsAuthentication && !body.mpiData) {
        const back = String(body.returnUrl ?? '');
        const ours = back !== NO_REDIRECT && /^https?:/.test(back);
        if (ours) p.returnUrl = back;
        const url = ours ? `${mock.url.replace(/\/v71$/, '')}/3ds/${p.psp}` : 'https://test.adyen.com/hpp/3d/validate.shtml';
        return { status: 200, body: { resultCode: 'RedirectShopper', action: { type: 'redirect', method: 'GET', url, paymentMethodType: 'scheme' } } };
      }
      const d = DECLINES[pan.slice(-4)];
      if (d) {
        notify({ pspReference: p.psp, merchantReference: p.reference, amount: p.amount, eventCode: 'AUTHORISATION', success: 'false', reason: d.reason });
        return {
          status: 200,
          body: {
            ...base,
            resultCode: 'Refused',
            refusalReason: d.reason,
            refusalReasonCode: d.code,
            ...(d.raw ? { additionalData: { refusalReasonRaw: d.raw } } : {}),
          },
        };
      }
      p.authorised = true;
      notify({ pspReference: p.psp, merchantReference: p.reference, amount: p.amount, eventCode: 'AUTHORISATION', success: 'true', reason: '' });
      return { status: 200, body: { ...base, resultCode: 'Authorised', additionalData: { authCode: '012345' } } };
    }
    if (path === '/payments/details') {
      const [ref, outcome] = String(body.details?.redirectResult ?? '').split('.');
      const p = ref ? payments.get(ref) : undefined;
      if (!p?.authenticated || p.authenticated !== outcome)
        return { status: 422, body: { status: 422, errorCode: '14_018', message: 'Invalid payload provided', errorType: 'validation' } };
      const base = { pspReference: p.psp, merchantReference: p.reference, amount: p.amount };
      if (outcome === 'fail') {
        notify({ ...base, eventCode: 'AUTHORISATION', success: 'false', reason: '3D Not Authenticated' });
        return { status: 200, body: { ...base, resultCode: 'Refused', refusalReason: '3D Not Authenticated', refusalReasonCode: '11' } };
      }
      p.authorised = true;
      notify({ ...base, eventCode: 'AUTHORISATION', success: 'true', reason: '' });
      return { status: 200, body: { ...base, resultCode: 'Authorised', additionalData: { authCode: '012345' } } };
    }
    if (path === '/cancels') {
      const p = [...payments.values()].find((x) => x.reference === body.paymentReference);
      const ref = psp();
      notify({
        pspReference: ref,
        ...(p ? { originalReference: p.psp } : {}),
        merchantReference: String(body.reference ?? body.paymentReference),
        amount: p?.amount ?? { currency: 'EUR', value: 0 },
        eventCode: 'CANCELLATION',
        success: p?.authorised ? 'true' : 'false',
        reason: p ? '' : 'Original payment not found',
      });
      if (p) p.authorised = false;
      return {
        status: 201,
        body: {
          merchantAccount: o.merchant_account,
          paymentReference: body.paymentReference,
          pspReference: ref,
          reference: body.reference,
          status: 'received',
        },
      };
    }
    const m = /^\/payments\/([^/]+)\/(captures|cancels|refunds)$/.exec(path);
    const p = m ? payments.get(decodeURIComponent(m[1] as string)) : undefined;
    if (!m || !p)
      return { status: 422, body: { status: 422, errorCode: '167', message: 'Original pspReference required for this operation', errorType: 'validation' } };
    const ref = psp();
    const what = m[2] as 'captures' | 'cancels' | 'refunds';
    const event = { captures: 'CAPTURE', cancels: 'CANCELLATION', refunds: 'REFUND' }[what];
    const amount = what === 'cancels' ? p.amount : body.amount;
    notify({
      pspReference: ref,
      originalReference: p.psp,
      merchantReference: String(body.reference ?? p.reference),
      amount,
      eventCode: event,
      success: 'true',
      reason: '',
    });
    if (what === 'cancels') p.authorised = false;
    return {
      status: 201,
      body: {
        merchantAccount: o.merchant_account,
        paymentPspReference: p.psp,
        pspReference: ref,
        ...(body.reference ? { reference: body.reference } : {}),
        ...(what === 'cancels' ? {} : { amount: body.amount }),
        status: 'received',
      },
    };
  }

  /** The Disputes API v30: Adyen answers 200 with `disputeServiceResult.success` false when it will not do it. */
  function actDispute(op: string, body: Record<string, any>): { status: number; body: unknown } {
    const refused = (errorMessage: string) => ({ status: 200, body: { disputeServiceResult: { success: false, errorMessage } } });
    const ok = (more: Record<string, unknown> = {}) => ({ status: 200, body: { disputeServiceResult: { success: true }, ...more } });
    if (body.merchantAccountCode !== o.merchant_account || typeof body.disputePspReference !== 'string')
      return {
        status: 422,
        body: { status: 422, errorCode: '000', message: 'merchantAccountCode and disputePspReference are required', errorType: 'validation' },
      };
    const d = disputes.get(body.disputePspReference);
    if (!d) return refused('Could not find dispute');
    if (op === '/retrieveApplicableDefenseReasons') return d.status === 'open' ? ok({ defenseReasons: MOCK_DEFENSE_REASONS }) : ok({ defenseReasons: [] });
    if (d.status !== 'open') return refused(d.status === 'accepted' ? 'Dispute has been accepted' : 'Dispute has already been defended');
    if (op === '/acceptDispute') {
      d.status = 'accepted';
      return ok();
    }
    if (op === '/supplyDefenseDocument') {
      const docs = Array.isArray(body.defenseDocuments) ? body.defenseDocuments : [];
      const magic: Record<string, string> = { 'application/pdf': '%PDF-', 'image/jpeg': '\xff\xd8\xff' };
      for (const doc of docs) {
        const head = Buffer.from(String(doc?.content ?? ''), 'base64')
          .subarray(0, 5)
          .toString('latin1');
        const want = magic[String(doc?.contentType)];
        if (!want || !head.startsWith(want)) return refused(`Invalid document: ${String(doc?.contentType)}`);
      }
      if (docs.length === 0) return refused('No defense documents supplied');
      d.documents.push(...docs);
      return ok();
    }
    if (op === '/defendDispute') {
      const reason = MOCK_DEFENSE_REASONS.find((r) => r.defenseReasonCode === body.defenseReasonCode);
      if (!reason) return refused('Invalid defense reason code');
      const have = new Set(d.documents.map((x) => x.defenseDocumentTypeCode));
      const missing = reason.defenseDocumentTypes.filter((t) => t.requirementLevel === 'Required' && !have.has(t.defenseDocumentTypeCode));
      if (missing.length > 0) return refused(`Required defense document missing: ${missing.map((t) => t.defenseDocumentTypeCode).join(', ')}`);
      d.status = 'defended';
      d.reason = reason.defenseReasonCode;
      return ok();
    }
    return { status: 404, body: { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' } };
  }

  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // The issuer's page of Adyen's own 3-D Secure: the shopper passes or fails, and goes back.
    const page = req.method === 'GET' ? /^\/3ds\/([^/?]+)\?outcome=(pass|fail)$/.exec(req.url ?? '') : null;
    if (req.method === 'GET') {
      const p = page ? payments.get(page[1] as string) : undefined;
      if (!page || !p?.returnUrl) return res.writeHead(404).end();
      p.authenticated = page[2] as 'pass' | 'fail';
      const back = new URL(p.returnUrl);
      back.searchParams.set('redirectResult', `${p.psp}.${p.authenticated}`);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').replace(/^\/v71/, '');
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {}
      mock.requests.push({ path, headers: req.headers, body });
      const reply = (status: number, b: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(typeof b === 'string' ? b : JSON.stringify(b));
      const fault = faults.shift();
      if (fault === '401' || req.headers['x-api-key'] !== o.api_key)
        return reply(401, { status: 401, errorCode: '000', message: 'HTTP Status Response - Unauthorized', errorType: 'security' });
      if (fault === '500') return reply(500, { status: 500, errorCode: '905', message: 'Internal error', errorType: 'internal' });
      const key = String(req.headers['idempotency-key'] ?? '');
      const replayed = key ? answered.get(key) : undefined;
      const answer = replayed ?? act(path, body);
      if (key && !replayed) answered.set(key, answer);
      if (fault === 'malformed-after') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"resultCode": "Authorised", "pspRef');
      if (fault === 'hang-after') return hanging.add(res);
      reply(answer.status, answer.body);
    });
  };
  const server = http.createServer((req, res) => {
    if (!o.latency) return handle(req, res);
    const t0 = performance.now();
    res.once('finish', () => o.latency?.served?.(performance.now() - t0));
    setTimeout(() => handle(req, res), o.latency.delay());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  async function post(items: NotificationRequestItem[]) {
    const res = await fetch(mock.webhook_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ live: 'false', notificationItems: items.map((NotificationRequestItem) => ({ NotificationRequestItem })) }),
    });
    return { status: res.status, body: await res.text() };
  }

  const mock: AdyenMock = {
    url: `http://127.0.0.1:${port}/v71`,
    webhook_url: o.webhook_url ?? '',
    requests: [],
    payments,
    queued: [],
    disputes,
    openDispute(payment) {
      const dispute = psp();
      disputes.set(dispute, { psp: dispute, payment, status: 'open', documents: [] });
      return dispute;
    },
    fault: (...f) => faults.push(...f),
    post,
    async deliver(opts = {}) {
      const take = mock.queued.filter((n) => !opts.only || opts.only(n));
      mock.queued = mock.queued.filter((n) => !take.includes(n));
      const order = opts.reverse ? [...take].reverse() : take;
      const statuses: number[] = [];
      for (const n of opts.twice ? [...order, ...order] : order) statuses.push((await post([n])).status);
      return statuses;
    },
    async close() {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return mock;
}
