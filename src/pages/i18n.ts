// The one message catalogue of the shopper-facing pages (decisions §14: at least English,
// Spanish, Portuguese, French and German) and the choice of language for a request.
// English defines the keys; the type makes every other language give every key, and a
// test checks that each translation keeps the English placeholders.

export const LANGS = ['en', 'es', 'pt', 'fr', 'de'] as const;
export type Lang = (typeof LANGS)[number];
export const DEFAULT_LANG: Lang = 'en';

const en = {
  // Shared labels
  'common.merchant': 'Merchant',
  'common.amount': 'Amount',
  'common.card': 'Card',
  'common.order_no': 'Order',
  'common.return': 'Return to the merchant',
  // Generic message pages
  'page.not_found.title': 'Not found',
  'page.not_found.text': 'This page does not exist.',
  'page.used.title': 'Already used',
  'page.used.text': 'This page has already been used.',
  'page.expired.title': 'Expired',
  'page.expired.text': 'This page has expired.',
  'page.forbidden.title': 'Not accepted',
  'page.forbidden.text': 'This form is not valid; open the page again.',
  'page.error.title': 'Something went wrong',
  'page.error.text': 'Please try again in a moment.',
  // Generic result page
  'result.approved.title': 'Payment approved',
  'result.approved.text': 'Thank you: the payment was made.',
  'result.declined.title': 'Payment declined',
  'result.declined.text': 'The payment was not made.',
  'result.pending.title': 'Payment pending',
  'result.pending.text': 'The payment is being processed; the merchant will confirm it.',
  // The sandbox issuer's 3-D Secure challenge (decisions §10)
  'threeds.title': '3-D Secure authentication',
  'threeds.heading': 'Confirm this payment',
  'threeds.note': "Sandbox issuer: this test page stands in for the card issuer's 3-D Secure check.",
  'threeds.complete': 'Complete authentication',
  'threeds.fail': 'Fail authentication',
  'threeds.not_found.text': 'This authentication page does not exist.',
  'threeds.used.text': 'This authentication page has already been used or has expired.',
  'threeds.forbidden.text': 'This form is not valid; open the authentication page again.',
  'threeds.done.title': 'Authentication complete',
  'threeds.done.text': 'Order {order_no}: you may return to the merchant.',
  'threeds.failed.title': 'Authentication failed',
  'threeds.failed.text': 'Order {order_no}: the payment was not made.',
} as const;

export type MessageKey = keyof typeof en;
type Messages = Readonly<Record<MessageKey, string>>;

const es: Messages = {
  'common.merchant': 'Comercio',
  'common.amount': 'Importe',
  'common.card': 'Tarjeta',
  'common.order_no': 'Pedido',
  'common.return': 'Volver al comercio',
  'page.not_found.title': 'No encontrado',
  'page.not_found.text': 'Esta página no existe.',
  'page.used.title': 'Ya utilizado',
  'page.used.text': 'Esta página ya se ha utilizado.',
  'page.expired.title': 'Caducado',
  'page.expired.text': 'Esta página ha caducado.',
  'page.forbidden.title': 'No aceptado',
  'page.forbidden.text': 'Este formulario no es válido; abra la página de nuevo.',
  'page.error.title': 'Algo ha salido mal',
  'page.error.text': 'Inténtelo de nuevo en un momento.',
  'result.approved.title': 'Pago aprobado',
  'result.approved.text': 'Gracias: el pago se ha realizado.',
  'result.declined.title': 'Pago rechazado',
  'result.declined.text': 'El pago no se ha realizado.',
  'result.pending.title': 'Pago pendiente',
  'result.pending.text': 'El pago se está procesando; el comercio lo confirmará.',
  'threeds.title': 'Autenticación 3-D Secure',
  'threeds.heading': 'Confirme este pago',
  'threeds.note': 'Emisor de pruebas: esta página de prueba sustituye a la verificación 3-D Secure del emisor de la tarjeta.',
  'threeds.complete': 'Completar la autenticación',
  'threeds.fail': 'Hacer fallar la autenticación',
  'threeds.not_found.text': 'Esta página de autenticación no existe.',
  'threeds.used.text': 'Esta página de autenticación ya se ha utilizado o ha caducado.',
  'threeds.forbidden.text': 'Este formulario no es válido; abra de nuevo la página de autenticación.',
  'threeds.done.title': 'Autenticación completada',
  'threeds.done.text': 'Pedido {order_no}: puede volver al comercio.',
  'threeds.failed.title': 'Autenticación fallida',
  'threeds.failed.text': 'Pedido {order_no}: el pago no se ha realizado.',
};

const pt: Messages = {
  'common.merchant': 'Loja',
  'common.amount': 'Valor',
  'common.card': 'Cartão',
  'common.order_no': 'Pedido',
  'common.return': 'Voltar para a loja',
  'page.not_found.title': 'Não encontrado',
  'page.not_found.text': 'Esta página não existe.',
  'page.used.title': 'Já utilizado',
  'page.used.text': 'Esta página já foi utilizada.',
  'page.expired.title': 'Expirado',
  'page.expired.text': 'Esta página expirou.',
  'page.forbidden.title': 'Não aceito',
  'page.forbidden.text': 'Este formulário não é válido; abra a página novamente.',
  'page.error.title': 'Algo deu errado',
  'page.error.text': 'Tente novamente em instantes.',
  'result.approved.title': 'Pagamento aprovado',
  'result.approved.text': 'Obrigado: o pagamento foi realizado.',
  'result.declined.title': 'Pagamento recusado',
  'result.declined.text': 'O pagamento não foi realizado.',
  'result.pending.title': 'Pagamento pendente',
  'result.pending.text': 'O pagamento está sendo processado; a loja vai confirmá-lo.',
  'threeds.title': 'Autenticação 3-D Secure',
  'threeds.heading': 'Confirme este pagamento',
  'threeds.note': 'Emissor de teste: esta página de teste substitui a verificação 3-D Secure do emissor do cartão.',
  'threeds.complete': 'Concluir a autenticação',
  'threeds.fail': 'Reprovar a autenticação',
  'threeds.not_found.text': 'Esta página de autenticação não existe.',
  'threeds.used.text': 'Esta página de autenticação já foi utilizada ou expirou.',
  'threeds.forbidden.text': 'Este formulário não é válido; abra novamente a página de autenticação.',
  'threeds.done.title': 'Autenticação concluída',
  'threeds.done.text': 'Pedido {order_no}: você pode voltar para a loja.',
  'threeds.failed.title': 'Falha na autenticação',
  'threeds.failed.text': 'Pedido {order_no}: o pagamento não foi realizado.',
};

const fr: Messages = {
  'common.merchant': 'Marchand',
  'common.amount': 'Montant',
  'common.card': 'Carte',
  'common.order_no': 'Commande',
  'common.return': 'Retour au marchand',
  'page.not_found.title': 'Introuvable',
  'page.not_found.text': 'Cette page n’existe pas.',
  'page.used.title': 'Déjà utilisé',
  'page.used.text': 'Cette page a déjà été utilisée.',
  'page.expired.title': 'Expiré',
  'page.expired.text': 'Cette page a expiré.',
  'page.forbidden.title': 'Non accepté',
  'page.forbidden.text': 'Ce formulaire n’est pas valide ; rouvrez la page.',
  'page.error.title': 'Une erreur s’est produite',
  'page.error.text': 'Veuillez réessayer dans un instant.',
  'result.approved.title': 'Paiement accepté',
  'result.approved.text': 'Merci : le paiement a été effectué.',
  'result.declined.title': 'Paiement refusé',
  'result.declined.text': 'Le paiement n’a pas été effectué.',
  'result.pending.title': 'Paiement en attente',
  'result.pending.text': 'Le paiement est en cours de traitement ; le marchand le confirmera.',
  'threeds.title': 'Authentification 3-D Secure',
  'threeds.heading': 'Confirmez ce paiement',
  'threeds.note': 'Émetteur de test : cette page de test remplace le contrôle 3-D Secure de l’émetteur de la carte.',
  'threeds.complete': 'Valider l’authentification',
  'threeds.fail': 'Faire échouer l’authentification',
  'threeds.not_found.text': 'Cette page d’authentification n’existe pas.',
  'threeds.used.text': 'Cette page d’authentification a déjà été utilisée ou a expiré.',
  'threeds.forbidden.text': 'Ce formulaire n’est pas valide ; rouvrez la page d’authentification.',
  'threeds.done.title': 'Authentification réussie',
  'threeds.done.text': 'Commande {order_no} : vous pouvez retourner chez le marchand.',
  'threeds.failed.title': 'Échec de l’authentification',
  'threeds.failed.text': 'Commande {order_no} : le paiement n’a pas été effectué.',
};

const de: Messages = {
  'common.merchant': 'Händler',
  'common.amount': 'Betrag',
  'common.card': 'Karte',
  'common.order_no': 'Bestellung',
  'common.return': 'Zurück zum Händler',
  'page.not_found.title': 'Nicht gefunden',
  'page.not_found.text': 'Diese Seite existiert nicht.',
  'page.used.title': 'Bereits verwendet',
  'page.used.text': 'Diese Seite wurde bereits verwendet.',
  'page.expired.title': 'Abgelaufen',
  'page.expired.text': 'Diese Seite ist abgelaufen.',
  'page.forbidden.title': 'Nicht akzeptiert',
  'page.forbidden.text': 'Dieses Formular ist ungültig; öffnen Sie die Seite erneut.',
  'page.error.title': 'Etwas ist schiefgelaufen',
  'page.error.text': 'Bitte versuchen Sie es gleich noch einmal.',
  'result.approved.title': 'Zahlung genehmigt',
  'result.approved.text': 'Vielen Dank: Die Zahlung wurde ausgeführt.',
  'result.declined.title': 'Zahlung abgelehnt',
  'result.declined.text': 'Die Zahlung wurde nicht ausgeführt.',
  'result.pending.title': 'Zahlung ausstehend',
  'result.pending.text': 'Die Zahlung wird bearbeitet; der Händler bestätigt sie.',
  'threeds.title': '3-D-Secure-Authentifizierung',
  'threeds.heading': 'Bestätigen Sie diese Zahlung',
  'threeds.note': 'Test-Kartenherausgeber: Diese Testseite ersetzt die 3-D-Secure-Prüfung des Kartenherausgebers.',
  'threeds.complete': 'Authentifizierung abschließen',
  'threeds.fail': 'Authentifizierung fehlschlagen lassen',
  'threeds.not_found.text': 'Diese Authentifizierungsseite existiert nicht.',
  'threeds.used.text': 'Diese Authentifizierungsseite wurde bereits verwendet oder ist abgelaufen.',
  'threeds.forbidden.text': 'Dieses Formular ist ungültig; öffnen Sie die Authentifizierungsseite erneut.',
  'threeds.done.title': 'Authentifizierung abgeschlossen',
  'threeds.done.text': 'Bestellung {order_no}: Sie können zum Händler zurückkehren.',
  'threeds.failed.title': 'Authentifizierung fehlgeschlagen',
  'threeds.failed.text': 'Bestellung {order_no}: Die Zahlung wurde nicht ausgeführt.',
};

export const CATALOGUE: Readonly<Record<Lang, Messages>> = { en, es, pt, fr, de };

/** A message in a language, its `{name}` placeholders filled (the page escapes the result). */
export function t(lang: Lang, key: MessageKey, params: Readonly<Record<string, string>> = {}): string {
  return CATALOGUE[lang][key].replace(/\{([a-z_]+)\}/g, (whole, name: string) => params[name] ?? whole);
}

const LANG_SET: ReadonlySet<string> = new Set(LANGS);
/** A language tag as merchants and browsers send it: "pt-BR", "es_ES", "FR", "zh-Hant-TW". */
const TAG = /^([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]{1,8}){0,4}$/;

/** The supported language a tag names, by its primary subtag, or null. */
export function supportedLang(tag: string | null | undefined): Lang | null {
  const primary = TAG.exec((tag ?? '').trim())?.[1]?.toLowerCase();
  return primary !== undefined && LANG_SET.has(primary) ? (primary as Lang) : null;
}

// Bounds on what is read of a client's header (style §9).
const MAX_ACCEPT_LANGUAGE_CHARS = 1024;
const MAX_ACCEPT_LANGUAGE_ENTRIES = 32;
const Q = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

/**
 * Accept-Language (RFC 9110 §12.5.4) in preference order: highest q first, header order
 * among equals; a malformed entry is skipped; `q=0` excludes a language, `*` stands for any.
 */
function acceptLanguage(header: string): Lang | null {
  const entries: Array<{ tag: string; q: number; at: number }> = [];
  const excluded = new Set<string>();
  const parts = header.slice(0, MAX_ACCEPT_LANGUAGE_CHARS).split(',').slice(0, MAX_ACCEPT_LANGUAGE_ENTRIES);
  parts.forEach((part, at) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    let q = 1;
    for (const p of params) {
      const m = Q.exec(p);
      if (!m) return; // an entry with a malformed weight is skipped whole
      q = Number(m[1]);
    }
    const tag = range === '*' ? '*' : supportedLang(range);
    if (tag === null) return;
    if (q === 0) excluded.add(tag);
    else entries.push({ tag, q, at });
  });
  entries.sort((a, b) => b.q - a.q || a.at - b.at);
  for (const e of entries) {
    if (e.tag === '*') return LANGS.find((l) => !excluded.has(l)) ?? null;
    if (!excluded.has(e.tag)) return e.tag as Lang;
  }
  return null;
}

/**
 * The page language: the first explicit tag that is supported (a payment's `default_lang`,
 * then `browser_lang`), then the browser's Accept-Language, then English.
 */
export function negotiateLang(explicit: ReadonlyArray<string | null | undefined>, acceptLanguageHeader?: string | string[]): Lang {
  for (const tag of explicit) {
    const lang = supportedLang(tag);
    if (lang) return lang;
  }
  const header = Array.isArray(acceptLanguageHeader) ? acceptLanguageHeader.join(',') : acceptLanguageHeader;
  return (header && acceptLanguage(header)) || DEFAULT_LANG;
}
