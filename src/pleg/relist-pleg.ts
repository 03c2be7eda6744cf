// The relisting PLEG: lists all sandboxes and containers every period and turns state changes into
// events for the affected pod only. It works with any CRI runtime, and it is the engine under the
// evented mechanisms too: a runtime event asks for an immediate relist (requestRelist) or applies
// one object's new state (apply/remove), so the event semantics are always the relist's.
import type { Logger } from '../log/logger.js';
import type { RuntimeService } from '../runtime/cri-types.js';
import { listRuntimePods } from '../runtime/runtime-pods.js';
import { isRunning, observeAll, PodRecord, type Observed } from './pod-record.js';
import type { Pleg, PodLifecycleEvent } from './types.js';

export interface RelistPlegOptions {
  runtime: RuntimeService;
  periodMs: number;
  logger: Logger;
  onEvent: (e: PodLifecycleEvent) => void;
  /**
   * The runtime answers again after relists failed (containerd restarted): work that failed
   * meanwhile and waits out a back-off can be retried now.
   */
  onRuntimeBack?: () => void;
  now?: () => number;
  /**
   * Delays of the follow-up relists while a change a runtime event announced has not reached the
   * CRI yet (containerd publishes /tasks/exit before its CRI plugin marks the container exited).
   */
  followUpDelaysMs?: readonly number[];
  /** How long to chase an announced change before leaving it to the periodic relist. */
  followUpGiveUpMs?: number;
}

/** What a runtime event announced about one object, to be confirmed by a relist. */
export interface Expectation {
  id: string;
  running: boolean;
}

// Dense at first, where containerd's CRI plugin catches up: it deletes the task, then records the
// exit, ~70 ms after /tasks/delete and ~140 ms after the kill in bench/pleg.ts. A few relists
// more per death are cheap; deaths are rare.
const DEFAULT_FOLLOW_UP_DELAYS_MS = [10, 20, 30, 50, 50, 100, 100, 100, 200, 200, 500] as const;
const DEFAULT_FOLLOW_UP_GIVE_UP_MS = 5000;

export class RelistPleg implements Pleg {
  private readonly record = new PodRecord();
  private readonly now: () => number;
  private periodMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastRelist: number;
  /** The last relist failed (the runtime is away). */
  private failing = false;
  private inFlight: Promise<void> | undefined;
  private again = false;
  private soon: NodeJS.Immediate | undefined;
  private readonly expected = new Map<string, { running: boolean; since: number }>();
  private followUps = 0;
  private followUpTimer: NodeJS.Timeout | undefined;
  private started = false;
  /** Counts updates from runtime events, so a relist that overlapped one is not applied. */
  private eventUpdates = 0;

  constructor(private readonly opts: RelistPlegOptions) {
    this.now = opts.now ?? Date.now;
    this.lastRelist = this.now();
    this.periodMs = opts.periodMs;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.arm();
    void this.relist();
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = this.followUpTimer = this.soon = undefined;
    this.expected.clear();
  }

  sinceLastRelistMs(): number {
    return this.now() - this.lastRelist;
  }

  /** The period of the safety-net relist; changed when an event stream comes up or goes down. */
  setPeriod(ms: number): void {
    if (ms === this.periodMs) return;
    this.periodMs = ms;
    if (this.started) this.arm();
  }

  period(): number {
    return this.periodMs;
  }

  /**
   * One relist now. If one is in flight, exactly one more runs after it (its list may predate the
   * change the caller heard of); the promise settles when that one has.
   */
  relist(): Promise<void> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight;
    }
    this.inFlight = (async () => {
      do {
        this.again = false;
        await this.relistOnce();
      } while (this.again);
    })().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * A relist on the next turn of the event loop, so that a burst of runtime events costs one.
   * With `expect`, relists follow until the CRI shows the announced state (or a deadline passes).
   */
  requestRelist(expect?: Expectation): void {
    if (expect) {
      const prev = this.expected.get(expect.id);
      if (prev?.running !== expect.running) this.expected.set(expect.id, { running: expect.running, since: this.now() });
      // A new event is news (containerd's /tasks/delete comes just before its CRI plugin records
      // the exit): follow-ups start again from the shortest delay.
      this.followUps = 0;
      if (this.followUpTimer) clearTimeout(this.followUpTimer);
      this.followUpTimer = undefined;
    }
    if (this.soon || !this.started) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      void this.relist();
    });
  }

  /** One object's new state from a runtime event that carries it (CRI GetContainerEvents). */
  apply(o: Observed): void {
    this.eventUpdates++;
    for (const e of this.record.upsert(o)) this.emit(e);
  }

  remove(id: string): void {
    this.eventUpdates++;
    for (const e of this.record.remove(id)) this.emit(e);
  }

  markOomKilled(id: string): void {
    this.record.markOomKilled(id);
  }

  observed(id: string): Observed | undefined {
    return this.record.get(id);
  }

  private arm(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => void this.relist(), this.periodMs);
    this.timer.unref?.();
  }

  private async relistOnce(): Promise<void> {
    try {
      const updatesBefore = this.eventUpdates;
      const pods = await listRuntimePods(this.opts.runtime);
      if (updatesBefore !== this.eventUpdates) {
        // An event applied meanwhile may be newer than this list: applying the list would undo it
        // and report the change twice. List again instead.
        this.again = true;
        return;
      }
      for (const e of this.record.replaceAll(observeAll(pods))) this.emit(e);
      this.lastRelist = this.now();
      if (this.failing) {
        this.failing = false;
        this.opts.logger.info('PLEG relist works again');
        this.opts.onRuntimeBack?.();
      }
    } catch (err) {
      this.failing = true;
      this.opts.logger.error('PLEG relist failed', { err: err instanceof Error ? err.message : String(err) });
    }
    this.checkExpectations();
  }

  private checkExpectations(): void {
    const giveUpMs = this.opts.followUpGiveUpMs ?? DEFAULT_FOLLOW_UP_GIVE_UP_MS;
    for (const [id, want] of this.expected) {
      const o = this.record.get(id);
      // Unknown to the CRI (not a kubelet-labelled object, or already removed): nothing to wait for.
      if (!o || isRunning(o) === want.running) this.expected.delete(id);
      else if (this.now() - want.since > giveUpMs) {
        this.opts.logger.v(4).info('PLEG gave up waiting for the runtime to show a change', { id, running: want.running });
        this.expected.delete(id);
      }
    }
    if (this.expected.size === 0) {
      this.followUps = 0;
      return;
    }
    if (this.followUpTimer || !this.started) return;
    const delays = this.opts.followUpDelaysMs ?? DEFAULT_FOLLOW_UP_DELAYS_MS;
    const delay = delays[Math.min(this.followUps, delays.length - 1)] ?? 100;
    this.followUps++;
    this.followUpTimer = setTimeout(() => {
      this.followUpTimer = undefined;
      void this.relist();
    }, delay);
    this.followUpTimer.unref?.();
  }

  private emit(e: PodLifecycleEvent): void {
    this.opts.logger.v(4).info('PLEG event', { podUID: e.podUid, event: e.type, id: e.id, container: e.name, oomKilled: e.oomKilled });
    this.opts.onEvent(e);
  }
}
