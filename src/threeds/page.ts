// The sandbox issuer's challenge page and its end pages, on the shared page layer
// (src/pages): escaped by construction, in the shopper's language, no script at all; and the
// page that forwards the shopper to a processor's own challenge by POST (a script submits
// its form; without scripts the shopper presses the button).

import type { PaymentRow } from '../db/tables/payments.js';
import { formatMoney, hidden, html, type Lang, messagePage, type PageContent, t, trustedLiteral } from '../pages/index.js';
import type { ShopperAction } from '../processors/types.js';

export function challengePage(lang: Lang, input: { id: string; form_token: string; merchant_name: string; payment: PaymentRow }): PageContent {
  const p = input.payment;
  return {
    lang,
    title: t(lang, 'threeds.title'),
    body: html`<h1>${t(lang, 'threeds.heading')}</h1>
<p class="note">${t(lang, 'threeds.note')}</p>
<dl>
<dt>${t(lang, 'common.merchant')}</dt><dd id="merchant">${input.merchant_name}</dd>
<dt>${t(lang, 'common.amount')}</dt><dd id="amount">${formatMoney(lang, p.amount_minor, p.currency)}</dd>
<dt>${t(lang, 'common.card')}</dt><dd id="card">${p.card_masked}</dd>
</dl>
<form method="post" action="/threeds/${input.id}">
${hidden('form_token', input.form_token)}
<div class="actions">
<button type="submit" name="outcome" value="complete" id="complete" class="primary">${t(lang, 'threeds.complete')}</button>
<button type="submit" name="outcome" value="fail" id="fail">${t(lang, 'threeds.fail')}</button>
</div>
</form>`,
  };
}

/** Why the challenge page cannot be shown. */
export function refusalPage(lang: Lang, kind: 'not_found' | 'used' | 'forbidden'): PageContent {
  return messagePage(lang, t(lang, `page.${kind}.title`), t(lang, `threeds.${kind}.text`));
}

/** The end of a challenge for a payment without return_url. */
export function resultPage(lang: Lang, p: PaymentRow): PageContent {
  const ok = p.status !== 'declined' && p.status !== 'expired' && p.status !== 'cancelled';
  const end = ok ? 'done' : 'failed';
  return messagePage(lang, t(lang, `threeds.${end}.title`), t(lang, `threeds.${end}.text`, { order_no: p.order_no }));
}

const SUBMIT = trustedLiteral`document.getElementById('forward').submit();`;

/** To a processor's own challenge that is entered by POST (`action.data` as the form's fields). */
export function forwardPage(lang: Lang, action: ShopperAction): PageContent {
  return {
    lang,
    title: t(lang, 'threeds.title'),
    body: html`<h1>${t(lang, 'threeds.heading')}</h1>
<p id="message">${t(lang, 'threeds.forward.text')}</p>
<form method="post" action="${action.url}" id="forward">
${Object.entries(action.data).map(([k, v]) => hidden(k, v))}
<div class="actions"><button type="submit" class="primary" id="continue">${t(lang, 'threeds.forward.button')}</button></div>
</form>`,
    script: SUBMIT,
  };
}
