// Portal settings of the selected account (docs/contract.md §19; issue 14): signing key rotation,
// generic API keys, the IP allow-list, the notification secret, risk thresholds and
// blocklists, checkout frame origins.
//   GET  /portal/settings                                   the page (access `manage`)
//   POST /portal/settings/signing-key/rotate | /retire      merchants.rotateKey / retireKeys
//   POST /portal/settings/api-keys | /api-keys/:key_id/revoke   apiKeys.create / revoke
//   POST /portal/settings/ips/add | /remove                 merchants.addIp / removeIp
//   POST /portal/settings/notification-secret/rotate        merchants.rotateWebhookSecret
//   POST /portal/settings/risk/thresholds                   risk setThresholds
//   POST /portal/settings/blocklist/add | /remove           risk addToBlocklist / removeFromBlocklist
//   POST /portal/settings/frame-origins/add | /remove       FrameOrigins add / remove
// Each form calls what its operator command (src/*/cli.ts) calls, through portalAction. A new
// secret is shown once on the answer to its form and never stored in clear; a stored one is
// shown only by its last four characters (cards on a blocklist by their keyed fingerprint).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ApiKeyError } from '../apikeys/service.js';
import { storageFault } from '../db/faults.js';
import type { BlocklistType } from '../db/tables/risk.js';
import { normaliseCidr } from '../merchants/service.js';
import { attrs, frameOriginsOf, hidden, html, MAX_FRAME_ORIGINS, normaliseFrameOrigin, publicSuffixUnderWildcard, type SafeHtml } from '../pages/index.js';
import {
  addToBlocklist,
  BLOCKLIST_TYPES,
  blocklistValue,
  listBlocklist,
  parseBlocklistType,
  removeFromBlocklist,
  setThresholds,
  thresholdsFor,
} from '../risk/settings.js';
import {
  ctx,
  formSecrets,
  PathId,
  type PortalContext,
  type PortalDeps,
  PortalError,
  type PortalPage,
  type PortalRoute,
  portalAction,
  sendPortalPage,
  withNotice,
} from './context.js';

const KeyParams = Type.Object({ key_id: PathId });

const SETTINGS = '/portal/settings';
/** Text fields: bounded, and without control characters (PostgreSQL refuses NUL in text). */
const str = (max: number) => Type.String({ maxLength: max, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });
const form = (fields: Record<string, ReturnType<typeof str>> = {}) =>
  Type.Object({ csrf: str(100), form_token: Type.Optional(str(255)), ...fields }, { additionalProperties: false });
const PlainBody = form();
const LabelBody = form({ label: str(100) });
const CidrBody = form({ cidr: str(100) });
const OriginBody = form({ origin: str(300) });
const ThresholdsBody = form({ review: Type.String({ pattern: '^[0-9]{1,3}$' }), reject: Type.String({ pattern: '^[0-9]{1,3}$' }) });
const BlocklistBody = form({ type: str(10), value: str(320) });

const when = (ms: number | string) => new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 16);
const last4 = (secret: string) => `…${secret.slice(-4)}`;

/**
 * A domain function's own refusal (a plain Error naming the problem, as the CLI prints it)
 * becomes a page of `status`; storage faults and bugs pass on to the error handler.
 */
async function refusing<T>(work: () => Promise<T>, status = 400): Promise<T> {
  try {
    return await work();
  } catch (e) {
    const plain = e instanceof Error && (Object.getPrototypeOf(e) === Error.prototype || e instanceof ApiKeyError);
    if (plain && !storageFault(e)) throw new PortalError(status, e.message.replace(/--(\w+)/g, '$1'), SETTINGS);
    throw e;
  }
}

/** The page that shows a new secret, once. */
function secretPage(title: string, what: string, secret: string, after: SafeHtml | string = ''): PortalPage {
  return {
    title,
    nav: 'settings',
    body: html`<p>${what} It is shown only now: store it before you leave this page.</p>
<p class="code" id="new-secret">${secret}</p>${after}
<p class="actions"><a class="button primary" href="/portal/settings" id="continue">Back to settings</a></p>`,
  };
}

export const SETTINGS_ROUTES: readonly PortalRoute[] = [
  { method: 'GET', url: '/settings', access: 'manage', handler: settingsPage },
  { method: 'POST', url: '/settings/signing-key/rotate', access: 'manage', body: PlainBody, handler: rotateSigningKey },
  { method: 'POST', url: '/settings/signing-key/retire', access: 'manage', body: PlainBody, handler: retireSigningKeys },
  { method: 'POST', url: '/settings/api-keys', access: 'manage', body: LabelBody, handler: createApiKey },
  { method: 'POST', url: '/settings/api-keys/:key_id/revoke', access: 'manage', body: PlainBody, params: KeyParams, handler: revokeApiKey },
  { method: 'POST', url: '/settings/ips/add', access: 'manage', body: CidrBody, handler: addIp },
  { method: 'POST', url: '/settings/ips/remove', access: 'manage', body: CidrBody, handler: removeIp },
  { method: 'POST', url: '/settings/notification-secret/rotate', access: 'manage', body: PlainBody, handler: rotateNotificationSecret },
  { method: 'POST', url: '/settings/risk/thresholds', access: 'manage', body: ThresholdsBody, handler: setRiskThresholds },
  { method: 'POST', url: '/settings/blocklist/add', access: 'manage', body: BlocklistBody, handler: addToBlocklistAction },
  { method: 'POST', url: '/settings/blocklist/remove', access: 'manage', body: BlocklistBody, handler: removeFromBlocklistAction },
  { method: 'POST', url: '/settings/frame-origins/add', access: 'manage', body: OriginBody, handler: addFrameOrigin },
  { method: 'POST', url: '/settings/frame-origins/remove', access: 'manage', body: OriginBody, handler: removeFrameOrigin },
];

const accountOf = (request: FastifyRequest) => ctx(request).account.account_id;

async function settingsPage(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const c = ctx(request);
  return sendPortalPage(request, reply, { title: 'Settings', nav: 'settings', body: await settingsBody(deps, request, c) });
}

// ---- signing key (docs/contract.md §2): `key rotate`, `key retire`
async function rotateSigningKey(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.signing_key.rotate',
    target: account_id,
    need: 'manage',
    run: async () => {
      const secret = await deps.merchants.rotateKey(account_id, deps.now());
      return {
        location: withNotice(SETTINGS, 'key_rotated'),
        show: secretPage(
          'New signing key',
          `The new secret key of account ${account_id} signs from now on. The previous key still verifies until you retire it in the settings.`,
          secret,
        ),
      };
    },
  });
}

async function retireSigningKeys(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.signing_key.retire',
    target: account_id,
    need: 'manage',
    run: async () => {
      const n = await deps.merchants.retireKeys(account_id);
      if (n === 0) throw new PortalError(409, 'There is no previous key to retire (rotate first).', SETTINGS);
      return withNotice(SETTINGS, 'keys_retired');
    },
  });
}

// ---- API keys of the generic interface (docs/contract.md §18): `apikey create`, `apikey revoke`
async function createApiKey(deps: PortalDeps, request: FastifyRequest<{ Body: { label: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  const label = request.body.label.trim();
  return portalAction(deps, request, reply, {
    action: 'settings.apikey.create',
    target: account_id,
    need: 'manage',
    detail: label && `label ${label}`,
    run: async () => {
      const created = await refusing(() => deps.apiKeys.create(account_id, label, deps.now()));
      return {
        location: withNotice(SETTINGS, 'apikey_created'),
        show: secretPage(
          'New API key',
          `API key ${created.key_id} of account ${account_id}. Send it as Authorization: Bearer <key>.`,
          created.secret,
          html`<p id="new-key-id">${created.key_id}</p>`,
        ),
      };
    },
  });
}

async function revokeApiKey(deps: PortalDeps, request: FastifyRequest<{ Params: { key_id: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  const { key_id } = request.params;
  return portalAction(deps, request, reply, {
    action: 'settings.apikey.revoke',
    target: key_id,
    need: 'manage',
    run: async () => {
      // Only a key of the account shown: another account's or merchant's id is not found.
      const key = /^key_[0-9A-Za-z]{1,40}$/.test(key_id) ? (await deps.apiKeys.list(account_id)).find((k) => k.key_id === key_id) : undefined;
      if (!key) throw new PortalError(404, 'There is no such API key for this account.', SETTINGS);
      if (!(await deps.apiKeys.revoke(account_id, key_id, deps.now()))) throw new PortalError(409, `The key ${key_id} is revoked already.`, SETTINGS);
      return withNotice(SETTINGS, 'apikey_revoked');
    },
  });
}

// ---- IP allow-list (docs/contract.md §3): `ip add`, `ip remove`
async function addIp(deps: PortalDeps, request: FastifyRequest<{ Body: { cidr: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.ip.add',
    target: account_id,
    need: 'manage',
    detail: request.body.cidr.trim(),
    run: async () => {
      const cidr = validCidr(request.body.cidr);
      await deps.merchants.addIp(account_id, cidr, deps.now());
      return withNotice(SETTINGS, 'ip_added');
    },
  });
}

async function removeIp(deps: PortalDeps, request: FastifyRequest<{ Body: { cidr: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.ip.remove',
    target: account_id,
    need: 'manage',
    detail: request.body.cidr.trim(),
    run: async () => {
      const cidr = validCidr(request.body.cidr);
      if (!(await deps.merchants.removeIp(account_id, cidr))) throw new PortalError(404, `${cidr} is not on the allow-list.`, SETTINGS);
      return withNotice(SETTINGS, 'removed');
    },
  });
}

// ---- notification secret (docs/contract.md §11): `webhook-secret rotate`
async function rotateNotificationSecret(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.notification_secret.rotate',
    target: account_id,
    need: 'manage',
    run: async () => {
      const secret = await deps.merchants.rotateWebhookSecret(account_id);
      return {
        location: withNotice(SETTINGS, 'notification_secret_rotated'),
        show: secretPage(
          'New notification secret',
          `Notifications of account ${account_id} are signed with this secret from now on; the previous one stopped at once.`,
          secret,
        ),
      };
    },
  });
}

// ---- risk (docs/contract.md §10): `risk thresholds`, `blocklist add|remove`
async function setRiskThresholds(deps: PortalDeps, request: FastifyRequest<{ Body: { review: string; reject: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  const t = { review: Number(request.body.review), reject: Number(request.body.reject) };
  return portalAction(deps, request, reply, {
    action: 'settings.risk.thresholds',
    target: account_id,
    need: 'manage',
    detail: `review ${t.review}, reject ${t.reject}`,
    run: async () => {
      await refusing(() => setThresholds(deps.store, account_id, t, deps.now()));
      return withNotice(SETTINGS, 'saved');
    },
  });
}

async function addToBlocklistAction(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  return blocklistAction(deps, request, reply, false);
}

async function removeFromBlocklistAction(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply) {
  return blocklistAction(deps, request, reply, true);
}

async function blocklistAction(deps: PortalDeps, request: FastifyRequest, reply: FastifyReply, remove: boolean) {
  const account_id = accountOf(request);
  const body = request.body as { type: string; value: string };
  const value = body.value;
  // The audit line names a card only by its fingerprint (and a value of an unknown type not at all).
  const known = (BLOCKLIST_TYPES as readonly string[]).includes(body.type);
  const detail =
    body.type === 'card' ? `card fingerprint ${deps.keyring.fingerprint(value.trim()).slice(0, 12)}` : known ? `${body.type} ${value.trim()}` : 'unknown type';
  return portalAction(deps, request, reply, {
    action: remove ? 'settings.blocklist.remove' : 'settings.blocklist.add',
    target: account_id,
    need: 'manage',
    detail,
    run: async () => {
      const type: BlocklistType = await refusing(async () => parseBlocklistType(body.type));
      await refusing(async () => blocklistValue(deps.keyring, type, value)); // a clear 400 before any write
      if (!remove) {
        await refusing(() => addToBlocklist(deps.store, deps.keyring, account_id, type, value, deps.now()));
        return withNotice(SETTINGS, 'blocklist_added');
      }
      if (!(await refusing(() => removeFromBlocklist(deps.store, deps.keyring, account_id, type, value))))
        throw new PortalError(404, `That ${type} is not on the blocklist.`, SETTINGS);
      return withNotice(SETTINGS, 'removed');
    },
  });
}

// ---- checkout frame origins (docs/contract.md §14): `frame-origin add|remove`
async function addFrameOrigin(deps: PortalDeps, request: FastifyRequest<{ Body: { origin: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.frame_origin.add',
    target: account_id,
    need: 'manage',
    detail: request.body.origin.trim(),
    run: async () => {
      const origin = await refusing(async () => normaliseFrameOrigin(request.body.origin));
      await refusing(() => frameOriginsOf(deps.store).add(account_id, origin, deps.now()), 409);
      return withNotice(SETTINGS, 'frame_origin_added');
    },
  });
}

async function removeFrameOrigin(deps: PortalDeps, request: FastifyRequest<{ Body: { origin: string } }>, reply: FastifyReply) {
  const account_id = accountOf(request);
  return portalAction(deps, request, reply, {
    action: 'settings.frame_origin.remove',
    target: account_id,
    need: 'manage',
    detail: request.body.origin.trim(),
    run: async () => {
      // A row stored before a rule that now refuses it (a wildcard over a public suffix) is removable.
      const origin = await refusing(async () => normaliseFrameOrigin(request.body.origin, { existing: true }));
      if (!(await frameOriginsOf(deps.store).remove(account_id, origin))) throw new PortalError(404, `${origin} is not registered.`, SETTINGS);
      return withNotice(SETTINGS, 'removed');
    },
  });
}

/** A row stored before the public-suffix rule: shown with why it no longer frames anything. */
function ignoredOrigin(origin: string): SafeHtml | string {
  const suffix = publicSuffixUnderWildcard(origin);
  return suffix ? html`<em class="ignored">ignored: ${suffix} is a public suffix; remove it</em> ` : '';
}

function validCidr(text: string): string {
  try {
    return normaliseCidr(text);
  } catch (e) {
    throw new PortalError(400, (e as Error).message, SETTINGS);
  }
}

/** What the settings page shows of the account, read before it is drawn (one query after another, as before). */
async function settingsFacts(deps: PortalDeps, account_id: string) {
  const keys = await deps.store.db
    .selectFrom('account_keys')
    .select(['key_id', 'secret_enc', 'status', 'created_at'])
    .where('account_id', '=', account_id)
    .orderBy('created_at', 'desc')
    .orderBy('key_id', 'desc')
    .execute();
  const retiring = keys.some((k) => k.status === 'retiring');
  const apiKeys = await deps.apiKeys.list(account_id);
  const ips = await deps.merchants.listIps(account_id);
  const thresholds = await thresholdsFor(deps.store.db, account_id);
  const blocklist = await listBlocklist(deps.store, account_id);
  const origins = await frameOriginsOf(deps.store).list(account_id);
  return { keys, retiring, apiKeys, ips, thresholds, blocklist, origins };
}
type SettingsFacts = Awaited<ReturnType<typeof settingsFacts>>;

/** A one-button form; `label` names what it acts on for assistive technology (many rows have a "Remove"). */
function oneButton(request: FastifyRequest, path: string, button: string, id: string, extra: SafeHtml | string = '', label?: string): SafeHtml {
  return html`<form method="post" ${attrs({ action: `${SETTINGS}${path}`, class: 'inline' })}>${formSecrets(request)}${extra}<button ${attrs({ type: 'submit', id, 'aria-label': label })}>${button}</button></form>`;
}

async function settingsBody(deps: PortalDeps, request: FastifyRequest, c: PortalContext): Promise<SafeHtml> {
  const account_id = c.account.account_id;
  const f = await settingsFacts(deps, account_id);
  return html`<p>These settings are for account <strong id="settings-account">${account_id}</strong> (${c.account.mode === 'live' ? 'live' : 'test'}); choose the other account above for the other mode.</p>

${signingKeysSection(deps, request, f)}

${apiKeysSection(request, f)}

${ipsSection(request, f)}

${notificationSection(deps, request, c)}

${riskSection(request, f)}

${originsSection(request, f)}`;
}

/** The signing keys, with rotate (and retire when a previous key still verifies). */
function signingKeysSection(deps: PortalDeps, request: FastifyRequest, { keys, retiring }: SettingsFacts): SafeHtml {
  return html`<section id="signing-keys" aria-labelledby="h-signing-keys"><h2 id="h-signing-keys">Signing key</h2>
<p>Signs and verifies the API's requests and answers. After a rotation the previous key still verifies until you retire it.</p>
<div class="scroll"><table><thead><tr><th>Key</th><th>Status</th><th>Created (UTC)</th></tr></thead><tbody>${keys.map(
    (k) =>
      html`<tr><td class="code">${last4(deps.keyring.decrypt(k.secret_enc))}</td><td>${k.status === 'active' ? 'active' : 'previous: still verifies'}</td><td>${when(k.created_at)}</td></tr>`,
  )}</tbody></table></div>
${oneButton(request, '/signing-key/rotate', 'Rotate signing key', 'rotate-key')}${retiring && oneButton(request, '/signing-key/retire', 'Retire previous keys', 'retire-keys')}
</section>`;
}

/** The generic API keys, with revoke and create. */
function apiKeysSection(request: FastifyRequest, { apiKeys }: SettingsFacts): SafeHtml {
  return html`<section id="api-keys" aria-labelledby="h-api-keys"><h2 id="h-api-keys">API keys</h2>
<p>Keys of the generic interface (Authorization: Bearer). Several may be active at once.</p>
${
  apiKeys.length === 0
    ? html`<p>No API keys yet.</p>`
    : html`<div class="scroll"><table><thead><tr><th>Id</th><th>Key</th><th>Label</th><th>Status</th><th>Created (UTC)</th><th></th></tr></thead><tbody>${apiKeys.map(
        (k) =>
          html`<tr ${attrs({ id: `apikey-${k.key_id}` })}><td>${k.key_id}</td><td class="code">sk_${k.livemode ? 'live' : 'test'}_…${k.last4}</td><td>${k.name}</td><td>${k.status}</td><td>${when(k.created_at)}</td><td>${
            k.status === 'active' && oneButton(request, `/api-keys/${k.key_id}/revoke`, 'Revoke', `revoke-${k.key_id}`, '', `Revoke ${k.key_id}`)
          }</td></tr>`,
      )}</tbody></table></div>`
}
<form method="post" action="/portal/settings/api-keys" class="inline">${formSecrets(request)}<label for="f-label">Label</label><input ${attrs({ id: 'f-label', name: 'label', type: 'text', maxlength: 100 })}><button type="submit" id="create-apikey">Create API key</button></form>
</section>`;
}

/** The IP allow-list of the API reads, with remove and add. */
function ipsSection(request: FastifyRequest, { ips }: SettingsFacts): SafeHtml {
  return html`<section id="ip-allow-list" aria-labelledby="h-ips"><h2 id="h-ips">IP allow-list</h2>
<p>Addresses and ranges allowed to read this account's data back through the API: /v1/retrievalTrans, /v1/retrievalRefund, /v1/retrievalPayout and every GET of the generic interface.</p>
${ips.length === 0 ? html`<p>None: no address may query.</p>` : html`<ul id="ips">${ips.map((ip) => html`<li><span class="code">${ip}</span> ${oneButton(request, '/ips/remove', 'Remove', `remove-ip-${ip}`, hidden('cidr', ip), `Remove ${ip}`)}</li>`)}</ul>`}
<form method="post" action="/portal/settings/ips/add" class="inline">${formSecrets(request)}<label for="f-cidr">Address or CIDR range</label><input ${attrs({ id: 'f-cidr', name: 'cidr', type: 'text', required: true, maxlength: 100, placeholder: '203.0.113.0/24' })}><button type="submit" id="add-ip">Add</button></form>
</section>`;
}

/** The notification secret, shown by its last four characters, with rotate. */
function notificationSection(deps: PortalDeps, request: FastifyRequest, c: PortalContext): SafeHtml {
  return html`<section id="notification-secret" aria-labelledby="h-notification"><h2 id="h-notification">Notification secret</h2>
<p>Signs the notifications sent to your notify_url (Standard Webhooks). The current one ends in <span class="code" id="notification-secret-last4">${last4(deps.keyring.decrypt(c.account.webhook_secret_enc))}</span>; a new one replaces it at once.</p>
${oneButton(request, '/notification-secret/rotate', 'Rotate notification secret', 'rotate-notification-secret')}
</section>`;
}

/** The risk thresholds and the blocklist. */
function riskSection(request: FastifyRequest, { thresholds, blocklist }: SettingsFacts): SafeHtml {
  return html`<section id="risk" aria-labelledby="h-risk"><h2 id="h-risk">Risk</h2>
<p>Payments scoring from the review threshold are held for review; from the reject threshold, refused (0 to 100; 101: never).</p>
<form method="post" action="/portal/settings/risk/thresholds" class="inline">${formSecrets(request)}
<label for="f-review">Review from</label><input ${attrs({ id: 'f-review', name: 'review', type: 'number', min: 0, max: 101, required: true, value: thresholds.review })}>
<label for="f-reject">Reject from</label><input ${attrs({ id: 'f-reject', name: 'reject', type: 'number', min: 0, max: 101, required: true, value: thresholds.reject })}>
<button type="submit" id="save-thresholds">Save</button></form>
<h3>Blocklist</h3>
${
  blocklist.length === 0
    ? html`<p>Nothing blocked.</p>`
    : html`<div class="scroll"><table id="blocklist"><thead><tr><th>Type</th><th>Value</th><th>Added (UTC)</th><th></th></tr></thead><tbody>${blocklist.map(
        (b) =>
          html`<tr><td>${b.type}</td><td class="code">${b.type === 'card' ? `fingerprint ${b.value.slice(0, 12)}…` : b.value}</td><td>${when(b.created_at)}</td><td>${
            b.type === 'card'
              ? 'remove with the card number below'
              : oneButton(
                  request,
                  '/blocklist/remove',
                  'Remove',
                  `unblock-${b.type}-${b.value}`,
                  html`${hidden('type', b.type)}${hidden('value', b.value)}`,
                  `Remove ${b.type} ${b.value}`,
                )
          }</td></tr>`,
      )}</tbody></table></div>`
}
<h4>Block</h4>
${blocklistForm(request, '/blocklist/add', 'Block', 'block')}
<h4>Unblock (a card by its number)</h4>
${blocklistForm(request, '/blocklist/remove', 'Remove', 'unblock')}
</section>`;
}

/** The checkout frame origins, with remove and add. */
function originsSection(request: FastifyRequest, { origins }: SettingsFacts): SafeHtml {
  return html`<section id="frame-origins" aria-labelledby="h-frames"><h2 id="h-frames">Checkout frame origins</h2>
<p>Origins that may show this account's hosted checkout in an iframe (at most ${MAX_FRAME_ORIGINS}); with none, the pages cannot be framed.</p>
${origins.length === 0 ? html`<p>None.</p>` : html`<ul id="origins">${origins.map((o) => html`<li><span class="code">${o}</span> ${ignoredOrigin(o)}${oneButton(request, '/frame-origins/remove', 'Remove', `remove-origin-${o}`, hidden('origin', o), `Remove ${o}`)}</li>`)}</ul>`}
<form method="post" action="/portal/settings/frame-origins/add" class="inline">${formSecrets(request)}<label for="f-origin">Origin</label><input ${attrs({ id: 'f-origin', name: 'origin', type: 'text', required: true, maxlength: 255, placeholder: 'https://shop.example' })}><button type="submit" id="add-origin">Add</button></form>
</section>`;
}

function blocklistForm(request: FastifyRequest, path: string, button: string, id: string): SafeHtml {
  return html`<form method="post" ${attrs({ action: `${SETTINGS}${path}`, class: 'inline' })}>${formSecrets(request)}
<label ${attrs({ for: `f-${id}-type` })}>Type</label><select ${attrs({ id: `f-${id}-type`, name: 'type' })}>${BLOCKLIST_TYPES.map((t) => html`<option ${attrs({ value: t })}>${t}</option>`)}</select>
<label ${attrs({ for: `f-${id}-value` })}>Card number, e-mail, IP or BIN</label><input ${attrs({ id: `f-${id}-value`, name: 'value', type: 'text', required: true, maxlength: 320, autocomplete: 'off' })}>
<button ${attrs({ type: 'submit', id })}>${button}</button></form>`;
}
