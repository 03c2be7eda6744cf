// The kubelet's watch-based manager for ConfigMaps and Secrets (pkg/kubelet/util/manager/
// watch_based_manager.go with pkg/kubelet/configmap, pkg/kubelet/secret): registering a pod counts
// a reference on each object it names; the first reference starts one LIST+WATCH of that object
// alone (fieldSelector=metadata.name=<name>), the last one going stops it. A read waits for the
// object's first LIST, bounded; a change is told with the UIDs of the pods that refer to it. An
// object marked `immutable` is watched no longer once seen (the kubelet does the same): it cannot
// change, only be deleted and made again, which a pod sees when it is registered again.
// A watch of an object no one has read for `maxIdleMs` (5 × syncFrequency in the kubelet, at least a
// minute) stops too, checked every minute, and the next read lists it anew: in the kubelet that
// frees the watches of objects only env refers to (read at a container's start), because its
// volume manager reads the volume ones at every sync. Here volumes are rewritten on a change rather
// than re-read, so an object a registered pod mounts keeps its watch whatever its reads.
import type { Logger } from '../../log/logger.js';
import { describeError } from '../client/api-error.js';
import { PodObjectUnavailableError, type PodRef } from '../../node/pod-objects.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';
import type { ApiObject } from '../../informer/list-watch.js';
import { Reflector } from '../../informer/reflector.js';
import { objectKey } from '../../informer/store.js';
import { API_LIST_WATCH_ERRORS } from '../client/list-watch-errors.js';

export interface ObjectManagerOptions {
  readonly client: Pick<PodObjectsClient, 'list' | 'watch'>;
  readonly gate: Pick<PodObjectsGate, 'usable'>;
  /** `configmaps` or `secrets`: the path and the log lines. */
  readonly resource: 'configmaps' | 'secrets';
  /** The names of this resource a pod refers to (references.ts). */
  readonly referencedNames: (pod: PodRef) => Set<string>;
  readonly logger: Logger;
  /** Longest a read waits for an object's first LIST. */
  readonly syncTimeoutMs: number;
  /** An object changed: the registered pods that refer to it. */
  readonly onChange: (podUids: readonly string[]) => void;
  readonly watchSeconds?: () => number;
  /** The names of this resource a pod mounts as a volume (kept watched however long no one reads them). */
  readonly volumeNames?: (pod: PodRef) => Set<string>;
  /** A watch no one read through for this long stops (the kubelet's maxIdleTime); default 5 min, at least 1 min. */
  readonly maxIdleMs?: number;
  readonly now?: () => number;
}

/** The kubelet's resyncInterval × 5 with its default syncFrequency of 1 min. */
export const DEFAULT_MAX_IDLE_MS = 5 * 60_000;
/** The kubelet's minIdleTime, and how often it looks for idle watches. */
const MIN_IDLE_MS = 60_000;
const IDLE_CHECK_MS = 60_000;

interface Watched<T extends ApiObject> {
  /** Replaced by a new one when a read comes after an idle stop. */
  reflector: Reflector<T>;
  refs: number;
  /** Last read (the kubelet's lastAccessTime), or start. */
  lastAccessMs: number;
  /** Stopped for idleness: the next read starts a new reflector. */
  idle: boolean;
  /** A read gave up before the first LIST: tell the pods once it is in, so they need not wait out their back-off. */
  readFailed: boolean;
}

export class WatchBasedObjectManager<T extends ApiObject & { immutable?: boolean }> {
  private readonly objects = new Map<string, Watched<T>>();
  /** Each registered pod: the object keys it refers to, and those of them it mounts. */
  private readonly pods = new Map<
    string,
    { readonly keys: ReadonlySet<string>; readonly mounted: ReadonlySet<string> }
  >();
  private registrationWaiters: (() => void)[] = [];
  private readonly kind: string;
  private readonly now: () => number;
  private readonly maxIdleMs: number;
  private idleCheck: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ObjectManagerOptions) {
    this.kind = opts.resource === 'configmaps' ? 'ConfigMap' : 'Secret';
    this.now = opts.now ?? Date.now;
    this.maxIdleMs = Math.max(MIN_IDLE_MS, opts.maxIdleMs ?? DEFAULT_MAX_IDLE_MS);
  }

  /** The number of objects watched now (one LIST+WATCH each). */
  get watchCount(): number {
    let n = 0;
    for (const w of this.objects.values()) if (w.reflector.running) n++;
    return n;
  }

  registerPod(pod: PodRef): void {
    const ns = pod.metadata.namespace;
    const keys = new Set([...this.opts.referencedNames(pod)].map((name) => objectKey(ns, name)));
    const mounted = new Set([...(this.opts.volumeNames?.(pod) ?? [])].map((name) => objectKey(ns, name)));
    const before = this.pods.get(pod.metadata.uid)?.keys ?? new Set<string>();
    // References added before the old ones go, so an object both name is never stopped and started.
    for (const key of keys) if (!before.has(key)) this.addReference(key);
    this.pods.set(pod.metadata.uid, { keys, mounted });
    for (const key of before) if (!keys.has(key)) this.deleteReference(key);
    // A newly mounted object whose watch stopped for idleness is watched again: its volume follows changes.
    for (const key of mounted) if (this.objects.get(key)?.idle) this.restartIdle(key);
    if (keys.size > 0) for (const w of this.registrationWaiters.splice(0)) w();
  }

  unregisterPod(uid: string): void {
    const pod = this.pods.get(uid);
    if (!pod) return;
    this.pods.delete(uid);
    for (const key of pod.keys) this.deleteReference(key);
  }

  /** Back after an outage: every watch goes again at once. */
  serverBack(): void {
    for (const w of this.objects.values()) if (w.reflector.running) w.reflector.serverBack();
  }

  async stop(): Promise<void> {
    clearInterval(this.idleCheck);
    this.idleCheck = undefined;
    const all = [...this.objects.values()];
    this.objects.clear();
    for (const w of this.registrationWaiters.splice(0)) w();
    await Promise.all(all.map((w) => w.reflector.stop()));
  }

  /**
   * The object as last listed or watched; undefined when the server says there is none. Throws
   * PodObjectUnavailableError when that is not known within the sync timeout: no registered pod
   * refers to it (yet), or its first LIST did not come in (the server away, a refusal).
   */
  async get(namespace: string, name: string): Promise<T | undefined> {
    const key = objectKey(namespace, name);
    const deadline = Date.now() + this.opts.syncTimeoutMs;
    let w = this.objects.get(key);
    // A read may come in the same turn as its pod's registration, just before it: wait for it, bounded.
    while (!w && Date.now() < deadline) {
      await this.registered(deadline - Date.now());
      w = this.objects.get(key);
    }
    if (!w) throw new PodObjectUnavailableError(`${this.kind} ${key}: no registered pod refers to it`);
    // Recorded whether the read succeeds or not, so a watch is not stopped under a read that waits.
    w.lastAccessMs = this.now();
    if (w.idle) this.restartIdle(key);
    if (!w.reflector.synced) {
      // While the server is away a first LIST cannot come: say so now rather than after the timeout.
      const synced = this.opts.gate.usable && (await w.reflector.waitSynced(Math.max(0, deadline - Date.now())));
      if (!synced) {
        w.readFailed = true;
        const why =
          w.reflector.lastError !== undefined
            ? describeError(w.reflector.lastError)
            : this.opts.gate.usable
              ? `not listed within ${this.opts.syncTimeoutMs} ms`
              : 'the API server is not reachable';
        throw new PodObjectUnavailableError(`${this.kind} ${key} cannot be read yet: ${why}`);
      }
    }
    return w.reflector.get(key);
  }

  private registered(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.registrationWaiters = this.registrationWaiters.filter((w) => w !== done);
        resolve();
      };
      this.registrationWaiters.push(done);
    });
  }

  private addReference(key: string): void {
    const had = this.objects.get(key);
    if (had) {
      had.refs++;
      return;
    }
    this.objects.set(key, {
      reflector: this.startReflector(key),
      refs: 1,
      readFailed: false,
      lastAccessMs: this.now(),
      idle: false,
    });
    this.opts.logger.v(4).info('Watching an object pods refer to', { object: `${this.kind} ${key}` });
    this.idleCheck ??= setInterval(() => this.stopIdle(), IDLE_CHECK_MS);
    this.idleCheck.unref();
  }

  /** `restarted`: after an idle stop, its first LIST is told as a change (the object may have changed meanwhile). */
  private startReflector(key: string, restarted = false): Reflector<T> {
    const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const reflector: Reflector<T> = new Reflector<T>({
      client: this.opts.client,
      gate: this.opts.gate,
      errors: API_LIST_WATCH_ERRORS,
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${this.opts.resource}`,
      fieldSelector: `metadata.name=${name}`,
      what: `${this.kind} ${key}`,
      logger: this.opts.logger,
      watchSeconds: this.opts.watchSeconds,
      onChange: () => {
        if (this.objects.get(key)?.reflector === reflector) this.changed(key);
      },
      onSynced: () => {
        const w = this.objects.get(key);
        if (w?.reflector !== reflector) return;
        this.stopIfImmutable(key);
        if (w.readFailed || restarted) {
          w.readFailed = false;
          this.changed(key);
        }
      },
    });
    reflector.start();
    return reflector;
  }

  /** The kubelet's startRecycleIdleWatch: synced, mutable watches no one read for maxIdleMs, and no registered pod mounts, stop. */
  private stopIdle(): void {
    const now = this.now();
    const mounted = new Set<string>();
    for (const p of this.pods.values()) for (const key of p.mounted) mounted.add(key);
    for (const [key, w] of this.objects) {
      if (
        w.idle ||
        !w.reflector.running ||
        !w.reflector.synced ||
        mounted.has(key) ||
        now - w.lastAccessMs <= this.maxIdleMs
      )
        continue;
      w.idle = true;
      this.opts.logger.v(4).info('Not read for a long time; watch stopped', {
        object: `${this.kind} ${key}`,
        maxIdleTime: `${this.maxIdleMs / 1000}s`,
      });
      void w.reflector.stop();
    }
    if (this.objects.size === 0) {
      clearInterval(this.idleCheck);
      this.idleCheck = undefined;
    }
  }

  /** A read (or a mount) after an idle stop: a new LIST+WATCH, whose first LIST the read waits for. */
  private restartIdle(key: string): void {
    const w = this.objects.get(key);
    if (!w?.idle) return;
    w.idle = false;
    w.lastAccessMs = this.now();
    this.opts.logger.v(4).info('Watching an object pods refer to again', { object: `${this.kind} ${key}` });
    w.reflector = this.startReflector(key, true);
  }

  private deleteReference(key: string): void {
    const w = this.objects.get(key);
    if (!w) return;
    if (--w.refs > 0) return;
    this.objects.delete(key);
    this.opts.logger
      .v(4)
      .info('No registered pod refers to an object any more; watch stopped', { object: `${this.kind} ${key}` });
    void w.reflector.stop();
  }

  private changed(key: string): void {
    this.stopIfImmutable(key);
    const uids: string[] = [];
    for (const [uid, p] of this.pods) if (p.keys.has(key)) uids.push(uid);
    if (uids.length > 0) this.opts.onChange(uids);
  }

  private stopIfImmutable(key: string): void {
    const w = this.objects.get(key);
    if (!w || !w.reflector.running || w.reflector.get(key)?.immutable !== true) return;
    this.opts.logger.v(4).info('Object is immutable; watch stopped', { object: `${this.kind} ${key}` });
    void w.reflector.stop();
  }
}
