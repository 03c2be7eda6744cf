// Connects the rest of bootlet to the API server when a kubeconfig is given: the node, its lease, mirror pods
// and statuses are kept true there from what bootlet already knows, and pod events are recorded.
// Nothing here can stop, start or restart a container: the API side only reads.
import { collectNodeInfo, startApiSide, type ApiSide, type ClusterConnection } from './index.js';
import type { StaticPodSet } from '../config/static-pod-set.js';
import type { Logger } from '../log/logger.js';
import type { PodEvent, PodWorkerObserver } from '../podworkers/observer.js';
import type { StatusManager } from '../status/status-manager.js';
import { kubeletVersion } from '../version.js';
import type { Taint } from 'kubernetes-types/core/v1';

export interface ApiLink {
  /** Records pod events in the API server (aggregated, rate-limited, dropped while it is away). */
  readonly observer: PodWorkerObserver;
  recordPodEvent(e: PodEvent): void;
  /** The node's API credentials, once it has an identity (for the kubelet API's reviews and serving certificate). */
  connection(): ClusterConnection | undefined;
  readonly connectionReady: Promise<ClusterConnection>;
  /** The node's and these pods' statuses reach the server now (node shutdown); bounded by `timeoutMs`. */
  flush(podUids: readonly string[], timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** The settings the API side uses (the agent's options satisfy it). */
export interface ApiLinkOptions {
  kubeconfig: string;
  bootstrapKubeconfig?: string;
  certDir: string;
  rotateCertificates: boolean;
  nodeName: string;
  nodeIP: string;
  nodeLabels: Record<string, string>;
  registerWithTaints: Taint[];
  rootDir: string;
  maxPods: number;
  port: number;
  registerNode: boolean;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
}

export interface ApiLinkDeps {
  staticPods: StaticPodSet;
  status: StatusManager;
  runtimeName: string;
  runtimeVersion: string;
  runtimeReady: () => boolean;
  /** Graceful node shutdown under way: the Node's Ready condition says so. */
  shuttingDown?: () => boolean;
  logger: Logger;
}

export function startApiLink(opts: ApiLinkOptions, deps: ApiLinkDeps): ApiLink {
  const agent: ApiSide = startApiSide({
    kubeconfigPath: opts.kubeconfig,
    bootstrapKubeconfigPath: opts.bootstrapKubeconfig,
    certDir: opts.certDir,
    rotateCertificates: opts.rotateCertificates,
    nodeInfo: collectNodeInfo({
      nodeName: opts.nodeName,
      nodeIP: opts.nodeIP,
      runtimeVersion: `${deps.runtimeName}://${deps.runtimeVersion}`,
      kubeletVersion: kubeletVersion(),
      labels: opts.nodeLabels,
      taints: opts.registerWithTaints,
      runtimeReady: deps.runtimeReady,
      shuttingDown: deps.shuttingDown,
      rootDir: opts.rootDir,
      maxPods: opts.maxPods,
      kubeletPort: opts.port,
    }),
    staticPods: deps.staticPods,
    statuses: {
      get: (uid) => deps.status.get(uid)?.status,
      onChange: (listener) => void deps.status.onChange((uid) => listener(uid)),
    },
    logger: deps.logger.with({ component: 'apiserver' }),
    registerNode: opts.registerNode,
    nodeStatusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
    nodeStatusReportFrequencyMs: opts.nodeStatusReportFrequencyMs,
    nodeLeaseDurationSeconds: opts.nodeLeaseDurationSeconds,
  });
  const recordPodEvent = (e: PodEvent): void => {
    const prefix = e.initContainer ? 'spec.initContainers' : 'spec.containers';
    agent.recorder.event(
      { kind: 'Pod', namespace: e.namespace, name: e.name, uid: e.uid, ...(e.container ? { fieldPath: `${prefix}{${e.container}}` } : {}) },
      e.type,
      e.reason,
      e.message,
    );
  };
  return {
    observer: { podEvent: recordPodEvent },
    recordPodEvent,
    connection: () => agent.connection(),
    connectionReady: agent.connectionReady,
    flush: (podUids, timeoutMs) => agent.flush(podUids, timeoutMs),
    stop: () => agent.stop(),
  };
}
