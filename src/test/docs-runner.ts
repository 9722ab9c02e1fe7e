// A page of docs/ run exactly as written (docs/quickstart.md, docs/platform-sdk.md): its `sh`
// blocks in one bash session (so exports carry over), `sh server port=VAR` blocks in the
// background until the port in $VAR answers, `sh requires=CMD` blocks only where CMD exists,
// `js file=NAME` blocks saved as NAME, in a folder laid out like the Tollgate checkout.

export interface Block {
  lang: string;
  attrs: Record<string, string>;
  text: string;
}

/** Fenced blocks with their info string: ```sh server port=PORT → lang sh, attrs {server, port}. */
export function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const re = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) {
    const [lang = '', ...words] = (m[1] as string).trim().split(/\s+/);
    const attrs: Record<string, string> = {};
    for (const w of words) {
      const [k, v] = w.split('=');
      attrs[k as string] = v ?? 'true';
    }
    blocks.push({ lang, attrs, text: m[2] as string });
  }
  return blocks;
}

/** The bash script that does what a reader does with the page. */
export function scriptOf(blocks: Block[]): string {
  const lines = ['set -euo pipefail'];
  blocks.forEach((b, i) => {
    if (b.attrs.file) {
      lines.push(`cat > ${b.attrs.file} <<'QUICKSTART_FILE_END'`, b.text.replace(/\n$/, ''), 'QUICKSTART_FILE_END');
    } else if (b.lang === 'sh' && b.attrs.server) {
      const port = b.attrs.port;
      lines.push(`{\n${b.text}\n} > server-${i}.log 2>&1 &`);
      lines.push(`for _ in $(seq 1 1200); do (exec 3<>/dev/tcp/127.0.0.1/\${${port}}) 2>/dev/null && break; sleep 0.1; done`);
      lines.push(`(exec 3<>/dev/tcp/127.0.0.1/\${${port}}) 2>/dev/null || { echo "block ${i} never listened on $${port}"; cat server-${i}.log; exit 1; }`);
    } else if (b.lang === 'sh' && b.attrs.requires) {
      lines.push(`if command -v ${b.attrs.requires} >/dev/null; then\n${b.text}\nelse echo "QUICKSTART-SKIPPED ${b.attrs.requires}"; fi`);
    } else if (b.lang === 'sh') {
      lines.push(b.text);
    }
  });
  return `${lines.join('\n')}\n`;
}

/** What a page's folder links to from the checkout. */
export const LINKED = ['package.json', 'package-lock.json', 'node_modules', 'dist', 'bin', 'src', 'scripts', 'tsconfig.json', 'tsconfig.build.json'];
