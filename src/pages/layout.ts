// The one layout of every page: language, title, the fixed stylesheet under the response's
// nonce, the body, and optionally a fixed script with its JSON data. Nothing is loaded from
// anywhere (no fonts, images or scripts from other origins); the CSS is fluid, so a 390 px
// phone reads it, and the pages work without JavaScript.
import { html, jsonData, type SafeHtml, trustedLiteral } from './html.js';
import type { Lang } from './i18n.js';

export interface PageContent {
  lang: Lang;
  /** The <title>; escaped. */
  title: string;
  body: SafeHtml;
  /** A fixed script (a trustedLiteral), run under the response's nonce. Pages must work without it. */
  script?: SafeHtml;
  /** Data for the script, as JSON in `<script type="application/json" id="page-data">`. */
  data?: unknown;
  /** A page of many columns (the merchant portal): a wide main, tables, a navigation bar. */
  wide?: boolean;
}

const STYLE = trustedLiteral`*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f7f9}
main{max-width:32rem;margin:0 auto;padding:1.5rem 1rem 3rem}
h1{font-size:1.35rem;line-height:1.3;margin:.5rem 0 1rem}
p{margin:.5rem 0}
.note{color:#57606a;font-size:.9rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem;margin:1rem 0}
dt{color:#57606a}
dd{margin:0;font-weight:600;overflow-wrap:anywhere}
form{margin:1.5rem 0 0}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input:not([type=hidden]),select{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;color:inherit;background:#fff;border:1px solid #8c959f;border-radius:.4rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.5rem}
button,.button{flex:1 1 12rem;min-height:2.75rem;padding:.6rem 1rem;font:inherit;color:inherit;background:#fff;border:1px solid #8c959f;border-radius:.4rem;cursor:pointer;text-align:center;text-decoration:none}
.primary{color:#fff;background:#0b57d0;border-color:#0b57d0}
.error{color:#b3261e}
.code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.95rem;overflow-wrap:anywhere;background:#fff;padding:.5rem .75rem;border:1px solid #d0d7de;border-radius:.4rem;user-select:all}
details{margin:1rem 0;background:#fff;border:1px solid #d0d7de;border-radius:.4rem;padding:.25rem 1rem}
summary{cursor:pointer;min-height:2.75rem;display:flex;align-items:center;font-weight:600}
details form{margin-top:.5rem}
button.quiet{color:#0b57d0;background:none;border-color:transparent;text-decoration:underline}
body.wide main{max-width:76rem}
.wide header.bar{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;padding:.5rem 1rem;background:#fff;border-bottom:1px solid #d0d7de}
.wide header.bar>*{min-width:0;overflow-wrap:anywhere}
.wide header.bar nav{order:1;flex:1 1 100%;display:flex;flex-wrap:wrap;gap:.25rem 1.1rem}
.wide header.bar nav a{white-space:nowrap}
.wide header.bar a{color:#0b57d0;text-decoration:none}
.wide header.bar a[aria-current=page]{font-weight:700;text-decoration:underline}
.wide header.bar form{margin:0;display:flex;gap:.4rem;align-items:center}
.wide header.bar select,.wide header.bar button{width:auto;max-width:100%;min-height:2rem;padding:.2rem .5rem;flex:none}
.wide .mode{padding:.1rem .5rem;border-radius:.3rem;font-size:.8rem;font-weight:700}
.wide .mode-test{background:#fff3cd;color:#6b4e00}
.wide .mode-live{background:#d3f5dc;color:#0b5a24}
.wide table{border-collapse:collapse;width:100%;background:#fff;font-size:.9rem}
.wide th,.wide td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e1e4e8;vertical-align:top}
.wide td.num,.wide th.num{text-align:right;font-variant-numeric:tabular-nums}
.wide .scroll{overflow-x:auto;position:relative;max-width:100%}
.wide td.wrap{overflow-wrap:anywhere;min-width:6rem}
.wide main{overflow-wrap:break-word}
.wide fieldset{min-width:0}
@media (max-width:44rem){.wide table.stack,.wide .stack tbody,.wide .stack tr,.wide .stack td{display:block;width:auto}
.wide .stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.wide .stack tr{border:1px solid #d0d7de;border-radius:.4rem;margin:.5rem 0;padding:.4rem .75rem}
.wide .stack td{display:grid;grid-template-columns:minmax(6rem,35%) 1fr;gap:.75rem;border:0;padding:.15rem 0;text-align:left;overflow-wrap:anywhere;min-width:0}
.wide .stack td::before{content:attr(data-label);color:#57606a}
.wide .stack td:empty{display:none}
.wide .stack td form.inline{margin:.25rem 0}}
.wide form.inline{display:inline-flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0}
.wide form.inline label{margin:0}
.wide form.inline input:not([type=hidden]),.wide form.inline select{width:auto;min-height:2.2rem}
.wide form.inline button{flex:none;min-height:2.2rem}
.wide .filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:.25rem 1rem;align-items:end}
.wide .filters label{margin:.5rem 0 .1rem}
.wide .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:1rem;margin:1rem 0}
.wide .card{background:#fff;border:1px solid #d0d7de;border-radius:.4rem;padding:.75rem 1rem}
.wide .notice{background:#e7f3ff;border:1px solid #9cc6f3;padding:.5rem 1rem;border-radius:.4rem}
.wide svg text{font:12px system-ui,sans-serif;fill:#57606a}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}`;

/** The whole document. `nonce` is the response's (respond.ts makes a fresh one per response). */
export function renderDocument(page: PageContent, nonce: string): string {
  const data = page.data === undefined ? '' : html`<script type="application/json" id="page-data">${jsonData(page.data)}</script>`;
  const script = page.script ? html`<script nonce="${nonce}">${page.script}</script>` : '';
  return html`<!doctype html>
<html lang="${page.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${page.title}</title><style nonce="${nonce}">${STYLE}</style></head>
${page.wide ? html`<body class="wide">` : html`<body>`}${page.wide ? page.body : html`<main>${page.body}</main>`}${data}${script}</body></html>`.toString();
}
