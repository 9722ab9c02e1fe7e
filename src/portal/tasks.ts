// The portal's timed job on the shared scheduler: sessions past their idle or absolute
// limit are removed (a load refuses them anyway; this keeps the table small), bounded per run.
import type { JobSetup } from '../scheduler/jobs.js';
import { PortalSessions } from './sessions.js';

export const portalJobs: JobSetup = (rt, scheduler) => {
  const sessions = new PortalSessions(rt.store, rt.keyring);
  scheduler.recurring('portal.sessions.purge', 10 * 60_000, (ctx) => sessions.purge(ctx.now_ms));
};
