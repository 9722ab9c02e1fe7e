// The one way a page is answered (docs/contract.md §14): a fresh nonce per response, the document
// rendered with it, and the same headers on every page. The Content-Security-Policy allows
// nothing but the page's own nonce'd style (and script, when it has one), its form targets,
// and the frame ancestors the account registered.
import type { FastifyReply } from 'fastify';
import { newId } from '../crypto/ids.js';
import { isCspOrigin, isFrameAncestor } from './frame-origins.js';
import { type PageContent, renderDocument } from './layout.js';

export interface PageResponse extends PageContent {
  /** HTTP status; 200 unless given. */
  status?: number;
  /**
   * Origins that may frame the page: the account's registered frame origins
   * (`frameOriginsOf(store).list(account_id)`); empty means no one may.
   */
  frameAncestors: readonly string[];
  /**
   * Origins besides 'self' that the page's forms post to, or that a form's answer redirects
   * to: `form-action` also governs the redirects after a submit (the 3-D Secure page's 303
   * to return_url needs that origin).
   */
  formTargets?: readonly string[];
  /** Allows `img-src 'self' data:` (a page that shows an image, e.g. a barcode). */
  images?: boolean;
}

/** The header for a response; `script` adds script-src for the nonce. */
export function contentSecurityPolicy(o: {
  nonce: string;
  script: boolean;
  images: boolean;
  formTargets: readonly string[];
  frameAncestors: readonly string[];
}): string {
  const targets = o.formTargets.filter(isCspOrigin);
  const ancestors = o.frameAncestors.filter(isFrameAncestor);
  return [
    "default-src 'none'",
    `style-src 'nonce-${o.nonce}'`,
    ...(o.script ? [`script-src 'nonce-${o.nonce}'`] : []),
    o.images ? "img-src 'self' data:" : "img-src 'none'",
    `form-action ${["'self'", ...targets].join(' ')}`,
    `frame-ancestors ${ancestors.length ? ancestors.join(' ') : "'none'"}`,
    "base-uri 'none'",
  ].join('; ');
}

/** Sends a page with the headers every page gets. */
export function sendPage(reply: FastifyReply, page: PageResponse): FastifyReply {
  const nonce = newId('page_nonce'); // 128 bits, fresh for every response
  const body = renderDocument(page, nonce);
  const csp = contentSecurityPolicy({
    nonce,
    script: page.script !== undefined,
    images: page.images === true,
    formTargets: page.formTargets ?? [],
    frameAncestors: page.frameAncestors,
  });
  reply.code(page.status ?? 200).header('content-security-policy', csp);
  // X-Frame-Options cannot name a list of origins; browsers that know frame-ancestors use it
  // instead, so it is sent only when no one may frame the page.
  if (!page.frameAncestors.some(isFrameAncestor)) reply.header('x-frame-options', 'DENY');
  return securityHeaders(reply).type('text/html; charset=utf-8').send(body);
}

/** A 303 See Other (after a form POST), with the page headers that apply to a redirect. */
export function sendRedirect(reply: FastifyReply, location: string): FastifyReply {
  return securityHeaders(reply.code(303).header('location', location)).send();
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply.header('referrer-policy', 'no-referrer').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
}
