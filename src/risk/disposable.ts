// Disposable e-mail domains from the `disposable-email-domains` package (MIT, ~120k
// domains, no dependencies), loaded once into a Set. A subdomain of a listed domain counts.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let domains: Set<string> | null = null;

function load(): Set<string> {
  domains ??= new Set(require('disposable-email-domains') as string[]);
  return domains;
}

export function isDisposableEmail(email: string): boolean {
  const at = email.lastIndexOf('@');
  if (at < 0) return false;
  const list = load();
  const parts = email
    .slice(at + 1)
    .toLowerCase()
    .split('.');
  // Bounded: a domain has at most a handful of labels worth checking.
  for (let i = 0; i < Math.min(parts.length - 1, 5); i++) {
    if (list.has(parts.slice(i).join('.'))) return true;
  }
  return false;
}
