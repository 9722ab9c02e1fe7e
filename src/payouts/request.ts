// A payout request (the acquiring body, or the one the portal's form fills in) through the
// core's two steps, in the order the request has always been answered: a known request_id
// first (replayed, or 409), then notify_url and the account's connector, then the request's
// own fields (command.ts), then the checks and quote of the core and the payout itself.
import type { AccountRow } from '../db/tables/merchants.js';
import { payoutCommandOf, payoutIdentity } from './command.js';
import type { PayoutRequest } from './schema.js';
import { admitPayout, type CreateResult, createPayout, type PayoutDeps } from './service.js';

export async function requestPayout(deps: PayoutDeps, account: AccountRow, sent: PayoutRequest, now_ms: number): Promise<CreateResult> {
  const admitted = await admitPayout(deps, account, payoutIdentity(deps.keyring, sent), sent.notify_url);
  if (admitted.kind === 'replay') return admitted.result;
  return createPayout(deps, account, admitted.processor, payoutCommandOf(deps.keyring, sent), now_ms);
}
