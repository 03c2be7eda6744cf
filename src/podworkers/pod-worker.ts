// One serial worker per pod UID: runs its current state's step, one at a time, whenever woken
// (config change, runtime event, timer). Work for one pod never waits on another pod's work.
import { syncing } from './states/syncing.js';
import { terminated } from './states/terminated.js';
import { terminating } from './states/terminating.js';
import { waitingToStart } from './states/waiting-to-start.js';
import type { PodStates, Transition } from './states/pod-state.js';
import type { PodWorkerStateName, StepEffects, WorkerContext } from './worker-context.js';
import { Backoff, POD_WORKER_FAILURE_BACKOFF } from '../util/backoff.js';
import { errorMessage } from '../util/error-message.js';

const STATES: PodStates = {
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
  private readonly failures = new Backoff(POD_WORKER_FAILURE_BACKOFF);
  private lastFailure: string | undefined;
  /** The desired pod of the last sync: a different object means the spec was updated. */
  private lastSynced: WorkerContext['desired'] | null = null;
  /** The next step needs a read of the pod that started after the last step ended (a timer woke it). */
  private freshRead = false;
  /** When the last step ended (cache time). */
  private lastEndedAt = 0;

  constructor(
    readonly ctx: WorkerContext,
    private readonly onDone: (w: PodWorker) => void,
    /** Called when the pod has stopped (Terminated): nothing of it runs, only clean-up is left. */
    private readonly onStopped: (w: PodWorker) => void = () => {},
  ) {}

  get state(): PodWorkerStateName {
    return this.stateName;
  }

  /** Ask for a step soon; many wakes while a step runs collapse into one more step. */
  wake(): void {
    this.step();
  }

  /**
   * The worker's own timer (resync, back-off expiry): nothing outside said anything changed, so
   * the step wants a view newer than its last step (as the kubelet's resync waits for a cache newer
   * than its last sync): the safety-net relist usually has one, else the pod is read.
   */
  private resync(): void {
    this.freshRead = true;
    this.step();
  }

  private step(): void {
    if (this.stateName === 'Done') return;
    this.pending = true;
    if (!this.running) this.loop().catch((err: unknown) => this.loopFailed(err));
  }

  /** Last resort: the loop itself threw (a bug). The pod is retried, never dropped, never fatal. */
  private loopFailed(err: unknown): void {
    this.ctx.logger.error('Pod worker failed unexpectedly, will retry', {
      pod: this.ctx.key,
      podUID: this.ctx.uid,
      state: this.stateName,
      err: errorMessage(err),
    });
    this.running = false;
    this.stopTimers();
    this.timer = setTimeout(() => this.resync(), this.failureDelayMs());
    this.timer.unref?.();
  }

  /** 1 s doubling to 15 s (jittered) while a state keeps failing; reset by a step that succeeds. */
  private failureDelayMs(): number {
    return this.failures.next();
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

  /** The kubelet's label for this step in kubelet_pod_worker_duration_seconds; undefined when not a sync. */
  private operationType(): string | undefined {
    switch (this.stateName) {
      case 'Syncing': {
        const first = this.lastSynced === null;
        const updated = !first && this.lastSynced !== this.ctx.desired;
        this.lastSynced = this.ctx.desired;
        return first ? 'create' : updated ? 'update' : 'sync';
      }
      case 'Terminating':
        return 'kill';
      case 'Terminated':
        return 'terminated';
      default:
        return undefined;
    }
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.pending && this.stateName !== 'Done') {
        this.pending = false;
        this.stopTimers();
        if (this.freshRead) {
          this.freshRead = false;
          this.ctx.lastStepAt = Math.max(this.ctx.lastStepAt, this.lastEndedAt);
        }
        const state = STATES[this.stateName];
        let t: Transition;
        const operation = this.operationType();
        const startedAt = performance.now();
        this.ctx.stepEffects = { kind: 'unrecorded' };
        try {
          t = await state.run(this.ctx);
          if (operation)
            this.ctx.emit((o) => o.podWorkerStep?.(this.ctx.uid, operation, performance.now() - startedAt));
          this.failures.reset();
          this.lastFailure = undefined;
        } catch (err) {
          // Each state handles the errors it expects; anything else is retried here with back-off,
          // and said once per distinct error rather than at every retry.
          const text = errorMessage(err);
          const fields = { pod: this.ctx.key, podUID: this.ctx.uid, state: this.stateName, err: text };
          if (text === this.lastFailure) this.ctx.logger.v(2).info('Pod worker step failed again, will retry', fields);
          else this.ctx.logger.error('Pod worker step failed, will retry', fields);
          this.lastFailure = text;
          t = { next: this.stateName, wakeAfterMs: this.failureDelayMs() };
        }
        // The next step syncs from a read of the runtime that started after this one's effects: after
        // the step, or after the creations it told the cache of (the cache's read of them is newer).
        // (Read back as the wide type: the step may have set it.)
        const effects = this.ctx.stepEffects as StepEffects;
        this.lastEndedAt = this.ctx.cache.tick();
        if (effects.kind === 'recorded') this.ctx.lastStepAt = effects.at;
        else if (effects.kind === 'unrecorded') this.ctx.lastStepAt = this.lastEndedAt;
        if (t.next !== this.stateName) {
          this.ctx.logger
            .v(3)
            .info('Pod worker state', { pod: this.ctx.key, podUID: this.ctx.uid, from: this.stateName, to: t.next });
          this.stateName = t.next;
          if (t.next !== 'Done') this.pending = true;
          // A pod removed before it started ends at once: it has stopped too.
          if (t.next === 'Terminated' || (t.next === 'Done' && state === waitingToStart)) this.onStopped(this);
        } else if (t.wakeAfterMs !== undefined && Number.isFinite(t.wakeAfterMs)) {
          this.timer = setTimeout(() => this.resync(), t.wakeAfterMs);
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
