// The account's processors in the portal (docs/contract.md §21; issue 32 item 1), for owners
// only (access `processors`): what `npx tollgate processor set|list|remove` does, through the
// same functions (src/processors/config.ts).
//   GET  /portal/processors[?connector=…]           the list, with each webhook address to register, and the form to set one
//   POST /portal/processors/set                      setProcessor; a refusal is shown on the form (400), filled in but for credentials
//   POST /portal/processors/:processor_id/remove     asks on a page of its own, then removeProcessor (`confirm=yes`)
// Credentials are typed into password inputs and never shown again: the page shows `••••` and
// their last four, a credential left empty keeps the stored one. Each change goes through
// portalAction (CSRF, role, once per form token, audit line `processor.set` / `.remove` by the
// user) and is read by this process at once (`processors.reload`), by others within 2 s. A live
// account's processors are changed only by an owner with two-step sign-in.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { attrs, field, hidden, html, type SafeHtml } from '../pages/index.js';
import {
  BUILT_CONNECTORS,
  CONNECTOR_CREDENTIALS,
  type ConnectorName,
  findProcessor,
  listProcessors,
  type ProcessorConfigRow,
  ProcessorSettingRefused,
  removeProcessor,
  setProcessor,
  shownProcessor,
} from '../processors/config.js';
import {
  ctx,
  formSecrets,
  notFound,
  PathId,
  type PortalContext,
  type PortalDeps,
  PortalError,
  type PortalRoute,
  portalAction,
  sendConfirmPage,
  sendPortalPage,
  withNotice,
} from './context.js';
import { cell, when } from './format.js';

const PROCESSORS = '/portal/processors';
/** Text fields: bounded, and without control characters (PostgreSQL refuses NUL in text). */
const str = (max: number) => Type.String({ maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
/** Every credential name any connector takes, as the form's field `credential_<name>`. */
const CREDENTIAL_NAMES = [...new Set(Object.values(CONNECTOR_CREDENTIALS).flatMap((c) => [...c.required, ...c.optional]))];
const secrets = { csrf: str(100), form_token: Type.Optional(str(255)) };
const SetBody = Type.Object(
  {
    ...secrets,
    connector: str(20),
    base_url: Type.Optional(str(500)),
    priority: Type.Optional(str(10)),
    currencies: Type.Optional(str(200)),
    brands: Type.Optional(str(300)),
    ...Object.fromEntries(CREDENTIAL_NAMES.map((n) => [`credential_${n}`, Type.Optional(str(1000))])),
  },
  { additionalProperties: false },
);
const RemoveBody = Type.Object({ ...secrets, confirm: Type.Optional(Type.Literal('yes')) }, { additionalProperties: false });
const RemoveParams = Type.Object({ processor_id: PathId });
const PageQuery = Type.Object({ connector: Type.Optional(str(20)), done: Type.Optional(str(40)) });
type SetRequest = FastifyRequest<{ Body: Static<typeof SetBody> }>;

export const PROCESSORS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/processors', access: 'processors', querystring: PageQuery, handler: processorsPage },
  { method: 'POST', url: '/processors/set', access: 'processors', body: SetBody, handler: setAction },
  { method: 'POST', url: '/processors/:processor_id/remove', access: 'processors', body: RemoveBody, params: RemoveParams, handler: removeAction },
];

/** What the set form shows: as typed after a refusal (never a credential), or the stored settings of that connector. */
interface Typed {
  connector: ConnectorName;
  base_url: string;
  priority: string;
  currencies: string;
  brands: string;
}

const isBuilt = (c: string | undefined): c is ConnectorName => BUILT_CONNECTORS.includes(c as ConnectorName);

/**
 * A live account takes real money: its processors are changed only by a user with two-step
 * sign-in (which the portal requires of every user of a merchant with a live account, at
 * sign-in; a session begun before the merchant had one is caught here).
 */
function mayChange(c: PortalContext): void {
  if (c.account.mode === 'live' && c.user.totp_enrolled_at === null)
    throw new PortalError(403, 'A live account’s processors can be changed only with two-step sign-in: set it up on your profile first.', PROCESSORS);
}

async function processorsPage(deps: PortalDeps, request: FastifyRequest<{ Querystring: Static<typeof PageQuery> }>, reply: FastifyReply) {
  const c = ctx(request);
  const rows = await listProcessors(deps.store, c.account.account_id);
  const asked = request.query.connector;
  const connector = isBuilt(asked) ? asked : (BUILT_CONNECTORS.find((b) => !rows.some((r) => r.connector === b)) ?? 'sandbox');
  return sendPortalPage(request, reply, { title: 'Processors', nav: 'processors', body: pageBody(deps, request, c, rows, storedTyped(rows, connector)) });
}

function storedTyped(rows: readonly ProcessorConfigRow[], connector: ConnectorName): Typed {
  const row = rows.find((r) => r.connector === connector);
  return { connector, base_url: row?.base_url ?? '', priority: String(row?.priority ?? 1), currencies: row?.currencies ?? '', brands: row?.brands ?? '' };
}

function pageBody(deps: PortalDeps, request: FastifyRequest, c: PortalContext, rows: readonly ProcessorConfigRow[], typed: Typed, error?: string): SafeHtml {
  const account = c.account;
  return html`<p>The processors of account <strong id="processors-account">${account.account_id}</strong> (${account.mode}); choose the other account above for the other mode. A payment goes to the first, lowest priority first, that takes its currency and card brand; the next is tried only when one certainly did not get the call. ${
    account.mode === 'live' ? 'With none set, this live account refuses payments (1016).' : 'With none set, this test account uses the in-process sandbox.'
  }</p>
${listSection(deps, request, rows)}
${setSection(request, rows, typed, error)}`;
}

function listSection(deps: PortalDeps, request: FastifyRequest, rows: readonly ProcessorConfigRow[]): SafeHtml {
  if (rows.length === 0)
    return html`<section id="processor-list" aria-labelledby="h-list"><h2 id="h-list">Set now</h2><p id="no-processors">None.</p></section>`;
  return html`<section id="processor-list" aria-labelledby="h-list"><h2 id="h-list">Set now</h2>
<p>Register each processor's webhook address at the provider, so that it can confirm captures, cancels and refunds.</p>
<div class="scroll"><table id="processors" class="stack"><thead><tr><th>Connector</th><th>Id</th><th>Priority</th><th>Currencies</th><th>Brands</th><th>Base URL</th><th>Credentials</th><th>Webhook address</th><th>Changed (UTC)</th><th>Change</th></tr></thead><tbody>${rows.map(
    (row) => {
      const s = shownProcessor(row, deps.settings.public_url);
      const creds = Object.entries(s.credentials);
      return html`<tr ${attrs({ id: `processor-${row.processor_id}` })}>${cell('Connector', s.connector)}${cell('Id', html`<span class="code">${s.processor_id}</span>`)}${cell(
        'Priority',
        String(s.priority),
      )}${cell('Currencies', s.currencies, 'wrap')}${cell('Brands', s.brands, 'wrap')}${cell('Base URL', s.base_url, 'wrap')}${cell(
        'Credentials',
        creds.length ? html`${creds.map(([k, v]) => html`<span class="code">${k} ${v}</span> `)}` : 'none',
        'wrap',
      )}${cell('Webhook address', html`<span class="code webhook-url">${s.webhook_url}</span>`, 'wrap')}${cell('Changed (UTC)', when(row.updated_at))}${cell(
        'Change',
        html`<a ${attrs({ href: `${PROCESSORS}?connector=${row.connector}#set`, id: `edit-${row.processor_id}` })}>Change</a>
<form method="post" ${attrs({ action: `${PROCESSORS}/${row.processor_id}/remove`, class: 'inline' })}>${formSecrets(request)}<button ${attrs({
          type: 'submit',
          id: `remove-${row.processor_id}`,
          'aria-label': `Remove ${row.connector} ${row.processor_id}`,
        })}>Remove</button></form>`,
      )}</tr>`;
    },
  )}</tbody></table></div></section>`;
}

const PLACEHOLDER: Readonly<Record<ConnectorName, string>> = {
  sandbox: 'empty: in process; or the remote sandbox’s URL',
  adyen: 'empty: Adyen’s test environment',
  stripe: 'empty: https://api.stripe.com',
};

/** The choice of connector (a GET: the form below has that connector's credentials), then the form to set it. */
function setSection(request: FastifyRequest, rows: readonly ProcessorConfigRow[], t: Typed, error?: string): SafeHtml {
  const stored = rows.find((r) => r.connector === t.connector);
  const hints = stored ? (JSON.parse(stored.credentials_hint) as Record<string, string>) : {};
  const names = CONNECTOR_CREDENTIALS[t.connector];
  const credential = (name: string, required: boolean) =>
    field({
      name: `credential_${name}`,
      label: `${name}${hints[name] ? ` (stored ${hints[name]}; leave empty to keep it)` : required ? ' (required)' : ' (optional)'}`,
      type: 'password',
      autocomplete: 'new-password',
      maxlength: 1000,
    });
  return html`<section id="set" aria-labelledby="h-set"><h2 id="h-set">${stored ? `Change the ${t.connector} processor` : 'Set a processor'}</h2>
<form method="get" action="${PROCESSORS}#set" class="inline" id="choose-connector"><label for="f-choose">Connector</label><select id="f-choose" name="connector">${BUILT_CONNECTORS.map(
    (b) => html`<option ${attrs({ value: b, selected: b === t.connector })}>${b}${rows.some((r) => r.connector === b) ? ' (set)' : ''}</option>`,
  )}</select><button type="submit" id="choose">Choose</button></form>
<form method="post" action="${PROCESSORS}/set" id="set-processor">${formSecrets(request)}${hidden('connector', t.connector)}
${error && html`<p class="error" id="set-error" role="alert">${error}</p>`}
<p>One processor per connector: setting ${t.connector} again changes it. Currencies and brands are comma-separated; empty takes all.</p>
${field({ name: 'base_url', label: 'Base URL', value: t.base_url, maxlength: 500, placeholder: PLACEHOLDER[t.connector], autocomplete: 'off' })}
${field({ name: 'priority', label: 'Priority (lowest is tried first)', type: 'number', value: t.priority, maxlength: 4, inputmode: 'numeric' })}
${field({ name: 'currencies', label: 'Currencies', value: t.currencies, maxlength: 200, placeholder: 'USD,EUR', autocomplete: 'off' })}
${field({ name: 'brands', label: 'Card brands', value: t.brands, maxlength: 300, placeholder: 'visa,mastercard', autocomplete: 'off' })}
${names.required.map((n) => credential(n, true))}${names.optional.map((n) => credential(n, false))}
<p class="actions"><button type="submit" class="primary" id="save-processor">${stored ? 'Save' : `Set ${t.connector}`}</button></p></form>
</section>`;
}

/** A refusal of the settings, as the form says it: the CLI's option names become the form's words; a URL that is not one is not repeated. */
class SettingRefused extends PortalError {}

function refusalWords(message: string): string {
  if (/^--base-url ".*" is not a URL$/s.test(message)) return 'The base URL is not a URL.';
  const words = message
    .replace(/--credential (\w+)=…/g, 'the credential $1')
    .replace(/--credential /g, 'credential ')
    .replace(/--base-url/g, 'the base URL')
    .replace(/--(\w+)/g, '$1');
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}${/[.…]$/.test(words) ? '' : '.'}`;
}

async function setAction(deps: PortalDeps, request: SetRequest, reply: FastifyReply) {
  const c = ctx(request);
  const b = request.body;
  const connector = b.connector;
  const typed = { base_url: b.base_url ?? '', priority: b.priority ?? '', currencies: b.currencies ?? '', brands: b.brands ?? '' };
  const names = isBuilt(connector) ? [...CONNECTOR_CREDENTIALS[connector].required, ...CONNECTOR_CREDENTIALS[connector].optional] : [];
  const body = b as Record<string, string | undefined>;
  // Only the chosen connector's credentials are read; an empty one keeps what is stored.
  const given = names.flatMap((n) => {
    const v = (body[`credential_${n}`] ?? '').trim();
    return v ? [`${n}=${v}`] : [];
  });
  const spec = {
    action: 'processor.set',
    target: c.account.account_id,
    need: 'processors' as const,
    // The audit line names the credentials given, never their values (as the CLI's does).
    detail: `${connector}; credentials given: ${given.map((p) => p.slice(0, p.indexOf('='))).join(', ') || 'none'}`,
    run: async () => {
      mayChange(c);
      let row: ProcessorConfigRow;
      try {
        const priority = typed.priority.trim() === '' ? undefined : Number(typed.priority);
        row = await setProcessor(deps.store, deps.keyring, { account_id: c.account.account_id, connector, ...typed, priority, credentials: given }, deps.now());
      } catch (e) {
        if (e instanceof ProcessorSettingRefused) throw new SettingRefused(400, refusalWords(e.message), PROCESSORS);
        throw e;
      }
      await deps.processors.reload();
      const shown = shownProcessor(row, deps.settings.public_url);
      spec.target = row.processor_id;
      spec.detail = `${row.connector} ${shown.base_url}; credentials ${Object.keys(shown.credentials).join(', ') || 'none'}`;
      return withNotice(`${PROCESSORS}?connector=${row.connector}`, 'processor_set');
    },
  };
  return portalAction(deps, request, reply, spec).catch(async (e: unknown) => {
    if (!(e instanceof SettingRefused) || !isBuilt(connector)) throw e;
    const rows = await listProcessors(deps.store, c.account.account_id);
    return sendPortalPage(request, reply, {
      title: 'Processors',
      nav: 'processors',
      status: 400,
      body: pageBody(deps, request, c, rows, { connector, ...typed }, e.message),
    });
  });
}

async function removeAction(
  deps: PortalDeps,
  request: FastifyRequest<{ Params: Static<typeof RemoveParams>; Body: Static<typeof RemoveBody> }>,
  reply: FastifyReply,
) {
  const c = ctx(request);
  // Only a processor of the account shown: another account's or merchant's id is not found.
  const row = await findProcessor(deps.store, c.account.account_id, { processor_id: request.params.processor_id });
  if (!row) throw notFound();
  mayChange(c);
  const action = `${PROCESSORS}/${row.processor_id}/remove`;
  if (request.body.confirm !== 'yes')
    return sendConfirmPage(request, reply, {
      title: 'Remove the processor?',
      nav: 'processors',
      question: `Remove the ${row.connector} processor ${row.processor_id} from account ${c.account.account_id}?`,
      consequence: `Payments stop going to it at once; captures, cancels and refunds of payments it took go to the account's first processor, and its webhook address stops answering. ${
        c.account.mode === 'live' ? 'A live account with no processor left refuses payments (1016). ' : ''
      }Its credentials are deleted: to set it again, you need them again.`,
      action,
      id: 'confirm-remove',
      label: 'Yes, remove it',
      back: PROCESSORS,
    });
  return portalAction(deps, request, reply, {
    action: 'processor.remove',
    target: row.processor_id,
    need: 'processors',
    detail: row.connector,
    run: async () => {
      mayChange(c);
      if (!(await removeProcessor(deps.store, row.processor_id))) throw new PortalError(409, 'The processor was removed already.', PROCESSORS);
      await deps.processors.reload();
      return withNotice(PROCESSORS, 'processor_removed');
    },
  });
}
