// The one message catalogue of the shopper-facing pages (docs/contract.md §14: at least English,
// Spanish, Portuguese, French and German) and the choice of language for a request.
// English defines the keys; the type makes every other language give every key, and a
// test checks that each translation keeps the English placeholders.
import { currencyExponent, formatAmount } from '../money/currency.js';

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
  // The sandbox issuer's 3-D Secure challenge (docs/contract.md §10)
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
  'threeds.forward.text': 'Your card issuer checks this payment on its own page.',
  'threeds.forward.button': 'Continue',
  // More payment results
  'result.cancelled.title': 'Payment cancelled',
  'result.cancelled.text': 'The payment was cancelled; nothing was charged.',
  'result.expired.title': 'Payment expired',
  'result.expired.text': 'The time to pay has passed; nothing was charged.',
  'result.forwarding': 'You will be taken back to the merchant in a moment.',
  // The hosted checkout (docs/contract.md §14): the loading page and the payment page
  'loading.text': 'Taking you to the payment page…',
  'loading.continue': 'Continue to the payment page',
  'checkout.title': 'Payment',
  'checkout.heading': 'Pay {merchant}',
  'checkout.test_mode': 'Test mode: no real money moves. Pay with a test card such as 4242 4242 4242 4242.',
  'checkout.card.number': 'Card number',
  'checkout.card.expiry_month': 'Expiry month (MM)',
  'checkout.card.expiry_year': 'Expiry year (YYYY)',
  'checkout.card.security_code': 'Security code',
  'checkout.card.holder': 'Name on the card',
  'checkout.pay': 'Pay {amount}',
  'checkout.other_methods': 'Other ways to pay',
  'checkout.apm.continue': 'Continue with {method}',
  'checkout.cancel': 'Cancel the payment',
  'checkout.errors': 'Some fields need your attention.',
  'checkout.error.card_number': 'Enter a valid card number.',
  'checkout.error.expiry': 'Enter an expiry date that has not passed.',
  'checkout.error.security_code': 'Enter the 3 or 4 digit security code.',
  'checkout.error.holder': 'Enter the name as it is on the card.',
  'checkout.error.required': 'This field is required.',
  'checkout.error.invalid': 'Check this field.',
  'checkout.error.method': 'This payment method is not available for this payment.',
  // Fields an alternative method asks the shopper for (catalogue paths)
  'field.person.document_number': 'CPF or CNPJ',
  'field.person.email': 'E-mail address',
  'field.person.address_street': 'Street',
  'field.person.address_number': 'House number',
  'field.person.address_postal_code': 'Postal code (CEP)',
  'field.person.address_city': 'City',
  'field.person.address_state': 'State (UF)',
  'field.person.address_country': 'Country',
  'field.bank_code': 'Your bank',
  // The sandbox issuer's pages for alternative methods (docs/contract.md §15)
  'issuer.title': 'Pay with {method}',
  'issuer.note': 'Sandbox issuer: this test page stands in for the bank where the shopper confirms the payment.',
  'issuer.bank': 'Bank',
  'issuer.approve': 'Approve the payment',
  'issuer.decline': 'Decline the payment',
  'issuer.pix.code': 'Pix copy-and-paste code',
  'issuer.slip.heading': 'Payment slip',
  'issuer.slip.text': 'Pay this slip in your banking app or at a bank before the due date.',
  'issuer.slip.line': 'Digitable line',
  'issuer.slip.due': 'Due date',
  'issuer.slip.pay': 'Pay the slip',
  'issuer.not_found.text': 'This payment page does not exist.',
  'issuer.used.text': 'This payment page has already been used or has expired.',
  'issuer.forbidden.text': 'This form is not valid; open the payment page again.',
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
  'threeds.forward.text': 'El emisor de su tarjeta verifica este pago en su propia página.',
  'threeds.forward.button': 'Continuar',
  'result.cancelled.title': 'Pago cancelado',
  'result.cancelled.text': 'El pago se ha cancelado; no se ha realizado ningún cargo.',
  'result.expired.title': 'Pago caducado',
  'result.expired.text': 'El plazo para pagar ha vencido; no se ha realizado ningún cargo.',
  'result.forwarding': 'En un momento volverá al comercio.',
  'loading.text': 'Le estamos llevando a la página de pago…',
  'loading.continue': 'Continuar a la página de pago',
  'checkout.title': 'Pago',
  'checkout.heading': 'Pagar a {merchant}',
  'checkout.test_mode': 'Modo de prueba: no se mueve dinero real. Pague con una tarjeta de prueba como 4242 4242 4242 4242.',
  'checkout.card.number': 'Número de tarjeta',
  'checkout.card.expiry_month': 'Mes de caducidad (MM)',
  'checkout.card.expiry_year': 'Año de caducidad (AAAA)',
  'checkout.card.security_code': 'Código de seguridad',
  'checkout.card.holder': 'Nombre que figura en la tarjeta',
  'checkout.pay': 'Pagar {amount}',
  'checkout.other_methods': 'Otras formas de pago',
  'checkout.apm.continue': 'Continuar con {method}',
  'checkout.cancel': 'Cancelar el pago',
  'checkout.errors': 'Algunos campos requieren su atención.',
  'checkout.error.card_number': 'Introduzca un número de tarjeta válido.',
  'checkout.error.expiry': 'Introduzca una fecha de caducidad que no haya pasado.',
  'checkout.error.security_code': 'Introduzca el código de seguridad de 3 o 4 dígitos.',
  'checkout.error.holder': 'Introduzca el nombre tal como figura en la tarjeta.',
  'checkout.error.required': 'Este campo es obligatorio.',
  'checkout.error.invalid': 'Revise este campo.',
  'checkout.error.method': 'Este método de pago no está disponible para este pago.',
  'field.person.document_number': 'CPF o CNPJ',
  'field.person.email': 'Dirección de correo electrónico',
  'field.person.address_street': 'Calle',
  'field.person.address_number': 'Número',
  'field.person.address_postal_code': 'Código postal (CEP)',
  'field.person.address_city': 'Ciudad',
  'field.person.address_state': 'Estado (UF)',
  'field.person.address_country': 'País',
  'field.bank_code': 'Su banco',
  'issuer.title': 'Pagar con {method}',
  'issuer.note': 'Emisor de pruebas: esta página de prueba sustituye al banco en el que el comprador confirma el pago.',
  'issuer.bank': 'Banco',
  'issuer.approve': 'Aprobar el pago',
  'issuer.decline': 'Rechazar el pago',
  'issuer.pix.code': 'Código Pix copia y pega',
  'issuer.slip.heading': 'Boleto de pago',
  'issuer.slip.text': 'Pague este boleto en la aplicación de su banco o en una sucursal bancaria antes de la fecha de vencimiento.',
  'issuer.slip.line': 'Línea digitable',
  'issuer.slip.due': 'Fecha de vencimiento',
  'issuer.slip.pay': 'Pagar el boleto',
  'issuer.not_found.text': 'Esta página de pago no existe.',
  'issuer.used.text': 'Esta página de pago ya se ha utilizado o ha caducado.',
  'issuer.forbidden.text': 'Este formulario no es válido; abra de nuevo la página de pago.',
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
  'threeds.forward.text': 'O emissor do seu cartão verifica este pagamento na sua própria página.',
  'threeds.forward.button': 'Continuar',
  'result.cancelled.title': 'Pagamento cancelado',
  'result.cancelled.text': 'O pagamento foi cancelado; nada foi cobrado.',
  'result.expired.title': 'Pagamento expirado',
  'result.expired.text': 'O prazo para pagar terminou; nada foi cobrado.',
  'result.forwarding': 'Em instantes você voltará para a loja.',
  'loading.text': 'Levando você para a página de pagamento…',
  'loading.continue': 'Continuar para a página de pagamento',
  'checkout.title': 'Pagamento',
  'checkout.heading': 'Pagar para {merchant}',
  'checkout.test_mode': 'Modo de teste: nenhum dinheiro real é movimentado. Pague com um cartão de teste como 4242 4242 4242 4242.',
  'checkout.card.number': 'Número do cartão',
  'checkout.card.expiry_month': 'Mês de validade (MM)',
  'checkout.card.expiry_year': 'Ano de validade (AAAA)',
  'checkout.card.security_code': 'Código de segurança',
  'checkout.card.holder': 'Nome impresso no cartão',
  'checkout.pay': 'Pagar {amount}',
  'checkout.other_methods': 'Outras formas de pagamento',
  'checkout.apm.continue': 'Continuar com {method}',
  'checkout.cancel': 'Cancelar o pagamento',
  'checkout.errors': 'Alguns campos precisam da sua atenção.',
  'checkout.error.card_number': 'Informe um número de cartão válido.',
  'checkout.error.expiry': 'Informe uma data de validade que ainda não tenha passado.',
  'checkout.error.security_code': 'Informe o código de segurança de 3 ou 4 dígitos.',
  'checkout.error.holder': 'Informe o nome como está impresso no cartão.',
  'checkout.error.required': 'Este campo é obrigatório.',
  'checkout.error.invalid': 'Verifique este campo.',
  'checkout.error.method': 'Esta forma de pagamento não está disponível para este pagamento.',
  'field.person.document_number': 'CPF ou CNPJ',
  'field.person.email': 'Endereço de e-mail',
  'field.person.address_street': 'Rua',
  'field.person.address_number': 'Número',
  'field.person.address_postal_code': 'CEP',
  'field.person.address_city': 'Cidade',
  'field.person.address_state': 'Estado (UF)',
  'field.person.address_country': 'País',
  'field.bank_code': 'Seu banco',
  'issuer.title': 'Pagar com {method}',
  'issuer.note': 'Emissor de teste: esta página de teste substitui o banco onde o comprador confirma o pagamento.',
  'issuer.bank': 'Banco',
  'issuer.approve': 'Aprovar o pagamento',
  'issuer.decline': 'Recusar o pagamento',
  'issuer.pix.code': 'Código Pix copia e cola',
  'issuer.slip.heading': 'Boleto bancário',
  'issuer.slip.text': 'Pague este boleto no aplicativo do seu banco ou em uma agência bancária até a data de vencimento.',
  'issuer.slip.line': 'Linha digitável',
  'issuer.slip.due': 'Data de vencimento',
  'issuer.slip.pay': 'Pagar o boleto',
  'issuer.not_found.text': 'Esta página de pagamento não existe.',
  'issuer.used.text': 'Esta página de pagamento já foi utilizada ou expirou.',
  'issuer.forbidden.text': 'Este formulário não é válido; abra novamente a página de pagamento.',
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
  'threeds.forward.text': 'L’émetteur de votre carte vérifie ce paiement sur sa propre page.',
  'threeds.forward.button': 'Continuer',
  'result.cancelled.title': 'Paiement annulé',
  'result.cancelled.text': 'Le paiement a été annulé ; aucun montant n’a été débité.',
  'result.expired.title': 'Paiement expiré',
  'result.expired.text': 'Le délai de paiement est dépassé ; aucun montant n’a été débité.',
  'result.forwarding': 'Vous allez être redirigé vers le marchand dans un instant.',
  'loading.text': 'Redirection vers la page de paiement…',
  'loading.continue': 'Continuer vers la page de paiement',
  'checkout.title': 'Paiement',
  'checkout.heading': 'Payer {merchant}',
  'checkout.test_mode': 'Mode test : aucun argent réel n’est débité. Payez avec une carte de test comme 4242 4242 4242 4242.',
  'checkout.card.number': 'Numéro de carte',
  'checkout.card.expiry_month': 'Mois d’expiration (MM)',
  'checkout.card.expiry_year': 'Année d’expiration (AAAA)',
  'checkout.card.security_code': 'Code de sécurité',
  'checkout.card.holder': 'Nom figurant sur la carte',
  'checkout.pay': 'Payer {amount}',
  'checkout.other_methods': 'Autres moyens de paiement',
  'checkout.apm.continue': 'Continuer avec {method}',
  'checkout.cancel': 'Annuler le paiement',
  'checkout.errors': 'Certains champs nécessitent votre attention.',
  'checkout.error.card_number': 'Saisissez un numéro de carte valide.',
  'checkout.error.expiry': 'Saisissez une date d’expiration qui n’est pas dépassée.',
  'checkout.error.security_code': 'Saisissez le code de sécurité à 3 ou 4 chiffres.',
  'checkout.error.holder': 'Saisissez le nom tel qu’il figure sur la carte.',
  'checkout.error.required': 'Ce champ est obligatoire.',
  'checkout.error.invalid': 'Vérifiez ce champ.',
  'checkout.error.method': 'Ce moyen de paiement n’est pas disponible pour ce paiement.',
  'field.person.document_number': 'CPF ou CNPJ',
  'field.person.email': 'Adresse e-mail',
  'field.person.address_street': 'Rue',
  'field.person.address_number': 'Numéro',
  'field.person.address_postal_code': 'Code postal (CEP)',
  'field.person.address_city': 'Ville',
  'field.person.address_state': 'État (UF)',
  'field.person.address_country': 'Pays',
  'field.bank_code': 'Votre banque',
  'issuer.title': 'Payer avec {method}',
  'issuer.note': 'Émetteur de test : cette page de test remplace la banque auprès de laquelle l’acheteur confirme le paiement.',
  'issuer.bank': 'Banque',
  'issuer.approve': 'Accepter le paiement',
  'issuer.decline': 'Refuser le paiement',
  'issuer.pix.code': 'Code Pix copier-coller',
  'issuer.slip.heading': 'Bordereau de paiement',
  'issuer.slip.text': 'Payez ce bordereau dans votre application bancaire ou dans une banque avant la date d’échéance.',
  'issuer.slip.line': 'Ligne à saisir',
  'issuer.slip.due': 'Date d’échéance',
  'issuer.slip.pay': 'Payer le bordereau',
  'issuer.not_found.text': 'Cette page de paiement n’existe pas.',
  'issuer.used.text': 'Cette page de paiement a déjà été utilisée ou a expiré.',
  'issuer.forbidden.text': 'Ce formulaire n’est pas valide ; rouvrez la page de paiement.',
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
  'threeds.forward.text': 'Ihr Kartenherausgeber prüft diese Zahlung auf seiner eigenen Seite.',
  'threeds.forward.button': 'Weiter',
  'result.cancelled.title': 'Zahlung abgebrochen',
  'result.cancelled.text': 'Die Zahlung wurde abgebrochen; es wurde nichts belastet.',
  'result.expired.title': 'Zahlung abgelaufen',
  'result.expired.text': 'Die Zahlungsfrist ist abgelaufen; es wurde nichts belastet.',
  'result.forwarding': 'Sie werden gleich zum Händler zurückgeleitet.',
  'loading.text': 'Sie werden zur Zahlungsseite weitergeleitet…',
  'loading.continue': 'Weiter zur Zahlungsseite',
  'checkout.title': 'Zahlung',
  'checkout.heading': 'Zahlung an {merchant}',
  'checkout.test_mode': 'Testmodus: Es wird kein echtes Geld bewegt. Zahlen Sie mit einer Testkarte wie 4242 4242 4242 4242.',
  'checkout.card.number': 'Kartennummer',
  'checkout.card.expiry_month': 'Ablaufmonat (MM)',
  'checkout.card.expiry_year': 'Ablaufjahr (JJJJ)',
  'checkout.card.security_code': 'Sicherheitscode',
  'checkout.card.holder': 'Name auf der Karte',
  'checkout.pay': '{amount} bezahlen',
  'checkout.other_methods': 'Andere Zahlungsarten',
  'checkout.apm.continue': 'Weiter mit {method}',
  'checkout.cancel': 'Zahlung abbrechen',
  'checkout.errors': 'Bitte prüfen Sie die markierten Felder.',
  'checkout.error.card_number': 'Geben Sie eine gültige Kartennummer ein.',
  'checkout.error.expiry': 'Geben Sie ein Ablaufdatum ein, das nicht in der Vergangenheit liegt.',
  'checkout.error.security_code': 'Geben Sie den 3- oder 4-stelligen Sicherheitscode ein.',
  'checkout.error.holder': 'Geben Sie den Namen so ein, wie er auf der Karte steht.',
  'checkout.error.required': 'Dieses Feld ist erforderlich.',
  'checkout.error.invalid': 'Prüfen Sie dieses Feld.',
  'checkout.error.method': 'Diese Zahlungsart ist für diese Zahlung nicht verfügbar.',
  'field.person.document_number': 'CPF oder CNPJ',
  'field.person.email': 'E-Mail-Adresse',
  'field.person.address_street': 'Straße',
  'field.person.address_number': 'Hausnummer',
  'field.person.address_postal_code': 'Postleitzahl (CEP)',
  'field.person.address_city': 'Stadt',
  'field.person.address_state': 'Bundesstaat (UF)',
  'field.person.address_country': 'Land',
  'field.bank_code': 'Ihre Bank',
  'issuer.title': 'Mit {method} bezahlen',
  'issuer.note': 'Test-Herausgeber: Diese Testseite ersetzt die Bank, bei der der Käufer die Zahlung bestätigt.',
  'issuer.bank': 'Kreditinstitut',
  'issuer.approve': 'Zahlung genehmigen',
  'issuer.decline': 'Zahlung ablehnen',
  'issuer.pix.code': 'Pix-Code zum Kopieren und Einfügen',
  'issuer.slip.heading': 'Zahlschein',
  'issuer.slip.text': 'Bezahlen Sie diesen Zahlschein vor dem Fälligkeitsdatum in Ihrer Banking-App oder bei einer Bank.',
  'issuer.slip.line': 'Ziffernfolge zum Eintippen',
  'issuer.slip.due': 'Fälligkeitsdatum',
  'issuer.slip.pay': 'Zahlschein bezahlen',
  'issuer.not_found.text': 'Diese Zahlungsseite existiert nicht.',
  'issuer.used.text': 'Diese Zahlungsseite wurde bereits verwendet oder ist abgelaufen.',
  'issuer.forbidden.text': 'Dieses Formular ist ungültig; öffnen Sie die Zahlungsseite erneut.',
};

export const CATALOGUE: Readonly<Record<Lang, Messages>> = { en, es, pt, fr, de };

const moneyFormats = new Map<string, Intl.NumberFormat>();

/**
 * An amount as the shopper's language writes it: `59,90 €` in German, `$42.00` in English
 * (issue 36 item 10: every page said `59.90 EUR`). The decimal text goes to Intl as a string,
 * so it is formatted exactly, never through a float, with the currency's own exponent.
 */
export function formatMoney(lang: Lang, minor: number, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  const key = `${lang}:${currency}`;
  let f = moneyFormats.get(key);
  if (!f) {
    f = new Intl.NumberFormat(lang, { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent });
    moneyFormats.set(key, f);
  }
  // Intl formats an exact decimal string (ECMA-402 NumberFormat v3); the types still say number.
  return f.format(formatAmount(minor, currency) as unknown as number);
}

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

// Bounds on what is read of a client's header (docs/style.md §9).
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
