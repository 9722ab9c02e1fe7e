// `npx tollgate user create|list|disable|enable|reset` (docs/contract.md §19): portal users. The
// first user of a merchant is made here; the command prints a one-time set-password link.
import { CommandError, command, need, out, UsageError } from '../command/registry.js';
import { PORTAL_ROLES, type PortalRole } from './tables.js';
import { PortalUserError, PortalUsers, SETUP_LINK_MS } from './users.js';

const linkOf = (public_url: string, token: string) => `${public_url}/portal/setup/${token}`;

export const userCreateCommand = command({
  name: 'user create',
  args: `--merchant ID --email E --role ${PORTAL_ROLES.join('|')} [--json]`,
  options: { merchant: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const role = need(values.role, '--role');
    if (!PORTAL_ROLES.includes(role as PortalRole)) throw new UsageError(`--role must be one of ${PORTAL_ROLES.join(', ')}`);
    const rt = await runtime();
    const users = new PortalUsers(rt.store, rt.keyring);
    try {
      const { user, token } = await users.create(
        { merchant_id: need(values.merchant, '--merchant'), email: need(values.email, '--email'), role: need(values.role, '--role') },
        Date.now(),
      );
      const link = linkOf(rt.settings.public_url, token);
      if (values.json) return out(JSON.stringify({ user_id: user.user_id, email: user.email, role: user.role, set_password_link: link }));
      out(`user ${user.user_id} (${user.email}, ${user.role})`);
      out(`set-password link (once, ${SETUP_LINK_MS / 3600_000} h): ${link}`);
    } catch (e) {
      if (e instanceof PortalUserError) throw new CommandError(e.message);
      throw e;
    }
  },
});

export const userListCommand = command({
  name: 'user list',
  args: '--merchant ID [--json]',
  options: { merchant: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const rt = await runtime();
    const rows = await new PortalUsers(rt.store, rt.keyring).list(need(values.merchant, '--merchant'));
    const shown = rows.map((u) => ({
      user_id: u.user_id,
      email: u.email,
      role: u.role,
      status: Number(u.locked_until) > Date.now() ? 'locked' : u.status,
      totp: u.totp_enrolled_at !== null,
    }));
    if (values.json) return out(JSON.stringify(shown));
    for (const u of shown) out(`${u.user_id}\t${u.email}\t${u.role}\t${u.status}\ttotp ${u.totp ? 'on' : 'off'}`);
    if (shown.length === 0) out('no users yet: npx tollgate user create --merchant ID --email E --role owner');
  },
});

/** An e-mail is unique per merchant only (issue 29), so a user is named by both. */
async function userByEmail(users: PortalUsers, values: { merchant?: string; email?: string }) {
  const merchant = need(values.merchant, '--merchant');
  const u = await users.byEmail(merchant, need(values.email, '--email'));
  if (!u) throw new CommandError(`no portal user ${JSON.stringify(values.email)} at merchant ${JSON.stringify(merchant)}`);
  return u;
}

export const userDisableCommand = command({
  name: 'user disable',
  args: '--merchant ID --email E',
  options: { merchant: { type: 'string' }, email: { type: 'string' } },
  async run({ values, runtime }) {
    const rt = await runtime();
    const users = new PortalUsers(rt.store, rt.keyring);
    const u = await userByEmail(users, values);
    if (!(await users.setDisabled(u.user_id, true, Date.now()))) throw new CommandError(`${u.email} is disabled already`);
    out(`${u.email} disabled`);
  },
});

export const userEnableCommand = command({
  name: 'user enable',
  args: '--merchant ID --email E',
  options: { merchant: { type: 'string' }, email: { type: 'string' } },
  async run({ values, runtime }) {
    const rt = await runtime();
    const users = new PortalUsers(rt.store, rt.keyring);
    const u = await userByEmail(users, values);
    if (!(await users.setDisabled(u.user_id, false, Date.now()))) throw new CommandError(`${u.email} is not disabled`);
    out(`${u.email} enabled`);
  },
});

export const userResetCommand = command({
  name: 'user reset',
  args: '--merchant ID --email E [--totp]',
  options: { merchant: { type: 'string' }, email: { type: 'string' }, totp: { type: 'boolean' } },
  async run({ values, runtime }) {
    const rt = await runtime();
    const users = new PortalUsers(rt.store, rt.keyring);
    const u = await userByEmail(users, values);
    const token = await users.reset(u.user_id, { totp: values.totp === true }, Date.now());
    out(`${u.email}: password cleared${values.totp ? ', two-step sign-in removed' : ''}, sessions ended`);
    out(`set-password link (once, ${SETUP_LINK_MS / 3600_000} h): ${linkOf(rt.settings.public_url, token)}`);
  },
});
