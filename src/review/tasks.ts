// Inside `serve`: review holds nobody decided within 7 days expire (decisions §8).
import { backgroundTasks } from '../cli/serve.js';
import { intervalTask } from '../ops/interval-task.js';
import { ReviewService } from './service.js';

backgroundTasks.push((rt) => {
  const reviews = new ReviewService(rt.deps);
  return intervalTask('review hold expiry', 60_000, () => reviews.expireDue());
});
