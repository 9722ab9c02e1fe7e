// The TOTP enrolment's QR code (issue 36 item 4; docs/contract.md §19): drawn on the server as
// inline SVG, no script and nothing loaded. The `qrcode` library encodes the otpauth:// URI
// (error correction M); the SVG is written here through `html`, so the only values in it are
// numbers and a path of M/h/v commands, escaped like any other attribute.
import QRCode from 'qrcode';
import { html, type SafeHtml } from '../pages/index.js';

/** The quiet zone around the code, in modules (ISO/IEC 18004 asks for four). */
const QUIET = 4;

/** The dark modules as one SVG path: each run of dark modules in a row is one rectangle. */
export function qrPath(text: string): { size: number; d: string } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const n = modules.size;
  const parts: string[] = [];
  for (let y = 0; y < n; y++) {
    let x = 0;
    while (x < n) {
      if (!modules.get(y, x)) {
        x++;
        continue;
      }
      const start = x;
      while (x < n && modules.get(y, x)) x++;
      parts.push(`M${start + QUIET} ${y + QUIET}h${x - start}v1h-${x - start}z`);
    }
  }
  return { size: n + 2 * QUIET, d: parts.join('') };
}

/** The QR code of `text` as an inline SVG image with `label` as its accessible name. */
export function qrSvg(text: string, label: string, id: string): SafeHtml {
  const { size, d } = qrPath(text);
  return html`<svg xmlns="http://www.w3.org/2000/svg" id="${id}" role="img" aria-label="${label}" viewBox="0 0 ${size} ${size}" width="232" height="232" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${d}"/></svg>`;
}
