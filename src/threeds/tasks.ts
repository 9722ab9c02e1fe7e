// A recurring sweep of the shared scheduler (src/scheduler): challenges left unfinished
// past 15 minutes fail (decisions §10). Bounded per run; each end is a compare-and-set.
import { jobSetups } from '../scheduler/jobs.js';
import { ChallengeService } from './service.js';

jobSetups.push((rt, scheduler) => {
  const challenges = new ChallengeService(rt.deps);
  scheduler.recurring('threeds.expiry', 30_000, () => challenges.expireDue());
});
