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
import type { RuntimeService } from '../cri/cri-types.js';
import { readRuntimePods, type ListRuntimePodsOptions, type RuntimePod } from '../kuberuntime/runtime-pods.js';
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
/**
 * One-pod reads in flight at once. 2,000 pods removed in a flood each asked for a read of their
 * own as they began terminating: 4,000 CRI calls in flight stalled the agent for seconds and
 * grew it by 100+ MiB. The relist has a runner of its own and never waits behind them.
 */
const POD_READS_AT_ONCE = 16;

/** The states of a pod's objects: what tells that something changed in it. */
function signature(p: RuntimePod | undefined): string {
  if (!p) return '';
  return [...p.sandboxes.map((s) => `s${s.id}:${s.state}`), ...p.containers.map((c) => `c${c.id}:${c.state}`)].sort().join(',');
}

export class PodCache {
  private clock: CacheTime = 0;
  private readonly entries = new Map<string, { pod: RuntimePod; at: CacheTime }>();
  /** Pods a read of their own found gone, and when (until the next full read). */
  private readonly absentAt = new Map<string, CacheTime>();
  /** Start of the last full read that succeeded: every pod not in it was gone then. */
  private fullAt: CacheTime = 0;
  private lastFullMs: number;
  private readonly listeners = new Set<(c: PodCacheChange) => void>();
  private readonly reads: KeyedSerialRunner<string>;
  private readonly podReads: KeyedSerialRunner<string>;

  private readonly now: () => number;

  constructor(
    private readonly runtime: RuntimeService,
    private readonly opts: { now?: () => number; invalidIdentity?: ListRuntimePodsOptions['invalidIdentity'] } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.lastFullMs = this.now();
    this.reads = new KeyedSerialRunner(() => this.readAll());
    this.podReads = new KeyedSerialRunner((uid) => this.readPod(uid), { concurrency: POD_READS_AT_ONCE });
  }

  /** A time later than every read started so far (what a worker records when its sync ends). */
  tick(): CacheTime {
    return ++this.clock;
  }

  get(uid: string): CachedPod {
    const e = this.entries.get(uid);
    return { pod: e?.pod, at: Math.max(e?.at ?? 0, this.absentAt.get(uid) ?? 0, this.fullAt) };
  }

  /** Every pod the cache holds. */
  pods(): ReadonlyMap<string, RuntimePod> {
    return new Map([...this.entries].map(([uid, e]) => [uid, e.pod]));
  }

  /** The pod as read after `t`: from the cache when it has such a read, else read now. Rejects if the runtime cannot be read. */
  async getNewerThan(uid: string, t: CacheTime): Promise<CachedPod> {
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

  /** Called for every pod whose objects changed state (or appeared, or went). */
  onChange(listener: (c: PodCacheChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The pod that holds the container or sandbox `id`, if the cache knows it. */
  podOf(id: string): string | undefined {
    for (const [uid, e] of this.entries) {
      if (e.pod.containers.some((c) => c.id === id) || e.pod.sandboxes.some((s) => s.id === id)) return uid;
    }
    return undefined;
  }

  /** Milliseconds since the last full read succeeded (the PLEG's health signal). */
  sinceLastFullReadMs(): number {
    return this.now() - this.lastFullMs;
  }

  async idle(): Promise<void> {
    await Promise.all([this.reads.idle(), this.podReads.idle()]);
  }

  private async readAll(): Promise<void> {
    const started = this.tick();
    const pods = await readRuntimePods(this.runtime, { previous: (uid) => this.entries.get(uid)?.pod, invalidIdentity: this.opts.invalidIdentity });
    for (const [uid, pod] of pods) this.write(uid, pod, started, false);
    for (const uid of [...this.entries.keys()]) if (!pods.has(uid)) this.write(uid, undefined, started, false);
    this.fullAt = Math.max(this.fullAt, started);
    for (const [uid, at] of this.absentAt) if (at < started) this.absentAt.delete(uid);
    this.lastFullMs = this.now();
  }

  private async readPod(uid: string): Promise<void> {
    const started = this.tick();
    const pods = await readRuntimePods(this.runtime, { podUid: uid, previous: (u) => this.entries.get(u)?.pod, invalidIdentity: this.opts.invalidIdentity });
    this.write(uid, pods.get(uid), started, true);
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
