// The API side of bootlet, tied together: node registration and status, the node lease, mirror
// pods and their status, events. Everything here runs off the callers' path: sources only notify,
// and the agent marks objects dirty. While the API server is away nothing piles up (one entry per
// object, the latest state read when sent), and when it returns everything converges at once.
import type { PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import { ApiClient } from './client.js';
import { Connectivity } from './connectivity.js';
import { EventSender } from './events.js';
import { KeyedQueue } from './keyed-queue.js';
import { loadKubeconfig, type ClusterConnection } from './kubeconfig.js';
import { MirrorPodCache } from './mirror-pod-cache.js';
import { isMirrorOf, podKey } from './mirror-pod.js';
import { MirrorPodReconciler } from './mirror-pods.js';
import { NodeLease } from './node-lease.js';
import { NodeRegistrar } from './node-registration.js';
import { NodeStatusReporter } from './node-status-reporter.js';
import { computeNodeStatus, nodeStatusChanged } from './node-status.js';
import { PodStatusSync } from './pod-status-sync.js';
import { systemClock, type Clock, type EventRecorder, type NodeInfoSource, type PodStatusSource, type StaticPodSource } from './types.js';

/** Longest a removed static pod's mirror waits for its terminal status: its grace and the stop, with room. */
const LEAVING_MAX_MS = 5 * 60_000;

export interface ApiAgentOptions {
  /** Where the connection comes from, unless `connection` is given. */
  kubeconfigPath?: string;
  /** The connection to use (its client certificate may change while running). */
  connection?: ClusterConnection;
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
}

export interface ApiAgent {
  recorder: EventRecorder;
  /**
   * Sends the node's status and these pods' statuses now; resolves once the server has them as
   * they are now, or after `timeoutMs`, or at once while it is away (node shutdown).
   */
  flush(podUids: readonly string[], timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
  state(): { connected: boolean; lastContact?: Date };
}

/** Starts the agent. Throws KubeconfigError (synchronously) for an unusable kubeconfig; an absent server is not an error. */
export function startApiAgent(opts: ApiAgentOptions): ApiAgent {
  if (!opts.connection && !opts.kubeconfigPath) throw new Error('startApiAgent: a kubeconfigPath or a connection is needed');
  const conn0 = opts.connection ?? loadKubeconfig(opts.kubeconfigPath!);
  const logger = opts.logger.with({ component: 'apiserver' });
  const clock = opts.clock ?? systemClock;
  const nodeName = opts.nodeInfo.nodeName;
  const client = new ApiClient(conn0, { timeoutMs: opts.requestTimeoutMs, userAgent: opts.userAgent ?? `bootlet/${opts.nodeInfo.kubeletVersion}` });
  const conn = new Connectivity(client, logger);
  const registrar = new NodeRegistrar(client, opts.nodeInfo, clock, logger, opts.registerNode ?? true);
  const events = new EventSender(client, conn, nodeName, clock, logger);
  const reporter = new NodeStatusReporter(client, opts.nodeInfo, registrar, clock, opts.nodeStatusReportFrequencyMs ?? 300_000, events);
  const leaseDuration = opts.nodeLeaseDurationSeconds ?? 40;
  const lease = new NodeLease(client, nodeName, () => registrar.uid, leaseDuration, clock);
  const cache = new MirrorPodCache(client, conn, nodeName, logger);

  // The desired set, indexed: by key for the reconciler, by UID for status notifications.
  let desired = new Map<string, StaticPod>();
  let keyOfUid = new Map<string, string>();
  let desiredComplete = false;
  // Static pods whose manifest went: their mirror stays, with the last status the agent computed,
  // until that status is terminal and in the server; then the mirror is deleted as an orphan.
  const leaving = new Map<string, { sp: StaticPod; status?: PodStatus; since: number }>();
  const refreshDesired = (): void => {
    const before = desired;
    desired = new Map();
    keyOfUid = new Map();
    for (const sp of opts.staticPods.list()) {
      const key = podKey(sp.pod.metadata.namespace, sp.pod.metadata.name);
      desired.set(key, sp);
      keyOfUid.set(sp.uid, key);
    }
    desiredComplete = opts.staticPods.ready?.() ?? true;
    for (const [key, sp] of before) if (!desired.has(key) && desiredComplete) leaving.set(key, { sp, status: opts.statuses.get(sp.uid), since: clock.now().getTime() });
    for (const key of desired.keys()) leaving.delete(key);
  };
  const leavingByUid = (uid: string): [string, { sp: StaticPod; status?: PodStatus; since: number }] | undefined => [...leaving].find(([, l]) => l.sp.uid === uid);
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
  const statuses: PodStatusSource = {
    get: (uid) => opts.statuses.get(uid) ?? leavingByUid(uid)?.[1].status,
    onChange: (l) => opts.statuses.onChange(l),
  };
  refreshDesired();

  const reconciler = new MirrorPodReconciler(
    client,
    cache,
    nodeName,
    () => registrar.uid,
    // A leaving pod keeps the mirror it has; it never gets a new one.
    (k) => desired.get(k) ?? (isMirrorOfLeaving(k) ? leaving.get(k)?.sp : undefined),
    () => desiredComplete,
    logger,
  );
  const isMirrorOfLeaving = (k: string): boolean => {
    const m = cache.get(k);
    const l = leaving.get(k);
    return !!m && !!l && isMirrorOf(m, l.sp) && !m.metadata?.deletionTimestamp;
  };
  const statusSync = new PodStatusSync(client, cache, statuses);
  // Mirror pods and their statuses, up to 8 pods at a time (the client's sockets): create, then
  // status, per pod; the pods side by side.
  const pods: KeyedQueue = new KeyedQueue(
    'Syncing mirror pod',
    async (key) => {
      const { mirror, retryAfterMs } = await reconciler.reconcile(key);
      if (retryAfterMs !== undefined) pods.addAfter(key, retryAfterMs);
      const sp = desired.get(key) ?? leaving.get(key)?.sp;
      if (mirror && sp) await statusSync.sync(sp, mirror);
      if (!desired.has(key)) releaseLeaving(key);
    },
    conn,
    logger,
  );
  const allKeys = (): Set<string> => new Set([...desired.keys(), ...leaving.keys(), ...cache.keys()]);

  // The node (registration first, then its status) and its lease: one key each, beside the pods.
  const nodeTask = new KeyedQueue('Updating node status', () => reporter.sync(), conn, logger, { concurrency: 1, failureLog: 'info' });
  const leaseTask = new KeyedQueue('Renewing node lease', () => lease.renew(), conn, logger, { concurrency: 1, failureLog: 'info' });
  const syncNode = (): void => nodeTask.add('node');
  const renewLease = (): void => leaseTask.add('lease');
  registrar.onRegistered(() => {
    renewLease();
    pods.addAll(allKeys());
  });
  // Back after an outage: heartbeat and status at once, not at the next tick.
  conn.onUp(() => {
    syncNode();
    renewLease();
  });

  opts.staticPods.onChange(() => {
    refreshDesired();
    pods.addAll(allKeys());
  });
  opts.statuses.onChange((uid) => {
    const key = keyOfUid.get(uid);
    if (key) return pods.add(key);
    const l = leavingByUid(uid);
    if (!l) return;
    const now = opts.statuses.get(uid);
    if (now) l[1].status = now;
    pods.add(l[0]);
  });
  cache.onChange((key) => pods.add(key));
  cache.onResync(() => pods.addAll(allKeys()));

  const timers = [
    setInterval(syncNode, opts.nodeStatusUpdateFrequencyMs ?? 10_000),
    setInterval(renewLease, (leaseDuration * 1000) / 4),
    setInterval(() => {
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
  cache.start();
  syncNode();
  events.event({ kind: 'Node', name: nodeName, uid: nodeName }, 'Normal', 'Starting', 'Starting kubelet.');

  const flushed = (podUids: readonly string[]): boolean => {
    if (nodeStatusChanged(reporter.lastPosted(), computeNodeStatus(opts.nodeInfo, reporter.lastPosted(), clock.now()))) return false;
    return podUids.every((uid) => {
      const key = keyOfUid.get(uid);
      const ours = opts.statuses.get(uid);
      if (!key || !ours) return true;
      const theirs = cache.get(key)?.status;
      return theirs?.phase === ours.phase && theirs?.reason === ours.reason && theirs?.message === ours.message;
    });
  };

  let stopped: Promise<void> | undefined;
  return {
    recorder: events,
    flush: async (podUids, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      syncNode();
      pods.addAll(allKeys());
      while (conn.current === 'up' && !flushed(podUids) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        syncNode();
      }
    },
    state: () => ({ connected: conn.current === 'up', lastContact: conn.lastContact }),
    stop: () => {
      stopped ??= (async () => {
        for (const t of timers) clearInterval(t);
        conn.stop();
        const done = Promise.all([nodeTask.stop(), leaseTask.stop(), pods.stop(), events.stop(), cache.stop()]);
        // In-flight requests end at their deadline at the latest; closing the client ends them now.
        client.close();
        await done;
      })();
      return stopped;
    },
  };
}
