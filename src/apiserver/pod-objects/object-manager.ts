// The kubelet's watch-based manager for ConfigMaps and Secrets (pkg/kubelet/util/manager/
// watch_based_manager.go with pkg/kubelet/configmap, pkg/kubelet/secret): registering a pod counts
// a reference on each object it names; the first reference starts one LIST+WATCH of that object
// alone (fieldSelector=metadata.name=<name>), the last one going stops it. A read waits for the
// object's first LIST, bounded; a change is told with the UIDs of the pods that refer to it. An
// object marked `immutable` is watched no longer once seen (the kubelet does the same): it cannot
// change, only be deleted and made again, which a pod sees when it is registered again.
import type { Logger } from '../../log/logger.js';
import { describeError } from '../api-error.js';
import { PodObjectUnavailableError, type PodRef } from '../../node/pod-objects.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';
import { objectKey, Reflector, type ApiObject } from '../../informer/reflector.js';
import { API_LIST_WATCH_ERRORS } from '../list-watch-errors.js';

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
}

interface Watched<T extends ApiObject> {
  readonly reflector: Reflector<T>;
  refs: number;
  /** A read gave up before the first LIST: tell the pods once it is in, so they need not wait out their back-off. */
  readFailed: boolean;
}

export class WatchBasedObjectManager<T extends ApiObject & { immutable?: boolean }> {
  private readonly objects = new Map<string, Watched<T>>();
  /** Each registered pod: the object keys it refers to. */
  private readonly pods = new Map<string, ReadonlySet<string>>();
  private registrationWaiters: (() => void)[] = [];
  private readonly kind: string;

  constructor(private readonly opts: ObjectManagerOptions) {
    this.kind = opts.resource === 'configmaps' ? 'ConfigMap' : 'Secret';
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
    const before = this.pods.get(pod.metadata.uid) ?? new Set<string>();
    // References added before the old ones go, so an object both name is never stopped and started.
    for (const key of keys) if (!before.has(key)) this.addReference(key);
    this.pods.set(pod.metadata.uid, keys);
    for (const key of before) if (!keys.has(key)) this.deleteReference(key);
    if (keys.size > 0) for (const w of this.registrationWaiters.splice(0)) w();
  }

  unregisterPod(uid: string): void {
    const keys = this.pods.get(uid);
    if (!keys) return;
    this.pods.delete(uid);
    for (const key of keys) this.deleteReference(key);
  }

  /** Back after an outage: every watch goes again at once. */
  serverBack(): void {
    for (const w of this.objects.values()) if (w.reflector.running) w.reflector.serverBack();
  }

  async stop(): Promise<void> {
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
    if (!w.reflector.synced) {
      // While the server is away a first LIST cannot come: say so now rather than after the timeout.
      const synced = this.opts.gate.usable && (await w.reflector.waitSynced(Math.max(0, deadline - Date.now())));
      if (!synced) {
        w.readFailed = true;
        const why = w.reflector.lastError !== undefined ? describeError(w.reflector.lastError) : this.opts.gate.usable ? `not listed within ${this.opts.syncTimeoutMs} ms` : 'the API server is not reachable';
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
    const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const what = `${this.kind} ${key}`;
    const reflector: Reflector<T> = new Reflector<T>({
      client: this.opts.client,
      gate: this.opts.gate,
      errors: API_LIST_WATCH_ERRORS,
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/${this.opts.resource}`,
      fieldSelector: `metadata.name=${name}`,
      what,
      logger: this.opts.logger,
      watchSeconds: this.opts.watchSeconds,
      onChange: () => this.changed(key),
      onSynced: () => {
        const w = this.objects.get(key);
        this.stopIfImmutable(key);
        if (w?.readFailed) {
          w.readFailed = false;
          this.changed(key);
        }
      },
    });
    this.objects.set(key, { reflector, refs: 1, readFailed: false });
    this.opts.logger.v(4).info('Watching an object pods refer to', { object: what });
    reflector.start();
  }

  private deleteReference(key: string): void {
    const w = this.objects.get(key);
    if (!w) return;
    if (--w.refs > 0) return;
    this.objects.delete(key);
    this.opts.logger.v(4).info('No registered pod refers to an object any more; watch stopped', { object: `${this.kind} ${key}` });
    void w.reflector.stop();
  }

  private changed(key: string): void {
    this.stopIfImmutable(key);
    const uids: string[] = [];
    for (const [uid, keys] of this.pods) if (keys.has(key)) uids.push(uid);
    if (uids.length > 0) this.opts.onChange(uids);
  }

  private stopIfImmutable(key: string): void {
    const w = this.objects.get(key);
    if (!w || !w.reflector.running || w.reflector.get(key)?.immutable !== true) return;
    this.opts.logger.v(4).info('Object is immutable; watch stopped', { object: `${this.kind} ${key}` });
    void w.reflector.stop();
  }
}
