// What the API server holds of the mirror pods bound to this node: list, then watch
// (fieldSelector spec.nodeName=<node>), relisting after every break and every few minutes. The
// watch is what makes a `kubectl delete pod <mirror>` noticed in well under a second; the relist
// is the periodic full resync, and the recovery after a restarted or wiped server.
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import { describeError, isUnavailable } from './api-error.js';
import { Backoff } from './backoff.js';
import type { ApiClient, WatchHandle } from './client.js';
import type { Connectivity } from './connectivity.js';
import { isMirrorPod, podKey } from './mirror-pod.js';

/** resourceVersions from one etcd are increasing integers; compare them so a late event never undoes a newer write. */
function newer(a: Pod, b: Pod | undefined): boolean {
  if (!b) return true;
  const ra = a.metadata?.resourceVersion ?? '';
  const rb = b.metadata?.resourceVersion ?? '';
  if (/^\d+$/.test(ra) && /^\d+$/.test(rb)) return BigInt(ra) >= BigInt(rb);
  return true;
}

export class MirrorPodCache {
  private readonly pods = new Map<string, Pod>();
  private readonly listeners: ((key: string) => void)[] = [];
  private readonly resyncListeners: (() => void)[] = [];
  private watch: WatchHandle | undefined;
  private stopped = false;
  private synced = false;
  private loop: Promise<void> | undefined;
  private readonly backoff = new Backoff(200, 5000);
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: ApiClient,
    private readonly conn: Connectivity,
    private readonly nodeName: string,
    private readonly logger: Logger,
    /** Watch length asked of the server before a relist; randomized per round like a reflector. */
    private readonly resyncMs: () => number = () => (300 + Math.random() * 300) * 1000,
  ) {
    // Back after an outage: whatever the watch holds may be stale or hung; list afresh.
    conn.onUp(() => {
      this.watch?.stop();
      this.wake?.();
    });
  }

  get(key: string): Pod | undefined {
    return this.pods.get(key);
  }
  keys(): string[] {
    return [...this.pods.keys()];
  }
  /** A list has completed since start: an absent key really means "no mirror pod". */
  get hasSynced(): boolean {
    return this.synced;
  }

  onChange(listener: (key: string) => void): void {
    this.listeners.push(listener);
  }

  /** Called after every full list (the first sync, and each relist). */
  onResync(listener: () => void): void {
    this.resyncListeners.push(listener);
  }

  /** Takes in an object we just wrote (create, status patch), unless the cache already has something newer. */
  observe(pod: Pod): void {
    const key = podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    if (!isMirrorPod(pod) || pod.spec?.nodeName !== this.nodeName) return;
    // Whether the same object or a recreated one under the name: only ever move forward.
    if (!newer(pod, this.pods.get(key))) return;
    this.pods.set(key, pod);
  }

  /** We deleted it (grace 0): forget it now rather than wait for the watch. */
  forget(key: string, uid: string | undefined): void {
    if (this.pods.get(key)?.metadata?.uid === uid) this.pods.delete(key);
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    this.wake?.();
    await this.loop;
  }

  private notify(key: string): void {
    for (const l of this.listeners) l(key);
  }

  private sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const t = ms === undefined ? undefined : setTimeout(() => done(), ms);
      const done = (): void => {
        if (t) clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    const path = '/api/v1/pods';
    const fieldSelector = `spec.nodeName=${this.nodeName}`;
    while (!this.stopped) {
      if (!this.conn.usable) {
        await this.sleep(undefined); // woken by the Connectivity
        continue;
      }
      try {
        const list = await this.client.list<PodList>(path, { fieldSelector });
        this.synced = true;
        this.replace(list.items);
        this.backoff.reset();
        if (this.stopped) break;
        this.watch = this.client.watch<Pod>(
          path,
          { fieldSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: Math.round(this.resyncMs() / 1000) },
          (ev) => {
            if (ev.type === 'BOOKMARK') return;
            const pod = ev.object;
            if (!isMirrorPod(pod)) return;
            const key = podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
            if (ev.type === 'DELETED') {
              if (this.pods.get(key)?.metadata?.uid !== pod.metadata?.uid) return;
              this.pods.delete(key);
            } else {
              const have = this.pods.get(key);
              if (have && have.metadata?.uid === pod.metadata?.uid && !newer(pod, have)) return;
              this.pods.set(key, pod);
            }
            this.notify(key);
          },
        );
        await this.watch.done;
      } catch (e) {
        if (this.stopped) break;
        if (!isUnavailable(e)) this.logger.v(2).info('Mirror pod watch ended; relisting', { err: describeError(e) });
        if (this.conn.usable) await this.sleep(this.backoff.next());
      } finally {
        this.watch = undefined;
      }
    }
  }

  private replace(items: Pod[]): void {
    const before = new Set(this.pods.keys());
    this.pods.clear();
    for (const pod of items) {
      if (!isMirrorPod(pod)) continue;
      this.pods.set(podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? ''), pod);
    }
    for (const k of new Set([...before, ...this.pods.keys()])) this.notify(k);
    for (const l of this.resyncListeners) l();
  }
}
