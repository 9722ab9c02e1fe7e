// Charts of the portal's dashboard (docs/contract.md §19), drawn on the server as inline SVG: no
// script, no image request (the CSP has `img-src 'none'`), readable without JavaScript.
// Pure functions: points in, SafeHtml out. Every chart carries a <title> and <desc>, axes
// with labelled ticks, a <title> per mark (the tooltip), and its data as a table inside
// <details> (the text alternative, WCAG 1.1.1). Numbers are the only values placed in
// geometry attributes; every label goes through the `html` template's escaping.
import { html, type SafeHtml } from '../pages/index.js';

export interface ChartPoint {
  /** The x label, e.g. a day `2026-11-24`. */
  label: string;
  /** null: no data for this x (a gap in a line, no bar). */
  value: number | null;
  /** Extra text for the mark's tooltip and the table (e.g. `3 of 4 approved`). */
  note?: string;
}

export interface ChartSpec {
  /** The <svg> element's id; the table and title ids derive from it. */
  id: string;
  title: string;
  /** One sentence saying what is drawn (the SVG's <desc>). */
  description: string;
  points: readonly ChartPoint[];
  /** How a value reads in labels, tooltips and the table. */
  format: (value: number) => string;
  /** The y axis's top; by default a round number above the largest value. */
  yMax?: number;
  /** Headers of the data table: x, value, and the note column when points carry notes. */
  columns: readonly [string, string] | readonly [string, string, string];
}

// The drawing's coordinate system (the SVG scales to its container through viewBox).
const WIDTH = 720;
const HEIGHT = 240;
const LEFT = 72;
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 36;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
/** At most this many x labels, so they never overlap (90 days → every 12th). */
const MAX_X_LABELS = 8;
const Y_TICKS = 4;

/** Rounds to 2 decimals: coordinates stay short and deterministic. */
const r2 = (n: number) => Math.round(n * 100) / 100;

/** The smallest of 1, 2, 2.5, 5 × 10^k at least `n` (n > 0): a y axis top that reads well. */
export function niceCeiling(n: number): number {
  if (!(n > 0) || !Number.isFinite(n)) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

/** Which x indexes get a label: the first, then every `step`th, at most MAX_X_LABELS. */
export function labelledIndexes(count: number, max = MAX_X_LABELS): number[] {
  if (count <= 0) return [];
  const step = Math.max(1, Math.ceil(count / max));
  const out: number[] = [];
  for (let i = 0; i < count; i += step) out.push(i);
  return out;
}

function frame(spec: ChartSpec, yMax: number, marks: SafeHtml): SafeHtml {
  const n = spec.points.length;
  const slot = n > 0 ? PLOT_W / n : PLOT_W;
  const y = (v: number) => r2(TOP + PLOT_H - (v / yMax) * PLOT_H);
  const ticks = Array.from({ length: Y_TICKS + 1 }, (_, i) => (yMax * i) / Y_TICKS);
  const titleId = `${spec.id}-title`;
  const descId = `${spec.id}-desc`;
  return html`<svg id="${spec.id}" role="img" aria-labelledby="${titleId} ${descId}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">
<title id="${titleId}">${spec.title}</title><desc id="${descId}">${spec.description}</desc>
<g class="grid" stroke="#e1e4e8" stroke-width="1">${ticks.map((t) => html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(t)}" y2="${y(t)}"></line>`)}</g>
<g class="y-axis" text-anchor="end">${ticks.map((t) => html`<text x="${LEFT - 6}" y="${r2(y(t) + 4)}">${spec.format(t)}</text>`)}</g>
<g class="x-axis" text-anchor="middle">${labelledIndexes(n).map(
    (i) => html`<text x="${r2(LEFT + slot * (i + 0.5))}" y="${HEIGHT - BOTTOM + 18}">${shortLabel(spec.points[i]?.label ?? '')}</text>`,
  )}</g>
<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + PLOT_H}" stroke="#8c959f"></line>
<line class="axis" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}" stroke="#8c959f"></line>
${marks}
</svg>`;
}

/** `2026-11-24` → `11-24` on the axis (the table and tooltips keep the full date). */
function shortLabel(label: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(label) ? label.slice(5) : label;
}

function tooltip(spec: ChartSpec, p: ChartPoint): string {
  const value = p.value === null ? 'no data' : spec.format(p.value);
  return `${p.label}: ${value}${p.note ? ` (${p.note})` : ''}`;
}

function dataTable(spec: ChartSpec): SafeHtml {
  const withNote = spec.columns.length === 3;
  return html`<details class="chart-data"><summary>${spec.title}: data table</summary>
<div class="scroll"><table id="${spec.id}-table"><caption class="visually-hidden">${spec.title}</caption>
<thead><tr><th scope="col">${spec.columns[0]}</th><th scope="col" class="num">${spec.columns[1]}</th>${withNote && html`<th scope="col">${spec.columns[2]}</th>`}</tr></thead>
<tbody>${spec.points.map(
    (p) =>
      html`<tr><th scope="row">${p.label}</th><td class="num">${p.value === null ? '—' : spec.format(p.value)}</td>${withNote && html`<td>${p.note ?? ''}</td>`}</tr>`,
  )}</tbody></table></div></details>`;
}

function yTop(spec: ChartSpec): number {
  if (spec.yMax !== undefined && spec.yMax > 0) return spec.yMax;
  let max = 0;
  for (const p of spec.points) if (p.value !== null && p.value > max) max = p.value;
  return niceCeiling(max);
}

/** One bar per point (e.g. volume per day). */
export function barChart(spec: ChartSpec): SafeHtml {
  const top = yTop(spec);
  const n = spec.points.length;
  const slot = n > 0 ? PLOT_W / n : PLOT_W;
  const barW = r2(Math.max(1, slot * 0.7));
  const bars = spec.points.map((p, i) => {
    if (p.value === null || p.value <= 0) return '';
    const h = r2((Math.min(p.value, top) / top) * PLOT_H);
    return html`<rect class="bar" x="${r2(LEFT + slot * i + (slot - barW) / 2)}" y="${r2(TOP + PLOT_H - h)}" width="${barW}" height="${h}" fill="#0b57d0"><title>${tooltip(spec, p)}</title></rect>`;
  });
  return html`<figure class="chart">${frame(spec, top, html`<g class="bars">${bars}</g>`)}${dataTable(spec)}</figure>`;
}

/** A line through the points (e.g. approval rate per day), broken where a point has no value, with a dot per point. */
export function lineChart(spec: ChartSpec): SafeHtml {
  const top = yTop(spec);
  const n = spec.points.length;
  const slot = n > 0 ? PLOT_W / n : PLOT_W;
  const at = (i: number, v: number) => ({ x: r2(LEFT + slot * (i + 0.5)), y: r2(TOP + PLOT_H - (Math.min(v, top) / top) * PLOT_H) });
  // Runs of consecutive points with values: one polyline each.
  const runs: string[] = [];
  let run: string[] = [];
  spec.points.forEach((p, i) => {
    if (p.value === null) {
      if (run.length) runs.push(run.join(' '));
      run = [];
      return;
    }
    const c = at(i, p.value);
    run.push(`${c.x},${c.y}`);
  });
  if (run.length) runs.push(run.join(' '));
  const lines = runs.map((points) => html`<polyline class="line" points="${points}" fill="none" stroke="#0b57d0" stroke-width="2"></polyline>`);
  const dots = spec.points.map((p, i) => {
    if (p.value === null) return '';
    const c = at(i, p.value);
    return html`<circle class="dot" cx="${c.x}" cy="${c.y}" r="3.5" fill="#0b57d0"><title>${tooltip(spec, p)}</title></circle>`;
  });
  return html`<figure class="chart">${frame(spec, top, html`<g class="lines">${lines}</g><g class="dots">${dots}</g>`)}${dataTable(spec)}</figure>`;
}
