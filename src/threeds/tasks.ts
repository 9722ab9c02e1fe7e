// Inside `serve`: challenges left unfinished past 15 minutes fail (decisions §10).
import { backgroundTasks } from '../cli/serve.js';
import { periodic } from '../review/tasks.js';
import { ChallengeService } from './service.js';

backgroundTasks.push((rt) => {
  const challenges = new ChallengeService(rt.deps);
  return periodic('3-D Secure challenge expiry', 30_000, () => challenges.expireDue());
});
