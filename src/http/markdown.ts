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
/** A link between the guides as written in the repository (`interface.md#…`), served at `/docs/<name>`. */
const GUIDE_LINK = /^([a-z0-9-]+)\.md(#[\w-]*)?$/;

/** The id GitHub gives a heading, so `file.md#anchor` links work here as they do there. */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    heading({ tokens, depth, text }: Tokens.Heading): string {
      const plain = text.replace(/`/g, '');
      return `<h${depth} id="${escapeHtml(headingId(plain))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
    link({ href, title, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      const guide = GUIDE_LINK.exec(href);
      if (guide) href = `/docs/${guide[1]}${guide[2] ?? ''}`;
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
