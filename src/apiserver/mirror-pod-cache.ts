// What the API server holds of the mirror pods bound to this node: list, then watch
// (fieldSelector spec.nodeName=<node>), as client-go's reflector does: one LIST at start, then
// watches from the last resourceVersion seen (an event's or a BOOKMARK's), each asked to end after
// 5–10 min. A watch that ends, cleanly or cut, is opened again from that resourceVersion; only a
// 410 Gone ("too old resource version"), an event that could not be read (too large, not JSON) or
// a refusal means something was missed, and only then is there a LIST. The watch is what makes a
// `kubectl delete pod <mirror>` noticed in well under a second.
//
// Every end of a watch that had not lived 30 s waits the reconnect back-off before the next one,
// so a server or proxy that ends streams early costs a watch every few seconds at most, never a
// spin; one that lived longer (the routine end after its timeout) is opened again at once, as the
// reflector does.
import { WakeableSleep } from '../util/wakeable-sleep.js';
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import { Backoff, RECONNECT_BACKOFF } from '../util/backoff.js';
import { ApiError, describeError, isUnavailable, TransportError } from './api-error.js';
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
  private readonly pause = new WakeableSleep();
  /** The next LIST or watch is not sent before this (ms since the epoch). */
  private notBefore = 0;
  private lastListAt = 0;
  private lastWatchAt = 0;
  /** The last resourceVersion seen (LIST, event, BOOKMARK); undefined: the next round LISTs. */
  private resourceVersion: string | undefined;
  /** The watch was stopped on purpose (the server came back): watch again without the failure back-off. */
  private restartRequested = false;
  private waitingForServer = false;

  constructor(
    private readonly client: Pick<ApiClient, 'list' | 'watch'>,
    private readonly conn: ConnectionGate,
    private readonly nodeName: string,
    private readonly logger: Logger,
    /** Watch length asked of the server; randomized per watch like a reflector's (5–10 min). */
    private readonly watchTimeoutMs: () => number = () => (300 + Math.random() * 300) * 1000,
  ) {
    // Back after an outage: a watch still open may be hung on a dead connection; open it again
    // from the last resourceVersion (a LIST only if the server says 410). A loop waiting out a
    // back-off keeps waiting: a server that flaps must not make it reconnect at the pace of the flaps.
    conn.onUp(() => {
      if (this.watch) {
        this.restartRequested = true;
        this.watch.stop();
      }
      if (this.waitingForServer) this.pause.wake();
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

  /** Called after every full list (the first sync, and each relist after a 410). */
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
    this.pause.wake();
    await this.loop;
  }

  private notify(key: string): void {
    for (const l of this.listeners) l(key);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.conn.usable) {
        this.waitingForServer = true;
        await this.pause.sleep(undefined); // woken by the Connectivity
        this.waitingForServer = false;
        continue;
      }
      const wait = this.notBefore - Date.now();
      if (wait > 0) {
        await this.pause.sleep(wait);
        continue;
      }
      const listing = this.resourceVersion === undefined;
      let failure: unknown;
      try {
        if (listing) await this.list();
        if (!this.stopped) await this.watchFrom(this.resourceVersion ?? '');
      } catch (e) {
        failure = e;
      } finally {
        this.watch = undefined;
      }
      if (this.stopped) break;
      this.scheduleNext(failure, listing && this.resourceVersion === undefined);
    }
  }

  private async list(): Promise<void> {
    this.lastListAt = Date.now();
    const list = await this.client.list<PodList>('/api/v1/pods', { fieldSelector: this.fieldSelector });
    this.synced = true;
    this.replace(list.items);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
  }

  private get fieldSelector(): string {
    return `spec.nodeName=${this.nodeName}`;
  }

  private async watchFrom(resourceVersion: string): Promise<void> {
    // The server answers: from here on the stream counts towards the healthy period.
    this.backoff.healthy();
    this.lastWatchAt = Date.now();
    this.watch = this.client.watch<Pod>(
      '/api/v1/pods',
      { fieldSelector: this.fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: Math.round(this.watchTimeoutMs() / 1000) },
      (ev) => this.apply(ev.type, ev.object),
    );
    await this.watch.done;
  }

  /** When to watch (or LIST) again after a watch, or the LIST before it, ended. */
  private scheduleNext(failure: unknown, listFailed: boolean): void {
    const floorMs = RECONNECT_BACKOFF.initialMs;
    const now = Date.now();
    if (this.restartRequested && failure === undefined) {
      this.restartRequested = false;
      this.notBefore = this.lastWatchAt + floorMs;
      this.logger.v(2).info('Mirror pod watch restarted after the API server came back', { resourceVersion: this.resourceVersion });
      return;
    }
    this.restartRequested = false;
    if (listFailed && isUnavailable(failure) && !this.conn.usable) {
      // The LIST found no server: the loop waits for the Connectivity, and LISTs as soon as the
      // server is back (not sooner than the floor after this one). Nothing here ran too often, so
      // the back-off does not grow; a server that keeps failing LISTs is paced by the probe.
      this.notBefore = this.lastListAt + floorMs;
      return;
    }
    const expired = failure instanceof ApiError && (failure.code === 410 || failure.reason === 'Expired' || failure.reason === 'Gone');
    // Something was missed: history the server no longer has, an event we could not read, a refusal.
    if (failure !== undefined && !listFailed && (expired || !isUnavailable(failure) || isUnreadable(failure))) this.resourceVersion = undefined;
    // A watch that lived its healthy period and ended (its timeout, or a 410 after long quiet) is
    // routine: the next one at once. One that ended early waits the back-off, which then grows.
    const livedLong = !listFailed && now - this.lastWatchAt >= RECONNECT_BACKOFF.resetAfterMs;
    if ((failure === undefined || expired) && livedLong) {
      this.backoff.reset();
      this.notBefore = expired ? this.lastListAt + floorMs : 0;
      this.logger.v(4).info(expired ? 'Mirror pod watch expired (410); relisting' : 'Mirror pod watch ended; watching again', { resourceVersion: this.resourceVersion });
      return;
    }
    const delay = this.backoff.next();
    this.notBefore = now + delay;
    const retryIn = `${delay}ms`;
    const again = this.resourceVersion === undefined ? 'relisting' : 'watching again';
    if (failure === undefined) this.logger.v(this.backoff.failures > 1 ? 2 : 4).info(`Mirror pod watch ended; ${again} after back-off`, { retryIn });
    else if (failure instanceof ApiError && failure.reason === RESPONSE_TOO_LARGE)
      this.logger.warn('Mirror pod watch refused an oversized answer; relisting after back-off', { err: describeError(failure), retryIn });
    else if (!isUnavailable(failure) || isUnreadable(failure)) this.logger.v(2).info(`Mirror pod watch failed; ${again} after back-off`, { err: describeError(failure), retryIn });
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', pod: Pod): void {
    const rv = pod.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
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

/** A watch line the client could not parse: an event was lost, so the next round must LIST. */
function isUnreadable(e: unknown): boolean {
  return e instanceof TransportError && e.kind === 'other' && e.message.startsWith('watch stream: bad JSON line');
}
