// HTML of the sandbox issuer's challenge page. Every value shown is HTML-escaped; the only
// style is inline under a per-response nonce, and there is no script at all, so the
// Content-Security-Policy can forbid everything else.
import { randomToken } from '../crypto/ids.js';
import { formatAmount } from '../money/currency.js';
import type { PaymentRow } from '../payments/tables.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

export interface Page {
  html: string;
  /** Goes into the Content-Security-Policy header. */
  nonce: string;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#666}dd{margin:0;font-weight:600}
form{display:flex;gap:1rem;margin-top:2rem}button{padding:.6rem 1rem;font-size:1rem;cursor:pointer}
.note{color:#666;font-size:.9rem}`;

function layout(title: string, body: string): Page {
  const nonce = randomToken(16);
  return {
    nonce,
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head><body><main>${body}</main></body></html>`,
  };
}

export function challengePage(input: { id: string; form_token: string; merchant_name: string; payment: PaymentRow }): Page {
  const p = input.payment;
  return layout(
    '3-D Secure authentication',
    `<h1>Confirm this payment</h1>
<p class="note">Sandbox issuer: this test page stands in for the card issuer's 3-D Secure check.</p>
<dl>
<dt>Merchant</dt><dd id="merchant">${esc(input.merchant_name)}</dd>
<dt>Amount</dt><dd id="amount">${esc(formatAmount(p.amount_minor, p.currency))} ${esc(p.currency)}</dd>
<dt>Card</dt><dd id="card">${esc(p.card_masked)}</dd>
</dl>
<form method="post" action="/threeds/${esc(input.id)}">
<input type="hidden" name="form_token" value="${esc(input.form_token)}">
<button type="submit" name="outcome" value="complete" id="complete">Complete authentication</button>
<button type="submit" name="outcome" value="fail" id="fail">Fail authentication</button>
</form>`,
  );
}

export function messagePage(title: string, text: string): Page {
  return layout(title, `<h1>${esc(title)}</h1><p id="message">${esc(text)}</p>`);
}

export function resultPage(p: PaymentRow): Page {
  const ok = p.status !== 'declined' && p.status !== 'expired' && p.status !== 'cancelled';
  return messagePage(
    ok ? 'Authentication complete' : 'Authentication failed',
    `Order ${p.order_no}: ${ok ? 'you may return to the merchant.' : 'the payment was not made.'}`,
  );
}
