// Process-local recurring tasks: the second kind of work of the Scheduler (issue 30 item 3),
// and the one way the server runs something periodically. A task has no database row: the
// state it works on keeps its own leases (notification events) or lives only in this process
// (idempotency key outcomes the storage refused). Each task runs its step every `every_ms`
// after the previous step ended, never overlaps itself, can be woken to run at once, and
// stops gracefully: stop() signals the running steps, waits for them, then runs each task's
// own `settle` (work a step started and left running, such as deliveries in flight).
import { storageFault } from '../db/faults.js';

export type LocalStep = (stopping: AbortSignal) => Promise<unknown>;

export interface LocalTaskOptions {
  /** Waited for at stop, after the last step ended (work the steps left running). */
  settle?: () => Promise<unknown>;
}

/** Told of a failed step: the next tick tries again. */
export type StepErrorReport = (name: string, e: unknown) => void;

export const reportToStderr: StepErrorReport = (name, e) => {
  process.stderr.write(`${name} task failed: ${(e as Error).message}\n`);
};

interface Task {
  name: string;
  every_ms: number;
  step: LocalStep;
  settle?: () => Promise<unknown>;
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
  /** Woken while its step ran: run again as soon as it ends. */
  again: boolean;
  /** The storage fault its last step failed with, told once per episode (issue 17). */
  faulted: string | null;
}

export class LocalTasks {
  private readonly tasks = new Map<string, Task>();
  private readonly stopping = new AbortController();
  private started = false;
  private keep_alive = false;

  constructor(private readonly onError: StepErrorReport = reportToStderr) {}

  add(name: string, every_ms: number, step: LocalStep, opts: LocalTaskOptions = {}): void {
    if (!Number.isSafeInteger(every_ms) || every_ms < 1) throw new Error(`${name}: every_ms must be a positive integer`);
    if (this.tasks.has(name)) throw new Error(`local task ${name} registered twice`);
    if (this.started) throw new Error(`local task ${name} added after start`);
    this.tasks.set(name, { name, every_ms, step, settle: opts.settle, timer: null, running: null, again: false, faulted: null });
  }

  names(): string[] {
    return [...this.tasks.keys()];
  }

  /**
   * Runs every task's first step now, then each on its own interval. Once. `keep_alive`: the
   * timers hold the process open (`tollgate worker`, which has no listening socket to do it).
   */
  start(opts: { keep_alive?: boolean } = {}): void {
    if (this.started) return;
    this.started = true;
    this.keep_alive = opts.keep_alive ?? false;
    for (const t of this.tasks.values()) this.tick(t);
  }

  /** Runs the task's step now, or right after the running one ends; nothing before start or after stop. */
  wake(name: string): void {
    const t = this.tasks.get(name);
    if (!t || !this.started || this.stopping.signal.aborted) return;
    if (t.running) {
      t.again = true;
      return;
    }
    this.tick(t);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    const tasks = [...this.tasks.values()];
    for (const t of tasks) {
      if (t.timer) clearTimeout(t.timer);
      t.timer = null;
    }
    await Promise.all(tasks.map((t) => t.running));
    for (const t of tasks) await t.settle?.();
  }

  private tick(t: Task): void {
    if (t.timer) clearTimeout(t.timer);
    t.timer = null;
    if (t.running || this.stopping.signal.aborted) return;
    t.again = false;
    // The step starts on the next microtask, once `running` is set: a step that wakes its own
    // task before its first await then asks for one more run instead of overlapping itself.
    const run = async () => {
      await undefined;
      if (!this.stopping.signal.aborted) await t.step(this.stopping.signal);
    };
    t.running = run()
      .then(() => {
        if (t.faulted) process.stderr.write(`${t.name} task: storage is back, running again\n`);
        t.faulted = null;
      })
      .catch((e) => {
        const fault = storageFault(e);
        if (fault && t.faulted === fault) return;
        t.faulted = fault;
        this.onError(t.name, e);
      })
      .finally(() => {
        t.running = null;
        if (this.stopping.signal.aborted) return;
        if (t.again) {
          t.again = false;
          setImmediate(() => this.tick(t));
          return;
        }
        t.timer = setTimeout(() => this.tick(t), t.every_ms);
        if (!this.keep_alive) t.timer.unref();
      });
  }
}
