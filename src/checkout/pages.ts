// The hosted checkout's pages (docs/contract.md §14) on the shared page layer: the loading page
// that forwards the shopper's browser to the session, the payment page (card form and the
// enabled alternative methods in ranked order, cancel), and the result. Escaped by
// construction; every form works without JavaScript; the only scripts are fixed literals.
import type { ApmMethod } from '../methods/catalogue.js';
import type { MessageKey } from '../pages/i18n.js';
import { attrs, field, hidden, html, type Lang, type PageContent, resultPage, type SafeHtml, t, trustedLiteral } from '../pages/index.js';
import { IDEAL_TEST_BANKS } from '../processors/sandbox/apm.js';

// ---------- the loading page ----------

/** The spec's fixed hidden inputs of the loading page's form (interface.md "Create a redirect payment"). */
export interface LoadingInputs {
  gbc_id: string;
  connector_code: string;
  account_name: string;
  webSite: string;
  pm_id: string;
  apm_type: string;
  descriptor: string;
  orderprefix: string;
  rrtimezone: string;
  ordernumlength: string;
  sendbgoods: string;
  replacename: string;
  send_bank_website: string;
  replace_up_id: string;
  replace_match_address: string;
  to_pass_page: string;
}

/** Appends the request fields, their aliases, source_request_ip, source_notify_url and allParams, then submits. */
const FORWARD = trustedLiteral`(function () {
  var data = JSON.parse(document.getElementById('page-data').textContent);
  var form = document.getElementById('checkout');
  data.fields.forEach(function (pair) {
    var input = document.createElement('input');
    input.type = 'hidden';
    input.name = pair[0];
    input.value = pair[1];
    form.appendChild(input);
  });
  form.submit();
})();`;

export function loadingPage(lang: Lang, v: { session_id: string; fixed: LoadingInputs; signInfo: string; fields: Array<[string, string]> }): PageContent {
  const fixed = Object.entries(v.fixed).map(([name, value]) => hidden(name, value));
  return {
    lang,
    title: 'Loading…', // the title the spec gives this page, in every language
    body: html`<h1>${t(lang, 'loading.text')}</h1>
<form id="checkout" method="post" action="/v1/checkout/${v.session_id}">
${fixed}
${hidden('signInfo', v.signInfo)}
<noscript><p class="actions"><button type="submit" id="continue" class="primary">${t(lang, 'loading.continue')}</button></p></noscript>
</form>`,
    script: FORWARD,
    data: { fields: v.fields },
  };
}

// ---------- the payment page ----------

export type FormErrors = Readonly<Record<string, MessageKey>>;

/** What the payment page shows; `errors` and `values` re-show the form the shopper sent. */
export interface PayView {
  session_id: string;
  form_token: string;
  merchant_name: string;
  /** "120.50 BRL" */
  amount: string;
  order_no: string;
  test_mode: boolean;
  /** `card` and the alternative methods, best first (docs/contract.md §8). */
  methods: ReadonlyArray<{ kind: 'card' } | { kind: 'apm'; method: ApmMethod }>;
  /** The form the errors belong to: `card` or a payment_method. */
  failed?: string;
  errors?: FormErrors;
  values?: Readonly<Record<string, string>>;
}

const fieldName = (path: string) => path.replace(/\.(\w+)/g, '[$1]'); // person.email → person[email]

function cardSection(lang: Lang, v: PayView): SafeHtml {
  const e = v.failed === 'card' ? (v.errors ?? {}) : {};
  const val = v.failed === 'card' ? (v.values ?? {}) : {};
  const err = (k: string) => (e[k] ? t(lang, e[k] as MessageKey) : undefined);
  return html`<section id="method-card">
<h2>${t(lang, 'common.card')}</h2>
<form method="post" action="/pay/${v.session_id}" id="card-form">
${hidden('form_token', v.form_token)}
${field({ name: 'card_number', label: t(lang, 'checkout.card.number'), autocomplete: 'cc-number', inputmode: 'numeric', required: true, maxlength: 23, error: err('card_number') })}
${field({ name: 'expiry_month', label: t(lang, 'checkout.card.expiry_month'), autocomplete: 'cc-exp-month', inputmode: 'numeric', required: true, maxlength: 2, value: val.expiry_month, error: err('expiry_month') })}
${field({ name: 'expiry_year', label: t(lang, 'checkout.card.expiry_year'), autocomplete: 'cc-exp-year', inputmode: 'numeric', required: true, maxlength: 4, value: val.expiry_year, error: err('expiry_year') })}
${field({ name: 'security_code', label: t(lang, 'checkout.card.security_code'), autocomplete: 'cc-csc', inputmode: 'numeric', required: true, maxlength: 4, error: err('security_code') })}
${field({ name: 'holder', label: t(lang, 'checkout.card.holder'), autocomplete: 'cc-name', maxlength: 128, value: val.holder, error: err('holder') })}
<p class="actions"><button type="submit" id="pay" class="primary">${t(lang, 'checkout.pay', { amount: v.amount })}</button></p>
</form>
</section>`;
}

function apmInput(lang: Lang, v: PayView, method: ApmMethod, path: string, rule: ApmMethod['required'][number]['rule']): SafeHtml {
  const mine = v.failed === method.payment_method;
  const name = fieldName(path);
  const error = mine && v.errors?.[path] ? t(lang, v.errors[path] as MessageKey) : undefined;
  const value = mine ? v.values?.[path] : undefined;
  const label = t(lang, `field.${path}` as MessageKey);
  if (rule.kind === 'country') return hidden(name, rule.equals); // the one country the method serves
  if (rule.kind === 'one_of') {
    const id = `f-${method.payment_method}-${path.replace(/\W/g, '-')}`;
    const banks = IDEAL_TEST_BANKS.filter((b) => rule.values.includes(b.bank_code));
    return html`<label for="${id}">${label}</label><select id="${id}" name="${name}" required>
<option value=""></option>
${banks.map((b) => (b.bank_code === value ? html`<option value="${b.bank_code}" selected>${b.name}</option>` : html`<option value="${b.bank_code}">${b.name}</option>`))}
</select>${error && html`<p class="error">${error}</p>`}`;
  }
  return field({
    name,
    id: `f-${method.payment_method}-${path.replace(/\W/g, '-')}`, // Pix and Boleto both ask for person[document_number]
    label,
    value,
    type: rule.kind === 'email' ? 'email' : 'text',
    autocomplete: rule.kind === 'email' ? 'email' : rule.kind === 'br_postal_code' ? 'postal-code' : undefined,
    required: true,
    maxlength: rule.kind === 'text' ? rule.max_length : rule.kind === 'br_state' ? 2 : 64,
    error,
  });
}

function apmSection(lang: Lang, v: PayView, method: ApmMethod): SafeHtml {
  const mine = v.failed === method.payment_method;
  const inputs = method.required.map((r) => apmInput(lang, v, method, r.path, r.rule));
  // Collapsed until chosen (native <details>, no script): the card form stays near the top on a phone.
  return html`<section id="method-${method.payment_method}">
<details ${attrs({ open: mine })}><summary id="choose-${method.payment_method}">${method.label}</summary>
<form method="post" action="/pay/${v.session_id}/apm" id="form-${method.payment_method}">
${hidden('form_token', v.form_token)}
${hidden('payment_method', method.payment_method)}
${mine && v.errors?.payment_method && html`<p class="error">${t(lang, v.errors.payment_method as MessageKey)}</p>`}
${inputs}
<p class="actions"><button type="submit" id="continue-${method.payment_method}" class="primary">${t(lang, 'checkout.apm.continue', { method: method.label })}</button></p>
</form>
</details>
</section>`;
}

export function payPage(lang: Lang, v: PayView): PageContent {
  const title = t(lang, 'checkout.title');
  const cards = v.methods.filter((m) => m.kind === 'card');
  const sections = v.methods.map((m, i) =>
    m.kind === 'card'
      ? cardSection(lang, v)
      : html`${i > 0 && cards.length > 0 && v.methods[i - 1]?.kind === 'card' && html`<h2>${t(lang, 'checkout.other_methods')}</h2>`}${apmSection(lang, v, m.method)}`,
  );
  return {
    lang,
    title,
    body: html`<h1>${t(lang, 'checkout.heading', { merchant: v.merchant_name })}</h1>
<dl>
<dt>${t(lang, 'common.amount')}</dt><dd id="amount">${v.amount}</dd>
<dt>${t(lang, 'common.order_no')}</dt><dd id="order">${v.order_no}</dd>
</dl>
${v.test_mode && html`<p class="note" id="test-mode">${t(lang, 'checkout.test_mode')}</p>`}
${v.errors && html`<p class="error" id="errors" role="alert">${t(lang, 'checkout.errors')}</p>`}
${sections}
<form method="post" action="/pay/${v.session_id}/cancel" id="cancel-form">
${hidden('form_token', v.form_token)}
<p class="actions"><button type="submit" id="cancel" class="quiet">${t(lang, 'checkout.cancel')}</button></p>
</form>`,
  };
}

// ---------- the result ----------

/**
 * Forwards to the merchant a few seconds after the result shows (the link does it without
 * JavaScript), and says so. Not when the shopper came back to the page with Back or
 * Forward: they are leaving the shop's page, not arriving at the result.
 */
const FORWARD_LATER = trustedLiteral`(function () {
  var nav = window.performance && performance.getEntriesByType ? performance.getEntriesByType('navigation')[0] : null;
  if (nav && nav.type === 'back_forward') return;
  var link = document.getElementById('return');
  var note = document.getElementById('forwarding');
  if (!link) return;
  if (note) note.hidden = false;
  setTimeout(function () {
    window.location.assign(link.href);
  }, 3000);
})();`;

export function checkoutResult(
  lang: Lang,
  r: { outcome: 'approved' | 'declined' | 'pending' | 'cancelled' | 'expired'; order_no: string; merchant_name: string; amount: string; session_id: string },
): PageContent {
  const forwarding = r.outcome !== 'pending';
  const page = resultPage(lang, {
    outcome: r.outcome,
    order_no: r.order_no,
    merchant_name: r.merchant_name,
    amount: r.amount,
    return_url: `/pay/${r.session_id}/return`,
    forwarding,
  });
  return forwarding ? { ...page, script: FORWARD_LATER } : page;
}
