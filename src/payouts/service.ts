// Payouts (docs/contract.md §17): `POST /v1/payout`, its lifecycle on the shared scheduler, cancel
// and the CLI all go through here.
//
// Creating one (request.ts runs the steps for the acquiring body and the portal's form: a
// known request_id first, then the request as a typed command, command.ts, then
// `createPayout`): the command is validated (bank details in bank.ts, named errors, nothing
// written on a refusal) and quoted (rate with the account's markup, fee, both amounts:
// quote.ts) before any write; then ONE transaction inserts the payout (unique per account
// and request_id: a racing twin inserts nothing and replays the winner), takes the
// account's funding row for the source currency (the lock that makes funding checks of one
// balance run one after another on PostgreSQL; SQLite's single writer does the same), reads
// the available balance and either reserves `amount_payer_pays + fee_amount` or fails the
// payout INSUFFICIENT_FUNDS. A payout due today is dispatched in that same transaction
// when the connector is inline (the sandbox), so its answer already says COMPLETED, FAILED
// or PROCESSING; a later payment_date makes it SCHEDULED with a dispatch job at 00:00 UTC
// of that day. A PROCESSING payout is asked again by a check job after the connector's
// delay. Every end (COMPLETED, FAILED, CANCELLED) posts to the ledger (ledger.ts) and
// records its event in the transaction that makes it.
import { noProcessor, Refused, refuse } from '../core/outcomes.js';
import { newId } from '../crypto/ids.js';
import type { Store, Tx } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import { applyUnit, WriteUnit } from '../db/unit.js';
import { applyMarkup, formatRate } from '../fx/convert.js';
import { rateFor } from '../fx/rates.js';
import { requireSafeNotifyUrl } from '../notifications/ssrf.js';
import { checkCountry } from '../payments/validate.js';
import { callWithDeadline, newAttempt, type ProcessorAttemptRow, settleAttemptInto } from '../processors/attempts.js';
import type { PayoutInput, PayoutOutcome, Processor } from '../processors/types.js';
import { enqueueJob } from '../scheduler/scheduler.js';
import type { Deps } from '../web/context.js';
import { invalid } from '../web/errors.js';
import { checkBankDetails } from './bank.js';
import { normaliseRequestId, type PayoutCommand, stableBody } from './command.js';
import { movePayout } from './engine.js';
import { postPayout } from './ledger.js';
import { NO_PRICE, type PayoutPrice, quotePayout } from './quote.js';
import type { BankDetailsInput, BeneficiaryInput } from './schema.js';
import type { FailureType, PayoutStatus } from './states.js';
import { maskAccount, maskedBankDetails, type PayoutRow } from './tables.js';

export const DISPATCH_KIND = 'payout.dispatch';
export const CHECK_KIND = 'payout.check';
const DAY_MS = 86_400_000;
/** How far ahead a payment_date may be. */
export const MAX_SCHEDULE_DAYS = 365;
/** How often one PROCESSING payout is asked about at most (bounded, docs/style.md §9); then `payouts resolve`. */
const MAX_CHECKS = 100;

export type PayoutDeps = Pick<Deps, 'store' | 'keyring' | 'processorFor' | 'settings' | 'now'>;

/** The request once checked: what the transaction needs, nothing left to validate. */
interface Checked {
  request_hash: string;
  beneficiary: BeneficiaryInput;
  /** An existing saved beneficiary, or a new one to save in the transaction. */
  saved: { beneficiary_id: string; fingerprint: string; existing: boolean };
  bank: PayoutInput['account'];
  local_clearing_system: string;
  payment_method: 'LOCAL' | 'SWIFT';
  fee_paid_by: 'PAYER' | 'BENEFICIARY';
  swift_charge_option: 'SHARED' | 'PAYER';
  payment_date: string;
  dispatch_at: number;
  amounts: { amount_payer_pays: number; amount_beneficiary_receives: number; fee_amount: number };
  fx_rate: string;
  fx_source: string;
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function parseDate(field: string, text: string): number {
  const ms = Date.parse(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(ms) || utcDate(ms) !== text) throw invalid(field, `"${text}" is not a date (YYYY-MM-DD)`);
  return ms;
}

function checkParty(
  prefix: 'beneficiary' | 'payer',
  p:
    | { entity_type?: string; company_name?: string; first_name?: string; last_name?: string; date_of_birth?: string; address?: { country_code?: string } }
    | undefined,
  now_ms: number,
  required: boolean,
): void {
  if (!p) return;
  if (p.address?.country_code !== undefined) checkCountry(`${prefix}.address.country_code`, p.address.country_code);
  if (p.date_of_birth !== undefined && p.date_of_birth !== '') {
    const born = parseDate(`${prefix}.date_of_birth`, p.date_of_birth);
    if (born >= now_ms || p.date_of_birth < '1900-01-01') throw invalid(`${prefix}.date_of_birth`, 'must be a date in the past, from 1900-01-01');
  }
  if (!required) return;
  const person = Boolean(p.first_name && p.last_name);
  if (p.entity_type === 'COMPANY' && !p.company_name) throw invalid(`${prefix}.company_name`, 'is required for a COMPANY');
  if (p.entity_type === 'PERSONAL' && !person)
    throw invalid(p.first_name ? `${prefix}.last_name` : `${prefix}.first_name`, 'is required for a PERSONAL beneficiary');
  if (!p.entity_type && !p.company_name && !person)
    throw invalid(`${prefix}.entity_type`, 'is required: a COMPANY with company_name or a PERSONAL beneficiary with first_name and last_name');
}

/** A saved beneficiary of the account, decrypted; null when the id is not one. */
export async function loadBeneficiary(deps: Pick<Deps, 'store' | 'keyring'>, account_id: string, beneficiary_id: string): Promise<BeneficiaryInput | null> {
  const row = await deps.store.db
    .selectFrom('beneficiaries')
    .select('data_enc')
    .where('account_id', '=', account_id)
    .where('beneficiary_id', '=', beneficiary_id)
    .executeTakeFirst();
  return row ? (JSON.parse(deps.keyring.decrypt(row.data_enc)) as BeneficiaryInput) : null;
}

async function check(deps: PayoutDeps, account: AccountRow, cmd: PayoutCommand, now_ms: number): Promise<Checked> {
  const { payment_method, fee_paid_by, swift_charge_option } = cmd;
  const date = checkPaymentDate(cmd.payment_date ?? undefined, now_ms);
  const { beneficiary, saved } = await beneficiaryOf(deps, account, cmd.beneficiary);
  checkParty('beneficiary', beneficiary, now_ms, true);
  checkParty('payer', cmd.payer, now_ms, false);
  const raw: BankDetailsInput | undefined = beneficiary.bank_details;
  if (raw && !raw.account_name) throw invalid('beneficiary.bank_details.account_name', 'is required: the name the bank account is held in');
  const bank = checkBankDetails(raw, { payment_currency: cmd.payment_currency, payment_method, fallback_country: beneficiary.address?.country_code });
  const priced = await priceRequest(deps, account, cmd);
  return {
    request_hash: cmd.request_hash,
    beneficiary,
    saved,
    bank: connectorAccount(bank),
    local_clearing_system: bank.local_clearing_system,
    payment_method,
    fee_paid_by,
    swift_charge_option,
    payment_date: date.payment_date,
    dispatch_at: date.payment_date === date.today ? now_ms : date.day_ms,
    ...priced,
  };
}

/** The payment_date (today when not sent): a real date, not past, at most MAX_SCHEDULE_DAYS ahead. */
function checkPaymentDate(sent: string | undefined, now_ms: number): { today: string; payment_date: string; day_ms: number } {
  const today = utcDate(now_ms);
  const payment_date = sent ?? today;
  const day_ms = parseDate('payment_date', payment_date);
  if (payment_date < today) throw invalid('payment_date', `is in the past (today is ${today} UTC)`);
  if (day_ms > Date.parse(`${today}T00:00:00Z`) + MAX_SCHEDULE_DAYS * DAY_MS) throw invalid('payment_date', `is more than ${MAX_SCHEDULE_DAYS} days ahead`);
  return { today, payment_date, day_ms };
}

/** The beneficiary: sent (saved already when its fingerprint is known, else to be saved), or saved by an earlier payout. */
async function beneficiaryOf(
  deps: PayoutDeps,
  account: AccountRow,
  given: PayoutCommand['beneficiary'],
): Promise<{ beneficiary: BeneficiaryInput; saved: Checked['saved'] }> {
  if (given.given !== undefined && given.saved !== undefined) throw invalid('beneficiary_id', 'cannot be sent together with beneficiary');
  if (given.saved !== undefined) {
    const found = await loadBeneficiary(deps, account.account_id, given.saved);
    if (!found) throw invalid('beneficiary_id', 'is not a beneficiary saved on this account');
    return { beneficiary: found, saved: { beneficiary_id: given.saved, fingerprint: '', existing: true } };
  }
  if (given.given === undefined) throw invalid('beneficiary', 'is required (or the beneficiary_id of a saved one)');
  const beneficiary = given.given;
  const fingerprint = deps.keyring.fingerprint(`beneficiary:${stableBody(beneficiary)}`);
  const known = await deps.store.db
    .selectFrom('beneficiaries')
    .select('beneficiary_id')
    .where('account_id', '=', account.account_id)
    .where('fingerprint', '=', fingerprint)
    .executeTakeFirst();
  const saved = known
    ? { beneficiary_id: known.beneficiary_id, fingerprint, existing: true }
    : { beneficiary_id: newId('beneficiary'), fingerprint, existing: false };
  return { beneficiary, saved };
}

/** FX and fees: the market rate with the account's markup, its price for the method, and the quote (quote.ts). */
async function priceRequest(deps: PayoutDeps, account: AccountRow, cmd: PayoutCommand): Promise<Pick<Checked, 'amounts' | 'fx_rate' | 'fx_source'>> {
  const market = await rateFor(deps.store.db, cmd.source_currency, cmd.payment_currency);
  if (!market) throw invalid('payment_currency', `no exchange rate from ${cmd.source_currency} to ${cmd.payment_currency} is configured`);
  const markup = cmd.source_currency === cmd.payment_currency ? 0 : await markupOf(deps.store, account.account_id);
  const rate = applyMarkup(market.rate, markup);
  const price = await priceOf(deps.store, account.account_id, cmd.source_currency, cmd.payment_method);
  const q = quotePayout({
    source_currency: cmd.source_currency,
    payment_currency: cmd.payment_currency,
    rate,
    ...cmd.amount,
    fee_paid_by: cmd.fee_paid_by,
    payment_method: cmd.payment_method,
    swift_charge_option: cmd.swift_charge_option,
    price,
  });
  if (!q.ok) throw invalid(q.field, q.problem);
  return { amounts: q.quote, fx_rate: formatRate(rate), fx_source: market.source };
}

/** The checked bank details as the connector takes them. */
function connectorAccount(bank: ReturnType<typeof checkBankDetails>): PayoutInput['account'] {
  return {
    country: bank.country,
    // The IBAN, when there is one, is the account: an account_number beside it is not sent on.
    ...(bank.iban ? { iban: bank.iban } : bank.account_number ? { account_number: bank.account_number } : {}),
    ...(bank.swift_code ? { swift_code: bank.swift_code } : {}),
    ...(bank.bank_code ? { bank_code: bank.bank_code } : {}),
  };
}

export async function markupOf(store: Store, account_id: string): Promise<number> {
  const row = await store.db.selectFrom('fx_markups').select('markup_bp').where('account_id', '=', account_id).executeTakeFirst();
  return row ? Number(row.markup_bp) : 0;
}

export async function priceOf(store: Store, account_id: string, currency: string, payment_method: string): Promise<PayoutPrice> {
  const row = await store.db
    .selectFrom('payout_pricing')
    .selectAll()
    .where('account_id', '=', account_id)
    .where('currency', '=', currency)
    .where('payment_method', '=', payment_method)
    .executeTakeFirst();
  return row ? { percent_bp: Number(row.percent_bp), fixed_minor: Number(row.fixed_minor), swift_payer_minor: Number(row.swift_payer_minor) } : NO_PRICE;
}

/**
 * The echo of the request the answer carries (docs/contract.md §17): as sent, less bank_code, with
 * the clearing system, and `iban` / `account_number` masked to their last four (issue 29:
 * this echo is stored in `payouts.details` and in every `payout.*` event; the full details
 * are only in the encrypted beneficiary row).
 */
/** The payout's record: the request as echoed, with the beneficiary it pays, its bank details masked. */
function echoOf(echo: Record<string, unknown>, beneficiary: BeneficiaryInput, local_clearing_system: string): Record<string, unknown> {
  const { bank_code: _code, ...bank } = beneficiary.bank_details ?? {};
  return { ...echo, beneficiary: { ...beneficiary, bank_details: { ...maskedBankDetails(bank), local_clearing_system } } };
}

function processorOf(deps: PayoutDeps, account: AccountRow): Processor {
  const processor = deps.processorFor(account);
  if (!processor) throw noProcessor('this live account has no payout connector configured');
  if (!processor.payout || !processor.payoutStatus) throw noProcessor(`the connector ${processor.name} of this account does not pay out`);
  return processor;
}

export type CreateResult = { row: PayoutRow; replayed: boolean };

/**
 * Step one of a payout: a known request_id answers the payout it made (or 409 for another
 * request), before anything else is read of the request; else the notify_url and the
 * account's payout connector are checked. Step two is `createPayout` with that connector.
 */
export async function admitPayout(
  deps: PayoutDeps,
  account: AccountRow,
  identity: { request_id: string; request_hash: string },
  notify_url: string | undefined,
): Promise<{ kind: 'replay'; result: CreateResult } | { kind: 'new'; processor: Processor }> {
  const prior = await findByRequestId(deps.store, account.account_id, identity.request_id);
  if (prior) return { kind: 'replay', result: replay(prior, identity.request_hash) };
  await requireSafeNotifyUrl(notify_url, deps.settings.allow_private_webhooks);
  return { kind: 'new', processor: processorOf(deps, account) };
}

/** Step two: the command checked and quoted, then the payout written, funded and (due today) dispatched; a twin that won is replayed. */
export async function createPayout(deps: PayoutDeps, account: AccountRow, processor: Processor, cmd: PayoutCommand, now_ms: number): Promise<CreateResult> {
  const c = await check(deps, account, cmd, now_ms);
  const row = newPayoutRow(account, cmd, c, now_ms);

  const attempt = payoutAttempt(deps, processor, row, now_ms);
  const outcome = await deps.store.transaction(async (tx) => {
    const inserted = await tx
      .insertInto('payouts')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'request_id']).doNothing())
      .returning('transaction_id')
      .executeTakeFirst();
    if (!inserted) return null; // a twin with the same request_id won; replay it below
    if (!c.saved.existing) await saveBeneficiary(tx, deps, account, c, row, now_ms);
    return fundPayout(tx, row, attempt, now_ms);
  });
  if (outcome?.status === 'PROCESSING') {
    // Recorded and committed with the attempt: now the call, outside any transaction (docs/contract.md §20).
    return { row: await sendPayout(deps, processor, outcome, attempt, c.bank, now_ms), replayed: false };
  }
  if (outcome) return { row: outcome, replayed: false };
  const winner = await findByRequestId(deps.store, account.account_id, cmd.request_id);
  if (!winner) throw new Error('payout twin vanished');
  return replay(winner, cmd.request_hash);
}

/** The payout row a checked request makes: SCHEDULED when its dispatch is later, else PROCESSING. */
function newPayoutRow(account: AccountRow, cmd: PayoutCommand, c: Checked, now_ms: number): PayoutRow {
  return {
    transaction_id: newId('payout', now_ms),
    short_reference_id: newId('payout_reference', now_ms),
    merchant_id: account.merchant_id,
    account_id: account.account_id,
    livemode: account.mode === 'live' ? 1 : 0,
    request_id: cmd.request_id,
    request_hash: c.request_hash,
    status: c.dispatch_at > now_ms ? 'SCHEDULED' : 'PROCESSING',
    failure_type: '',
    failure_reason: '',
    payment_method: c.payment_method,
    local_clearing_system: c.local_clearing_system,
    source_currency: cmd.source_currency,
    payment_currency: cmd.payment_currency,
    ...c.amounts,
    fee_paid_by: c.fee_paid_by,
    swift_charge_option: c.payment_method === 'SWIFT' ? c.swift_charge_option : '',
    fx_rate: c.fx_rate,
    fx_source: c.fx_source,
    payment_date: c.payment_date,
    dispatch_at: c.dispatch_at,
    beneficiary_id: c.saved.beneficiary_id,
    details: JSON.stringify(echoOf(cmd.echo, c.beneficiary, c.local_clearing_system)),
    notify_url: cmd.notify_url ?? '',
    processor_reference: '',
    settlement_batches: '[]',
    created_at: now_ms,
    updated_at: now_ms,
  };
}

/** Saves a new beneficiary, encrypted; when a twin saved the same one first, the payout names that one. */
async function saveBeneficiary(tx: Tx, deps: PayoutDeps, account: AccountRow, c: Checked, row: PayoutRow, now_ms: number): Promise<void> {
  await tx
    .insertInto('beneficiaries')
    .values({
      beneficiary_id: c.saved.beneficiary_id,
      account_id: account.account_id,
      fingerprint: c.saved.fingerprint,
      data_enc: deps.keyring.encrypt(JSON.stringify(c.beneficiary)),
      label: beneficiaryLabel(c.beneficiary, c.local_clearing_system, c.bank),
      created_at: now_ms,
    })
    .onConflict((oc) => oc.columns(['account_id', 'fingerprint']).doNothing())
    .execute();
  const kept = await tx
    .selectFrom('beneficiaries')
    .select('beneficiary_id')
    .where('account_id', '=', account.account_id)
    .where('fingerprint', '=', c.saved.fingerprint)
    .executeTakeFirstOrThrow();
  if (kept.beneficiary_id !== row.beneficiary_id) {
    row.beneficiary_id = kept.beneficiary_id;
    await tx.updateTable('payouts').set({ beneficiary_id: kept.beneficiary_id }).where('transaction_id', '=', row.transaction_id).execute();
  }
}

/**
 * Funds the new payout under its funding row (payouts of one balance are funded one after
 * another): fails it INSUFFICIENT_FUNDS when the balance is short, else reserves and either
 * schedules its dispatch or records the attempt that sends it now (PROCESSING).
 */
async function fundPayout(tx: Tx, row: PayoutRow, attempt: ProcessorAttemptRow, now_ms: number): Promise<PayoutRow> {
  const { transaction_id } = row;
  await tx
    .insertInto('payout_funding')
    .values({ account_id: row.account_id, currency: row.source_currency, payouts: 1, updated_at: now_ms })
    .onConflict((oc) => oc.columns(['account_id', 'currency']).doUpdateSet((eb) => ({ payouts: eb('payout_funding.payouts', '+', 1), updated_at: now_ms })))
    .execute();
  const available = await availableMinor(tx, row.account_id, row.source_currency);
  const debit = Number(row.amount_payer_pays) + Number(row.fee_amount);
  if (available < debit) {
    const patch = { failure_type: 'INSUFFICIENT_FUNDS', failure_reason: failureReason('INSUFFICIENT_FUNDS') };
    const failed = await movePayout(tx, transaction_id, 'fail_unfunded', row.status, patch, now_ms);
    if (!failed) throw new Error(`payout ${transaction_id} changed in the transaction that created it`);
    return failed;
  }
  await postPayout(tx, row, ['reserve'], now_ms);
  if (row.status === 'SCHEDULED') {
    await enqueueJob(
      tx,
      { kind: DISPATCH_KIND, job_key: `payout:${transaction_id}:dispatch`, account_id: row.account_id, due_at: row.dispatch_at, payload: { transaction_id } },
      now_ms,
    );
    return row;
  }
  await tx.insertInto('processor_attempts').values(attempt).execute();
  return row;
}

/** The attempt that sends a payout (its claim `payout:<id>`: one send of a payout open at a time). */
function payoutAttempt(deps: Pick<Deps, 'settings'>, processor: Processor, row: PayoutRow, now_ms: number): ProcessorAttemptRow {
  return newAttempt(
    {
      account_id: row.account_id,
      connector: processor.name,
      processor_id: processor.processor_id,
      operation: 'payout',
      object_id: row.transaction_id,
      amount_minor: Number(row.amount_beneficiary_receives),
      currency: row.payment_currency,
      claim_key: `payout:${row.transaction_id}`,
    },
    now_ms,
    deps.settings.processor_timeout_ms,
  );
}

/** Sends a PROCESSING payout whose attempt is committed, and settles the answer; the payout as it then stands. */
async function sendPayout(
  deps: Pick<Deps, 'store' | 'now'>,
  processor: Processor,
  row: PayoutRow,
  attempt: ProcessorAttemptRow,
  bank: PayoutInput['account'],
  now_ms: number,
): Promise<PayoutRow> {
  const payout = processor.payout;
  const answer: PayoutOutcome = payout
    ? await callWithDeadline(attempt, deps.now, (call) => payout.call(processor, connectorInput(row, bank), call))
    : { kind: 'failed', failure_type: 'PROCESSOR_ERROR', reason: 'No payout connector serves this account', reference: '' };
  await settlePayoutAttempt(deps, row, attempt, answer, now_ms, 0);
  return requirePayout(deps.store, row.transaction_id);
}

function requirePayout(store: Store, transaction_id: string): Promise<PayoutRow> {
  return store.db.selectFrom('payouts').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
}

class SettledMeanwhile extends Error {}

/**
 * Settles a payout's send attempt with the connector's answer (at once, for the sweeper, or
 * by webhook): the attempt and the payout's move (its postings, event and, while the bank is
 * still processing it, the next check job) in one transaction. `approved` means the
 * connector took the payout (completed, or processing at the bank); an `unknown` answer
 * keeps both open for the sweeper, and `not_found` (it never reached the connector) fails
 * the payout PROCESSOR_ERROR with its funds released: nothing was sent, nothing is sent twice.
 */
export async function settlePayoutAttempt(
  deps: Pick<Deps, 'store'>,
  row: PayoutRow,
  a: ProcessorAttemptRow,
  answer: PayoutOutcome | { kind: 'not_found' },
  now_ms: number,
  checks?: number,
): Promise<boolean> {
  const lost = () => new SettledMeanwhile();
  if (answer.kind === 'unknown') {
    const unit = settleAttemptInto(new WriteUnit(deps.store.engine), a, 'answer', { status: 'unknown', error: answer.reason, checks }, now_ms, lost);
    return deps.store.write(unit).then(
      () => true,
      (e) => {
        if (e instanceof SettledMeanwhile) return false;
        throw e;
      },
    );
  }
  const settled: PayoutAnswer =
    answer.kind === 'not_found'
      ? { kind: 'failed', failure_type: 'PROCESSOR_ERROR', reason: 'The payout never reached the payout connector', reference: '' }
      : answer;
  const unit = new WriteUnit(deps.store.engine);
  if (answer.kind === 'not_found') settleAttemptInto(unit, a, 'lose', { status: 'declined', error: 'not found at the processor', checks }, now_ms, lost);
  else
    settleAttemptInto(
      unit,
      a,
      'answer',
      { status: settled.kind === 'failed' ? 'declined' : 'approved', reference: settled.reference || undefined, checks },
      now_ms,
      lost,
    );
  return deps.store
    .transaction(async (tx) => {
      await applyUnit(tx, unit);
      await settle(tx, row, settled, [], now_ms, 0);
      return true;
    })
    .catch((e) => {
      if (e instanceof SettledMeanwhile) return false;
      throw e;
    });
}

/** A payout connector's answer once it is one: completed, failed, or processing (asked again later). */
type PayoutAnswer = Exclude<PayoutOutcome, { kind: 'unknown' }>;

function replay(prior: PayoutRow, request_hash: string): CreateResult {
  if (prior.request_hash !== request_hash)
    throw new Refused(refuse('conflict', 'request_id was already used for another payout request; send a new request_id', { field: 'request_id' }));
  return { row: prior, replayed: true };
}

export function findByRequestId(store: Store, account_id: string, request_id: string): Promise<PayoutRow | undefined> {
  return store.db.selectFrom('payouts').selectAll().where('account_id', '=', account_id).where('request_id', '=', request_id).executeTakeFirst();
}

/** The available balance: the sum of its slots, read after the funding row is held. */
export async function availableMinor(tx: Tx, account_id: string, currency: string): Promise<number> {
  const r = await tx
    .selectFrom('ledger_balances')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('balance_minor'), eb.lit(0)).as('total'))
    .where('account_id', '=', account_id)
    .where('currency', '=', currency)
    .where('ledger_account', '=', 'merchant_available')
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

function beneficiaryLabel(b: BeneficiaryInput, system: string, bank: PayoutInput['account']): string {
  const name = b.company_name || [b.first_name, b.last_name].filter(Boolean).join(' ') || b.bank_details?.account_name || '';
  return `${name.slice(0, 100)} · ${bank.country} · ${system} · ${maskAccount(bank.iban ?? bank.account_number ?? '')}`;
}

function connectorInput(row: PayoutRow, account: PayoutInput['account']): PayoutInput {
  return {
    transaction_id: row.transaction_id,
    payment_method: row.payment_method as 'LOCAL' | 'SWIFT',
    local_clearing_system: row.local_clearing_system,
    amount_minor: Number(row.amount_beneficiary_receives),
    currency: row.payment_currency,
    account,
    swift_charge_option: row.swift_charge_option,
  };
}

/** The bank account of a stored payout, from its (encrypted) saved beneficiary. */
async function bankOf(tx: Tx, deps: Pick<Deps, 'keyring'>, row: PayoutRow): Promise<PayoutInput['account']> {
  const b = await tx.selectFrom('beneficiaries').select('data_enc').where('beneficiary_id', '=', row.beneficiary_id).executeTakeFirstOrThrow();
  const beneficiary = JSON.parse(deps.keyring.decrypt(b.data_enc)) as BeneficiaryInput;
  const checked = checkBankDetails(beneficiary.bank_details, {
    payment_currency: row.payment_currency,
    payment_method: row.payment_method as 'LOCAL' | 'SWIFT',
    fallback_country: beneficiary.address?.country_code,
  });
  const code = checked.bank_code;
  return {
    country: checked.country,
    ...(checked.iban ? { iban: checked.iban } : checked.account_number ? { account_number: checked.account_number } : {}),
    ...(checked.swift_code ? { swift_code: checked.swift_code } : {}),
    ...(code ? { bank_code: code } : {}),
  };
}

const FAILURE_REASONS: Record<FailureType, string> = {
  INSUFFICIENT_FUNDS: 'The available balance does not cover the amount and the fee',
  INVALID_ACCOUNT: 'The beneficiary account does not exist',
  RETURNED: 'The beneficiary bank returned the payment',
  PROCESSOR_ERROR: 'The payout connector could not pay it',
};

function failureReason(t: FailureType, detail?: string): string {
  return detail || FAILURE_REASONS[t];
}

/**
 * Applies the connector's answer to a PROCESSING payout: its transition, postings (with
 * `before`, the movements this transaction already owes, merged per currency), event, and
 * for `processing` the next check job.
 */
async function settle(
  tx: Tx,
  row: PayoutRow,
  answer: PayoutAnswer,
  before: readonly ('reserve' | 'complete' | 'release')[],
  now_ms: number,
  checks: number,
): Promise<PayoutRow> {
  if (answer.kind === 'processing') {
    const updated = await movePayout(tx, row.transaction_id, 'still_processing', 'PROCESSING', { processor_reference: answer.reference }, now_ms, before);
    if (!updated) throw new PayoutMoved(row.transaction_id);
    if (checks < MAX_CHECKS) {
      await enqueueJob(
        tx,
        {
          kind: CHECK_KIND,
          job_key: `payout:${row.transaction_id}:check:${checks + 1}`,
          account_id: row.account_id,
          due_at: now_ms + answer.check_after_ms,
          payload: { transaction_id: row.transaction_id, checks: checks + 1 },
        },
        now_ms,
      );
    }
    return updated;
  }
  const event = answer.kind === 'completed' ? 'complete' : 'fail';
  const patch =
    answer.kind === 'completed'
      ? { processor_reference: answer.reference }
      : { processor_reference: answer.reference, failure_type: answer.failure_type, failure_reason: failureReason(answer.failure_type, answer.reason) };
  const updated = await movePayout(tx, row.transaction_id, event, 'PROCESSING', patch, now_ms, before);
  if (!updated) throw new PayoutMoved(row.transaction_id);
  return updated;
}

/** The payout left PROCESSING before this settle (another check, the operator, a webhook): this one changes nothing. */
class PayoutMoved extends Error {
  constructor(transaction_id: string) {
    super(`payout ${transaction_id} left PROCESSING under a settle`);
  }
}

export type PayoutJobDeps = Pick<Deps, 'keyring' | 'processorFor' | 'store' | 'settings' | 'now'>;

/**
 * The dispatch job (payment_date reached), at least once: SCHEDULED → PROCESSING with the
 * send attempt recorded in one transaction, then the call, then its answer settled. A run
 * after a crash finds the attempt it recorded and, if its call may not have been made
 * (`sent`), makes it again with the same attempt id (the connector's idempotency key).
 */
export async function runDispatch(deps: PayoutJobDeps, transaction_id: string, now_ms: number): Promise<PayoutStatus | 'stale'> {
  const current = await requirePayout(deps.store, transaction_id).catch(() => undefined);
  if (!current) return 'stale';
  const account = await deps.store.db.selectFrom('accounts').selectAll().where('account_id', '=', current.account_id).executeTakeFirstOrThrow();
  const processor = deps.processorFor(account as AccountRow);
  const claim_key = `payout:${transaction_id}`;
  const fresh = processor ? payoutAttempt(deps, processor, current, now_ms) : null;
  const found = await deps.store.transaction(async (tx) => {
    const row = await movePayout(tx, transaction_id, 'dispatch', 'SCHEDULED', {}, now_ms);
    if (!row) {
      // Dispatched by an earlier run that died after its commit, or cancelled meanwhile.
      const earlier = await tx.selectFrom('processor_attempts').selectAll().where('claim_key', '=', claim_key).executeTakeFirst();
      const now = await tx.selectFrom('payouts').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
      return earlier?.status === 'sent' && now.status === 'PROCESSING' ? { row: now, attempt: earlier } : null;
    }
    if (!fresh) {
      const patch = { failure_type: 'PROCESSOR_ERROR', failure_reason: 'No payout connector serves this account' };
      // Dispatched just above in this transaction: the compare-and-set cannot lose.
      if (!(await movePayout(tx, transaction_id, 'fail', 'PROCESSING', patch, now_ms)))
        throw new Error(`payout ${transaction_id} left PROCESSING under its dispatch`);
      return null;
    }
    await tx.insertInto('processor_attempts').values(fresh).execute();
    return { row, attempt: fresh };
  });
  if (!found || !processor) return (await requirePayout(deps.store, transaction_id)).status;
  const bank = await bankOf(deps.store.db, deps, found.row);
  return (await sendPayout(deps, processor, found.row, found.attempt, bank, now_ms)).status;
}

/**
 * The check job of a PROCESSING payout, at least once: asks the connector where it stands,
 * with the attempt id that sent it, outside any transaction; the answer is settled by the
 * payout's compare-and-set, so a second run of the same check changes nothing.
 */
export async function runCheck(deps: PayoutJobDeps, transaction_id: string, checks: number, now_ms: number): Promise<PayoutStatus | 'stale'> {
  const row = await deps.store.db
    .selectFrom('payouts')
    .selectAll()
    .where('transaction_id', '=', transaction_id)
    .where('status', '=', 'PROCESSING')
    .executeTakeFirst();
  if (!row) return 'stale';
  const account = await deps.store.db.selectFrom('accounts').selectAll().where('account_id', '=', row.account_id).executeTakeFirstOrThrow();
  const processor = deps.processorFor(account as AccountRow);
  const payoutStatus = processor?.payoutStatus;
  if (!processor || !payoutStatus) throw new Error(`no payout connector for account ${row.account_id}`);
  const sent = await deps.store.db
    .selectFrom('processor_attempts')
    .select('attempt_id')
    .where('object_id', '=', transaction_id)
    .where('operation', '=', 'payout')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  const asked = { attempt_id: sent?.attempt_id ?? `${transaction_id}.send`, deadline_at: deps.now() + deps.settings.processor_timeout_ms };
  const input = { ...connectorInput(row, await bankOf(deps.store.db, deps, row)), reference: row.processor_reference };
  const answer = await callWithDeadline(asked, deps.now, (call) => payoutStatus.call(processor, input, call));
  // Not heard, or lost by the connector: asked again by the next check.
  const settled: PayoutAnswer =
    answer.kind === 'unknown' || answer.kind === 'not_found' ? { kind: 'processing', reference: row.processor_reference, check_after_ms: 60_000 } : answer;
  const after = await deps.store
    .transaction((tx) => settle(tx, row, settled, [], now_ms, checks))
    .catch((e) => {
      if (e instanceof PayoutMoved) return undefined;
      throw e;
    });
  return after?.status ?? 'stale';
}

/** The job handlers of the payout kinds (the scheduler's, and the payout fuzz's). */
export function dispatchHandler(deps: PayoutJobDeps) {
  return async (job: { payload: unknown }, ctx: { now_ms: number }) => {
    await runDispatch(deps, (job.payload as { transaction_id: string }).transaction_id, ctx.now_ms);
    return undefined;
  };
}

export function checkHandler(deps: PayoutJobDeps) {
  return async (job: { payload: unknown }, ctx: { now_ms: number }) => {
    const { transaction_id, checks } = job.payload as { transaction_id: string; checks: number };
    await runCheck(deps, transaction_id, checks, ctx.now_ms);
    return undefined;
  };
}

/**
 * `payouts resolve`: the operator settles a PROCESSING payout by hand when the connector
 * cannot (its checks ran out, or the bank confirmed out of band): COMPLETED, or FAILED
 * with the funds released. The same settle as the check job: transition, postings, event.
 */
export async function resolvePayout(
  store: Store,
  account_id: string,
  transaction_id: string,
  outcome: { kind: 'completed' } | { kind: 'failed'; failure_type: 'RETURNED' | 'PROCESSOR_ERROR'; reason: string },
  now_ms: number,
): Promise<PayoutRow | { refused: string }> {
  return store.transaction(async (tx) => {
    const row = await tx.selectFrom('payouts').selectAll().where('account_id', '=', account_id).where('transaction_id', '=', transaction_id).executeTakeFirst();
    if (!row) return { refused: `no payout ${transaction_id} on account ${account_id}` };
    if (row.status !== 'PROCESSING')
      return { refused: `payout ${transaction_id} is ${row.status}; only a PROCESSING payout can be resolved (cancel a SCHEDULED one)` };
    const reference = row.processor_reference || 'operator';
    const answer: PayoutAnswer = outcome.kind === 'completed' ? { kind: 'completed', reference } : { ...outcome, reference };
    return settle(tx, row, answer, [], now_ms, MAX_CHECKS);
  });
}

export type CancelResult =
  | { kind: 'cancelled'; row: PayoutRow }
  | { kind: 'already'; row: PayoutRow }
  | { kind: 'too_late'; row: PayoutRow }
  | { kind: 'not_found' };

/** `POST /v1/cancelpayout`: SCHEDULED → CANCELLED with the reserved funds back. */
export async function cancelPayout(
  store: Store,
  account_id: string,
  sel: { request_id?: string; transaction_id?: string },
  now_ms: number,
): Promise<CancelResult> {
  const find = () => {
    let q = store.db.selectFrom('payouts').selectAll().where('account_id', '=', account_id);
    if (sel.request_id !== undefined) q = q.where('request_id', '=', normaliseRequestId(sel.request_id));
    if (sel.transaction_id !== undefined) q = q.where('transaction_id', '=', sel.transaction_id);
    return q.executeTakeFirst();
  };
  const row = await find();
  if (!row) return { kind: 'not_found' };
  if (row.status === 'CANCELLED') return { kind: 'already', row };
  if (row.status !== 'SCHEDULED') return { kind: 'too_late', row };
  const done = await store.transaction((tx) =>
    movePayout(tx, row.transaction_id, 'cancel', 'SCHEDULED', { failure_type: 'CANCELLED', failure_reason: 'Cancelled by the merchant' }, now_ms),
  );
  if (done) return { kind: 'cancelled', row: done };
  // The dispatch (or another cancel) got there first.
  const now = (await find()) as PayoutRow;
  return now.status === 'CANCELLED' ? { kind: 'already', row: now } : { kind: 'too_late', row: now };
}

/**
 * The sweeper's question about a payout's send attempt whose answer was not heard (the call
 * timed out or failed, or the process died after recording it): the connector is asked with
 * the same attempt id, and its answer settled as one heard at once.
 */
export async function resolvePayoutAttempt(deps: PayoutJobDeps, a: ProcessorAttemptRow, now_ms: number): Promise<'settled' | 'open'> {
  const row = await deps.store.db.selectFrom('payouts').selectAll().where('transaction_id', '=', a.object_id).executeTakeFirst();
  const account = row ? await deps.store.db.selectFrom('accounts').selectAll().where('account_id', '=', row.account_id).executeTakeFirst() : undefined;
  const processor = account ? deps.processorFor(account as AccountRow) : null;
  const payoutStatus = processor?.payoutStatus;
  if (row?.status !== 'PROCESSING' || !processor || !payoutStatus) {
    // Settled another way (the operator, a webhook), or nobody left to ask: the attempt closes as it stands.
    const unit = settleAttemptInto(
      new WriteUnit(deps.store.engine),
      a,
      'lose',
      { status: 'declined', error: 'nothing left to settle' },
      now_ms,
      () => new SettledMeanwhile(),
    );
    await deps.store.write(unit).catch((e) => {
      if (!(e instanceof SettledMeanwhile)) throw e;
    });
    return 'settled';
  }
  const asked = { attempt_id: a.attempt_id, deadline_at: deps.now() + deps.settings.processor_timeout_ms };
  const input = { ...connectorInput(row, await bankOf(deps.store.db, deps, row)), reference: row.processor_reference };
  const answer = await callWithDeadline(asked, deps.now, (call) => payoutStatus.call(processor, input, call));
  await settlePayoutAttempt(deps, row, a, answer, now_ms, a.checks + 1);
  return answer.kind === 'unknown' ? 'open' : 'settled';
}
