// One serial worker per pod UID: runs its current state's step, one at a time, whenever woken
// (config change, runtime event, timer). Work for one pod never waits on another pod's work.
import { syncing } from './states/syncing.js';
import { terminated } from './states/terminated.js';
import { terminating } from './states/terminating.js';
import { waitingToStart } from './states/waiting-to-start.js';
import type { PodState, PodWorkerStateName, WorkerContext } from './worker-context.js';

const STATES: Record<Exclude<PodWorkerStateName, 'Done'>, PodState> = {
  WaitingToStart: waitingToStart,
  Syncing: syncing,
  Terminating: terminating,
  Terminated: terminated,
};

export class PodWorker {
  private stateName: PodWorkerStateName = 'WaitingToStart';
  private running = false;
  private pending = false;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly ctx: WorkerContext,
    private readonly onDone: (w: PodWorker) => void,
  ) {}

  get state(): PodWorkerStateName {
    return this.stateName;
  }

  /**
   * Ask for a step soon; many wakes while a step runs collapse into one more step. Something may
   * have changed, so the step reads the runtime afresh.
   */
  wake(): void {
    this.ctx.externallyWoken = true;
    this.step();
  }

  /** The worker's own timer (resync, back-off expiry): nothing outside said anything changed. */
  private step(): void {
    if (this.stateName === 'Done') return;
    this.pending = true;
    if (!this.running) void this.loop();
  }

  requestTermination(): void {
    this.ctx.terminationRequested = true;
    this.wake();
  }

  /** Resolves when no step is running or pending (tests, shutdown). */
  idle(): Promise<void> {
    if (!this.running && !this.pending) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stopTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.pending && this.stateName !== 'Done') {
        this.pending = false;
        this.stopTimers();
        const state = STATES[this.stateName as Exclude<PodWorkerStateName, 'Done'>];
        const t = await state.run(this.ctx);
        if (t.next !== this.stateName) {
          this.ctx.logger.v(3).info('Pod worker state', { pod: this.ctx.key, podUID: this.ctx.uid, from: this.stateName, to: t.next });
          this.stateName = t.next;
          if (t.next !== 'Done') this.pending = true;
        } else if (t.wakeAfterMs !== undefined && Number.isFinite(t.wakeAfterMs)) {
          this.timer = setTimeout(() => this.step(), t.wakeAfterMs);
          this.timer.unref?.();
        }
      }
    } finally {
      this.running = false;
      if (this.stateName === 'Done') {
        this.stopTimers();
        this.onDone(this);
      }
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}
