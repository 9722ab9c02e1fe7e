// Markdown → HTML for the pages under /docs (the merchant guides and the API description),
// rendered on the server with `marked`. Raw HTML in the source is shown as text, never
// passed through, and links keep only safe targets: the pages run under a strict CSP, but
// escaping by construction does not rely on it.
import { Marked, type Tokens } from 'marked';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}

/** http(s), mailto, same-site paths and fragments; nothing that runs (`javascript:`, `data:`). */
const SAFE_HREF = /^(https?:\/\/|mailto:|\/(?!\/)|#)/i;

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      if (!SAFE_HREF.test(href)) return inner;
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ''}>${inner}</a>`;
    },
    image({ text }: Tokens.Image): string {
      // Pages load no images from anywhere (CSP img-src); show the alternative text.
      return escapeHtml(text);
    },
  },
});

/** Renders trusted-format, untrusted-content markdown to HTML. */
export function renderMarkdown(source: string): string {
  return marked.parse(source, { async: false });
}

/** Escapes text for a markdown table cell or paragraph (so `*`, `_`, `|` read literally). */
export function markdownText(text: string): string {
  return text.replace(/[\\`*_[\]|<>]/g, (c) => `\\${c}`);
}
