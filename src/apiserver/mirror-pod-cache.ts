// What the API server holds of the mirror pods bound to this node: list, then watch
// (fieldSelector spec.nodeName=<node>), relisting after every break and every few minutes. The
// watch is what makes a `kubectl delete pod <mirror>` noticed in well under a second; the relist
// is the periodic full resync, and the recovery after a restarted or wiped server.
//
// Every end of a watch, clean or not, waits the reconnect back-off before the next LIST, as the
// reflector does: a server or proxy that ends streams early costs a LIST every few seconds at most,
// never a spin. The back-off starts again from its floor only after a watch has lived 30 s.
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import { Backoff, RECONNECT_BACKOFF } from '../util/backoff.js';
import { ApiError, describeError, isUnavailable } from './api-error.js';
import type { ApiClient, WatchHandle } from './client.js';
import type { ConnectionGate } from './connectivity.js';
import { isMirrorPod, podKey } from './mirror-pod.js';
import { RESPONSE_TOO_LARGE } from './response-body.js';

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
  private readonly backoff = new Backoff(RECONNECT_BACKOFF);
  private wake: (() => void) | undefined;
  /** The next LIST is not sent before this (ms since the epoch). */
  private notBefore = 0;
  private lastListAt = 0;
  /** The watch was stopped on purpose (the server came back): relist without the failure back-off. */
  private restartRequested = false;
  private waitingForServer = false;
  /** The last LIST was answered (a failure after it is the watch's). */
  private listed = false;

  constructor(
    private readonly client: Pick<ApiClient, 'list' | 'watch'>,
    private readonly conn: ConnectionGate,
    private readonly nodeName: string,
    private readonly logger: Logger,
    /** Watch length asked of the server before a relist; randomized per round like a reflector. */
    private readonly resyncMs: () => number = () => (300 + Math.random() * 300) * 1000,
  ) {
    // Back after an outage: a watch still open may be stale or hung; list afresh (no sooner than the
    // floor after the last LIST). A loop waiting out a back-off keeps waiting: a server that flaps
    // must not make it relist at the pace of the flaps.
    conn.onUp(() => {
      if (this.watch) {
        this.restartRequested = true;
        this.watch.stop();
      }
      if (this.waitingForServer) this.wake?.();
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

  /** Waits `ms` (or until woken, when undefined); stop() always wakes it. */
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
    while (!this.stopped) {
      if (!this.conn.usable) {
        this.waitingForServer = true;
        await this.sleep(undefined); // woken by the Connectivity
        this.waitingForServer = false;
        continue;
      }
      const wait = this.notBefore - Date.now();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      this.lastListAt = Date.now();
      this.listed = false;
      let failure: unknown;
      try {
        await this.listAndWatch();
      } catch (e) {
        failure = e;
      } finally {
        this.watch = undefined;
      }
      if (this.stopped) break;
      this.scheduleNext(failure);
    }
  }

  private async listAndWatch(): Promise<void> {
    const path = '/api/v1/pods';
    const fieldSelector = `spec.nodeName=${this.nodeName}`;
    const list = await this.client.list<PodList>(path, { fieldSelector });
    this.listed = true;
    this.synced = true;
    this.replace(list.items);
    // The server answers: from here on the stream counts towards the healthy period.
    this.backoff.healthy();
    if (this.stopped) return;
    this.watch = this.client.watch<Pod>(
      path,
      { fieldSelector, resourceVersion: list.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: Math.round(this.resyncMs() / 1000) },
      (ev) => this.apply(ev.type, ev.object),
    );
    await this.watch.done;
  }

  /** When to LIST again after a watch (or the list before it) ended. */
  private scheduleNext(failure: unknown): void {
    const floorMs = RECONNECT_BACKOFF.initialMs;
    if (this.restartRequested && failure === undefined) {
      this.restartRequested = false;
      this.notBefore = this.lastListAt + floorMs;
      this.logger.v(2).info('Mirror pod watch restarted after the API server came back', { retryIn: `${Math.max(0, this.notBefore - Date.now())}ms` });
      return;
    }
    this.restartRequested = false;
    if (!this.listed && isUnavailable(failure) && !this.conn.usable) {
      // The LIST found no server: the loop waits for the Connectivity, and LISTs as soon as the
      // server is back (not sooner than the floor after this one). Nothing here ran too often, so
      // the back-off does not grow; a server that keeps failing LISTs is paced by the probe.
      this.notBefore = this.lastListAt + floorMs;
      return;
    }
    const delay = this.backoff.next();
    this.notBefore = Date.now() + delay;
    const retryIn = `${delay}ms`;
    if (failure === undefined) this.logger.v(this.backoff.failures > 1 ? 2 : 4).info('Mirror pod watch ended; relisting after back-off', { retryIn });
    else if (failure instanceof ApiError && failure.reason === RESPONSE_TOO_LARGE)
      this.logger.warn('Mirror pod watch refused an oversized answer; relisting after back-off', { err: describeError(failure), retryIn });
    else if (!isUnavailable(failure)) this.logger.v(2).info('Mirror pod watch failed; relisting after back-off', { err: describeError(failure), retryIn });
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', pod: Pod): void {
    if (type === 'BOOKMARK' || !isMirrorPod(pod)) return;
    const key = podKey(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
    if (type === 'DELETED') {
      if (this.pods.get(key)?.metadata?.uid !== pod.metadata?.uid) return;
      this.pods.delete(key);
    } else {
      const have = this.pods.get(key);
      if (have && have.metadata?.uid === pod.metadata?.uid && !newer(pod, have)) return;
      this.pods.set(key, pod);
    }
    this.notify(key);
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
