// Operator commands for an account's processors (docs/contract.md §21): set, list, show,
// remove and status. Credentials are given as --credential NAME=VALUE, stored encrypted and
// shown only by their last four characters; every change is written to the merchant's audit
// log (the portal's Audit page) as done by the operator's CLI.
import { command, need, out, UsageError } from '../command/registry.js';
import { audit } from '../portal/audit.js';
import {
  findProcessor,
  listProcessors,
  ProcessorSettingRefused,
  reencryptProcessors,
  removeProcessor,
  setProcessor,
  shownProcessor,
} from '../processors/config.js';
import type { Runtime } from '../web/context.js';

const ACCOUNT = { account: { type: 'string' } } as const;
const WHICH = { id: { type: 'string' }, connector: { type: 'string' } } as const;

/** The merchant of an account, for its audit line. */
async function merchantOf(r: Runtime, account_id: string): Promise<string> {
  const a = await r.store.db.selectFrom('accounts').select('merchant_id').where('account_id', '=', account_id).executeTakeFirst();
  if (!a) throw new UsageError(`no account ${account_id}`);
  return a.merchant_id;
}

async function auditChange(r: Runtime, account_id: string, action: string, target: string, detail: string): Promise<void> {
  await audit(
    r.store,
    { merchant_id: await merchantOf(r, account_id), user_id: 'cli', email: 'operator (tollgate CLI)', action, target, outcome: 'ok', ip: '', detail },
    Date.now(),
  );
}

export const processorSetCommand = command({
  name: 'processor set',
  args: '--account ID --connector sandbox|adyen|stripe [--base-url URL] [--priority N] [--currencies USD,EUR] [--brands visa,mastercard] [--credential NAME=VALUE]…',
  details: [
    'Credentials are stored encrypted with the master key and shown only by their last four characters; one not given again is kept.',
    'Processors are tried lowest --priority first among those that take the payment’s currency and brand (default 1).',
    'A running gateway reads the change within 2 seconds.',
  ],
  options: {
    ...ACCOUNT,
    connector: { type: 'string' },
    'base-url': { type: 'string' },
    priority: { type: 'string' },
    currencies: { type: 'string' },
    brands: { type: 'string' },
    credential: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const connector = need(values.connector, '--connector');
    const priority = values.priority === undefined ? undefined : Number(values.priority);
    const r = await runtime();
    await merchantOf(r, account_id);
    let row: Awaited<ReturnType<typeof setProcessor>>;
    try {
      row = await setProcessor(
        r.store,
        r.keyring,
        {
          account_id,
          connector,
          base_url: values['base-url'],
          priority,
          currencies: values.currencies,
          brands: values.brands,
          credentials: values.credential ?? [],
        },
        Date.now(),
      );
    } catch (e) {
      if (e instanceof ProcessorSettingRefused) throw new UsageError(e.message);
      throw e;
    }
    const shown = shownProcessor(row, r.settings.public_url);
    await auditChange(
      r,
      account_id,
      'processor.set',
      row.processor_id,
      `${row.connector} ${shown.base_url}; credentials ${Object.keys(shown.credentials).join(', ') || 'none'}`,
    );
    if (values.json) return out(JSON.stringify(shown));
    out(
      `processor ${row.processor_id}: ${row.connector} at ${shown.base_url}, priority ${row.priority}, currencies ${shown.currencies}, brands ${shown.brands}`,
    );
    for (const [k, v] of Object.entries(shown.credentials)) out(`  credential ${k} ${v}`);
    out(`webhook address to register at the provider: ${shown.webhook_url}`);
  },
});

export const processorListCommand = command({
  name: 'processor list',
  args: '[--account ID] [--json]',
  options: { ...ACCOUNT, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const r = await runtime();
    const rows = (await listProcessors(r.store, values.account)).map((row) => shownProcessor(row, r.settings.public_url));
    if (values.json) return out(JSON.stringify(rows));
    if (rows.length === 0)
      out(values.account ? `account ${values.account} has no processor set (a test account uses the in-process sandbox)` : 'no processor is set');
    for (const p of rows) out(`${p.account_id}\t${p.processor_id}\t${p.connector}\t${p.base_url}\tpriority ${p.priority}\t${p.currencies}\t${p.brands}`);
  },
});

/** The processor the options name: by --id, or by --connector. */
async function named(r: Runtime, account_id: string, values: { id?: string; connector?: string }) {
  if (!values.id && !values.connector) throw new UsageError('name the processor: --id prc_… or --connector NAME');
  const row = await findProcessor(r.store, account_id, { processor_id: values.id, connector: values.connector });
  if (!row) throw new UsageError(`account ${account_id} has no such processor (see processor list --account ${account_id})`);
  return row;
}

export const processorShowCommand = command({
  name: 'processor show',
  args: '--account ID (--id prc_… | --connector NAME) [--json]',
  options: { ...ACCOUNT, ...WHICH, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const r = await runtime();
    const shown = shownProcessor(await named(r, account_id, values), r.settings.public_url);
    if (values.json) return out(JSON.stringify(shown));
    for (const [k, v] of Object.entries(shown)) out(`${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  },
});

export const processorRemoveCommand = command({
  name: 'processor remove',
  args: '--account ID (--id prc_… | --connector NAME)',
  options: { ...ACCOUNT, ...WHICH },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const r = await runtime();
    const row = await named(r, account_id, values);
    await removeProcessor(r.store, row.processor_id);
    await auditChange(r, account_id, 'processor.remove', row.processor_id, row.connector);
    out(`removed processor ${row.processor_id} (${row.connector}) from account ${account_id}`);
  },
});

export const processorStatusCommand = command({
  name: 'processor status',
  args: '--account ID [--json]',
  options: { ...ACCOUNT, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const r = await runtime();
    const db = r.store.db;
    const attempts = await db
      .selectFrom('processor_attempts')
      .select(['connector', 'operation', 'status'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', account_id)
      .groupBy(['connector', 'operation', 'status'])
      .execute();
    const processors = await listProcessors(r.store, account_id);
    const unmatched = processors.length
      ? await db
          .selectFrom('processor_notifications')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where(
            'processor_id',
            'in',
            processors.map((p) => p.processor_id),
          )
          .where('result', '=', 'unmatched')
          .executeTakeFirst()
      : { n: 0 };
    const since = Date.now() - DAY_MS;
    const recent = await db
      .selectFrom('processor_attempts')
      .select(['processor_id', 'operation', 'status', 'checks', 'last_error', 'created_at', 'updated_at'])
      .where('account_id', '=', account_id)
      .where('created_at', '>=', since)
      .orderBy('created_at', 'desc')
      .limit(50_000)
      .execute();
    const report = {
      account_id,
      processors: processors.map((p) => ({
        processor_id: p.processor_id,
        connector: p.connector,
        priority: p.priority,
        last_24h: health(recent, p.processor_id),
      })),
      attempts: attempts.map((a) => ({ connector: a.connector, operation: a.operation, status: a.status, count: Number(a.n) })),
      unmatched_notifications: Number(unmatched?.n ?? 0),
    };
    if (values.json) return out(JSON.stringify(report));
    out(
      `account ${account_id}: ${processors.length ? processors.map((p) => `${p.connector} ${p.processor_id}`).join(', ') : 'no processor set (a test account uses the in-process sandbox)'}`,
    );
    for (const p of report.processors) {
      const h = p.last_24h;
      out(
        `  ${p.connector} ${p.processor_id} (priority ${p.priority}), last 24 h: ${h.calls} calls, authorisations approved ${h.approval_rate === null ? '—' : `${h.approval_rate}%`}, no answer ${h.unanswered}, not sent ${h.not_sent}; answered at once p50 ${h.p50_ms ?? '—'} ms, p99 ${h.p99_ms ?? '—'} ms`,
      );
    }
    out('  circuit breakers are per process: tollgate_processor_circuit_open on /metrics');
    for (const a of report.attempts) out(`  ${a.connector}\t${a.operation}\t${a.status}\t${a.count}`);
    out(`  notifications that matched no attempt: ${report.unmatched_notifications}`);
  },
});

const DAY_MS = 86_400_000;

/**
 * One processor's last 24 hours from its attempts: calls, the share of authorisations it
 * approved (of those it decided; ones never sent excluded), calls with no answer yet, calls
 * never sent (routed to the next), and the latency of calls answered at once.
 */
function health(
  rows: ReadonlyArray<{
    processor_id: string | null;
    operation: string;
    status: string;
    checks: number;
    last_error: string;
    created_at: number;
    updated_at: number;
  }>,
  processor_id: string,
) {
  const mine = rows.filter((r) => r.processor_id === processor_id);
  const notSent = (r: { status: string; last_error: string }) => r.status === 'declined' && r.last_error.startsWith('not sent');
  const decided = mine.filter((r) => r.operation === 'authorise' && (r.status === 'approved' || (r.status === 'declined' && !notSent(r))));
  const approved = decided.filter((r) => r.status === 'approved').length;
  const latency = mine
    .filter((r) => Number(r.checks) === 0 && !notSent(r) && !['sent', 'unknown', 'pending'].includes(r.status))
    .map((r) => Number(r.updated_at) - Number(r.created_at))
    .sort((a, b) => a - b);
  const at = (q: number) => (latency.length ? (latency[Math.min(latency.length - 1, Math.floor(q * latency.length))] ?? null) : null);
  return {
    calls: mine.length,
    approval_rate: decided.length ? Math.round((1000 * approved) / decided.length) / 10 : null,
    unanswered: mine.filter((r) => r.status === 'unknown' || r.status === 'sent').length,
    not_sent: mine.filter(notSent).length,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
  };
}

export const processorReencryptCommand = command({
  name: 'processor reencrypt',
  args: '',
  details: [
    'After rotating the master key (the new key first in TOLLGATE_MASTER_KEY, the old one after it), seals every processor’s credentials under the new key; then the old key can be removed.',
  ],
  options: {},
  async run({ runtime }) {
    const r = await runtime();
    const done = await reencryptProcessors(r.store, r.keyring, Date.now());
    for (const account_id of done.accounts)
      await auditChange(r, account_id, 'processor.reencrypt', account_id, `credentials sealed under master key ${r.keyring.active.id}`);
    out(`${done.rewritten} of ${done.processors} processors' credentials sealed anew under master key ${r.keyring.active.id} (the others were already)`);
  },
});
