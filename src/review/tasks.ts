// A recurring sweep of the shared scheduler (src/scheduler): review holds nobody decided
// within 7 days expire (decisions §8). Bounded per run; each decision is a compare-and-set.
import { jobSetups } from '../scheduler/jobs.js';
import { ReviewService } from './service.js';

jobSetups.push((rt, scheduler) => {
  const reviews = new ReviewService(rt.deps);
  scheduler.recurring('review.expiry', 60_000, () => reviews.expireDue());
});
