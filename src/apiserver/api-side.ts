// The API side of bootlet, in one piece: a client identity first (the kubeconfig, or one
// bootstrapped and kept rotated), then on that connection node registration and status, the node
// lease, mirror pods and their status, and events. Everything here runs off the callers' path:
// bootlet only notifies and this side marks objects dirty. While the API server is away nothing
// piles up (one entry per object, the latest state read when sent), and when it returns everything
// converges at once. Until there is an identity, events wait in a small buffer and the node goes on
// without it. Nothing here can stop, start or restart a container: the API side only reads (a restart
// asked on a mirror pod is handed on through onRestartRequest; the pod workers do it).
import type { Node, Pod } from 'kubernetes-types/core/v1';
import type { Informer } from '../informer/store.js';
import type { Logger } from '../log/logger.js';
import type { PodObjects } from '../node/pod-objects.js';
import type { NodeInfoSource } from '../node/node-info.js';
import type { PodEvent, PodWorkerObserver } from '../podworkers/observer.js';
import { systemClock, type Clock } from '../util/clock.js';
import { errorMessage } from '../util/error-message.js';
import { ApiClient } from './client/client.js';
import { Connectivity } from './client/connectivity.js';
import type { ClusterConnection } from './client/kubeconfig.js';
import type { CsrClient } from './credentials/certificate-signing-request.js';
import { startClientCredentials } from './credentials/client-credentials.js';
import type { EventObject, EventRecorder, EventType } from './events/event-recorder.js';
import { EventSender } from './events/events.js';
import { NodeReporting } from './node/node-reporting.js';
import { OwnNode } from './node/own-node.js';
import { ApiPodObjects } from './pod-objects/api-pod-objects.js';
import { DeferredPodObjects } from './pod-objects/deferred-pod-objects.js';
import { ApiRuntimeClasses, type DeferredRuntimeClasses } from './pod-objects/runtime-classes.js';
import { registerApiPods } from './pod-objects/register-api-pods.js';
import { ApiPodUpdates } from './pods/api-pod-updates.js';
import { MirrorPodCache } from './pods/mirror-pod-cache.js';
import type { RestartRequestListener } from './pods/mirror-restart.js';
import { nodePodsReflector } from './pods/node-pods.js';
import type { ApiPodView, PodStatusSource, StaticPodSource } from './pod-sources.js';
import { StaticPodMirrors } from './pods/static-pod-mirrors.js';
import { StatusFlush } from './status-flush.js';
import { nodePodCIDRs } from '../k8s/node-pod-cidr.js';

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
  /** The RuntimeClasses handed to the pod runtime at start: the connection's are attached to it. */
  runtimeClasses?: DeferredRuntimeClasses;
  /**
   * The Node's spec.podCIDRs joined with ",", whenever the watched Node (or the answer to a write of
   * ours) has them: the wiring hands them to the runtime, which sends each value once.
   */
  onPodCIDR?: (podCIDRs: string) => void;
}

export interface ApiSide {
  recorder: EventRecorder;
  /** A pod worker's event, recorded against its pod (aggregated, rate-limited, dropped while the server is away). */
  recordPodEvent(e: PodEvent): void;
  /** Records the pod workers' events. */
  readonly observer: PodWorkerObserver;
  state(): { connected: boolean; lastContact?: Date };
  /** The node's own Node as its watch has it (labels and taints others set); undefined until seen. */
  node(): Node | undefined;
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
  node(): Node | undefined;
  flush(podUids: readonly string[], timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
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
    node: () => parts?.node(),
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
  const events = new EventSender(client, conn, nodeName, clock, logger);
  // The node's own Node, watched: its pod CIDR to the runtime, its labels and taints to admission,
  // and what the status rounds compare with.
  const ownNode = new OwnNode(client, conn, nodeName, logger);
  const tellPodCIDR = (n: Node | undefined): void => {
    const cidrs = nodePodCIDRs(n);
    if (cidrs) opts.onPodCIDR?.(cidrs);
  };
  ownNode.onChange(tellPodCIDR);
  const node = new NodeReporting({
    client,
    gate: conn,
    info: opts.nodeInfo,
    ownNode,
    events,
    clock,
    logger,
    registerNode: opts.registerNode,
    updateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
    reportFrequencyMs: opts.nodeStatusReportFrequencyMs,
    leaseDurationSeconds: opts.nodeLeaseDurationSeconds,
  });
  // The node's one pods watch: the mirror pod cache and the API pod source both hear it.
  const nodePods = nodePodsReflector(client, conn, nodeName, logger);
  const cache = new MirrorPodCache(nodePods, nodeName);
  // The API pods' ConfigMaps, Secrets, Services and tokens, on the same client and gate.
  const podObjects = opts.podObjects && new ApiPodObjects({ client, gate: conn, logger });
  if (podObjects) opts.podObjects?.attach(podObjects);
  // The RuntimeClasses pods name (API look-up, as the kubelet's RuntimeClass manager), on the same client and gate.
  const runtimeClasses = opts.runtimeClasses && new ApiRuntimeClasses({ client, gate: conn, logger });
  if (runtimeClasses) opts.runtimeClasses?.attach(runtimeClasses);
  conn.onUp(() => runtimeClasses?.serverBack());
  const mirrors = new StaticPodMirrors({
    client,
    gate: conn,
    cache,
    desired: opts.staticPods,
    statuses: opts.statuses,
    nodeName,
    nodeUid: () => node.nodeUid,
    events,
    clock,
    logger,
    onRestartRequest: opts.onRestartRequest,
  });
  const apiPods = opts.apiPods && new ApiPodUpdates(client, opts.statuses, opts.apiPods, conn, logger);
  // Mirrors are owned by the Node: each pod is looked at again once it (again) exists.
  node.onRegistered(() => mirrors.syncAll());
  // A status goes to the static pod's mirror, or onto the API pod itself.
  opts.statuses.onChange((uid) => {
    if (!mirrors.statusChanged(uid)) apiPods?.statusChanged(uid);
  });

  const flush = new StatusFlush({
    serverUp: () => conn.current === 'up',
    nodeStatusPosted: () => node.statusPosted(),
    syncNodeStatus: () => node.syncStatus(),
    podStatusesPosted: (uids) => mirrors.statusesPosted(uids),
    syncPods: () => mirrors.syncAll(),
  });
  node.onRound(() => flush.nodeRoundEnded());
  // Each round too, from the watch (no request): a value the runtime refused is sent again, as the kubelet's rounds do.
  node.onRound(() => tellPodCIDR(ownNode.node()));
  mirrors.onSynced(() => flush.recheck());
  cache.onChange(() => flush.recheck());
  opts.statuses.onChange(() => flush.recheck());
  conn.onDown(() => flush.recheck());

  // The status manager's syncPeriod: every status once more, whatever was told.
  const resync = setInterval(() => {
    apiPods?.resync();
    mirrors.resync();
  }, opts.resyncPeriodMs ?? 10_000);
  resync.unref?.();

  logger.info('Connecting to the API server', { server: client.server, node: nodeName });
  const podSource = opts.podSource?.(nodePods);
  nodePods.start();
  ownNode.start();
  node.start();
  events.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Normal', 'Starting', 'Starting kubelet.');

  let stopped: Promise<void> | undefined;
  return {
    recorder: events,
    client,
    flush: (podUids, timeoutMs) => flush.flush(podUids, timeoutMs),
    podRemoved: (uid) => apiPods?.podRemoved(uid),
    state: () => ({ connected: conn.current === 'up', lastContact: conn.lastContact }),
    node: () => ownNode.node(),
    stop: () => {
      stopped ??= (async () => {
        clearInterval(resync);
        flush.endAll();
        conn.stop();
        const done = Promise.all([
          node.stop(),
          mirrors.stop(),
          events.stop(),
          nodePods.stop(),
          ownNode.stop(),
          podObjects?.stop(),
          runtimeClasses?.stop(),
          podSource?.stop(),
          apiPods?.stop(),
        ]);
        // In-flight requests end at their deadline at the latest; closing the client ends them now.
        client.close();
        await done;
      })();
      return stopped;
    },
  };
}
