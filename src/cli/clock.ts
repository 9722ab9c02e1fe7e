// `tollgate clock advance|show` (docs/contract.md §16): move a test account's clock and run what
// falls due on the way, in order. Here with serve and worker, above the capabilities: an advance
// runs every capability's jobs (background.ts's list).

import { CommandError, command, need, out, UsageError } from '../command/registry.js';
import { advanceClock, ClockError, clockOf, parseDuration, parseInstant } from '../scheduler/clock.js';

export const clockAdvanceCommand = command({
  name: 'clock advance',
  args: '--account ID (--to ISO-8601 | --by 35d) [--json]',
  details: [
    '--to 2027-03-01 or 2027-03-01T12:00:00Z (a bare date is midnight UTC); --by 35d, 12h, 1w2d, 90m.',
    'Every job of the account due on the way runs as of its own time; live accounts are refused (they use real time).',
  ],
  options: { account: { type: 'string' }, to: { type: 'string' }, by: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    if ((values.to === undefined) === (values.by === undefined)) throw new UsageError('give one of --to ISO-8601 or --by DURATION');
    const rt = await runtime();
    const real_now = rt.deps.now();
    let to_ms: number;
    if (values.to !== undefined) {
      const t = parseInstant(values.to);
      if (t === null)
        throw new UsageError(`--to ${JSON.stringify(values.to)} is not a date (2027-03-01) or an ISO 8601 time with its offset (2027-03-01T12:00:00Z)`);
      to_ms = t;
    } else {
      const d = parseDuration(values.by as string);
      if (d === null) throw new UsageError(`--by ${JSON.stringify(values.by)} is not a duration such as 35d, 12h, 1w2d or 90m`);
      to_ms = (await clockOf(rt.store, account_id, real_now)) + d;
    }
    try {
      // Every job kind runs on the way (the whole list: background.ts), loaded only by this command.
      const { createScheduler } = await import('./background.js');
      const r = await advanceClock(rt.store, createScheduler(rt), account_id, to_ms, real_now);
      if (values.json) return out(JSON.stringify({ ...r, from: new Date(r.from_ms).toISOString(), to: new Date(r.to_ms).toISOString() }));
      out(
        `account ${account_id}: clock ${new Date(r.from_ms).toISOString()} → ${new Date(r.to_ms).toISOString()}; ${r.jobs} job(s) run at ${r.moments} moment(s)`,
      );
    } catch (e) {
      if (e instanceof ClockError) throw new CommandError(e.message);
      throw e;
    }
  },
});

export const clockShowCommand = command({
  name: 'clock show',
  args: '--account ID',
  options: { account: { type: 'string' } },
  async run({ values, runtime }) {
    const account_id = need(values.account, '--account');
    const rt = await runtime();
    const real_now = rt.deps.now();
    const at = await clockOf(rt.store, account_id, real_now);
    out(at > real_now ? `account ${account_id}: ${new Date(at).toISOString()} (moved ahead of the real time)` : `account ${account_id}: real time`);
  },
});
