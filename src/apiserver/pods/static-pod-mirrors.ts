// The static pods' side on the server: one mirror pod per static pod (mirror-pods.ts), its status
// (pod-status-sync.ts), the mirrors of removed static pods kept until their end is told
// (leaving-mirrors.ts), and restarts asked on a mirror handed on (mirror-restart.ts). One queue of pod
// keys, 8 at a time (streams of the one connection): create, then status, per pod; the pods side by
// side. A key is synced when the desired set, the pod's status or its mirror changes, at registration
// and at every resync.
import type { Logger } from '../../log/logger.js';
import type { Clock } from '../../util/clock.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { KeyedQueue } from '../client/keyed-queue.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { LeavingMirrors } from './leaving-mirrors.js';
import type { MirrorPodCache } from './mirror-pod-cache.js';
import { MirrorPodReconciler } from './mirror-pods.js';
import { MirrorRestartRequests, type RestartRequestListener } from './mirror-restart.js';
import type { PodStatusSource, StaticPodSource } from '../pod-sources.js';
import { PodStatusSync } from './pod-status-sync.js';

export interface StaticPodMirrorsOptions {
  readonly client: ApiClient;
  readonly gate: ConnectionGate;
  readonly cache: MirrorPodCache;
  readonly desired: StaticPodSource;
  readonly statuses: PodStatusSource;
  readonly nodeName: string;
  /** The Node's UID once registered: mirrors are owned by it. */
  readonly nodeUid: () => string | undefined;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly logger: Logger;
  /** A restart asked on a mirror (kubectl.kubernetes.io/restartedAt), handed on once per (pod, value). */
  readonly onRestartRequest?: RestartRequestListener;
}

export class StaticPodMirrors {
  private readonly leaving: LeavingMirrors;
  private readonly statusSync: PodStatusSync;
  private readonly queue: KeyedQueue;
  private readonly restarts: MirrorRestartRequests | undefined;
  private readonly syncedListeners: (() => void)[] = [];

  constructor(private readonly o: StaticPodMirrorsOptions) {
    const { desired, cache } = o;
    this.leaving = new LeavingMirrors(desired, o.statuses, (k) => cache.get(k), o.clock);
    const reconciler = new MirrorPodReconciler(
      o.client,
      cache,
      o.nodeName,
      o.nodeUid,
      (k) => desired.podByKey(k) ?? this.leaving.mirrorOwner(k),
      () => desired.ready?.() ?? true,
      o.logger,
      undefined,
      o.events,
    );
    this.statusSync = new PodStatusSync(o.client, cache, o.statuses);
    this.queue = new KeyedQueue(
      'Syncing mirror pod',
      async (key) => {
        const { mirror, retryAfterMs } = await reconciler.reconcile(key);
        if (retryAfterMs !== undefined) this.queue.addAfter(key, retryAfterMs);
        const sp = desired.podByKey(key) ?? this.leaving.pod(key);
        if (mirror && sp) await this.statusSync.sync(sp, mirror);
        if (!desired.podByKey(key) && this.leaving.release(key)) this.queue.add(key);
        for (const l of this.syncedListeners) l();
      },
      o.gate,
      o.logger,
    );
    this.restarts =
      o.onRestartRequest &&
      new MirrorRestartRequests(
        (k) => cache.get(k),
        (k) => desired.podByKey(k),
        o.nodeName,
        o.onRestartRequest,
      );
    desired.onChange(() => {
      this.leaving.refresh();
      this.syncAll();
      this.checkRestarts();
    });
    cache.onChange((key) => {
      this.queue.add(key);
      this.restarts?.check(key);
    });
    cache.onResync(() => {
      this.syncAll();
      this.checkRestarts();
    });
  }

  /** Every key once more: the desired ones, the leaving ones and every mirror the server holds. */
  syncAll(): void {
    const { desired, cache } = this.o;
    this.queue.addAll(new Set([...desired.list().map((sp) => sp.key), ...this.leaving.keys(), ...cache.keys()]));
  }

  /** The periodic pass: every key, and what is remembered of mirrors no longer there forgotten. */
  resync(): void {
    this.syncAll();
    const current = new Set<string>();
    for (const k of this.o.cache.keys()) {
      const uid = this.o.cache.get(k)?.metadata?.uid;
      if (uid) current.add(uid);
    }
    this.statusSync.retain(current);
  }

  /** A pod's status changed: returns whether it is one of the static pods (desired or leaving), then synced. */
  statusChanged(uid: string): boolean {
    const sp = this.o.desired.podByUid(uid);
    const key = sp ? sp.key : this.leaving.statusChanged(uid);
    if (key === undefined) return false;
    this.queue.add(key);
    return true;
  }

  /** Whether each of these static pods' mirror shows the status the agent computes now (phase, reason, message). */
  statusesPosted(uids: readonly string[]): boolean {
    return uids.every((uid) => {
      const sp = this.o.desired.podByUid(uid);
      const ours = this.o.statuses.get(uid);
      if (!sp || !ours) return true;
      const theirs = this.o.cache.get(sp.key)?.status;
      return theirs?.phase === ours.phase && theirs?.reason === ours.reason && theirs?.message === ours.message;
    });
  }

  /** Told after each key's pass. */
  onSynced(listener: () => void): void {
    this.syncedListeners.push(listener);
  }

  stop(): Promise<void> {
    this.leaving.clear();
    return this.queue.stop();
  }

  private checkRestarts(): void {
    this.restarts?.checkAll(this.o.cache.keys(), new Set(this.o.desired.list().map((sp) => sp.uid)));
  }
}
