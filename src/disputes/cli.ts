// `npx tollgate disputes list` and `pricing dispute` (docs/contract.md §22; issue 34 item 4): an
// account's disputes by due date, those that still ask for a response within the window
// flagged; and the fee each dispute costs the account in a currency (dispute_fees).
import type { Kysely } from 'kysely';
import { command, need, out, UsageError } from '../command/registry.js';
import type { DB } from '../db/schema.js';
import type { DisputeRow } from '../db/tables/disputes.js';
import { formatAmount, parseAmount } from '../money/currency.js';
import { parseDuration } from '../scheduler/clock.js';
import { storedClock } from '../web/request-time.js';
import { evidenceMetaOf } from './search.js';
import { disputeRecord } from './service.js';
import { type DisputeStatus, takesEvidence } from './states.js';

const STATUSES: readonly DisputeStatus[] = ['warning_needs_response', 'needs_response', 'under_review', 'won', 'lost', 'accepted'];
const DEFAULT_WINDOW = '3d';
const LIST_MAX = 1_000;

/** How long until `due` from `now`, in days and hours ("2d 4h", "overdue 5h"). */
function until(due: number, now: number): string {
  const ms = Math.abs(due - now);
  const d = Math.floor(ms / 86_400_000);
  const h = Math.floor((ms % 86_400_000) / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const span = d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
  return due >= now ? `in ${span}` : `overdue ${span}`;
}

/** The account's disputes, soonest due first (at most LIST_MAX), optionally of one status. */
export function listDisputes(db: Kysely<DB>, account_id: string, status?: DisputeStatus): Promise<DisputeRow[]> {
  let q = db.selectFrom('disputes').selectAll().where('account_id', '=', account_id);
  if (status) q = q.where('status', '=', status);
  return q.orderBy('evidence_due_by').orderBy('dispute_id').limit(LIST_MAX).execute();
}

/** A dispute that still asks for a response and is due before `now + window_ms` (overdue ones too). */
export const dueWithin = (d: Pick<DisputeRow, 'status' | 'evidence_due_by'>, now: number, window_ms: number): boolean =>
  takesEvidence(d.status) && Number(d.evidence_due_by) <= now + window_ms;

export const disputesListCommand = command({
  name: 'disputes list',
  args: `--account ID [--due-within ${DEFAULT_WINDOW}] [--status ${STATUSES.join('|')}] [--json]`,
  details: [
    `Every dispute of the account, soonest due first (at most ${LIST_MAX}). Those that still ask for a response (needs_response, warning_needs_response) and are due within the window (default ${DEFAULT_WINDOW}; overdue too) are flagged DUE SOON; with --due-within only those are listed.`,
    'Time is the account’s test clock when it was moved ahead, else now.',
  ],
  options: { account: { type: 'string' }, 'due-within': { type: 'string' }, status: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const status = values.status as string | undefined;
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    const windowText = (values['due-within'] as string | undefined) ?? DEFAULT_WINDOW;
    const window_ms = parseDuration(windowText);
    if (window_ms === null) throw new UsageError(`--due-within must be a duration such as 3d, 12h or 1w2d; got ${JSON.stringify(windowText)}`);
    const rt = await runtime();
    const now = Math.max(Date.now(), (await storedClock(rt.store, account_id)) ?? 0);
    let rows = await listDisputes(rt.store.db, account_id, status as DisputeStatus | undefined);
    if (values['due-within'] !== undefined) rows = rows.filter((d) => dueWithin(d, now, window_ms));
    if (values.json) {
      const evidence = await evidenceMetaOf(
        rt.store.db,
        rows.map((d) => d.dispute_id),
      );
      return out(JSON.stringify(rows.map((d) => ({ ...disputeRecord(d, evidence.get(d.dispute_id) ?? []), due_soon: dueWithin(d, now, window_ms) }))));
    }
    if (rows.length === 0) return out(values['due-within'] !== undefined ? `no dispute asks for a response within ${windowText}` : 'no disputes');
    for (const d of rows) {
      const due = Number(d.evidence_due_by);
      const when = takesEvidence(d.status) ? `due ${new Date(due).toISOString()} (${until(due, now)})` : `was due ${new Date(due).toISOString()}`;
      out(
        `${d.dispute_id}  ${d.status.padEnd(22)}  ${d.kind.padEnd(10)}  ${d.reason.padEnd(20)}  ${formatAmount(Number(d.amount_minor), d.currency)} ${d.currency}  fee ${formatAmount(Number(d.fee_minor), d.currency)}  ${d.transaction_id}  ${d.order_no}  ${when}${dueWithin(d, now, window_ms) ? '  DUE SOON' : ''}`,
      );
    }
    const soon = rows.filter((d) => dueWithin(d, now, window_ms)).length;
    if (soon > 0) out(`${soon} ${soon === 1 ? 'dispute asks' : 'disputes ask'} for a response within ${windowText}`);
  },
});

export const pricingDisputeCommand = command({
  name: 'pricing dispute',
  args: '--account ID --currency USD --fee 15.00',
  details: [
    'The fee charged to the account for each dispute of a payment in that currency, taken with the disputed amount when a chargeback opens (or an inquiry becomes one) and kept when the dispute is won. --fee 0.00 charges none. Disputes opened before keep their fee.',
  ],
  options: { account: { type: 'string' }, currency: { type: 'string' }, fee: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const currency = need(values.currency, '--currency');
    const parsed = parseAmount(need(values.fee, '--fee'), currency);
    if (!parsed.ok) throw new UsageError(`--fee ${parsed.problem}`);
    const now = Date.now();
    await (await runtime()).store.transaction((tx) =>
      tx
        .insertInto('dispute_fees')
        .values({ account_id, currency, fee_minor: parsed.minor, updated_at: now })
        .onConflict((oc) => oc.columns(['account_id', 'currency']).doUpdateSet({ fee_minor: parsed.minor, updated_at: now }))
        .execute(),
    );
    out(`dispute fee for account ${account_id}: ${formatAmount(parsed.minor, currency)} ${currency} per dispute`);
  },
});
