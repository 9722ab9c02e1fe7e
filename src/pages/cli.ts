// Operator commands for the origins allowed to frame an account's pages (docs/contract.md §14).
// The gateway caches an account's list for 10 seconds, so a change reaches running
// processes within that time.
import { command, need, out, UsageError } from '../command/registry.js';
import { frameOriginsOf, MAX_FRAME_ORIGINS, publicSuffixUnderWildcard } from './frame-origins.js';

const ORIGIN_HELP = [
  'ORIGIN is a scheme and host with an optional port: https://shop.example, https://shop.example:8443,',
  'https://*.shop.example (any subdomain), or http:// for localhost only (http://localhost:3000).',
  'A wildcard may not cover a public suffix (*.co.uk, *.github.io: the Public Suffix List); one stored before',
  'that rule is ignored when a page is framed, and `frame-origin remove` still removes it.',
  `At most ${MAX_FRAME_ORIGINS} per account. With none, the account's pages cannot be framed (frame-ancestors 'none').`,
];

export const frameOriginAddCommand = command({
  name: 'frame-origin add',
  args: '--account ID ORIGIN...',
  details: ORIGIN_HELP,
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    if (positionals.length === 0) throw new UsageError('give at least one ORIGIN');
    const frames = frameOriginsOf((await runtime()).store);
    for (const p of positionals) out(`added ${await frames.add(account, p)}`);
  },
});

export const frameOriginRemoveCommand = command({
  name: 'frame-origin remove',
  args: '--account ID ORIGIN...',
  details: ORIGIN_HELP,
  options: { account: { type: 'string' } },
  positionals: true,
  async run({ values, positionals, runtime }) {
    const account = need(values.account, '--account');
    if (positionals.length === 0) throw new UsageError('give at least one ORIGIN');
    const frames = frameOriginsOf((await runtime()).store);
    for (const p of positionals) out(`${(await frames.remove(account, p)) ? 'removed' : 'not listed'} ${p}`);
  },
});

export const frameOriginListCommand = command({
  name: 'frame-origin list',
  args: '--account ID [--json]',
  options: { account: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account = need(values.account, '--account');
    const origins = await frameOriginsOf((await runtime()).store).list(account);
    if (values.json) return out(JSON.stringify(origins));
    for (const o of origins) {
      const suffix = publicSuffixUnderWildcard(o);
      out(suffix ? `${o}  (ignored when framing: ${suffix} is a public suffix; remove it)` : o);
    }
    if (origins.length === 0) out(`none: the account's pages cannot be framed (npx tollgate frame-origin add --account ${account} ORIGIN)`);
  },
});
