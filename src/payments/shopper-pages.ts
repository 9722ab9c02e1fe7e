// What every shopper page route shares (3-D Secure challenge, issuer pages, hosted
// checkout): the payment's language, the origin a form's redirect goes to, and the OpenAPI
// pieces of an HTML answer. The pages themselves go out through src/pages.
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type Lang, negotiateLang } from '../pages/index.js';

/** The payment's own language (default_lang, then browser_lang) before the browser's; English last. */
export function paymentLang(request: FastifyRequest, details: string | null | undefined): Lang {
  let d: Record<string, unknown> = {};
  try {
    d = details ? (JSON.parse(details) as Record<string, unknown>) : {};
  } catch {
    // unreadable details: the browser's language decides
  }
  const tag = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return negotiateLang([tag(d.default_lang), tag(d.browser_lang)], request.headers['accept-language']);
}

/** Origin of a merchant URL (return_url, cancel_url): a form's 303 goes there, and form-action covers redirects. */
export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : '';
  } catch {
    return '';
  }
}

const Html = { 'text/html': { schema: Type.String({ description: 'an HTML page' }) } };

/** An HTML answer in the OpenAPI document. */
export const htmlPage = (description: string) => ({ description, content: Html });

/** A 303 of a shopper page in the OpenAPI document. */
export const seeOther = (description: string, location: string) => ({
  type: 'null' as const,
  description,
  headers: { location: Type.String({ description: location }) },
});

/** Shopper pages carry no signature: an unguessable id (and a form token) are the credentials. */
export const SHOPPER_PAGE = { tags: ['shopper pages'], security: [] };
