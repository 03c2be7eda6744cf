// The one cache of runtime state (the kubelet's PLEG pod cache), and nothing but the cache: every pod's
// sandboxes and containers with their statuses, and the time of the read that found them. It reads
// nothing itself: the runtime reader (runtime-reader.ts) writes what its reads found (`set`, `setAll`,
// `setObjects`), and workers, status and the PLEG read it (`get`, `getNewerThan`). A write never
// overwrites what a read that started later already wrote. Every change of a pod's objects (one
// appeared, changed state, went) is told to the listeners (the PLEG's events).
import {
  newestFirst,
  type RuntimeObject,
  type RuntimeObjectRef,
  type RuntimePod,
} from '../kuberuntime/runtime-pods.js';
import { ContainerState, PodSandboxState } from '../cri/cri-types.js';

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
  /** Start of the last full read: every pod not in it was gone then (the kubelet's cache timestamp). */
  private fullAt: CacheTime = 0;
  /** Pods the last full reads left to their creations' reads: the start of the last full read that covered each. */
  private readonly uncovered = new Map<string, CacheTime>();
  private readonly listeners = new Set<(c: PodCacheChange) => void>();
  /**
   * When each object a runtime event named was last read by id (its pod's entry keeps its own, older
   * time): a list-based read that started before must not write its older view of that object back.
   */
  private readonly objectReadAt = new Map<string, CacheTime>();

  /** A time later than every read started so far (a read takes one when it starts; a worker when its step ends). */
  tick(): CacheTime {
    return ++this.clock;
  }

  /** The latest time handed out. */
  time(): CacheTime {
    return this.clock;
  }

  get(uid: string): CachedPod {
    const e = this.entries.get(uid);
    return {
      pod: e?.pod,
      at: Math.max(e?.at ?? 0, this.absentAt.get(uid) ?? 0, this.uncovered.get(uid) ?? this.fullAt),
    };
  }

  /** The pod as a read that started after `t` found it; undefined when the cache has no such read yet. */
  getNewerThan(uid: string, t: CacheTime): CachedPod | undefined {
    const cached = this.get(uid);
    return cached.at > t ? cached : undefined;
  }

  has(uid: string): boolean {
    return this.entries.has(uid);
  }

  /** Every pod the cache holds. */
  pods(): ReadonlyMap<string, RuntimePod> {
    return new Map([...this.entries].map(([uid, e]) => [uid, e.pod]));
  }

  /** The pod that holds the container or sandbox `id`, if an entry has it. */
  podOf(id: string): string | undefined {
    return this.podOfObject.get(id);
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

  /** Called for every pod whose objects changed state (or appeared, or went). */
  onChange(listener: (c: PodCacheChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * What a full read that started at `at` found: every pod in `pods`, every other gone, except those
   * `left` to their creations' reads (they keep their entries and the time of the last full read
   * that covered them).
   */
  setAll(pods: ReadonlyMap<string, RuntimePod>, at: CacheTime, left: ReadonlySet<string>): void {
    for (const [uid, pod] of pods) this.set(uid, this.withNewerObjects(uid, pod, at), at, false);
    for (const uid of [...this.entries.keys()])
      if (!pods.has(uid) && !left.has(uid)) this.set(uid, this.withNewerObjects(uid, undefined, at), at, false);
    for (const [id, t] of this.objectReadAt) if (t < at) this.objectReadAt.delete(id);
    for (const uid of left) if (!this.uncovered.has(uid)) this.uncovered.set(uid, this.fullAt);
    for (const uid of [...this.uncovered.keys()]) if (!left.has(uid)) this.uncovered.delete(uid);
    this.fullAt = Math.max(this.fullAt, at);
    for (const [uid, t] of this.absentAt) if (t < at) this.absentAt.delete(uid);
  }

  /**
   * The pod's entry with `refs` replaced by what a read that started at `at` found of them (an
   * object read as undefined is gone). Unless a read of the pod that started later already wrote;
   * `stamp` makes the entry as new as this read (the pod's own creations were read). False when a
   * later read had written already.
   */
  setObjects(
    uid: string,
    refs: readonly RuntimeObjectRef[],
    found: readonly (RuntimeObject | undefined)[],
    at: CacheTime,
    stamp: boolean,
  ): boolean {
    const old = this.entries.get(uid);
    if (this.isOlder(uid, at)) return false;
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
    if (!stamp) for (const id of ids) this.objectReadAt.set(id, at);
    const empty = pod.sandboxes.length === 0 && pod.containers.length === 0;
    this.set(uid, empty ? undefined : pod, stamp ? at : (old?.at ?? 0), stamp);
    return true;
  }

  /**
   * Writes what a read that started at `at` found of one pod (undefined: gone), unless a later read
   * already wrote. `stamp` (a read of the pod itself) makes the entry as new as the read; a full read
   * stamps only what changed (its start covers the rest).
   */
  set(uid: string, pod: RuntimePod | undefined, at: CacheTime, stamp: boolean): void {
    const old = this.entries.get(uid);
    if (this.isOlder(uid, at)) return;
    if (pod) this.absentAt.delete(uid);
    const changed = signature(old?.pod) !== signature(pod);
    if (!pod) {
      this.entries.delete(uid);
      if (stamp) this.absentAt.set(uid, at);
    } else if (changed || stamp || !old) this.entries.set(uid, { pod, at });
    else old.pod = pod;
    if (!changed) return;
    this.reindex(uid, old?.pod, pod);
    for (const l of this.listeners) {
      try {
        l({ uid, before: old?.pod, after: pod });
      } catch {
        // A listener's failure is its own; the cache and the other listeners go on.
      }
    }
  }

  /** What a read of the pod itself that started at `at` found (undefined: gone). */
  setPod(uid: string, pod: RuntimePod | undefined, at: CacheTime): void {
    this.set(uid, this.withNewerObjects(uid, pod, at), at, true);
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

  /** A read that started at `at` is older than what the cache already has of the pod. */
  private isOlder(uid: string, at: CacheTime): boolean {
    const old = this.entries.get(uid);
    return (old !== undefined && old.at > at) || (this.absentAt.get(uid) ?? 0) > at;
  }

  /** podOfObject follows the pod's entry: the ids it no longer holds go, the ones it holds now point to it. */
  private reindex(uid: string, before: RuntimePod | undefined, after: RuntimePod | undefined): void {
    for (const o of [...(before?.sandboxes ?? []), ...(before?.containers ?? [])])
      if (this.podOfObject.get(o.id) === uid) this.podOfObject.delete(o.id);
    for (const o of [...(after?.sandboxes ?? []), ...(after?.containers ?? [])]) this.podOfObject.set(o.id, uid);
  }
}
