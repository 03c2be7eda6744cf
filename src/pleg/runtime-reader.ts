// The only reader of runtime state: it reads the runtime and writes what it found into the pod cache.
// Four kinds of read: a full read (the PLEG's relist), one pod's (a CRI event named it, or a worker
// needs a newer view than the cache has), one object's (a runtime event named an object the cache
// knows), and the agent's own creations. Reads are coalesced: one full read in flight and at most one
// queued; the same per pod and per object; one-pod reads run 16 at a time beside the relist.
//
// The workers reach it through one narrow port (podworkers' PodCacheView): a step's pod newer than
// the last step (`getNewerThan`: from the cache when a relist or an event came after, else that one
// pod is read, once however many ask), and the calls in flight (in-flight.ts). A worker says what it
// is about to create (`creating`) and what it created (the ids the runtime answered); those objects
// are then read by id (PodSandboxStatus, ContainerStatus) and written into the pod's entry, stamped
// with that read's start. What the entry says of them is therefore what the runtime said, never what
// the agent expects; the rest of the pod is as last read, and any change to it since was made by this
// agent (recorded the same way) or announced by a runtime event, which reads the object it names.
import type { RuntimeService } from '../cri/cri-types.js';
import {
  readRuntimeObject,
  readRuntimePods,
  type ListRuntimePodsOptions,
  type RuntimeObjectRef,
} from '../kuberuntime/runtime-pods.js';
import { KeyedSerialRunner } from '../util/serial-runner.js';
import { InFlight } from './in-flight.js';
import type { CachedPod, CacheTime, PodCache } from './pod-cache.js';

const ALL = '*';

/** Called with what the creation made (empty when it failed); returns a time before the reads of those objects start. */
export type CreationDone = (created: readonly RuntimeObjectRef[]) => CacheTime;

/**
 * One-pod reads in flight at once. 2,000 pods removed in a flood each asked for a read of their
 * own as they began terminating: 4,000 CRI calls in flight stalled the agent for seconds and
 * grew it by 100+ MiB. The relist has a runner of its own and never waits behind them.
 */
const POD_READS_AT_ONCE = 16;

export interface RuntimeReaderOptions {
  now?: () => number;
  invalidIdentity?: ListRuntimePodsOptions['invalidIdentity'];
}

export class RuntimeReader {
  private readonly inFlight = new InFlight();
  private readonly reads: KeyedSerialRunner<string>;
  private readonly podReads: KeyedSerialRunner<string>;
  /** Reads of single objects a runtime event named, by id. */
  private readonly objectReads: KeyedSerialRunner<string>;
  private readonly now: () => number;
  private lastFullMs: number;

  constructor(
    private readonly runtime: RuntimeService,
    readonly cache: PodCache,
    private readonly opts: RuntimeReaderOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.lastFullMs = this.now();
    this.reads = new KeyedSerialRunner(() => this.readAll());
    this.podReads = new KeyedSerialRunner((uid) => this.readPod(uid), { concurrency: POD_READS_AT_ONCE });
    this.objectReads = new KeyedSerialRunner((id) => this.readObject(id), { concurrency: POD_READS_AT_ONCE });
  }

  /** A time later than every read started so far (what a worker records when its step ends). */
  tick(): CacheTime {
    return this.cache.tick();
  }

  /** Whether the cache holds anything of the pod. */
  has(uid: string): boolean {
    return this.cache.has(uid);
  }

  /** The pod as read after `t`: from the cache when it has such a read, else read now. Rejects if the runtime cannot be read. */
  async getNewerThan(uid: string, t: CacheTime): Promise<CachedPod> {
    // The pod's own creations are being read: that read may be the newer one asked for.
    await this.inFlight.creationRead(uid);
    const cached = this.cache.getNewerThan(uid, t);
    if (cached) return cached;
    await this.podReads.run(uid);
    return this.cache.get(uid);
  }

  /** A full read (the relist); coalesced with any in flight. Rejects if the runtime cannot be read. */
  refreshAll(): Promise<void> {
    return this.reads.run(ALL);
  }

  /** One pod's read; coalesced per pod. */
  refreshPod(uid: string): Promise<void> {
    return this.podReads.run(uid);
  }

  /** A read of the one object `id` (a runtime event named it); coalesced per object. Its pod must be known (podOf). */
  refreshObject(id: string): Promise<void> {
    return this.objectReads.run(id);
  }

  /**
   * The agent is about to create objects of pod `uid` (RunPodSandbox, CreateContainer with its
   * StartContainer). Call what is returned once with the ids the runtime answered: those objects
   * are read by id and written into the pod's entry. The time returned is earlier than that read,
   * so a worker that waits for a read newer than it gets this one.
   */
  creating(uid: string): CreationDone {
    this.inFlight.creationStarted(uid);
    let settled = false;
    return (objects) => {
      if (settled) return this.cache.time();
      settled = true;
      const at = this.cache.tick();
      this.inFlight.creationAnswered(uid, objects, at, () => this.readCreated(uid, objects));
      return at;
    };
  }

  /**
   * The agent is about to stop the object `id` (StopContainer, StopPodSandbox); call what is
   * returned once the runtime has answered, however it did. A runtime event about the object
   * meanwhile waits for that answer (`stopOf`): the CRI shows the exit by the time the stop
   * returns, so one read then answers the event. Read at once, the exits of a mass removal were
   * followed up again and again while containerd's CRI plugin caught up with its own events.
   */
  stopping(id: string): () => void {
    return this.inFlight.stopping(id);
  }

  /** The agent's stop of the object `id` in flight, if any: settles when the runtime has answered it. */
  stopOf(id: string): Promise<void> | undefined {
    return this.inFlight.stopOf(id);
  }

  /**
   * Runs `fn` when the next creation in flight settles, and returns true; false (without running
   * it) when none is in flight. Until a creation's answer is back, a runtime event about an id the
   * cache does not know may be about that object: the PLEG waits for it before it takes the id for a
   * stranger's and relists everything.
   */
  afterCreation(fn: () => void): boolean {
    return this.inFlight.afterCreation(fn);
  }

  /** The read of the pod's own creations in flight, if any. */
  creationRead(uid: string): Promise<void> | undefined {
    return this.inFlight.creationRead(uid);
  }

  /** The pod that holds the container or sandbox `id`: as the cache has it, or as this agent created it. */
  podOf(id: string): string | undefined {
    return this.cache.podOf(id) ?? this.inFlight.createdPod(id);
  }

  /** Milliseconds since the last full read succeeded (the PLEG's health signal). */
  sinceLastFullReadMs(): number {
    return this.now() - this.lastFullMs;
  }

  async idle(): Promise<void> {
    await Promise.all([this.reads.idle(), this.podReads.idle(), this.objectReads.idle(), ...this.inFlight.reads()]);
  }

  private async readAll(): Promise<void> {
    const started = this.cache.tick();
    // A pod being created is left to its creation's read (which reads its new objects by id): the
    // relist would only ask their statuses a second time, or catch a container between create and start.
    const left = new Set<string>();
    const leaveOut = (uid: string): boolean => {
      if (!this.inFlight.isCreating(uid)) return false;
      left.add(uid);
      return true;
    };
    const pods = await readRuntimePods(this.runtime, {
      previous: (uid) => this.cache.get(uid).pod,
      invalidIdentity: this.opts.invalidIdentity,
      leaveOut,
    });
    this.cache.setAll(pods, started, left);
    this.inFlight.fullRead(started, left);
    this.lastFullMs = this.now();
  }

  /** What the runtime says of objects this agent just created, written into their pod's entry. */
  private async readCreated(uid: string, refs: readonly RuntimeObjectRef[]): Promise<void> {
    const started = this.cache.tick();
    const found = await Promise.all(
      refs.map((r) => readRuntimeObject(this.runtime, r, { invalidIdentity: this.opts.invalidIdentity })),
    );
    if (this.cache.setObjects(uid, refs, found, started, true)) this.inFlight.seen(refs.map((r) => r.id));
  }

  /** One object a runtime event named: its pod's entry keeps the time of the pod's last full read. */
  private async readObject(id: string): Promise<void> {
    const uid = this.podOf(id);
    if (uid === undefined) return;
    const pod = this.cache.get(uid).pod;
    const sandboxId = pod?.containers.find((c) => c.id === id)?.sandboxId;
    const isSandbox = pod?.sandboxes.some((s) => s.id === id) ?? false;
    // Known only as a creation whose read failed: the pod is read instead.
    if (!isSandbox && sandboxId === undefined) return this.readPod(uid);
    const ref: RuntimeObjectRef = isSandbox
      ? { kind: 'sandbox', id }
      : { kind: 'container', id, sandboxId: sandboxId ?? '' };
    const started = this.cache.tick();
    const found = await readRuntimeObject(this.runtime, ref, { invalidIdentity: this.opts.invalidIdentity });
    if (this.cache.setObjects(uid, [ref], [found], started, false)) this.inFlight.seen([id]);
  }

  private async readPod(uid: string): Promise<void> {
    const started = this.cache.tick();
    const pods = await readRuntimePods(this.runtime, {
      podUid: uid,
      previous: (u) => this.cache.get(u).pod,
      invalidIdentity: this.opts.invalidIdentity,
    });
    this.cache.setPod(uid, pods.get(uid), started);
  }
}
