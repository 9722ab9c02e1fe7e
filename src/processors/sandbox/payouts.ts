// The sandbox's payout outcomes (docs/contract.md §17), published in the docs from this table:
// LOCAL payouts complete at once, SWIFT ones after TOLLGATE_SANDBOX_SWIFT_DELAY_MS; two
// beneficiary account numbers fail. The IBAN or account number decides (its digits, for an
// IBAN the last twelve), so a merchant can test failures on every rail.
import type { PayoutInput, PayoutOutcome } from '../types.js';

export interface TestPayoutAccount {
  account_number: string;
  outcome: 'INVALID_ACCOUNT' | 'RETURNED';
  description: string;
}

export const TEST_PAYOUT_ACCOUNTS: readonly TestPayoutAccount[] = [
  { account_number: '000111111116', outcome: 'INVALID_ACCOUNT', description: 'refused at once: the account does not exist (FAILED, funds released)' },
  {
    account_number: '000222222226',
    outcome: 'RETURNED',
    description: 'accepted, then returned by the bank after the SWIFT delay (PROCESSING, then FAILED, funds released)',
  },
];

function testAccount(input: PayoutInput): TestPayoutAccount | undefined {
  const number = input.account.account_number ?? input.account.iban?.slice(-12) ?? '';
  return TEST_PAYOUT_ACCOUNTS.find((a) => a.account_number === number);
}

export function sandboxPayout(input: PayoutInput, reference: string, swift_delay_ms: number): PayoutOutcome {
  const test = testAccount(input);
  if (test?.outcome === 'INVALID_ACCOUNT') {
    return { kind: 'failed', failure_type: 'INVALID_ACCOUNT', reason: 'The beneficiary account does not exist', reference };
  }
  if (test?.outcome === 'RETURNED' || input.payment_method === 'SWIFT') return { kind: 'processing', reference, check_after_ms: swift_delay_ms };
  return { kind: 'completed', reference };
}

export function sandboxPayoutStatus(input: PayoutInput & { reference: string }): PayoutOutcome {
  if (testAccount(input)?.outcome === 'RETURNED') {
    return { kind: 'failed', failure_type: 'RETURNED', reason: 'The beneficiary bank returned the payment', reference: input.reference };
  }
  return { kind: 'completed', reference: input.reference };
}
