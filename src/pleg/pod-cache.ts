// The one cache of runtime state (the kubelet's PLEG pod cache): every pod's sandboxes and
// containers with their statuses, and when that was read. Only reads of the runtime write it: a
// full read (the PLEG's relist) or one pod's (a runtime event, or a worker that needs a newer
// view than it has). Nothing else in bootlet reads the runtime's state.
//
// A pod worker syncs from an entry newer than its last sync (`getNewerThan`): when the cache
// already has one (a relist or an event came after the sync), it costs nothing; otherwise that one
// pod is read, once however many ask. Status is computed from the same entries. Reads are
// coalesced: one full read in flight and at most one queued; the same per pod. A read never
// overwrites what a read that started later already wrote.
//
// The agent's own creations are the third kind of read. A worker says what it is about to create
// (`creating`) and what it created (the sandbox or container ids the runtime answered); the cache
// then reads exactly those objects by id (PodSandboxStatus, ContainerStatus) and writes them into
// the pod's entry, stamped with that read's start. What the entry says of them is therefore what the
// runtime said, never what the agent expects; the rest of the pod is as last read, and any change
// to it since was made by this agent (recorded the same way) or announced by a runtime event,
// which reads the object it names. Until a creation's answer is back, a runtime event about an
// id the cache does not know may be about that object, so the PLEG waits for it (`afterCreations`)
// before it takes the id for a stranger's and relists everything.
import { ContainerState, PodSandboxState, type RuntimeService } from '../cri/cri-types.js';
import {
  newestFirst,
  readRuntimeObject,
  readRuntimePods,
  type ListRuntimePodsOptions,
  type RuntimeObjectRef,
  type RuntimePod,
} from '../kuberuntime/runtime-pods.js';
import { KeyedSerialRunner } from '../util/serial-runner.js';

/** A logical time: every read takes a new one when it starts; workers compare with it. */
export type CacheTime = number;

export interface CachedPod {
  readonly pod: RuntimePod | undefined;
  /** The start of the latest read that covered this pod. */
  readonly at: CacheTime;
}

export interface PodCacheChange {
  readonly uid: string;
  readonly before: RuntimePod | undefined;
  readonly after: RuntimePod | undefined;
}

const ALL = '*';

/** Called with what the creation made (empty when it failed); returns a time before the reads of those objects start. */
export type CreationDone = (created: readonly RuntimeObjectRef[]) => CacheTime;
/**
 * One-pod reads in flight at once. 2,000 pods removed in a flood each asked for a read of their
 * own as they began terminating: 4,000 CRI calls in flight stalled the agent for seconds and
 * grew it by 100+ MiB. The relist has a runner of its own and never waits behind them.
 */
const POD_READS_AT_ONCE = 16;

/** The states of a pod's objects: what tells that something changed in it. */
function signature(p: RuntimePod | undefined): string {
  if (!p) return '';
  return [...p.sandboxes.map((s) => `s${s.id}:${s.state}`), ...p.containers.map((c) => `c${c.id}:${c.state}`)]
    .sort()
    .join(',');
}

export class PodCache {
  private clock: CacheTime = 0;
  private readonly entries = new Map<string, { pod: RuntimePod; at: CacheTime }>();
  /**
   * The pod of every sandbox and container id the entries hold: a runtime event names an object,
   * and looking it up through every entry made each of a mass removal's exits (and each check of
   * what they announced) cost a pass over every pod.
   */
  private readonly podOfObject = new Map<string, string>();
  /** Pods a read of their own found gone, and when (until the next full read). */
  private readonly absentAt = new Map<string, CacheTime>();
  /** Start of the last full read that succeeded: every pod not in it was gone then. */
  private fullAt: CacheTime = 0;
  private lastFullMs: number;
  private readonly listeners = new Set<(c: PodCacheChange) => void>();
  private readonly reads: KeyedSerialRunner<string>;
  private readonly podReads: KeyedSerialRunner<string>;

  private readonly now: () => number;
  /** Creations by this agent whose answer is not back yet. */
  private creationsInFlight = 0;
  private creationWaiters: (() => void)[] = [];
  /** Objects this agent created, by id: their pod (and when), until a read has them in an entry. */
  private readonly created = new Map<string, { uid: string; at: CacheTime }>();
  /** The reads of a pod's own creations, by pod: a worker waits for them rather than reading the pod. */
  private readonly creationReads = new Map<string, Promise<void>>();
  /** Creations in flight, by pod. */
  private readonly creatingPods = new Map<string, number>();
  /** Pods the last full reads left to their creations' reads: the start of the last full read that covered each. */
  private readonly uncovered = new Map<string, CacheTime>();
  /** Reads of single objects a runtime event named, by id. */
  private readonly objectReads: KeyedSerialRunner<string>;
  /**
   * When each object a runtime event named was last read by id (its pod's entry keeps its own, older
   * time): a list-based read that started before must not write its older view of that object back.
   */
  private readonly objectReadAt = new Map<string, CacheTime>();
  /** Stops by this agent in flight (StopContainer, StopPodSandbox), by object id: settled by the runtime's answer. */
  private readonly stops = new Map<string, { count: number; answered: Promise<void>; resolve: () => void }>();

  constructor(
    private readonly runtime: RuntimeService,
    private readonly opts: { now?: () => number; invalidIdentity?: ListRuntimePodsOptions['invalidIdentity'] } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.lastFullMs = this.now();
    this.reads = new KeyedSerialRunner(() => this.readAll());
    this.podReads = new KeyedSerialRunner((uid) => this.readPod(uid), { concurrency: POD_READS_AT_ONCE });
    this.objectReads = new KeyedSerialRunner((id) => this.readObject(id), { concurrency: POD_READS_AT_ONCE });
  }

  /** A time later than every read started so far (what a worker records when its sync ends). */
  tick(): CacheTime {
    return ++this.clock;
  }

  get(uid: string): CachedPod {
    const e = this.entries.get(uid);
    return {
      pod: e?.pod,
      at: Math.max(e?.at ?? 0, this.absentAt.get(uid) ?? 0, this.uncovered.get(uid) ?? this.fullAt),
    };
  }

  has(uid: string): boolean {
    return this.entries.has(uid);
  }

  /** Every pod the cache holds. */
  pods(): ReadonlyMap<string, RuntimePod> {
    return new Map([...this.entries].map(([uid, e]) => [uid, e.pod]));
  }

  /** The pod as read after `t`: from the cache when it has such a read, else read now. Rejects if the runtime cannot be read. */
  async getNewerThan(uid: string, t: CacheTime): Promise<CachedPod> {
    // The pod's own creations are being read: that read may be the newer one asked for.
    await this.creationReads.get(uid);
    const cached = this.get(uid);
    if (cached.at > t) return cached;
    await this.podReads.run(uid);
    return this.get(uid);
  }

  /** A full read (the relist); coalesced with any in flight. Rejects if the runtime cannot be read. */
  refreshAll(): Promise<void> {
    return this.reads.run(ALL);
  }

  /** One pod's read; coalesced per pod. */
  refreshPod(uid: string): Promise<void> {
    return this.podReads.run(uid);
  }

  /**
   * The agent is about to create objects of pod `uid` (RunPodSandbox, CreateContainer with its
   * StartContainer). Call what is returned once with the ids the runtime answered: those objects
   * are read by id and written into the pod's entry. The time returned is earlier than that read,
   * so a worker that waits for a read newer than it gets this one.
   */
  creating(uid: string): CreationDone {
    this.creationsInFlight++;
    this.creatingPods.set(uid, (this.creatingPods.get(uid) ?? 0) + 1);
    let settled = false;
    return (objects) => {
      if (settled) return this.clock;
      settled = true;
      const left = (this.creatingPods.get(uid) ?? 1) - 1;
      if (left > 0) this.creatingPods.set(uid, left);
      else this.creatingPods.delete(uid);
      const at = this.tick();
      for (const o of objects) this.created.set(o.id, { uid, at });
      if (objects.length > 0) {
        const before = this.creationReads.get(uid);
        const read: Promise<void> = (before ?? Promise.resolve())
          .then(() => this.readCreated(uid, objects))
          // A failed read leaves the entry unstamped: the worker then reads the whole pod.
          .catch(() => undefined)
          .finally(() => {
            if (this.creationReads.get(uid) === read) this.creationReads.delete(uid);
          });
        this.creationReads.set(uid, read);
      }
      this.creationsInFlight--;
      const waiters = this.creationWaiters;
      this.creationWaiters = [];
      for (const w of waiters) w();
      return at;
    };
  }

  /**
   * Runs `fn` when the next creation in flight settles, and returns true; false (without running
   * it) when none is in flight.
   */
  afterCreation(fn: () => void): boolean {
    if (this.creationsInFlight === 0) return false;
    this.creationWaiters.push(fn);
    return true;
  }

  /**
   * The agent is about to stop the object `id` (StopContainer, StopPodSandbox); call what is
   * returned once the runtime has answered, however it did. A runtime event about the object
   * meanwhile waits for that answer (`stopOf`): the CRI shows the exit by the time the stop
   * returns, so one read then answers the event. Read at once, the exits of a mass removal were
   * followed up again and again while containerd's CRI plugin caught up with its own events.
   */
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

  /** The read of the pod's own creations in flight, if any. */
  creationRead(uid: string): Promise<void> | undefined {
    return this.creationReads.get(uid);
  }

  /** A read of the one object `id` (a runtime event named it); coalesced per object. The cache must know its pod. */
  refreshObject(id: string): Promise<void> {
    return this.objectReads.run(id);
  }

  /** Called for every pod whose objects changed state (or appeared, or went). */
  onChange(listener: (c: PodCacheChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The pod that holds the container or sandbox `id`, if the cache knows it. */
  podOf(id: string): string | undefined {
    return this.podOfObject.get(id) ?? this.created.get(id)?.uid;
  }

  /** Whether the object `id` is running (a sandbox: ready) as the cache has it; undefined when no entry has it. */
  running(id: string): boolean | undefined {
    const uid = this.podOfObject.get(id);
    const pod = uid === undefined ? undefined : this.entries.get(uid)?.pod;
    if (!pod) return undefined;
    const c = pod.containers.find((x) => x.id === id);
    if (c) return c.state === ContainerState.CONTAINER_RUNNING;
    const s = pod.sandboxes.find((x) => x.id === id);
    return s ? s.state === PodSandboxState.SANDBOX_READY : undefined;
  }

  /** Milliseconds since the last full read succeeded (the PLEG's health signal). */
  sinceLastFullReadMs(): number {
    return this.now() - this.lastFullMs;
  }

  async idle(): Promise<void> {
    await Promise.all([
      this.reads.idle(),
      this.podReads.idle(),
      this.objectReads.idle(),
      ...this.creationReads.values(),
    ]);
  }

  private async readAll(): Promise<void> {
    const started = this.tick();
    // A pod being created is left to its creation's read (which reads its new objects by id): the
    // relist would only ask their statuses a second time, or catch a container between create and start.
    const left = new Set<string>();
    const leaveOut = (uid: string): boolean => {
      if (!this.creatingPods.has(uid) && !this.creationReads.has(uid)) return false;
      left.add(uid);
      return true;
    };
    const pods = await readRuntimePods(this.runtime, {
      previous: (uid) => this.entries.get(uid)?.pod,
      invalidIdentity: this.opts.invalidIdentity,
      leaveOut,
    });
    for (const [uid, pod] of pods) this.write(uid, this.withNewerObjects(uid, pod, started), started, false);
    for (const uid of [...this.entries.keys()])
      if (!pods.has(uid) && !left.has(uid))
        this.write(uid, this.withNewerObjects(uid, undefined, started), started, false);
    for (const [id, at] of this.objectReadAt) if (at < started) this.objectReadAt.delete(id);
    for (const uid of left) if (!this.uncovered.has(uid)) this.uncovered.set(uid, this.fullAt);
    for (const uid of [...this.uncovered.keys()]) if (!left.has(uid)) this.uncovered.delete(uid);
    this.fullAt = Math.max(this.fullAt, started);
    for (const [uid, at] of this.absentAt) if (at < started) this.absentAt.delete(uid);
    // A full read that started after a creation was recorded has it (or found it gone).
    for (const [id, c] of this.created) if (c.at < started && !left.has(c.uid)) this.created.delete(id);
    this.lastFullMs = this.now();
  }

  /** What the runtime says of objects this agent just created, written into their pod's entry. */
  private async readCreated(uid: string, refs: readonly RuntimeObjectRef[]): Promise<void> {
    const started = this.tick();
    const found = await Promise.all(
      refs.map((r) => readRuntimeObject(this.runtime, r, { invalidIdentity: this.opts.invalidIdentity })),
    );
    this.merge(uid, refs, found, started, true);
  }

  /** One object a runtime event named: its pod's entry keeps the time of the pod's last full read. */
  private async readObject(id: string): Promise<void> {
    const uid = this.podOf(id);
    if (uid === undefined) return;
    const pod = this.entries.get(uid)?.pod;
    const sandboxId = pod?.containers.find((c) => c.id === id)?.sandboxId;
    const isSandbox = pod?.sandboxes.some((s) => s.id === id) ?? false;
    // Known only as a creation whose read failed: the pod is read instead.
    if (!isSandbox && sandboxId === undefined) return this.readPod(uid);
    const ref: RuntimeObjectRef = isSandbox
      ? { kind: 'sandbox', id }
      : { kind: 'container', id, sandboxId: sandboxId ?? '' };
    const started = this.tick();
    const found = await readRuntimeObject(this.runtime, ref, { invalidIdentity: this.opts.invalidIdentity });
    this.merge(uid, [ref], [found], started, false);
  }

  /**
   * The pod's entry with `refs` replaced by what was read of them (an object read as undefined is
   * gone). Unless a read of the pod that started later already wrote; `stamp` makes the entry as
   * new as this read.
   */
  private merge(
    uid: string,
    refs: readonly RuntimeObjectRef[],
    found: readonly Awaited<ReturnType<typeof readRuntimeObject>>[],
    at: CacheTime,
    stamp: boolean,
  ): void {
    const old = this.entries.get(uid);
    if ((old && old.at > at) || (this.absentAt.get(uid) ?? 0) > at) return;
    const ids = new Set(refs.map((r) => r.id));
    const first = found.find((f) => f !== undefined)?.identity;
    const pod: RuntimePod = {
      uid,
      name: old?.pod.name ?? first?.podName ?? '',
      namespace: old?.pod.namespace ?? first?.podNamespace ?? '',
      sandboxes: (old?.pod.sandboxes ?? []).filter((s) => !ids.has(s.id)),
      containers: (old?.pod.containers ?? []).filter((c) => !ids.has(c.id)),
    };
    for (const f of found) {
      if (f?.identity.podUid !== uid) continue;
      if (f.kind === 'sandbox') pod.sandboxes.push(f.sandbox);
      else pod.containers.push(f.container);
    }
    newestFirst(pod.sandboxes);
    newestFirst(pod.containers);
    for (const id of ids) {
      this.created.delete(id);
      if (!stamp) this.objectReadAt.set(id, at);
    }
    const empty = pod.sandboxes.length === 0 && pod.containers.length === 0;
    this.write(uid, empty ? undefined : pod, stamp ? at : (old?.at ?? 0), stamp);
  }

  private async readPod(uid: string): Promise<void> {
    const started = this.tick();
    const pods = await readRuntimePods(this.runtime, {
      podUid: uid,
      previous: (u) => this.entries.get(u)?.pod,
      invalidIdentity: this.opts.invalidIdentity,
    });
    this.write(uid, this.withNewerObjects(uid, pods.get(uid), started), started, true);
  }

  /**
   * What a list-based read that started at `at` found of pod `uid`, with each object a later read by
   * id has written kept as that read found it (or left out, when it found it gone).
   */
  private withNewerObjects(uid: string, found: RuntimePod | undefined, at: CacheTime): RuntimePod | undefined {
    if (this.objectReadAt.size === 0) return found;
    const old = this.entries.get(uid)?.pod;
    const newer = new Set<string>();
    for (const o of [
      ...(found?.sandboxes ?? []),
      ...(found?.containers ?? []),
      ...(old?.sandboxes ?? []),
      ...(old?.containers ?? []),
    ])
      if ((this.objectReadAt.get(o.id) ?? 0) > at) newer.add(o.id);
    if (newer.size === 0) return found;
    const base = found ?? {
      uid,
      name: old?.name ?? '',
      namespace: old?.namespace ?? '',
      sandboxes: [],
      containers: [],
    };
    const pod: RuntimePod = {
      ...base,
      sandboxes: [
        ...base.sandboxes.filter((o) => !newer.has(o.id)),
        ...(old?.sandboxes ?? []).filter((o) => newer.has(o.id)),
      ],
      containers: [
        ...base.containers.filter((o) => !newer.has(o.id)),
        ...(old?.containers ?? []).filter((o) => newer.has(o.id)),
      ],
    };
    if (pod.sandboxes.length === 0 && pod.containers.length === 0) return undefined;
    newestFirst(pod.sandboxes);
    newestFirst(pod.containers);
    return pod;
  }

  /** podOfObject follows the pod's entry: the ids it no longer holds go, the ones it holds now point to it. */
  private reindex(uid: string, before: RuntimePod | undefined, after: RuntimePod | undefined): void {
    for (const o of [...(before?.sandboxes ?? []), ...(before?.containers ?? [])])
      if (this.podOfObject.get(o.id) === uid) this.podOfObject.delete(o.id);
    for (const o of [...(after?.sandboxes ?? []), ...(after?.containers ?? [])]) this.podOfObject.set(o.id, uid);
  }

  /** Writes what a read that started at `at` found, unless a later read already wrote. */
  private write(uid: string, pod: RuntimePod | undefined, at: CacheTime, stamp: boolean): void {
    const old = this.entries.get(uid);
    if ((old && old.at > at) || (this.absentAt.get(uid) ?? 0) > at) return;
    if (pod) this.absentAt.delete(uid);
    const changed = signature(old?.pod) !== signature(pod);
    if (!pod) {
      this.entries.delete(uid);
      if (stamp) this.absentAt.set(uid, at);
    }
    // A full read stamps only what changed (fullAt covers the rest); a pod's own read stamps it.
    else if (changed || stamp || !old) this.entries.set(uid, { pod, at });
    else old.pod = pod;
    if (changed) this.reindex(uid, old?.pod, pod);
    if (!changed) return;
    for (const l of this.listeners) {
      try {
        l({ uid, before: old?.pod, after: pod });
      } catch {
        // A listener's failure is its own; the cache and the other listeners go on.
      }
    }
  }
}
