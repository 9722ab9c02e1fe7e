// The sandbox issuer's pages for alternative methods (docs/contract.md §15), on the shared page
// layer: approve/decline (Pix, iDEAL) or a Boleto slip with a "pay" control. No script.
import { createHash } from 'node:crypto';
import type { PaymentRow } from '../db/tables/payments.js';
import type { ApmMethod } from '../methods/catalogue.js';
import { formatMoney, hidden, html, type Lang, messagePage, type PageContent, resultPage, t } from '../pages/index.js';
import { IDEAL_TEST_BANKS } from '../processors/sandbox/apm.js';

/** Digits derived from the payment: the same slip every time the page is shown. */
function digitsOf(seed: string, n: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  let out = '';
  for (let i = 0; out.length < n; i++) out += (Number.parseInt(hex[i % hex.length] as string, 16) % 10).toString();
  return out;
}

/**
 * A Boleto "linha digitável" as the sandbox prints it: 47 digits in the usual groups, bank
 * 237, currency 9, the amount in the last ten digits. A test slip: no bank will take it.
 */
export function sandboxDigitableLine(p: Pick<PaymentRow, 'transaction_id' | 'amount_minor'>): string {
  const d = digitsOf(p.transaction_id, 33);
  const amount = String(p.amount_minor).padStart(10, '0').slice(-10);
  return `2379${d.slice(0, 1)}.${d.slice(1, 6)} ${d.slice(6, 11)}.${d.slice(11, 17)} ${d.slice(17, 22)}.${d.slice(22, 28)} ${d.slice(28, 29)} ${d.slice(29, 33)}${amount}`;
}

/** A Pix "copia e cola" code for the sandbox: clearly a test code, unique per payment. */
export function sandboxPixCode(p: Pick<PaymentRow, 'transaction_id'>): string {
  return `00020101021226SANDBOX.PIX.${digitsOf(p.transaction_id, 25)}5204000053039865802BR6304TEST`;
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export interface IssuerView {
  id: string;
  form_token: string;
  merchant_name: string;
  method: ApmMethod;
  payment: PaymentRow;
  bank_code: string;
}

export function issuerPage(lang: Lang, v: IssuerView): PageContent {
  const p = v.payment;
  const bank = IDEAL_TEST_BANKS.find((b) => b.bank_code === v.bank_code);
  const title = t(lang, 'issuer.title', { method: v.method.label });
  const slip = v.method.flow === 'slip';
  return {
    lang,
    title,
    body: html`<h1>${title}</h1>
<p class="note">${t(lang, 'issuer.note')}</p>
<dl>
<dt>${t(lang, 'common.merchant')}</dt><dd id="merchant">${v.merchant_name}</dd>
<dt>${t(lang, 'common.amount')}</dt><dd id="amount">${formatMoney(lang, p.amount_minor, p.currency)}</dd>
<dt>${t(lang, 'common.order_no')}</dt><dd id="order">${p.order_no}</dd>
${bank && html`<dt>${t(lang, 'issuer.bank')}</dt><dd id="bank">${bank.name}</dd>`}
</dl>
${v.method.payment_method === 'pix' && html`<p><strong>${t(lang, 'issuer.pix.code')}</strong></p><p class="code" id="pix-code">${sandboxPixCode(p)}</p>`}
${
  slip &&
  html`<h2>${t(lang, 'issuer.slip.heading')}</h2>
<p>${t(lang, 'issuer.slip.text')}</p>
<p><strong>${t(lang, 'issuer.slip.line')}</strong></p><p class="code" id="digitable-line">${sandboxDigitableLine(p)}</p>
<dl>
<dt>${t(lang, 'issuer.slip.due')}</dt><dd id="due-date">${p.expires_at === null ? '' : isoDay(Number(p.expires_at))}</dd>
</dl>`
}
<form method="post" action="/issuer/${v.id}">
${hidden('form_token', v.form_token)}
<div class="actions">
${
  slip
    ? html`<button type="submit" name="outcome" value="approve" id="approve" class="primary">${t(lang, 'issuer.slip.pay')}</button>`
    : html`<button type="submit" name="outcome" value="approve" id="approve" class="primary">${t(lang, 'issuer.approve')}</button>
<button type="submit" name="outcome" value="decline" id="decline">${t(lang, 'issuer.decline')}</button>`
}
</div>
</form>`,
  };
}

/** Why the issuer page cannot be shown. */
export function issuerRefusal(lang: Lang, kind: 'not_found' | 'used' | 'forbidden'): PageContent {
  return messagePage(lang, t(lang, `page.${kind}.title`), t(lang, `issuer.${kind}.text`));
}

/** The end of an issuer page for a payment without return_url. */
export function issuerResult(lang: Lang, p: PaymentRow, merchant_name: string): PageContent {
  const outcome =
    p.status === 'captured' || p.status === 'authorised'
      ? 'approved'
      : p.status === 'expired'
        ? 'expired'
        : p.status === 'cancelled'
          ? 'cancelled'
          : p.status === 'pending'
            ? 'pending'
            : 'declined';
  return resultPage(lang, { outcome, order_no: p.order_no, merchant_name, amount: formatMoney(lang, p.amount_minor, p.currency) });
}
