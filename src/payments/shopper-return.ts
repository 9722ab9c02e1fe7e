// Where a shopper goes when a shopper page ends a payment (3-D Secure challenge, issuer
// page, hosted checkout): back to the hosted checkout's result page when the payment
// belongs to a session, else to the merchant's return_url with the signed result
// (docs/contract.md §10, §14, §15), or nowhere (null: the page shows the result itself).
import { sign } from '../crypto/signature.js';
import type { Deps } from '../web/context.js';
import { type ResultCode, resultText } from '../web/errors.js';
import { orderStatusOf } from './states.js';
import type { PaymentRow } from './tables.js';

/** The fields the shopper carries back; `encryption_data` signs exactly these. */
export function returnFields(row: PaymentRow): Record<string, string> {
  return {
    merchant_id: row.merchant_id,
    account_id: row.account_id,
    order_no: row.order_no,
    transaction_id: row.transaction_id,
    order_status: orderStatusOf(row.status),
    result_info: resultText(row.result_code as ResultCode),
    threeds_result: row.threeds_result,
  };
}

/** `url` with the payment's result fields and their signature added to its query. */
export function signedReturnUrl(url: string, row: PaymentRow, signing_secret: string): string {
  const fields = returnFields(row);
  const u = new URL(url);
  for (const [k, v] of Object.entries(fields)) u.searchParams.set(k, v);
  u.searchParams.set('encryption_data', sign(fields, signing_secret));
  return u.toString();
}

/** The hosted payment page of the checkout session a payment belongs to, if any. */
export async function checkoutPageOf(deps: Pick<Deps, 'store' | 'settings'>, transaction_id: string): Promise<string | null> {
  const s = await deps.store.db.selectFrom('checkout_sessions').select('session_id').where('transaction_id', '=', transaction_id).executeTakeFirst();
  return s ? `${deps.settings.public_url}/pay/${s.session_id}` : null;
}

/** Where the shopper goes after a shopper page finished `row`; null: show the result there. */
export async function shopperReturn(deps: Pick<Deps, 'store' | 'settings' | 'merchants'>, row: PaymentRow): Promise<string | null> {
  if (row.kind === 'checkout') return checkoutPageOf(deps, row.transaction_id);
  if (!row.return_url) return null;
  const creds = await deps.merchants.credentials(row.merchant_id, row.account_id);
  return creds ? signedReturnUrl(row.return_url, row, creds.signing_secret) : null;
}
