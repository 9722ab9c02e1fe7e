// Pages every flow needs: a message (not found, already used, expired, …) and a payment
// result. Flows with their own wording pass their own translated strings to messagePage.
import { html } from './html.js';
import { type Lang, type MessageKey, t } from './i18n.js';
import type { PageContent } from './layout.js';

export interface Link {
  href: string;
  label: string;
}

/** A title and one sentence, optionally a link (e.g. back to the merchant). */
export function messagePage(lang: Lang, title: string, text: string, link?: Link): PageContent {
  return {
    lang,
    title,
    body: html`<h1>${title}</h1><p id="message">${text}</p>${link && html`<p class="actions"><a class="button primary" id="return" href="${link.href}">${link.label}</a></p>`}`,
  };
}

export type StandardMessage = 'not_found' | 'used' | 'expired' | 'forbidden' | 'error';

/** A generic message page in the shopper's language. */
export function standardMessage(lang: Lang, kind: StandardMessage): PageContent {
  return messagePage(lang, t(lang, `page.${kind}.title` as MessageKey), t(lang, `page.${kind}.text` as MessageKey));
}

export interface PaymentResult {
  outcome: 'approved' | 'declined' | 'pending' | 'cancelled' | 'expired';
  order_no: string;
  merchant_name?: string;
  /** Already formatted for display, e.g. "42.00 USD". */
  amount?: string;
  /** Where the "return to the merchant" link goes, when there is one. */
  return_url?: string;
  /** A script forwards to return_url by itself and shows the (hidden) note saying so; the link stays. */
  forwarding?: boolean;
}

/** The end of a payment as the shopper sees it. */
export function resultPage(lang: Lang, r: PaymentResult): PageContent {
  const title = t(lang, `result.${r.outcome}.title`);
  return {
    lang,
    title,
    body: html`<h1 id="outcome" data-outcome="${r.outcome}">${title}</h1>
<p id="message">${t(lang, `result.${r.outcome}.text`)}</p>
<dl>
<dt>${t(lang, 'common.order_no')}</dt><dd id="order">${r.order_no}</dd>
${r.merchant_name !== undefined && html`<dt>${t(lang, 'common.merchant')}</dt><dd id="merchant">${r.merchant_name}</dd>`}
${r.amount !== undefined && html`<dt>${t(lang, 'common.amount')}</dt><dd id="amount">${r.amount}</dd>`}
</dl>
${r.return_url && r.forwarding && html`<p class="note" id="forwarding" hidden>${t(lang, 'result.forwarding')}</p>`}
${r.return_url && html`<p class="actions"><a class="button primary" id="return" href="${r.return_url}">${t(lang, 'common.return')}</a></p>`}`,
  };
}
