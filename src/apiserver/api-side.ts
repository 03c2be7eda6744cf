// The API side of bootlet, in one piece: a client identity first (the kubeconfig, or one
// bootstrapped and kept rotated), then on that connection node registration and status, the node
// lease, mirror pods and their status, and events. Everything here runs off the callers' path:
// bootlet only notifies and this side marks objects dirty. While the API server is away nothing
// piles up (one entry per object, the latest state read when sent), and when it returns everything
// converges at once. Until there is an identity, events wait in a small buffer and the node goes on
// without it. Nothing here can stop, start or restart a container: the API side only reads (a restart
// asked on a mirror pod is handed on through onRestartRequest; the pod workers do it).
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../config/types.js';
import type { Informer } from '../informer/store.js';
import type { Logger } from '../log/logger.js';
import type { PodEvent, PodWorkerObserver } from '../podworkers/observer.js';
import { errorMessage } from '../util/error-message.js';
import { ApiPodFinalDelete } from './pods/api-pod-deletion.js';
import { ApiPodStatusSync } from './pods/api-pod-status.js';
import type { CsrClient } from './credentials/certificate-signing-request.js';
import { ApiClient } from './client/client.js';
import { startClientCredentials } from './credentials/client-credentials.js';
import { Connectivity } from './client/connectivity.js';
import { EventSender } from './events/events.js';
import { KeyedQueue } from './client/keyed-queue.js';
import type { ClusterConnection } from './client/kubeconfig.js';
import { MirrorPodCache } from './pods/mirror-pod-cache.js';
import { isMirrorOf } from './pods/mirror-pod.js';
import { MirrorPodReconciler } from './pods/mirror-pods.js';
import { MirrorRestartRequests, type RestartRequestListener } from './pods/mirror-restart.js';
import { NodeLease } from './node/node-lease.js';
import { nodePodsReflector } from './pods/node-pods.js';
import { NodeRegistrar } from './node/node-registration.js';
import { NodeStatusReporter } from './node/node-status-reporter.js';
import { computeNodeStatus, nodeStatusChanged } from './node/node-status.js';
import { ApiPodObjects } from './pod-objects/api-pod-objects.js';
import { DeferredPodObjects } from './pod-objects/deferred-pod-objects.js';
import { registerApiPods } from './pod-objects/register-api-pods.js';
import type { PodObjects } from '../node/pod-objects.js';
import { PodStatusSync } from './pods/pod-status-sync.js';
import { systemClock, type Clock } from '../util/clock.js';
import { type EventObject, type EventRecorder, type EventType } from './events/event-recorder.js';
import { type NodeInfoSource } from '../node/node-info.js';
import type { ApiPodView, PodStatusSource, StaticPodSource } from './pods/pod-sources.js';

export interface ApiSideOptions {
  kubeconfigPath: string;
  /** `--bootstrap-kubeconfig`: used to get a client certificate while the kubeconfig is not usable. */
  bootstrapKubeconfigPath?: string;
  /** `--cert-dir`: needed to bootstrap or rotate the client certificate. */
  certDir?: string;
  /** `rotateCertificates`, default false. */
  rotateCertificates?: boolean;
  nodeInfo: NodeInfoSource;
  staticPods: StaticPodSource;
  statuses: PodStatusSource;
  logger: Logger;
  clock?: Clock;
  /** `registerNode` (default true): create the Node; when false, only use one that exists. */
  registerNode?: boolean;
  /** `nodeStatusUpdateFrequency`, default 10 s. */
  nodeStatusUpdateFrequencyMs?: number;
  /** `nodeStatusReportFrequency`, default 5 min. */
  nodeStatusReportFrequencyMs?: number;
  /** `nodeLeaseDurationSeconds`, default 40; renewed every quarter of it, as the kubelet does. */
  nodeLeaseDurationSeconds?: number;
  /** Deadline of every request, default 10 s. */
  requestTimeoutMs?: number;
  /** Full pass over all mirror pods and statuses, default 10 s (the status manager's syncPeriod). */
  resyncPeriodMs?: number;
  userAgent?: string;
  /**
   * The API pods source (src/config/api): a second consumer of the node's one pods watch (the mirror
   * pod cache is the first), attached before that watch starts, detached when the connection stops.
   */
  podSource?: (nodePods: Informer<Pod>) => { stop(): Promise<void> };
  /** The desired API pods: their statuses are patched onto the pods themselves. */
  apiPods?: ApiPodView;
  /**
   * A static pod's mirror carries a kubectl.kubernetes.io/restartedAt not told before: the wiring
   * hands it to the pod workers. Told once per (pod, value) per connection; the workers decide.
   */
  onRestartRequest?: RestartRequestListener;
  /**
   * The PodObjects the wiring handed down before there was a connection (`new DeferredPodObjects()`);
   * made here when absent. With `apiPods`, each desired API pod is registered in it and unregistered
   * when the set lets go of it; the connection's objects are attached to it once there is one.
   */
  podObjects?: DeferredPodObjects;
  /** The Node's spec.podCIDRs joined with ",", whenever a Node read from the server has them: the wiring hands them to the runtime. */
  onPodCIDR?: (podCIDRs: string) => void;
}

export interface ApiSide {
  recorder: EventRecorder;
  /** A pod worker's event, recorded against its pod (aggregated, rate-limited, dropped while the server is away). */
  recordPodEvent(e: PodEvent): void;
  /** Records the pod workers' events. */
  readonly observer: PodWorkerObserver;
  state(): { connected: boolean; lastContact?: Date };
  /** The connection with the node's identity, once there is one (for the kubelet API's reviews and serving certificate). */
  connection(): ClusterConnection | undefined;
  /**
   * The node's own client (its one HTTP/2 connection), once connected: the kubelet API's
   * TokenReviews and SubjectAccessReviews and the serving certificate's requests go there rather
   * than over a connection of their own.
   */
  sharedClient(): CsrClient | undefined;
  /** Resolves when there is one (never rejects; stays pending when stopped first). */
  readonly connectionReady: Promise<ClusterConnection>;
  /**
   * Sends the node's status and these pods' statuses now; resolves once the server has them as
   * they are now, or after `timeoutMs`, or at once while it is away or there is no connection
   * yet (node shutdown).
   */
  flush(podUids: readonly string[], timeoutMs: number): Promise<void>;
  /** The ConfigMaps, Secrets, Services and tokens of the API pods (src/node/pod-objects.ts); reads fail with PodObjectUnavailableError until there is a connection. */
  readonly podObjects: PodObjects;
  stop(): Promise<void>;
}

/** The parts that run on one connection. */
interface ConnectedParts {
  readonly recorder: EventRecorder;
  /** The node's one client: the kubelet API's reviews share its connection. */
  readonly client: ApiClient;
  /** A pod worker removed everything of the pod. */
  podRemoved(uid: string): void;
  state(): { connected: boolean; lastContact?: Date };
  flush(podUids: readonly string[], timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Longest a removed static pod's mirror waits for its terminal status: its grace and the stop, with room. */
const LEAVING_MAX_MS = 5 * 60_000;

/** A static pod whose manifest went, with the last status computed for it. */
interface LeavingPod {
  sp: StaticPod;
  status?: PodStatus;
  since: number;
}

/** Events recorded before there is a connection; beyond this the oldest are dropped, as the event sender's own buffer does. */
const EARLY_EVENTS = 200;

type EarlyEvent = [EventObject, EventType, string, string];

/**
 * Starts at once when the kubeconfig is usable, else when a certificate is bootstrapped. Throws
 * KubeconfigError (synchronously) for unusable files; an absent server is not an error.
 */
export function startApiSide(opts: ApiSideOptions): ApiSide {
  const logger = opts.logger.with({ component: 'apiserver' });
  const rotateCertificates = opts.rotateCertificates ?? false;
  if ((opts.bootstrapKubeconfigPath || rotateCertificates) && !opts.certDir)
    throw new Error('startApiSide: a certDir is needed to bootstrap or rotate the client certificate');
  let parts: ConnectedParts | undefined;
  const creds = startClientCredentials({
    kubeconfigPath: opts.kubeconfigPath,
    bootstrapKubeconfigPath: opts.bootstrapKubeconfigPath,
    certDir: opts.certDir ?? '',
    nodeName: opts.nodeInfo.nodeName,
    rotateCertificates,
    logger: opts.logger,
    clock: opts.clock,
    // Rotations once connected go over the node's one client (issue 20: one connection per node).
    sharedClient: () => parts?.client,
  });
  const podObjects = opts.podObjects ?? new DeferredPodObjects();
  const apiPodView = opts.apiPods;
  if (apiPodView) registerApiPods(apiPodView, podObjects);
  opts = { ...opts, podObjects };
  parts = creds.now ? connect(opts, creds.now, logger) : undefined;
  let connection: ClusterConnection | undefined = creds.now;
  void creds.ready.then((c) => (connection = c));
  let early: EarlyEvent[] = [];
  let stopped = false;
  if (!parts) {
    void creds.ready.then((c) => {
      if (stopped || parts) return;
      try {
        parts = connect(opts, c, logger);
      } catch (e) {
        logger.error('The API side cannot start', { err: errorMessage(e) });
        return;
      }
      for (const e of early) parts.recorder.event(...e);
      early = [];
    });
  }
  const recorder: EventRecorder = {
    event: (...e: EarlyEvent) => {
      if (parts) return parts.recorder.event(...e);
      early.push(e);
      if (early.length > EARLY_EVENTS) early.shift();
    },
  };
  const recordPodEvent = (e: PodEvent): void => {
    const prefix = e.initContainer ? 'spec.initContainers' : 'spec.containers';
    recorder.event(
      {
        kind: 'Pod',
        namespace: e.namespace,
        name: e.name,
        uid: e.uid,
        ...(e.container ? { fieldPath: `${prefix}{${e.container}}` } : {}),
      },
      e.type,
      e.reason,
      e.message,
    );
  };
  return {
    recorder,
    recordPodEvent,
    observer: { podEvent: recordPodEvent, podRemoved: (uid) => parts?.podRemoved(uid) },
    state: () => parts?.state() ?? { connected: false },
    connection: () => connection,
    sharedClient: () => parts?.client,
    connectionReady: creds.ready,
    flush: (podUids, timeoutMs) => parts?.flush(podUids, timeoutMs) ?? Promise.resolve(),
    podObjects,
    stop: async () => {
      stopped = true;
      await Promise.all([creds.stop(), parts?.stop()]);
    },
  };
}

/** The node, its lease, mirror pods, statuses and events on one connection (its client certificate may change while running). */
function connect(opts: ApiSideOptions, connection: ClusterConnection, logger: Logger): ConnectedParts {
  const clock = opts.clock ?? systemClock;
  const nodeName = opts.nodeInfo.nodeName;
  const client = new ApiClient(connection, {
    timeoutMs: opts.requestTimeoutMs,
    userAgent: opts.userAgent ?? `bootlet/${opts.nodeInfo.kubeletVersion}`,
  });
  const conn = new Connectivity(client, logger);
  const registrar = new NodeRegistrar(client, opts.nodeInfo, clock, logger, opts.registerNode ?? true);
  const events = new EventSender(client, conn, nodeName, clock, logger);
  const reporter = new NodeStatusReporter(
    client,
    opts.nodeInfo,
    registrar,
    clock,
    opts.nodeStatusReportFrequencyMs ?? 300_000,
    events,
    opts.onPodCIDR,
  );
  const leaseDuration = opts.nodeLeaseDurationSeconds ?? 40;
  const lease = new NodeLease(client, nodeName, () => registrar.uid, leaseDuration, clock);
  // The node's one pods watch: the mirror pod cache and the API pod source both hear it.
  const nodePods = nodePodsReflector(client, conn, nodeName, logger);
  const cache = new MirrorPodCache(nodePods, nodeName);
  // The API pods' ConfigMaps, Secrets, Services and tokens, on the same client and gate.
  const podObjects = opts.podObjects && new ApiPodObjects({ client, gate: conn, logger });
  if (podObjects) opts.podObjects?.attach(podObjects);
  const desired = opts.staticPods;
  const desiredReady = (): boolean => desired.ready?.() ?? true;

  // Static pods whose manifest went: their mirror stays, with the last status computed for it,
  // until that status is terminal and in the server; then the mirror is deleted as an orphan.
  const leaving = new Map<string, LeavingPod>();
  desired.onRemoved((sp) => {
    if (desiredReady()) leaving.set(sp.key, { sp, status: opts.statuses.get(sp.uid), since: clock.now().getTime() });
  });
  // A key given again (a manifest back under the same name) is no longer leaving.
  const refreshLeaving = (): void => {
    for (const key of [...leaving.keys()]) if (desired.podByKey(key)) leaving.delete(key);
  };
  const leavingByUid = (uid: string): [string, LeavingPod] | undefined =>
    [...leaving].find(([, l]) => l.sp.uid === uid);
  /** A leaving pod's mirror may go once its terminal status is there, or once the agent has nothing more to say. */
  const releaseLeaving = (key: string): void => {
    const l = leaving.get(key);
    if (!l) return;
    const theirs = cache.get(key)?.status;
    const terminal = l.status?.phase === 'Succeeded' || l.status?.phase === 'Failed';
    const posted = !l.status || (theirs?.phase === l.status.phase && theirs?.reason === l.status.reason);
    const gone = opts.statuses.get(l.sp.uid) === undefined;
    // A pod that never stops (the runtime refusing) does not keep its mirror forever.
    const overdue = clock.now().getTime() - l.since > LEAVING_MAX_MS;
    if ((terminal && posted) || (gone && posted) || overdue || !cache.get(key)) {
      leaving.delete(key);
      pods.add(key);
    }
  };
  const isMirrorOfLeaving = (k: string): boolean => {
    const m = cache.get(k);
    const l = leaving.get(k);
    return !!m && !!l && isMirrorOf(m, l.sp) && !m.metadata?.deletionTimestamp;
  };
  // A leaving pod's status stays readable after the status manager forgot it.
  const statuses: PodStatusSource = {
    get: (uid) => opts.statuses.get(uid) ?? leavingByUid(uid)?.[1].status,
    onChange: (l) => opts.statuses.onChange(l),
  };

  const reconciler = new MirrorPodReconciler(
    client,
    cache,
    nodeName,
    () => registrar.uid,
    // A leaving pod keeps the mirror it has; it never gets a new one.
    (k) => desired.podByKey(k) ?? (isMirrorOfLeaving(k) ? leaving.get(k)?.sp : undefined),
    desiredReady,
    logger,
    undefined,
    events,
  );
  const statusSync = new PodStatusSync(client, cache, statuses);
  // Mirror pods and their statuses, up to 8 pods at a time (the client's sockets): create, then
  // status, per pod; the pods side by side.
  const pods: KeyedQueue = new KeyedQueue(
    'Syncing mirror pod',
    async (key) => {
      const { mirror, retryAfterMs } = await reconciler.reconcile(key);
      if (retryAfterMs !== undefined) pods.addAfter(key, retryAfterMs);
      const sp = desired.podByKey(key) ?? leaving.get(key)?.sp;
      if (mirror && sp) await statusSync.sync(sp, mirror);
      if (!desired.podByKey(key)) releaseLeaving(key);
    },
    conn,
    logger,
  );
  const allKeys = (): Set<string> =>
    new Set([...desired.list().map((sp) => sp.key), ...leaving.keys(), ...cache.keys()]);

  // The node (registration first, then its status) and its lease: one key each, beside the pods.
  const nodeTask = new KeyedQueue('Updating node status', () => reporter.sync(), conn, logger, {
    concurrency: 1,
    failureLog: 'info',
  });
  const leaseTask = new KeyedQueue('Renewing node lease', () => lease.renew(), conn, logger, {
    concurrency: 1,
    failureLog: 'info',
  });
  const syncNode = (): void => nodeTask.add('node');
  const renewLease = (): void => leaseTask.add('lease');
  registrar.onRegistered(() => {
    renewLease();
    pods.addAll(allKeys());
  });
  // Back after an outage: heartbeat and status at once, not at the next tick; one run each, even
  // when a tick was held meanwhile.
  nodeTask.runWhenBack('node');
  leaseTask.runWhenBack('lease');

  desired.onChange(() => {
    refreshLeaving();
    pods.addAll(allKeys());
  });
  // API pods: their own status, one key per UID, beside the mirror pods.
  const apiPods = opts.apiPods;
  const apiStatus = apiPods && new ApiPodStatusSync(client, opts.statuses, apiPods);
  const apiStatusQueue =
    apiStatus && new KeyedQueue('Updating API pod status', (uid) => apiStatus.sync(uid), conn, logger);
  const finalDelete =
    apiPods &&
    new ApiPodFinalDelete(client, async (uid) => {
      await apiStatus?.sync(uid);
    });
  const deleteQueue =
    finalDelete &&
    new KeyedQueue(
      'Deleting API pod',
      async (uid) => {
        if (await finalDelete.send(uid)) apiStatus?.deleted(uid);
      },
      conn,
      logger,
      { concurrency: 2 },
    );
  apiPods?.onRemoved((sp) => {
    apiStatus?.deletionStarted(sp);
    finalDelete?.deletionStarted(sp);
  });
  const allApiPods = (): void => {
    if (!apiPods || !apiStatusQueue) return;
    apiStatus?.retain();
    apiStatusQueue.addAll(new Set(apiPods.apiPods().map((p) => p.uid)));
  };
  opts.statuses.onChange((uid) => {
    const sp = desired.podByUid(uid);
    if (sp) return pods.add(sp.key);
    if (apiPods?.apiPodByUid(uid) || apiStatus?.isLeaving(uid)) return apiStatusQueue?.add(uid);
    const l = leavingByUid(uid);
    if (!l) return;
    const now = opts.statuses.get(uid);
    if (now) l[1].status = now;
    pods.add(l[0]);
  });
  const restarts =
    opts.onRestartRequest &&
    new MirrorRestartRequests(
      (k) => cache.get(k),
      (k) => desired.podByKey(k),
      nodeName,
      opts.onRestartRequest,
    );
  const checkRestarts = (): void => restarts?.checkAll(cache.keys(), new Set(desired.list().map((sp) => sp.uid)));
  desired.onChange(checkRestarts);
  cache.onChange((key) => {
    pods.add(key);
    restarts?.check(key);
  });
  cache.onResync(() => {
    pods.addAll(allKeys());
    checkRestarts();
  });

  const timers = [
    setInterval(syncNode, opts.nodeStatusUpdateFrequencyMs ?? 10_000),
    setInterval(renewLease, (leaseDuration * 1000) / 4),
    setInterval(() => {
      allApiPods();
      pods.addAll(allKeys());
      const current = new Set<string>();
      for (const k of cache.keys()) {
        const uid = cache.get(k)?.metadata?.uid;
        if (uid) current.add(uid);
      }
      statusSync.retain(current);
    }, opts.resyncPeriodMs ?? 10_000),
  ];
  for (const t of timers) t.unref?.();

  logger.info('Connecting to the API server', { server: client.server, node: nodeName });
  const podSource = opts.podSource?.(nodePods);
  nodePods.start();
  syncNode();
  events.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Normal', 'Starting', 'Starting kubelet.');

  const flushed = (podUids: readonly string[]): boolean => {
    if (nodeStatusChanged(reporter.lastPosted(), computeNodeStatus(opts.nodeInfo, reporter.lastPosted(), clock.now())))
      return false;
    return podUids.every((uid) => {
      const sp = desired.podByUid(uid);
      const ours = opts.statuses.get(uid);
      if (!sp || !ours) return true;
      const theirs = cache.get(sp.key)?.status;
      return theirs?.phase === ours.phase && theirs?.reason === ours.reason && theirs?.message === ours.message;
    });
  };

  let stopped: Promise<void> | undefined;
  return {
    recorder: events,
    client,
    flush: async (podUids, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      syncNode();
      pods.addAll(allKeys());
      while (conn.current === 'up' && !flushed(podUids) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        syncNode();
      }
    },
    podRemoved: (uid) => {
      if (finalDelete?.podRemoved(uid)) deleteQueue?.add(uid);
    },
    state: () => ({ connected: conn.current === 'up', lastContact: conn.lastContact }),
    stop: () => {
      stopped ??= (async () => {
        for (const t of timers) clearInterval(t);
        conn.stop();
        const done = Promise.all([
          nodeTask.stop(),
          leaseTask.stop(),
          pods.stop(),
          events.stop(),
          nodePods.stop(),
          podObjects?.stop(),
          podSource?.stop(),
          apiStatusQueue?.stop(),
          deleteQueue?.stop(),
        ]);
        // In-flight requests end at their deadline at the latest; closing the client ends them now.
        client.close();
        await done;
      })();
      return stopped;
    },
  };
}
