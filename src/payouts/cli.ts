// `npx tollgate payouts list|show`, `beneficiaries list`, `pricing payout`, `fx markup`,
// `balance top-up` (docs/contract.md §17).
import { CommandError, command, need, out, UsageError } from '../command/registry.js';
import { formatAmount } from '../money/currency.js';
import { AdminError, describePayoutPrice, listBeneficiaries, listPayouts, setMarkup, setPayoutPricing, topUp } from './admin.js';
import { LOCAL_RAILS } from './bank.js';
import { payoutRecord } from './record.js';
import { resolvePayout } from './service.js';
import { PAYOUT_STATUSES } from './states.js';

async function admin<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof AdminError) throw new UsageError(e.message);
    throw e;
  }
}

export const balanceTopUpCommand = command({
  name: 'balance top-up',
  args: '--account ID --currency USD --amount 1000.00',
  options: { account: { type: 'string' }, currency: { type: 'string' }, amount: { type: 'string' } },
  async run({ values, runtime }) {
    const input = { account_id: need(values.account, '--account'), currency: need(values.currency, '--currency'), amount: need(values.amount, '--amount') };
    const minor = await admin(async () => topUp((await runtime()).store, input, Date.now()));
    out(`account ${input.account_id}: ${formatAmount(minor, input.currency)} ${input.currency} added to available`);
  },
});

export const pricingPayoutCommand = command({
  name: 'pricing payout',
  args: '--account ID --currency USD --method LOCAL|SWIFT --percent 0.5 --fixed 1.00 [--swift-payer 15.00]',
  details: [
    '--swift-payer is added to SWIFT payouts sent with swift_charge_option PAYER (the payer covers the other banks’ charges). Without pricing a payout carries no fee.',
  ],
  options: {
    account: { type: 'string' },
    currency: { type: 'string' },
    method: { type: 'string' },
    percent: { type: 'string' },
    fixed: { type: 'string' },
    'swift-payer': { type: 'string' },
  },
  async run({ values, runtime }) {
    const input = {
      account_id: need(values.account, '--account'),
      currency: need(values.currency, '--currency'),
      method: need(values.method, '--method'),
      percent: need(values.percent, '--percent'),
      fixed: need(values.fixed, '--fixed'),
      ...(values['swift-payer'] !== undefined ? { swift_payer: values['swift-payer'] as string } : {}),
    };
    const row = await admin(async () => setPayoutPricing((await runtime()).store, input, Date.now()));
    out(`payout pricing for account ${input.account_id}: ${describePayoutPrice(row)}`);
  },
});

export const fxMarkupCommand = command({
  name: 'fx markup',
  args: '--account ID --percent 0.5',
  options: { account: { type: 'string' }, percent: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const bp = await admin(async () => setMarkup((await runtime()).store, account_id, need(values.percent, '--percent'), Date.now()));
    out(`account ${account_id}: FX markup ${bp} basis points`);
  },
});

export const payoutsListCommand = command({
  name: 'payouts list',
  args: `--account ID [--status ${PAYOUT_STATUSES.join('|')}] [--json]`,
  options: { account: { type: 'string' }, status: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const status = values.status as string | undefined;
    if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status))
      throw new UsageError(`--status must be one of ${PAYOUT_STATUSES.join(', ')}`);
    const rows = await listPayouts((await runtime()).store.db, need(values.account, '--account'), { ...(status ? { status } : {}), limit: 1_000 });
    if (values.json) return out(JSON.stringify(rows.map(payoutRecord)));
    if (rows.length === 0) return out('no payouts');
    for (const r of rows) {
      out(
        `${r.transaction_id}  ${r.short_reference_id}  ${r.status.padEnd(10)}  ${formatAmount(Number(r.amount_payer_pays), r.source_currency)} ${r.source_currency} → ${formatAmount(Number(r.amount_beneficiary_receives), r.payment_currency)} ${r.payment_currency}  fee ${formatAmount(Number(r.fee_amount), r.source_currency)}  ${r.payment_method}/${r.local_clearing_system}  ${r.failure_type}`,
      );
    }
  },
});

export const payoutsShowCommand = command({
  name: 'payouts show',
  args: '--account ID TRANSACTION_ID|REQUEST_ID|SHORT_REFERENCE_ID',
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account_id = need(values.account, '--account');
    const id = positionals[0];
    if (!id || positionals.length !== 1) throw new UsageError('give one payout id');
    const row = await (await runtime()).store.db
      .selectFrom('payouts')
      .selectAll()
      .where('account_id', '=', account_id)
      .where((eb) => eb.or([eb('transaction_id', '=', id), eb('request_id', '=', id.toLowerCase()), eb('short_reference_id', '=', id)]))
      .executeTakeFirst();
    if (!row) throw new CommandError(`no payout ${id} on account ${account_id}`);
    out(JSON.stringify(payoutRecord(row), null, 2));
  },
});

export const beneficiariesListCommand = command({
  name: 'beneficiaries list',
  args: '--account ID [--json]',
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const rows = await listBeneficiaries((await runtime()).store.db, need(values.account, '--account'));
    if (values.json) return out(JSON.stringify(rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() }))));
    if (rows.length === 0) return out('no saved beneficiaries');
    for (const r of rows) out(`${r.beneficiary_id}  ${r.label}`);
  },
});

export const payoutsRailsCommand = command({
  name: 'payouts rails',
  args: '[--json]',
  options: { json: { type: 'boolean' } },
  async run({ values }) {
    const rows = [{ country: 'every SEPA country', currency: 'EUR', system: 'SEPA' }, ...LOCAL_RAILS];
    if (values.json) return out(JSON.stringify(rows));
    for (const r of rows) out(`${r.country.padEnd(18)}  ${r.currency}  ${r.system}`);
    out('any other pair: payment_method SWIFT (swift_code, and the iban where the country uses IBANs)');
  },
});

export const payoutsResolveCommand = command({
  name: 'payouts resolve',
  args: '--account ID TRANSACTION_ID --completed | --failed RETURNED|PROCESSOR_ERROR --reason TEXT',
  details: ['For a payout the connector can no longer report on. A SCHEDULED payout is cancelled instead (POST /v1/cancelpayout).'],
  options: { account: { type: 'string' }, completed: { type: 'boolean' }, failed: { type: 'string' }, reason: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account_id = need(values.account, '--account');
    const id = positionals[0];
    if (!id || positionals.length !== 1) throw new UsageError('give one TRANSACTION_ID');
    if (Boolean(values.completed) === (values.failed !== undefined)) throw new UsageError('give --completed or --failed RETURNED|PROCESSOR_ERROR');
    let outcome: Parameters<typeof resolvePayout>[3] = { kind: 'completed' };
    if (values.failed !== undefined) {
      const failure_type = values.failed as string;
      if (failure_type !== 'RETURNED' && failure_type !== 'PROCESSOR_ERROR') throw new UsageError('--failed must be RETURNED or PROCESSOR_ERROR');
      outcome = { kind: 'failed', failure_type, reason: need(values.reason as string | undefined, '--reason') };
    }
    const r = await resolvePayout((await runtime()).store, account_id, id, outcome, Date.now());
    if ('refused' in r) throw new CommandError(r.refused);
    out(`payout ${r.transaction_id}: ${r.status}${r.failure_type ? ` (${r.failure_type})` : ''}`);
  },
});
