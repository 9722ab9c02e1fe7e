// The origins that may show an account's pages in a frame (docs/contract.md §14: frame-ancestors
// from the origins the account registers, 'none' when it registers none). Operators manage
// them with `npx tollgate frame-origin add|remove|list`.
//
// What an origin may be (a CSP host-source, narrowed):
// - `https://host[:port]`: a DNS name (IDN becomes punycode) or an IP literal; no path,
//   query, fragment or credentials; the default port is dropped.
// - `https://*.example.com[:port]`: the one wildcard CSP allows, a leading label, with at
//   least two labels after it (never `*.com`, `*`, or a wildcard port), and never over a
//   public suffix (`*.co.uk`, `*.github.io`): the Public Suffix List, ICANN and private
//   sections, through tldts (issue 29). Such a wildcard would let every site registered
//   under the suffix frame the card form. A row stored before that rule is ignored when a
//   page is framed (`isFrameAncestor`) and can still be removed.
// - `http://` only for loopback (localhost, *.localhost, 127.0.0.0/8, [::1]): a shopper's
//   card form must not sit inside a page anyone on the path could rewrite.
import { getPublicSuffix } from 'tldts';
import type { Store } from '../db/store.js';

/** Bounds (docs/style.md §9): the header stays small. */
export const MAX_FRAME_ORIGINS = 20;
const MAX_ORIGIN_CHARS = 255;

const SHAPE = /^(https?):\/\/([^/?#@\s]+)\/?$/i;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isIp(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[');
}

/** The public suffix a wildcard origin (`https://*.co.uk`) covers, or null when it covers none or is no wildcard. */
export function publicSuffixUnderWildcard(origin: string): string | null {
  const m = /^https?:\/\/\*\.([^/:[\]]+)(:\d{1,5})?$/.exec(origin);
  if (!m) return null;
  const base = m[1] as string;
  // allowPrivateDomains: github.io, herokuapp.com and the like are suffixes too (anyone may register under them).
  return getPublicSuffix(base, { allowPrivateDomains: true }) === base ? base : null;
}

/** A stored origin that goes into `frame-ancestors`: well-formed, and no wildcard over a public suffix (a row older than the rule). */
export function isFrameAncestor(value: string): boolean {
  return isCspOrigin(value) && publicSuffixUnderWildcard(value) === null;
}

/**
 * The origin as stored and as it goes into `frame-ancestors`; throws naming the problem.
 * `existing`: the text names a registered row to remove, which may predate the public-suffix
 * rule, so that rule is not applied (the shape still is, so the row is found however spelt).
 */
export function normaliseFrameOrigin(text: string, opts: { existing?: boolean } = {}): string {
  const t = text.trim();
  const refuse = (why: string): never => {
    throw new Error(`"${text}" is not a frame origin: ${why} (e.g. https://shop.example or http://localhost:3000)`);
  };
  if (t.length === 0 || t.length > MAX_ORIGIN_CHARS) refuse(`it must be 1 to ${MAX_ORIGIN_CHARS} characters`);
  const shape = SHAPE.exec(t);
  if (!shape) refuse('give the scheme and host only, without path, query, fragment or user');
  const authority = (shape as RegExpExecArray)[2] as string;
  const wildcard = authority.startsWith('*.');
  if (authority.slice(wildcard ? 2 : 0).includes('*')) refuse('the only wildcard is a leading "*." label');
  let url: URL;
  try {
    // The URL parser checks the host and port and lower-cases and punycodes the name.
    url = new URL(`${(shape as RegExpExecArray)[1]}://${wildcard ? `wildcard.${authority.slice(2)}` : authority}`);
  } catch {
    return refuse('the host or port is not valid');
  }
  const host = url.hostname;
  // With a wildcard the parsed host is "wildcard.<rest>", never an IP ("*.1.2.3.4" fails to parse).
  if (!isIp(host)) {
    const labels = host.split('.');
    if (!labels.every((l) => LABEL.test(l))) refuse('the host is not a valid name');
    if (wildcard && labels.length < 3) refuse('a wildcard needs at least two labels after it (*.shop.example)');
  }
  if (url.protocol === 'http:' && !isLoopback(host)) refuse('http is allowed for localhost only; use https');
  const origin = wildcard ? url.origin.replace('://wildcard.', '://*.') : url.origin;
  const suffix = opts.existing ? null : publicSuffixUnderWildcard(origin);
  if (suffix)
    refuse(
      `a wildcard may not cover a public suffix: ${suffix} is on the Public Suffix List, so *.${suffix} would let every site registered under it frame the page; name your own domain (*.yourshop.${suffix})`,
    );
  return origin;
}

/** A stored value fit for the CSP header (a malformed row never reaches a browser). */
export function isCspOrigin(value: string): boolean {
  return /^https?:\/\/(\*\.)?([a-z0-9-]+\.)*[a-z0-9-]+(:\d{1,5})?$/.test(value) || /^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/.test(value);
}

const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ACCOUNTS = 10_000;

/** An account's frame origins, read on every page and cached briefly (like credentials). */
export class FrameOrigins {
  private cache = new Map<string, { at: number; origins: string[] }>();

  constructor(private readonly store: Store) {}

  /** The origins allowed to frame the account's pages (empty: none may). */
  async list(account_id: string): Promise<string[]> {
    const now = Date.now();
    const hit = this.cache.get(account_id);
    if (hit && now - hit.at < CACHE_TTL_MS) return hit.origins;
    const rows = await this.store.db.selectFrom('account_frame_origins').select('origin').where('account_id', '=', account_id).orderBy('origin').execute();
    const origins = rows.map((r) => r.origin);
    if (this.cache.size >= CACHE_MAX_ACCOUNTS) this.cache.clear();
    this.cache.set(account_id, { at: now, origins });
    return origins;
  }

  /** Registers an origin (idempotent); returns it normalised. */
  async add(account_id: string, text: string, now_ms = Date.now()): Promise<string> {
    const origin = normaliseFrameOrigin(text);
    await this.requireAccount(account_id);
    await this.store.transaction(async (tx) => {
      const rows = await tx.selectFrom('account_frame_origins').select('origin').where('account_id', '=', account_id).execute();
      if (rows.some((r) => r.origin === origin)) return;
      if (rows.length >= MAX_FRAME_ORIGINS) throw new Error(`account ${account_id} already has ${MAX_FRAME_ORIGINS} frame origins; remove one first`);
      await tx
        .insertInto('account_frame_origins')
        .values({ account_id, origin, created_at: now_ms })
        .onConflict((oc) => oc.columns(['account_id', 'origin']).doNothing())
        .execute();
    });
    this.cache.delete(account_id);
    return origin;
  }

  /** Unregisters an origin; false when it was not registered. A row the rules now refuse (`*.co.uk`) is removed too. */
  async remove(account_id: string, text: string): Promise<boolean> {
    const origin = normaliseFrameOrigin(text, { existing: true });
    await this.requireAccount(account_id);
    const n = await this.store.transaction(async (tx) => {
      const r = await tx.deleteFrom('account_frame_origins').where('account_id', '=', account_id).where('origin', '=', origin).executeTakeFirst();
      return Number(r.numDeletedRows);
    });
    this.cache.delete(account_id);
    return n > 0;
  }

  /** Forgets cached lists (another process changed them and this one should not wait out the TTL). */
  invalidate(): void {
    this.cache.clear();
  }

  private async requireAccount(account_id: string): Promise<void> {
    const found = await this.store.db.selectFrom('accounts').select('account_id').where('account_id', '=', account_id).executeTakeFirst();
    if (!found) throw new Error(`account ${account_id} does not exist`);
  }
}

const perStore = new WeakMap<Store, FrameOrigins>();

/** The one FrameOrigins of a store, so every route shares its cache and sees its own changes. */
export function frameOriginsOf(store: Store): FrameOrigins {
  let f = perStore.get(store);
  if (!f) {
    f = new FrameOrigins(store);
    perStore.set(store, f);
  }
  return f;
}
