// The PLEG: keeps the pod cache current and turns what changes in it into events for the affected
// pod only. It relists (a full read into the cache) every period, and at once when a runtime event
// asks; an event about an object the cache already knows reads only that object (its status by
// id), and a CRI event that names its pod reads that pod (a CRI list filtered by its UID label). Reads are coalesced by the runtime reader. When an event announced a
// change the CRI does not show yet (containerd publishes /tasks/exit before its CRI plugin marks
// the container exited), the read is followed up until it does.
import type { Logger } from '../log/logger.js';
import type { RuntimeReader } from './runtime-reader.js';
import { podEvents } from './pod-events.js';
import type { Pleg, PodLifecycleEvent } from './types.js';
import { errorMessage } from '../util/error-message.js';

export interface RelistPlegOptions {
  /** The runtime reader, which writes the pod cache this PLEG watches. */
  reader: RuntimeReader;
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
   * Delays of the follow-up reads while a change a runtime event announced has not reached the
   * CRI yet.
   */
  followUpDelaysMs?: readonly number[];
  /** How long to chase an announced change before leaving it to the periodic relist. */
  followUpGiveUpMs?: number;
  /**
   * After each successful relist: how long it took and the time since the start of the previous
   * successful one (undefined for the first), for kubelet_pleg_relist_{duration,interval}_seconds.
   */
  onRelist?: (durationMs: number, intervalMs: number | undefined) => void;
}

/**
 * Why a full relist ran: the safety-net period, a runtime event about an object the cache does not
 * know, a follow-up of such an event, or an explicit request (a stream (re)opened, a caller).
 * Logged at v4 so that tests and the bench can tell the relists a pod start causes from the period's.
 */
export type RelistCause = 'period' | 'event' | 'follow-up' | 'request';

/** What a runtime event announced about one object, to be confirmed by a read. */
export interface Expectation {
  id: string;
  running: boolean;
}

// Dense at first, where containerd's CRI plugin catches up: it deletes the task, then records the
// exit, ~70 ms after /tasks/delete and ~140 ms after the kill in bench/pleg.ts. A few reads
// more per death are cheap; deaths are rare.
const DEFAULT_FOLLOW_UP_DELAYS_MS = [10, 20, 30, 50, 50, 100, 100, 100, 200, 200, 500] as const;
const DEFAULT_FOLLOW_UP_GIVE_UP_MS = 5000;

export class RelistPleg implements Pleg {
  private readonly now: () => number;
  private periodMs: number;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Immediate | undefined;
  /** Pods to read on the next turn (events about objects the cache knows); '' = a full relist. */
  private readonly soonPods = new Set<string>();
  /** Objects to read by id on the next turn (events about objects the cache knows). */
  private readonly soonObjects = new Set<string>();
  /** Why the full relist of the next turn (when soonPods has '') is asked for. */
  private soonCause: RelistCause = 'event';
  /**
   * Announced changes not shown yet, each with its own follow-ups: how many reads it has had and
   * when the next is due. One schedule for all of them read every object at each follow-up, and
   * a mass removal's stream of exits kept restarting it at the shortest delay: hundreds of objects
   * read every few milliseconds for as long as the stops went on.
   */
  private readonly expected = new Map<string, { running: boolean; since: number; reads: number; dueAt: number }>();
  private followUpTimer: NodeJS.Timeout | undefined;
  /** When the armed follow-up fires (this.now() time). */
  private followUpAt = Infinity;
  private started = false;
  /** Containers the runtime reported an OOM kill for, until they are gone. */
  private readonly oom = new Set<string>();
  private readonly unsubscribe: () => void;
  private failing = false;
  /** When the last successful relist began (the kubelet's relistTime). */
  private lastRelistStart: number | undefined;

  constructor(private readonly opts: RelistPlegOptions) {
    this.now = opts.now ?? Date.now;
    this.periodMs = opts.periodMs;
    this.unsubscribe = opts.reader.cache.onChange((c) => {
      for (const e of podEvents(c.uid, c.before, c.after, (id) => this.oom.has(id))) this.emit(e);
      for (const id of this.oom)
        if (
          !(c.after?.containers ?? []).some((x) => x.id === id) &&
          (c.before?.containers ?? []).some((x) => x.id === id)
        )
          this.oom.delete(id);
    });
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.arm();
    void this.relist();
  }

  stop(): void {
    this.started = false;
    this.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    if (this.soon) clearImmediate(this.soon);
    this.timer = this.followUpTimer = this.soon = undefined;
    this.followUpAt = Infinity;
    this.expected.clear();
  }

  sinceLastRelistMs(): number {
    return this.opts.reader.sinceLastFullReadMs();
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

  /** One full relist now (coalesced with one in flight); settles when a relist that started after this call has. */
  async relist(cause: RelistCause = 'request'): Promise<void> {
    this.opts.logger.v(4).info('PLEG relist', { cause });
    try {
      const startedAt = performance.now();
      await this.opts.reader.refreshAll();
      this.opts.onRelist?.(
        performance.now() - startedAt,
        this.lastRelistStart === undefined ? undefined : startedAt - this.lastRelistStart,
      );
      this.lastRelistStart = startedAt;
      if (this.failing) {
        this.failing = false;
        this.opts.logger.info('PLEG relist works again');
        this.opts.onRuntimeBack?.();
      }
    } catch (err) {
      // Said once per outage; the runtime's own health check says more.
      if (!this.failing) this.opts.logger.error('PLEG relist failed', { err: errorMessage(err) });
      else this.opts.logger.v(2).info('PLEG relist failed again', { err: errorMessage(err) });
      this.failing = true;
    }
    this.checkExpectations();
  }

  /** One pod's read now (a CRI event named it). */
  refreshPod(uid: string): void {
    this.schedule(uid);
  }

  /**
   * A read on the next turn of the event loop, so that a burst of runtime events costs one: of
   * the object itself (by id) when the cache knows it, else a full relist. With `expect`, reads
   * follow until the CRI shows the announced state (or a deadline passes). An event about the
   * agent's own creation needs no read of its own: the creation's read by id says the same, and
   * an id unknown while a creation is in flight is decided once that creation's answer is back.
   * `podUid`, the pod the event named (CRI events name one): an unknown object is read with that pod
   * rather than by a full relist.
   */
  requestRelist(expect?: Expectation, podUid?: string): void {
    if (!expect) {
      this.schedule('', 'request');
      return;
    }
    const reader = this.opts.reader;
    // The agent is stopping it: the stop's answer comes once the CRI shows the exit.
    const stop = reader.stopOf(expect.id);
    if (stop) {
      void stop.then(() => this.requestRelist(expect, podUid));
      return;
    }
    const uid = reader.podOf(expect.id);
    if (uid === undefined && reader.afterCreation(() => this.requestRelist(expect, podUid))) return;
    const reading = uid === undefined ? undefined : reader.creationRead(uid);
    if (reading) {
      void reading.then(() => this.requestRelist(expect, podUid));
      return;
    }
    // A start the cache already shows (the agent's own, read by id): nothing to confirm. An exit is
    // always read: "not running" in the cache may be an exit seen before a removal now announced.
    if (uid !== undefined && expect.running && this.running(expect.id) === true) return;
    const prev = this.expected.get(expect.id);
    const now = this.now();
    // A new event is news: the object's follow-ups start again from the shortest delay (the give-up
    // still counts from the first event that announced the same state).
    this.expected.set(expect.id, {
      running: expect.running,
      since: prev?.running === expect.running ? prev.since : now,
      reads: 0,
      dueAt: now + this.followUpDelay(0),
    });
    if (uid !== undefined) this.scheduleObject(expect.id);
    else if (podUid !== undefined) this.schedule(podUid);
    else this.schedule('', 'event');
  }

  markOomKilled(id: string): void {
    this.oom.add(id);
  }

  private schedule(uid: string, cause: RelistCause = 'event'): void {
    this.soonPods.add(uid);
    if (uid === '' && this.soonCause !== 'request') this.soonCause = cause;
    this.armSoon();
  }

  private scheduleObject(id: string): void {
    this.soonObjects.add(id);
    this.armSoon();
  }

  private armSoon(): void {
    if (this.soon || !this.started) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      const pods = [...this.soonPods];
      const objects = [...this.soonObjects];
      const why = this.soonCause;
      this.soonPods.clear();
      this.soonObjects.clear();
      this.soonCause = 'event';
      if (pods.includes('')) void this.relist(why);
      else void this.read(pods, objects);
    });
  }

  private async read(uids: string[], objects: string[]): Promise<void> {
    const results = await Promise.allSettled([
      ...uids.map((u) => this.opts.reader.refreshPod(u)),
      ...objects.map((id) => this.opts.reader.refreshObject(id)),
    ]);
    for (const r of results) {
      if (r.status === 'rejected')
        this.opts.logger
          .v(2)
          .info('PLEG read of a pod failed; the next relist will catch up', { err: errorMessage(r.reason) });
    }
    this.checkExpectations();
  }

  private arm(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => void this.relist('period'), this.periodMs);
    this.timer.unref?.();
  }

  /** Whether the object `id` is running as the cache has it (undefined: the cache does not know it). */
  private running(id: string): boolean | undefined {
    return this.opts.reader.cache.running(id);
  }

  private followUpDelay(reads: number): number {
    const delays = this.opts.followUpDelaysMs ?? DEFAULT_FOLLOW_UP_DELAYS_MS;
    return delays[Math.min(reads, delays.length - 1)] ?? 100;
  }

  private checkExpectations(): void {
    const giveUpMs = this.opts.followUpGiveUpMs ?? DEFAULT_FOLLOW_UP_GIVE_UP_MS;
    let next = Infinity;
    for (const [id, want] of this.expected) {
      const running = this.running(id);
      // Unknown to the CRI (not a kubelet-labelled object, or already removed): nothing to wait for.
      if (running === undefined || running === want.running) this.expected.delete(id);
      else if (this.now() - want.since > giveUpMs) {
        this.opts.logger
          .v(4)
          .info('PLEG gave up waiting for the runtime to show a change', { id, running: want.running });
        this.expected.delete(id);
      } else next = Math.min(next, want.dueAt);
    }
    if (next === Infinity || !this.started) {
      if (this.followUpTimer) clearTimeout(this.followUpTimer);
      this.followUpTimer = undefined;
      this.followUpAt = Infinity;
      return;
    }
    if (this.followUpTimer && this.followUpAt <= next) return;
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    this.followUpAt = next;
    this.followUpTimer = setTimeout(() => this.followUp(), Math.max(0, next - this.now()));
    this.followUpTimer.unref?.();
  }

  /** Reads the objects whose follow-up is due (a relist when one is unknown to the cache by now). */
  private followUp(): void {
    this.followUpTimer = undefined;
    this.followUpAt = Infinity;
    const now = this.now();
    const due: string[] = [];
    for (const [id, want] of this.expected) {
      if (want.dueAt > now) continue;
      due.push(id);
      want.reads++;
      want.dueAt = now + this.followUpDelay(want.reads);
    }
    if (due.length === 0) this.checkExpectations();
    else if (due.some((id) => this.opts.reader.podOf(id) === undefined)) void this.relist('follow-up');
    else void this.read([], due);
  }

  private emit(e: PodLifecycleEvent): void {
    this.opts.logger
      .v(4)
      .info('PLEG event', { podUID: e.podUid, event: e.type, id: e.id, container: e.name, oomKilled: e.oomKilled });
    this.opts.onEvent(e);
  }
}
