// How the portal writes times, statuses and result codes (issue 36 item 4; docs/contract.md §19):
// one format for every page, `YYYY-MM-DD hh:mm` in UTC (the column heads say UTC), statuses in
// words, a result code with its text from the one catalogue (src/web/errors.ts). And `cell`, a
// table cell that carries its column's name, so a table of class `stack` reads as labelled
// cards on a phone (the layout's CSS, src/pages/layout.ts).

import { attrs, html, type Interpolation, type SafeHtml } from '../pages/index.js';
import { RESULT_CODES } from '../web/errors.js';

/** A time as `YYYY-MM-DD hh:mm` (UTC); '' for none. */
export function when(ms: number | string | null | undefined): string {
  if (ms === null || ms === undefined || ms === '') return '';
  const n = Number(ms);
  if (!Number.isFinite(n)) return '';
  return new Date(n).toISOString().slice(0, 16).replace('T', ' ');
}

/** A status as words: `partially_refunded` → `partially refunded`, `PastDue` → `past due`. */
export function statusWords(status: string): string {
  return status
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

/** A result code with its text (`1002 Card declined`); an unknown code as it is, '' for none. */
export function resultWords(code: string): string {
  if (!code) return '';
  const known = (RESULT_CODES as Record<string, { text: string } | undefined>)[code];
  return known ? `${code} ${known.text}` : code;
}

/** A `<td>` with its column's name (`data-label`, shown before the value when the table stacks). */
export function cell(label: string, content: Interpolation, cls?: string): SafeHtml {
  return html`<td ${attrs({ 'data-label': label, class: cls })}>${content}</td>`;
}
