// Adyen Checkout API v71 as the connector speaks it (docs/processors.md#adyen): the request
// bodies it sends, built from the gateway's inputs, and what Adyen's answers mean as our
// outcomes. Shapes are the published document's (vendor/checkout-v71.json, MIT); the
// contract tests validate every body built here against it and read its examples.
import type { AuthoriseInput, AuthoriseOutcome, CancelInput, CaptureInput, DeclineCode, OperationOutcome, RefundInput, ShopperAction } from '../types.js';

export interface AdyenAmount {
  currency: string;
  value: number;
}

/**
 * Currencies whose minor unit at Adyen is not ISO 4217's (Adyen's "Currency codes and minor
 * units": "the decimals in the table on this page are leading"): the factor from our minor
 * units (ISO's exponent, src/money/currency.ts) to Adyen's. CLP and ISK have 2 decimals at
 * Adyen (ISO 0); CVE and IDR have 0 (ISO 2).
 */
const ADYEN_FACTOR: Readonly<Record<string, { times: number } | { over: number }>> = {
  CLP: { times: 100 },
  ISK: { times: 100 },
  CVE: { over: 100 },
  IDR: { over: 100 },
};

/** Our amount in Adyen's minor units, or null when Adyen cannot express it (CVE or IDR with a fraction). */
export function adyenAmount(currency: string, amount_minor: number): AdyenAmount | null {
  const f = ADYEN_FACTOR[currency];
  if (!f) return { currency, value: amount_minor };
  if ('times' in f) return { currency, value: amount_minor * f.times };
  return amount_minor % f.over === 0 ? { currency, value: amount_minor / f.over } : null;
}

/** Said when `adyenAmount` is null: nothing was sent. */
export const FRACTION_REFUSED = 'Adyen takes this currency in whole units only: the amount has a fraction';

/** `POST /payments` with card details (CardDetails, type `scheme`), unencrypted: the gateway is the PCI party. */
export interface PaymentRequest {
  amount: AdyenAmount;
  merchantAccount: string;
  reference: string;
  returnUrl: string;
  paymentMethod: { type: 'scheme'; number: string; expiryMonth: string; expiryYear: string; cvc?: string };
  shopperInteraction: 'Ecommerce' | 'ContAuth';
  channel?: 'Web';
  authenticationData?: { attemptAuthentication?: 'always'; threeDSRequestData: { nativeThreeDS: 'disabled' } };
  recurringProcessingModel?: 'Subscription';
  additionalData?: Record<string, string>;
  mpiData?: { eci: string; cavv?: string; xid?: string; dsTransID?: string; authenticationResponse: 'Y'; directoryResponse: 'Y' };
}

/**
 * Where the shopper would return from a redirect when the gateway gave none (a merchant-
 * initiated charge, or 3-D Secure done elsewhere): the schema requires one; a `RedirectShopper`
 * answer to such a payment is declined (`authoriseOfAnswer`), so it is never visited.
 */
export const RETURN_URL = 'https://tollgate.invalid/adyen/no-redirect';

/** The body of `POST /payments`; `amount` is in Adyen's minor units (`adyenAmount`). */
export function paymentRequest(input: AuthoriseInput, merchantAccount: string, amount: AdyenAmount): PaymentRequest {
  const { card } = input;
  const body: PaymentRequest = {
    amount,
    merchantAccount,
    reference: input.transaction_id,
    returnUrl: input.authentication?.return_url ?? RETURN_URL,
    paymentMethod: {
      type: 'scheme',
      number: card.pan,
      expiryMonth: String(card.exp_month).padStart(2, '0'),
      expiryYear: String(card.exp_year),
      ...(card.security_code ? { cvc: card.security_code } : {}),
    },
    shopperInteraction: input.merchant_initiated ? 'ContAuth' : 'Ecommerce',
  };
  if (input.merchant_initiated) body.recurringProcessingModel = 'Subscription';
  // Adyen's documented per-payment switch: hold the authorisation until our capture call.
  if (input.capture_method === 'manual') body.additionalData = { manualCapture: 'true' };
  if (input.authentication && !input.threeds) {
    // Adyen runs 3-D Secure with the shopper, by redirect (its hosted page): no browser SDK
    // here. `always` when the gateway asks for it; otherwise Adyen's and the issuer's rules.
    body.channel = 'Web';
    body.authenticationData = {
      ...(input.authentication.required ? { attemptAuthentication: 'always' as const } : {}),
      threeDSRequestData: { nativeThreeDS: 'disabled' },
    };
  }
  const t = input.threeds;
  if (t) {
    // Authenticated by the merchant's 3-D Secure server or our challenge: passed on as MPI data.
    body.mpiData = {
      eci: t.eci,
      ...(t.cavv ? { cavv: t.cavv } : {}),
      ...(t.xid ? { xid: t.xid } : {}),
      ...(t.ds_trans_id ? { dsTransID: t.ds_trans_id } : {}),
      authenticationResponse: 'Y',
      directoryResponse: 'Y',
    };
  }
  return body;
}

export const captureRequest = (input: CaptureInput, merchantAccount: string, amount: AdyenAmount) => ({
  merchantAccount,
  amount,
  reference: input.transaction_id,
});

export const cancelRequest = (input: CancelInput, merchantAccount: string) => ({ merchantAccount, reference: input.transaction_id });

/** `POST /cancels`: the authorisation named by our reference (the payment's `reference`), when no pspReference came back. */
export const standaloneCancelRequest = (input: CancelInput, merchantAccount: string) => ({
  merchantAccount,
  paymentReference: input.transaction_id,
  reference: input.transaction_id,
});

/** A refund's `reference` is our refund id: its REFUND notification's merchantReference names the refund. */
export const refundRequest = (input: RefundInput, merchantAccount: string, amount: AdyenAmount) => ({
  merchantAccount,
  amount,
  reference: input.refund_id,
});

/**
 * Adyen's refusal reasons (`refusalReasonCode`, its "Refusal reasons" list) onto our decline
 * codes; the table is published in docs/processors.md. A code not listed is `1002`. Adyen
 * reports an issuer's lost or stolen card as Blocked or Restricted card with the issuer's
 * words in `additionalData.refusalReasonRaw`: those words make it `1003` or `1004`.
 */
export const REFUSAL_CODES: Readonly<Record<string, { code: DeclineCode; reason: string }>> = {
  '2': { code: '1002', reason: 'Refused' },
  '3': { code: '1002', reason: 'Referral' },
  '4': { code: '1007', reason: 'Acquirer Error' },
  '5': { code: '1002', reason: 'Blocked Card' },
  '6': { code: '1005', reason: 'Expired Card' },
  '7': { code: '1002', reason: 'Invalid Amount' },
  '8': { code: '1002', reason: 'Invalid Card Number' },
  '9': { code: '1007', reason: 'Issuer Unavailable' },
  '10': { code: '1002', reason: 'Not supported' },
  '11': { code: '1002', reason: '3D Not Authenticated' },
  '12': { code: '1001', reason: 'Not enough balance' },
  '14': { code: '1002', reason: 'Acquirer Fraud' },
  '15': { code: '1002', reason: 'Cancelled' },
  '16': { code: '1002', reason: 'Shopper Cancelled' },
  '17': { code: '1006', reason: 'Invalid Pin' },
  '18': { code: '1006', reason: 'Pin tries exceeded' },
  '20': { code: '1002', reason: 'FRAUD' },
  '21': { code: '1007', reason: 'Not Submitted' },
  '22': { code: '1002', reason: 'FRAUD-CANCELLED' },
  '23': { code: '1002', reason: 'Transaction Not Permitted' },
  '24': { code: '1006', reason: 'CVC Declined' },
  '25': { code: '1002', reason: 'Restricted Card' },
  '26': { code: '1002', reason: 'Revocation Of Auth' },
  '27': { code: '1002', reason: 'Declined Non Generic' },
  '28': { code: '1001', reason: 'Withdrawal amount exceeded' },
  '29': { code: '1001', reason: 'Withdrawal count exceeded' },
  '31': { code: '1002', reason: 'Issuer Suspected Fraud' },
  '32': { code: '1002', reason: 'AVS Declined' },
  '38': { code: '1002', reason: 'Authentication required' },
  '39': { code: '1007', reason: 'RReq not received from DS' },
  '42': { code: '1002', reason: '3DS Authentication Error' },
  '46': { code: '1002', reason: 'Transaction blocked by Adyen to prevent excessive retry fees' },
};

const BY_REASON = new Map(Object.values(REFUSAL_CODES).map((r) => [r.reason.toUpperCase(), r.code]));

/** The decline code of a refusal: by its code, else by its words (a notification's `reason`), else `1002`. */
export function declineCodeOf(refusalReasonCode: unknown, words?: unknown): DeclineCode {
  const raw = typeof words === 'string' ? words.toUpperCase() : '';
  if (/\bLOST\b/.test(raw)) return '1003';
  if (/\bSTOLEN\b/.test(raw)) return '1004';
  return REFUSAL_CODES[String(refusalReasonCode ?? '')]?.code ?? BY_REASON.get(raw.trim()) ?? '1002';
}

type Unknown = { kind: 'unknown'; reason: string };

/** `POST /payments/details`: what Adyen put on our return URL (`redirectResult`, or 3-D Secure 1's `MD` and `PaRes`). */
export function detailsRequest(params: Readonly<Record<string, string>>): { details: Record<string, string> } | null {
  if (params.redirectResult) return { details: { redirectResult: params.redirectResult.slice(0, 20_000) } };
  if (params.MD && params.PaRes) return { details: { MD: params.MD.slice(0, 20_000), PaRes: params.PaRes.slice(0, 20_000) } };
  return null;
}

/** A redirect action (`action.type` `redirect`, GET or POST with `data`) as the shopper's next step; null for any other. */
function redirectOf(action: unknown): ShopperAction | null {
  const a = action as { type?: unknown; url?: unknown; method?: unknown; data?: unknown } | undefined;
  if (a?.type !== 'redirect' || typeof a.url !== 'string' || !/^https?:\/\//.test(a.url)) return null;
  const method = String(a.method ?? 'GET').toUpperCase() === 'POST' ? 'POST' : 'GET';
  const data: Record<string, string> = {};
  if (a.data && typeof a.data === 'object') for (const [k, v] of Object.entries(a.data)) if (typeof v === 'string') data[k] = v;
  return { url: a.url, method, data };
}

/**
 * A `/payments` or `/payments/details` answer (HTTP 200) as our outcome. `Authorised`
 * approves; `Refused` declines by the table (refusal 11, "3D Not Authenticated", is the
 * shopper failing the challenge); `Pending` and `Received` report later (the AUTHORISATION
 * notification); `Error` is unknown. `RedirectShopper` (and `ChallengeShopper`,
 * `IdentifyShopper` with a redirect action) is Adyen running 3-D Secure with the shopper:
 * `challenge_required` with the redirect, when the gateway gave a return URL (`redirects`);
 * without one, or with an action the gateway cannot follow (native 3-D Secure 2 needs
 * Adyen's browser SDK), it is declined `1007` (never a bare `challenge_required`, which would
 * make the gateway run its own challenge). `Cancelled` is declined `1002`. Anything else is unknown.
 */
export function authoriseOfAnswer(body: unknown, redirects = false): AuthoriseOutcome | Unknown {
  const b = body as
    | { resultCode?: unknown; pspReference?: unknown; refusalReasonCode?: unknown; additionalData?: Record<string, unknown>; action?: unknown }
    | undefined;
  if (!b || typeof b !== 'object' || typeof b.resultCode !== 'string') return { kind: 'unknown', reason: 'Adyen answered 200 without a resultCode' };
  const reference = typeof b.pspReference === 'string' ? b.pspReference.slice(0, 100) : '';
  switch (b.resultCode) {
    case 'Authorised':
      return reference ? { kind: 'approved', reference } : { kind: 'unknown', reason: 'Adyen answered Authorised without a pspReference' };
    case 'Refused': {
      const code = declineCodeOf(b.refusalReasonCode, b.additionalData?.refusalReasonRaw);
      return String(b.refusalReasonCode) === '11' ? { kind: 'declined', code, reference, authentication_failed: true } : { kind: 'declined', code, reference };
    }
    case 'Cancelled':
      return { kind: 'declined', code: '1002', reference };
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper': {
      const action = redirects ? redirectOf(b.action) : null;
      // Adyen gives no pspReference until the shopper is back: the reference is our own (the payment's).
      return action ? { kind: 'challenge_required', reference, action } : { kind: 'declined', code: '1007', reference };
    }
    case 'Pending':
    case 'Received':
      return { kind: 'pending', reference };
    case 'Error':
      return { kind: 'unknown', reason: 'Adyen answered resultCode Error' };
    default:
      return { kind: 'unknown', reason: `Adyen answered an unexpected resultCode ${JSON.stringify(b.resultCode.slice(0, 30))}` };
  }
}

/** A capture, cancel or refund answer (HTTP 201, `status: received`): pending until its notification. */
export function operationOfAnswer(body: unknown): OperationOutcome {
  const b = body as { status?: unknown; pspReference?: unknown } | undefined;
  if (!b || typeof b !== 'object' || b.status !== 'received' || typeof b.pspReference !== 'string' || !b.pspReference)
    return { kind: 'unknown', reason: 'Adyen answered without status received and a pspReference' };
  return { kind: 'pending', reference: b.pspReference.slice(0, 100) };
}
