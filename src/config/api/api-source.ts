// The API server's pods bound to this node (the kubelet's config/apiserver.go): LIST, then WATCH
// from the list's resourceVersion with bookmarks, `fieldSelector=spec.nodeName=<node>` (all the
// Node authorizer allows). A watch that ends is resumed from the last resourceVersion seen (a
// bookmark moves it too); only a 410 Expired lists again. Every end waits the reconnect back-off,
// reset after a watch lived 30 s, so a proxy that cuts every stream costs a request a few seconds at
// most. While the server is away the loop waits for the connectivity gate, never a timer.
//
// It feeds the one desired set as source `api`, and says it has been seen after its first LIST:
// until then the set holds back the API pods found running (pod-config/hold-back.ts).
import { WakeableSleep } from '../../util/wakeable-sleep.js';
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import type { Logger } from '../../log/logger';
import { Backoff, RECONNECT_BACKOFF, type BackoffPolicy } from '../../util/backoff';
import { errorMessage } from '../../util/error-message';
import type { ConfigSourceEvents, StaticPod } from '../types';
import { isMirrorPod, sameApiPod, toDesiredPod } from './api-pods';

type Query = Record<string, string | number | boolean | undefined>;

/** What the source needs of the API client (src/apiserver/client.ts has it, with its response caps). */
export interface PodListWatchClient {
  list<T>(path: string, query?: Query): Promise<T>;
  watch<T>(path: string, query: Query, onEvent: (e: { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }) => void): { readonly done: Promise<void>; stop(): void };
}

/** Whether the server is there (src/apiserver/connectivity.ts). */
export interface ServerGate {
  readonly usable: boolean;
  onUp(listener: () => void): void;
}

export interface ApiSourceOptions {
  readonly client: PodListWatchClient;
  readonly gate: ServerGate;
  readonly nodeName: string;
  readonly events: Pick<ConfigSourceEvents, 'update' | 'ready'>;
  readonly logger: Logger;
  readonly backoff?: BackoffPolicy;
  /** Watch length asked of the server; randomized per watch as a reflector does. */
  readonly watchSeconds?: () => number;
  readonly now?: () => Date;
  /** Told once per pod and reason when an API pod cannot run here (the API side records it as the pod's Warning event). */
  readonly refused?: (pod: { namespace: string; name: string; uid: string }, reason: string, message: string) => void;
}

const PODS = '/api/v1/pods';

/** A 410 Gone / Expired: the resourceVersion is older than the server keeps. */
function isExpired(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 410;
}

export class ApiPodSource {
  /** What the desired set has been told: key -> pod. */
  private readonly told = new Map<string, StaticPod>();
  /** Refusals already logged, as `uid:reason`. */
  private readonly refusedLogged = new Set<string>();
  /** Pods whose deletion the set has been told (their REMOVE), by UID, until the object is gone. */
  private readonly deletionTold = new Set<string>();
  private readonly backoff: Backoff;
  private resourceVersion: string | undefined;
  private listedOnce = false;
  private stopped = false;
  private watch: { stop(): void } | undefined;
  private readonly pause = new WakeableSleep();
  private loop: Promise<void> | undefined;
  private readonly fieldSelector: string;

  constructor(private readonly opts: ApiSourceOptions) {
    this.backoff = new Backoff(opts.backoff ?? RECONNECT_BACKOFF);
    this.fieldSelector = `spec.nodeName=${opts.nodeName}`;
    opts.gate.onUp(() => this.pause.wake());
  }

  start(): void {
    this.loop ??= this.run().catch((e: unknown) => this.opts.logger.error('API pod source stopped unexpectedly', { err: errorMessage(e) }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch?.stop();
    this.pause.wake();
    await this.loop;
  }

  /** The resourceVersion the next watch starts from (undefined: the next round LISTs). */
  get lastResourceVersion(): string | undefined {
    return this.resourceVersion;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.opts.gate.usable) {
        await this.pause.sleep(undefined);
        continue;
      }
      let failure: unknown;
      try {
        if (this.resourceVersion === undefined) await this.list();
        if (!this.stopped) await this.watchFrom(this.resourceVersion!);
      } catch (e) {
        failure = e;
      } finally {
        this.watch = undefined;
      }
      if (this.stopped) break;
      if (isExpired(failure)) {
        this.opts.logger.v(2).info('API pods watch expired; listing again', { resourceVersion: this.resourceVersion ?? '' });
        this.resourceVersion = undefined;
      } else if (failure !== undefined) this.opts.logger.v(2).info('API pods list/watch failed; retrying after back-off', { err: errorMessage(failure) });
      // An absent server is waited for through the gate, not the back-off.
      if (failure !== undefined && !this.opts.gate.usable) continue;
      await this.pause.sleep(this.backoff.next());
    }
  }

  private async list(): Promise<void> {
    const list = await this.opts.client.list<PodList>(PODS, { fieldSelector: this.fieldSelector });
    if (this.stopped) return;
    this.replace(list.items ?? []);
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    if (!this.listedOnce) {
      this.listedOnce = true;
      this.opts.logger.info('API pods listed', { pods: this.told.size, resourceVersion: this.resourceVersion });
      this.opts.events.ready();
    }
  }

  private async watchFrom(rv: string): Promise<void> {
    const timeoutSeconds = Math.round(this.opts.watchSeconds?.() ?? 300 + Math.random() * 300);
    const handle = this.opts.client.watch<Pod>(PODS, { fieldSelector: this.fieldSelector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds }, (ev) => this.apply(ev.type, ev.object));
    this.watch = handle;
    this.backoff.healthy();
    await handle.done;
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK', p: Pod): void {
    const rv = p.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    if (type === 'DELETED') {
      this.deletionTold.delete(p.metadata?.uid ?? '');
      const key = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
      const had = this.told.get(key);
      if (had && had.uid === p.metadata?.uid) this.remove(key);
      return;
    }
    this.put(p);
  }

  /** A full LIST: what it lacks is gone. */
  private replace(items: readonly Pod[]): void {
    const listed = new Set(items.map((p) => p.metadata?.uid ?? ''));
    for (const uid of [...this.deletionTold]) if (!listed.has(uid)) this.deletionTold.delete(uid);
    const keys = new Set<string>();
    for (const p of items) {
      const key = this.put(p);
      if (key) keys.add(key);
    }
    for (const key of [...this.told.keys()]) if (!keys.has(key)) this.remove(key);
  }

  /** Returns the key the pod is desired under, if it is. */
  private put(p: Pod): string | undefined {
    if (isMirrorPod(p)) return undefined;
    const key = `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
    const had = this.told.get(key);
    const r = toDesiredPod(p, this.opts.nodeName, had?.uid === p.metadata?.uid ? new Date(had!.pod.metadata.annotations['kubernetes.io/config.seen'] ?? Date.now()) : (this.opts.now?.() ?? new Date()));
    if ('refused' in r) {
      const id = `${p.metadata?.uid ?? ''}:${r.refused}`;
      if (!this.refusedLogged.has(id)) {
        this.refusedLogged.add(id);
        this.opts.logger.error('API pod refused: it cannot run on this node', { pod: key, podUID: p.metadata?.uid ?? '', err: r.refused });
        this.opts.refused?.({ namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' }, r.reason, r.refused);
      }
      if (had) this.remove(key);
      return undefined;
    }
    if (p.metadata?.deletionTimestamp) {
      this.deletionStarted(key, had?.uid === r.pod.uid ? had : undefined, r.pod);
      return undefined;
    }
    if (had && sameApiPod(had, r.pod)) return key;
    this.told.set(key, r.pod);
    this.opts.events.update(had ? { op: 'UPDATE', pod: r.pod, previous: had } : { op: 'ADD', pod: r.pod });
    return key;
  }

  /**
   * Someone deletes the pod: its worker stops it with the shorter of its grace period and the
   * deletion's, and the API side sends the final DELETE once it is gone. The set is told the pod
   * with that grace (an UPDATE, or an ADD when it was not told yet: an agent restarted during the
   * deletion adopts the pod so that its stop ends in the DELETE), then its REMOVE.
   */
  private deletionStarted(key: string, had: StaticPod | undefined, now: StaticPod): void {
    // Told already; a shorter grace later is not followed (the worker is stopping it).
    if (this.deletionTold.has(now.uid)) return;
    this.deletionTold.add(now.uid);
    const spec = now.pod.spec!;
    const deletionGrace = now.pod.metadata.deletionGracePeriodSeconds;
    const grace = Math.min(spec.terminationGracePeriodSeconds ?? 30, deletionGrace ?? Number.POSITIVE_INFINITY);
    const last: StaticPod = { ...now, pod: { ...now.pod, spec: { ...spec, terminationGracePeriodSeconds: grace } } };
    const other = this.told.get(key);
    if (other && other.uid !== now.uid) this.remove(key);
    this.told.delete(key);
    this.opts.events.update(had ? { op: 'UPDATE', pod: last, previous: had } : { op: 'ADD', pod: last });
    this.opts.events.update({ op: 'REMOVE', pod: last });
  }

  private remove(key: string): void {
    const had = this.told.get(key);
    if (!had) return;
    this.told.delete(key);
    this.opts.events.update({ op: 'REMOVE', pod: had });
  }
}
