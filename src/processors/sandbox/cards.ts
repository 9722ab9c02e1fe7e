// The sandbox's published test cards (docs/contract.md §9), as one data table: what the sandbox
// issuer answers, what the sandbox anti-fraud provider says, and which cards are the shared
// success cards that every merchant's test suite pays with. The processor, the risk rules
// and the published card table (docs, /docs) all read this table; nothing else lists cards.

export type DeclineCode = '1001' | '1002' | '1003' | '1004' | '1005' | '1006' | '1007';

export type IssuerOutcome = { kind: 'approved' } | { kind: 'declined'; code: DeclineCode } | { kind: 'challenge_required' };

export interface TestCard {
  /** What the sandbox issuer answers a shopper-present authorisation. */
  issuer: IssuerOutcome;
  /** What it answers a merchant-initiated charge of the stored card (subscription deductions); defaults to `issuer`. */
  merchant_initiated?: IssuerOutcome;
  /** The sandbox anti-fraud provider's fixed verdict for the card, whatever the score. */
  risk?: 'REJECT' | 'REVIEW';
  /**
   * A shared success card: on a test account it never trips the velocity, history or
   * new-card rules, however often one shopper pays with it, so integration suites can pay
   * it without limit. Blocklists and thresholds still apply.
   */
  shared_success?: boolean;
  /**
   * On a test account a captured payment of the card is disputed a few seconds later
   * (docs/contract.md §22; TOLLGATE_SANDBOX_DISPUTE_DELAY_MS): a chargeback for `reason`, or an
   * inquiry (`warning_needs_response`).
   */
  dispute?: { kind: 'chargeback' | 'inquiry'; reason: string };
  /** One line for the published table. */
  outcome: string;
}

const approved = { kind: 'approved' } as const;
const declined = (code: DeclineCode) => ({ kind: 'declined', code }) as const;
const SUCCESS: TestCard = { issuer: approved, shared_success: true, outcome: 'success' };

export const TEST_CARDS: Readonly<Record<string, TestCard>> = {
  '4242424242424242': SUCCESS,
  '5555555555554444': SUCCESS,
  '378282246310005': SUCCESS,
  '6011111111111117': SUCCESS,
  '3566002020360505': SUCCESS,
  '4000000000000002': { issuer: declined('1002'), outcome: '1002:Card declined' },
  '4000000000009995': { issuer: declined('1001'), outcome: '1001:Insufficient funds' },
  '4000000000009987': { issuer: declined('1003'), outcome: '1003:Lost card' },
  '4000000000009979': { issuer: declined('1004'), outcome: '1004:Stolen card' },
  '4000000000000069': { issuer: declined('1005'), outcome: '1005:Expired card' },
  '4000000000000127': { issuer: declined('1006'), outcome: '1006:Incorrect security code' },
  '4000000000000119': { issuer: declined('1007'), outcome: '1007:Processing error' },
  '4000000000003220': {
    issuer: { kind: 'challenge_required' },
    // A merchant-initiated charge has no shopper to authenticate (out of scope of strong customer authentication).
    merchant_initiated: approved,
    outcome:
      '3-D Secure challenge required: order_status 2 with threeds_url, then success or 1009 by the challenge; merchant-initiated charges of the stored card (subscription deductions) succeed without one',
  },
  '4100000000000019': { issuer: approved, risk: 'REJECT', outcome: 'anti-fraud REJECT: 1008:Rejected by risk control' },
  '4000000000009235': { issuer: approved, risk: 'REVIEW', outcome: 'anti-fraud REVIEW: held (order_status 3, payment_status 2100) until reviewed' },
  '4000000000000259': {
    ...SUCCESS,
    dispute: { kind: 'chargeback', reason: 'fraudulent' },
    outcome: 'success, then disputed as fraudulent a few seconds after capture (needs_response; the amount and the dispute fee leave the balance)',
  },
  '4000000000002685': {
    ...SUCCESS,
    dispute: { kind: 'chargeback', reason: 'product_not_received' },
    outcome: 'success, then disputed as product not received a few seconds after capture (needs_response)',
  },
  '4000000000001976': {
    ...SUCCESS,
    dispute: { kind: 'inquiry', reason: 'fraudulent' },
    outcome: 'success, then an inquiry a few seconds after capture (warning_needs_response; no money moves unless it becomes a chargeback)',
  },
  '4000000000000341': {
    issuer: approved,
    merchant_initiated: declined('1002'),
    outcome: 'the shopper-present payment succeeds; every later merchant-initiated charge of the stored card declines 1002:Card declined',
  },
};

/**
 * The platform family's documented test PaymentMethods (docs/contract.md §24), each one of the
 * cards above: naming one on a test key makes a new PaymentMethod of that card.
 */
export const TEST_PAYMENT_METHODS: Readonly<Record<string, string>> = {
  pm_card_visa: '4242424242424242',
  pm_card_visa_debit: '4242424242424242',
  pm_card_mastercard: '5555555555554444',
  pm_card_amex: '378282246310005',
  pm_card_discover: '6011111111111117',
  pm_card_jcb: '3566002020360505',
  pm_card_chargeDeclined: '4000000000000002',
  pm_card_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_chargeDeclinedLostCard: '4000000000009987',
  pm_card_chargeDeclinedStolenCard: '4000000000009979',
  pm_card_chargeDeclinedExpiredCard: '4000000000000069',
  pm_card_chargeDeclinedIncorrectCvc: '4000000000000127',
  pm_card_chargeDeclinedProcessingError: '4000000000000119',
  pm_card_authenticationRequired: '4000000000003220',
  pm_card_threeDSecure2Required: '4000000000003220',
  pm_card_radarBlock: '4100000000000019',
  pm_card_riskLevelHighest: '4100000000000019',
  pm_card_riskLevelElevated: '4000000000009235',
  pm_card_chargeCustomerFail: '4000000000000341',
};

/** The table's rows in a fixed order, plus the two rules for cards it does not list. */
export function publishedTestCards(): Array<{ card: string; outcome: string }> {
  return [
    ...Object.entries(TEST_CARDS).map(([card, c]) => ({ card, outcome: c.outcome })),
    { card: 'a number that fails the Luhn check', outcome: '1010:Invalid card number, no processor call' },
    { card: 'any other Luhn-valid number', outcome: 'success at the sandbox, and subject to every risk rule' },
  ];
}

/** The published table as Markdown (docs/interface.md holds it verbatim; a test checks). */
export function testCardsMarkdown(): string {
  const rows = publishedTestCards().map(({ card, outcome }) => `| ${/^\d+$/.test(card) ? `\`${card}\`` : card} | ${outcome} |`);
  return ['| card number | outcome |', '|---|---|', ...rows].join('\n');
}

export function testCard(pan: string): TestCard | undefined {
  return TEST_CARDS[pan];
}

/** On a test account: a shared success card, exempt from the velocity, history and new-card rules. */
export function isSharedSuccessCard(mode: 'test' | 'live', pan: string): boolean {
  return mode === 'test' && TEST_CARDS[pan]?.shared_success === true;
}

/** On a test account: the sandbox anti-fraud provider's fixed verdict for this card, if any. */
export function sandboxRiskVerdict(mode: 'test' | 'live', pan: string): 'REJECT' | 'REVIEW' | undefined {
  return mode === 'test' ? TEST_CARDS[pan]?.risk : undefined;
}
