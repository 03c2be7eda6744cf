// The agent's own runtime calls whose answer is not back yet, as the workers announce them: creations
// (RunPodSandbox, CreateContainer with its StartContainer) and stops (StopContainer, StopPodSandbox).
// The runtime reader reads a creation's objects by id once it is answered, and the PLEG asks here
// before it acts on a runtime event: an event about an object being made or stopped is answered by
// that call's own answer (one read), not by a relist of its own.
import type { RuntimeObjectRef } from '../kuberuntime/runtime-pods.js';
import type { CacheTime } from './pod-cache.js';

interface Stop {
  count: number;
  readonly answered: Promise<void>;
  readonly resolve: () => void;
}

export class InFlight {
  /** Creations whose answer is not back yet. */
  private creations = 0;
  private creationWaiters: (() => void)[] = [];
  /** Creations in flight, by pod. */
  private readonly creatingPods = new Map<string, number>();
  /** Objects this agent created, by id: their pod (and when), until a read has them in the cache. */
  private readonly created = new Map<string, { uid: string; at: CacheTime }>();
  /** The reads of a pod's own creations, by pod: a worker waits for them rather than reading the pod. */
  private readonly creationReads = new Map<string, Promise<void>>();
  /** Stops in flight, by object id: settled by the runtime's answer. */
  private readonly stops = new Map<string, Stop>();

  /** A creation of pod `uid` begins. */
  creationStarted(uid: string): void {
    this.creations++;
    this.creatingPods.set(uid, (this.creatingPods.get(uid) ?? 0) + 1);
  }

  /**
   * The creation's answer is back, having made `objects` at `at`; `read` reads them (after the pod's
   * earlier creation reads). Whoever waited for a creation to settle goes on.
   */
  creationAnswered(uid: string, objects: readonly RuntimeObjectRef[], at: CacheTime, read: () => Promise<void>): void {
    const left = (this.creatingPods.get(uid) ?? 1) - 1;
    if (left > 0) this.creatingPods.set(uid, left);
    else this.creatingPods.delete(uid);
    for (const o of objects) this.created.set(o.id, { uid, at });
    if (objects.length > 0) {
      const before = this.creationReads.get(uid);
      const reading: Promise<void> = (before ?? Promise.resolve())
        .then(read)
        // A failed read leaves the entry unstamped: the worker then reads the whole pod.
        .catch(() => undefined)
        .finally(() => {
          if (this.creationReads.get(uid) === reading) this.creationReads.delete(uid);
        });
      this.creationReads.set(uid, reading);
    }
    this.creations--;
    const waiters = this.creationWaiters;
    this.creationWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * Runs `fn` when the next creation in flight settles, and returns true; false (without running
   * it) when none is in flight.
   */
  afterCreation(fn: () => void): boolean {
    if (this.creations === 0) return false;
    this.creationWaiters.push(fn);
    return true;
  }

  /** The pod is being created, or its creations read: a full read leaves it to those reads. */
  isCreating(uid: string): boolean {
    return this.creatingPods.has(uid) || this.creationReads.has(uid);
  }

  /** The read of the pod's own creations in flight, if any. */
  creationRead(uid: string): Promise<void> | undefined {
    return this.creationReads.get(uid);
  }

  /** The pod of an object this agent created and no read has shown yet. */
  createdPod(id: string): string | undefined {
    return this.created.get(id)?.uid;
  }

  /** A read has these objects in the cache now. */
  seen(ids: Iterable<string>): void {
    for (const id of ids) this.created.delete(id);
  }

  /** A full read that started at `at` has every creation recorded before it (or found it gone), except those of the pods it left. */
  fullRead(at: CacheTime, left: ReadonlySet<string>): void {
    for (const [id, c] of this.created) if (c.at < at && !left.has(c.uid)) this.created.delete(id);
  }

  /** The reads of creations in flight (to wait for them all). */
  reads(): Iterable<Promise<void>> {
    return this.creationReads.values();
  }

  /** The agent is about to stop the object `id`; call what is returned once the runtime has answered, however it did. */
  stopping(id: string): () => void {
    let stop = this.stops.get(id);
    if (!stop) {
      let resolve: () => void = () => {};
      const answered = new Promise<void>((r) => (resolve = r));
      stop = { count: 0, answered, resolve };
      this.stops.set(id, stop);
    }
    const entry = stop;
    entry.count++;
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      if (--entry.count > 0) return;
      if (this.stops.get(id) === entry) this.stops.delete(id);
      entry.resolve();
    };
  }

  /** The agent's stop of the object `id` in flight, if any: settles when the runtime has answered it. */
  stopOf(id: string): Promise<void> | undefined {
    return this.stops.get(id)?.answered;
  }
}
