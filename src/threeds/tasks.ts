// Inside `serve`: challenges left unfinished past 15 minutes fail (decisions §10).
import { backgroundTasks } from '../cli/serve.js';
import { intervalTask } from '../ops/interval-task.js';
import { ChallengeService } from './service.js';

backgroundTasks.push((rt) => {
  const challenges = new ChallengeService(rt.deps);
  return intervalTask('3-D Secure challenge expiry', 30_000, () => challenges.expireDue());
});
