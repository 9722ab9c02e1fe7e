// Background tasks of the payment lifecycle inside `serve`: expire lapsed manual
// authorisations (decisions §7) and purge Idempotency-Keys past 24 h (decisions §4).
import { backgroundTasks } from '../cli/serve.js';
import { purgeExpiredKeys } from '../idempotency/plugin.js';
import { intervalTask } from '../ops/interval-task.js';
import { expireDue } from './expiry.js';

backgroundTasks.push((rt) => intervalTask('payment expiry', 30_000, () => expireDue(rt.deps, rt.deps.now())));
backgroundTasks.push((rt) => intervalTask('idempotency purge', 10 * 60_000, () => purgeExpiredKeys(rt.deps, rt.deps.now())));
