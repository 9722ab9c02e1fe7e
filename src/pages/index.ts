// The shared page layer (issue 10): everything a shopper- or merchant-facing page needs.
// docs/ARCHITECTURE.md ("Pages") says how to add a page or a language.
export { type Link, messagePage, type PaymentResult, resultPage, type StandardMessage, standardMessage } from './common.js';
export { type Field, field } from './forms.js';
export { FrameOrigins, frameOriginsOf, MAX_FRAME_ORIGINS, normaliseFrameOrigin, publicSuffixUnderWildcard } from './frame-origins.js';
export { Attrs, attrs, escapeHtml, hidden, html, type Interpolation, jsonData, SafeHtml, safeUrl, trustedLiteral } from './html.js';
export { CATALOGUE, DEFAULT_LANG, formatMoney, LANGS, type Lang, type MessageKey, negotiateLang, supportedLang, t } from './i18n.js';
export type { PageContent } from './layout.js';
export { contentSecurityPolicy, type PageResponse, sendPage, sendRedirect } from './respond.js';
