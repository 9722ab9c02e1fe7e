// A merchant's written evidence as a PDF (issue 34 item 3): Adyen's Disputes API takes defence
// documents only (PDF, JPEG, TIFF), so the text fields of a dispute's evidence go to it as one
// document of plain pages. The smallest PDF that says it: Helvetica (one of the 14 standard
// fonts every reader has, nothing embedded), WinAnsi text, lines wrapped at 95 characters, 60
// lines a page. Written here rather than with a PDF library: a few lines of PDF 1.4's text
// operators, no fonts or images to embed (docs/decisions/0092-evidence-pdf.md).

const LINE_CHARS = 95;
const LINES_PER_PAGE = 60;

/** `text` wrapped at LINE_CHARS (at a space where there is one), its line breaks kept. */
export function wrapLines(text: string): string[] {
  const out: string[] = [];
  for (const para of text.replace(/\r\n?/g, '\n').split('\n')) {
    let rest = para.replace(/\t/g, '    ');
    while (rest.length > LINE_CHARS) {
      const cut = rest.lastIndexOf(' ', LINE_CHARS);
      const at = cut > LINE_CHARS / 2 ? cut : LINE_CHARS;
      out.push(rest.slice(0, at));
      rest = rest.slice(at).replace(/^ /, '');
    }
    out.push(rest);
  }
  return out;
}

/** A PDF string literal of `line` in WinAnsi: Latin-1 kept, anything else `?`, the delimiters escaped. */
function literal(line: string): string {
  const latin = [...line].map((c) => (c.charCodeAt(0) < 256 && c.charCodeAt(0) >= 32 ? c : '?')).join('');
  return `(${latin.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** A PDF of `sections` (a heading and its text each), A4 pages. */
export function textPdf(sections: ReadonlyArray<{ heading: string; text: string }>): Buffer {
  const lines = sections.flatMap((s, i) => [...(i > 0 ? [''] : []), s.heading, ...wrapLines(s.text)]);
  const pages: string[][] = [];
  for (let i = 0; i < Math.max(lines.length, 1); i += LINES_PER_PAGE) pages.push(lines.slice(i, i + LINES_PER_PAGE));
  // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content stream per page.
  const objects: string[] = [];
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  pages.forEach((page, i) => {
    const ops = page.map((l) => `${literal(l)} Tj T*`).join('\n');
    const stream = `BT /F1 10 Tf 12 TL 50 800 Td\n${ops}\nET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
  });
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
