// Processors per account (docs/contract.md §21, docs/processors.md): which connector serves an
// account, where it is (`base_url`), in which order it is tried and for which currencies and
// brands, with its credentials encrypted under the master key and shown only by their last
// four characters. The CLI (`tollgate processor …`) and the portal's Processors page (owners) change
// them through here; every change is audited in the merchant's audit log.
import { newId } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { ConnectorName, ProcessorConfigRow } from '../db/tables/processors.js';
import { currencyExponent } from '../money/currency.js';

export type { ConnectorName, ProcessorConfigRow };

/** The credentials each connector takes (docs/contract.md §21); `required` ones must be given. */
export const CONNECTOR_CREDENTIALS: Readonly<Record<ConnectorName, { required: readonly string[]; optional: readonly string[] }>> = {
  sandbox: { required: [], optional: ['api_key', 'webhook_secret'] },
  adyen: { required: ['api_key', 'merchant_account', 'hmac_key'], optional: [] },
  stripe: { required: ['secret_key', 'webhook_secret'], optional: [] },
};

/** Connectors this build can call (the others are configured by issue 32's connectors). */
export const BUILT_CONNECTORS: readonly ConnectorName[] = ['sandbox', 'adyen', 'stripe'];

export interface ProcessorSettings {
  account_id: string;
  connector: string;
  base_url?: string;
  priority?: number;
  currencies?: string;
  brands?: string;
  /** `NAME=VALUE` pairs as given. */
  credentials: readonly string[];
}

/** A setting refused, naming what is wrong; nothing was written. */
export class ProcessorSettingRefused extends Error {}

/** What `set` stores, checked: a known connector this build speaks, a URL, ISO currencies, brands, the connector's credentials (the required ones are checked by `setProcessor` with those stored). */
export function checkSettings(s: ProcessorSettings): Omit<
  ProcessorConfigRow,
  'processor_id' | 'credentials_enc' | 'credentials_hint' | 'created_at' | 'updated_at'
> & {
  credentials: Record<string, string>;
} {
  const connector = s.connector as ConnectorName;
  if (!Object.hasOwn(CONNECTOR_CREDENTIALS, connector))
    throw new ProcessorSettingRefused(`--connector must be one of ${Object.keys(CONNECTOR_CREDENTIALS).join(', ')}`);
  if (!BUILT_CONNECTORS.includes(connector))
    throw new ProcessorSettingRefused(`the ${connector} connector is not built yet; this gateway speaks ${BUILT_CONNECTORS.join(', ')}`);
  const base_url = (s.base_url ?? '').trim();
  if (base_url) {
    let url: URL;
    try {
      url = new URL(base_url);
    } catch {
      throw new ProcessorSettingRefused(`--base-url ${JSON.stringify(base_url)} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ProcessorSettingRefused('--base-url must be an http or https URL');
    if (url.username || url.password) throw new ProcessorSettingRefused('--base-url must not carry credentials: give them with --credential');
  }
  const priority = s.priority ?? 1;
  if (!Number.isSafeInteger(priority) || priority < 0 || priority > 1000) throw new ProcessorSettingRefused('--priority must be a whole number from 0 to 1000');
  const currencies = list(s.currencies, (c) => c.toUpperCase());
  for (const c of currencies) if (currencyExponent(c) === null) throw new ProcessorSettingRefused(`--currencies: ${c} is not a currency this gateway knows`);
  const brands = list(s.brands, (b) => b.toLowerCase());
  for (const b of brands)
    if (!/^[a-z][a-z-]{1,30}$/.test(b))
      throw new ProcessorSettingRefused(`--brands: ${JSON.stringify(b)} is not a card brand name (visa, mastercard, american-express, …)`);
  const credentials: Record<string, string> = {};
  const allowed = CONNECTOR_CREDENTIALS[connector];
  for (const pair of s.credentials) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ProcessorSettingRefused('--credential takes NAME=VALUE');
    const name = pair.slice(0, at);
    const value = pair.slice(at + 1);
    if (!allowed.required.includes(name) && !allowed.optional.includes(name))
      throw new ProcessorSettingRefused(
        `--credential ${name}: the ${connector} connector takes ${[...allowed.required, ...allowed.optional].join(', ') || 'none'}`,
      );
    if (!value) throw new ProcessorSettingRefused(`--credential ${name} is empty`);
    credentials[name] = value;
  }
  return { account_id: s.account_id, connector, base_url, priority, currencies: currencies.join(','), brands: brands.join(','), credentials };
}

function list(text: string | undefined, norm: (s: string) => string): string[] {
  return [
    ...new Set(
      (text ?? '')
        .split(',')
        .map((x) => norm(x.trim()))
        .filter(Boolean),
    ),
  ];
}

/** `••••` and the last four characters: all a credential ever shows. */
export function lastFour(value: string): string {
  return `••••${value.slice(-4)}`;
}

/**
 * Sets the account's processor of that connector (a new one, or the one it had, changed):
 * its row, credentials encrypted. Returns the row as stored.
 */
export async function setProcessor(store: Store, keyring: Keyring, s: ProcessorSettings, now_ms: number): Promise<ProcessorConfigRow> {
  const checked = checkSettings(s);
  const { credentials, ...settings } = checked;
  const hint = Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k, lastFour(v)]));
  return store.transaction(async (tx) => {
    const existing = await tx
      .selectFrom('processors')
      .selectAll()
      .where('account_id', '=', s.account_id)
      .where('connector', '=', checked.connector)
      .executeTakeFirst();
    // Credentials not given again are kept: `set` changes what it is told.
    const kept = existing ? (JSON.parse(keyring.decrypt(existing.credentials_enc)) as Record<string, string>) : {};
    const merged = { ...kept, ...credentials };
    // Required ones count once stored: changing an Adyen processor's priority needs no keys again.
    for (const name of CONNECTOR_CREDENTIALS[checked.connector].required)
      if (!merged[name]) throw new ProcessorSettingRefused(`the ${checked.connector} connector needs --credential ${name}=…`);
    const mergedHint = { ...(existing ? (JSON.parse(existing.credentials_hint) as Record<string, string>) : {}), ...hint };
    const row: ProcessorConfigRow = {
      processor_id: existing?.processor_id ?? newId('processor', now_ms),
      ...settings,
      credentials_enc: keyring.encrypt(JSON.stringify(merged)),
      credentials_hint: JSON.stringify(mergedHint),
      created_at: existing?.created_at ?? now_ms,
      updated_at: now_ms,
    };
    if (existing) {
      const { processor_id, created_at: _c, ...patch } = row;
      await tx.updateTable('processors').set(patch).where('processor_id', '=', processor_id).execute();
    } else {
      await tx.insertInto('processors').values(row).execute();
    }
    return row;
  });
}

export function listProcessors(store: Store, account_id?: string): Promise<ProcessorConfigRow[]> {
  let q = store.db.selectFrom('processors').selectAll();
  if (account_id !== undefined) q = q.where('account_id', '=', account_id);
  return q.orderBy('account_id').orderBy('priority').orderBy('processor_id').execute();
}

/** The account's processor named by its id or its connector. */
export function findProcessor(store: Store, account_id: string, which: { processor_id?: string; connector?: string }): Promise<ProcessorConfigRow | undefined> {
  let q = store.db.selectFrom('processors').selectAll().where('account_id', '=', account_id);
  if (which.processor_id !== undefined) q = q.where('processor_id', '=', which.processor_id);
  if (which.connector !== undefined) q = q.where('connector', '=', which.connector as ConnectorName);
  return q.executeTakeFirst();
}

export async function removeProcessor(store: Store, processor_id: string): Promise<boolean> {
  const r = await store.transaction((tx) => tx.deleteFrom('processors').where('processor_id', '=', processor_id).executeTakeFirst());
  return Number(r.numDeletedRows) === 1;
}

/** A processor's settings as shown: credentials by their last four only. */
export function shownProcessor(row: ProcessorConfigRow, public_url: string) {
  return {
    processor_id: row.processor_id,
    account_id: row.account_id,
    connector: row.connector,
    base_url: row.base_url || (row.connector === 'sandbox' ? '(in process)' : '(the provider’s default)'),
    priority: row.priority,
    currencies: row.currencies || 'all',
    brands: row.brands || 'all',
    credentials: JSON.parse(row.credentials_hint) as Record<string, string>,
    webhook_url: webhookUrl(public_url, row),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
  };
}

/** The address to register at the provider for this processor's webhooks. */
export function webhookUrl(public_url: string, row: Pick<ProcessorConfigRow, 'connector' | 'processor_id'>): string {
  return `${public_url.replace(/\/+$/, '')}/hooks/${row.connector}/${row.processor_id}`;
}

/**
 * After the master key is rotated (a new key put first in `TOLLGATE_MASTER_KEY`), seals every
 * processor's credentials under the active key, so the old key can be retired. Each row is
 * rewritten only if it is still as read (compare-and-set on the sealed value); the connectors
 * are made anew at the next reload. Counts the rows seen and rewritten.
 */
export async function reencryptProcessors(
  store: Store,
  keyring: Keyring,
  now_ms: number,
): Promise<{ processors: number; rewritten: number; accounts: string[] }> {
  const rows = await store.db.selectFrom('processors').select(['processor_id', 'account_id', 'credentials_enc']).execute();
  let rewritten = 0;
  const accounts = new Set<string>();
  for (const row of rows) {
    if (sealedKeyId(row.credentials_enc) === keyring.active.id) continue;
    const sealed = keyring.encrypt(keyring.decrypt(row.credentials_enc));
    const r = await store.transaction((tx) =>
      tx
        .updateTable('processors')
        .set({ credentials_enc: sealed, updated_at: now_ms })
        .where('processor_id', '=', row.processor_id)
        .where('credentials_enc', '=', row.credentials_enc)
        .executeTakeFirst(),
    );
    if (Number(r.numUpdatedRows) === 1) {
      rewritten++;
      accounts.add(row.account_id);
    }
  }
  return { processors: rows.length, rewritten, accounts: [...accounts] };
}

/** The id of the master key a sealed value was encrypted with (`v1.<key id>.…`). */
function sealedKeyId(sealed: string): string {
  return sealed.split('.')[1] ?? '';
}
