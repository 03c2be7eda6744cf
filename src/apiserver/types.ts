// What bootlet hands the API side: small read-only views of its own state. The API side only
// reads them and listens for changes; it never reaches back into config, workers or status.
import type { NodeRuntimeHandler, PodStatus, Taint } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../config/types.js';

/** The desired static pods (from the manifest path and staticPodURL), with their identity: a view of the one desired set. */
export interface StaticPodSource {
  list(): readonly StaticPod[];
  podByKey(key: string): StaticPod | undefined;
  podByUid(uid: string): StaticPod | undefined;
  /** Called after the desired set changed (add, update, remove). */
  onChange(listener: () => void): void;
  /**
   * Whether every manifest has been read (the kubelet's sourcesReady). Until then a mirror pod without
   * a static pod is not deleted: its manifest may just not be read yet. Absent = always complete.
   */
  ready?(): boolean;
  /** Each static pod whose key leaves the desired set (its manifest removed). */
  onRemoved(listener: (pod: StaticPod) => void): void;
}

/** The locally computed v1 PodStatus of each static pod, by static pod UID. */
export interface PodStatusSource {
  get(uid: string): PodStatus | undefined;
  onChange(listener: (uid: string) => void): void;
  /** Keeps the pod's final status readable after its worker ended, until release (a leaving mirror waits for it). */
  hold?(uid: string): void;
  release?(uid: string): void;
}

/** Resource amounts as Kubernetes quantities ('2', '4014592Ki', '110'). */
export type ResourceList = Record<string, string>;

/** Node conditions the agent can observe on its own, beside runtime readiness. */
export interface NodePressure {
  memory: boolean;
  disk: boolean;
  pid: boolean;
}

/** What the Node object is built from. `collectNodeInfo()` fills the machine facts. */
export interface NodeInfoSource {
  readonly nodeName: string;
  readonly nodeIP: string;
  /** As the runtime names itself: `containerd://1.6.20`. */
  readonly runtimeVersion: string;
  /** bootlet's version, shown as the kubelet version: `v0.1.0-bootlet`. */
  readonly kubeletVersion: string;
  /** `--node-labels`. */
  readonly labels: Readonly<Record<string, string>>;
  /** `--register-with-taints`. */
  readonly taints: readonly Taint[];
  /** `port`: where the kubelet API listens, shown as daemonEndpoints.kubeletEndpoint (default 10250). */
  readonly kubeletPort?: number;
  runtimeReady(): boolean;
  /**
   * Why the runtime's network is not ready, as the kubelet words it (`container runtime network not
   * ready: NetworkReady=false reason:... message:...`); undefined when it is. Ready is False meanwhile.
   */
  networkNotReady?(): string | undefined;
  /** The node is shutting down (graceful node shutdown): Ready is False with the kubelet's message. */
  shuttingDown?(): boolean;
  /** The runtime's handlers and their features, as status.runtimeHandlers reports them (none before Status answered). */
  runtimeHandlers?(): readonly NodeRuntimeHandler[];
  readonly osImage: string;
  readonly kernelVersion: string;
  /** GOARCH spelling: amd64, arm64, ... */
  readonly architecture: string;
  readonly operatingSystem: string;
  readonly machineID: string;
  readonly bootID: string;
  readonly systemUUID: string;
  capacity(): ResourceList;
  allocatable(): ResourceList;
  pressure(): NodePressure;
}

/** The object an event is about: a (static/mirror) pod or this node. */
export interface EventObject {
  kind: 'Pod' | 'Node';
  namespace?: string;
  name: string;
  /**
   * For a pod: the static pod UID (config hash). `kubectl describe pod <mirror>` searches events by
   * the mirror's `kubernetes.io/config.mirror` value, which is that hash, as the kubelet records them.
   * For the node: the node name, as the kubelet's node reference carries it.
   */
  uid: string;
  /** `spec.containers{name}` for container events. */
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(object: EventObject, type: EventType, reason: string, message: string): void;
}

/** Time source, replaceable in tests. Timers stay real. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
