// What bootlet hands the API side about its pods: small read-only views of the one desired set's
// static pods and API pods and of the status manager's statuses. The API side only reads them and
// listens for changes; it never reaches back into config or status.
import type { PodStatus } from 'kubernetes-types/core/v1';
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
  /**
   * What the server holds for the pod, told when its mirror is first seen: containers found running
   * at the agent's start keep their readiness from it until their probes answer (KEP-4781).
   * Resolves once the status to send reflects it.
   */
  reported?(uid: string, status: PodStatus | undefined): Promise<void>;
}

/** The desired API pods, by UID (the pod config's view). */
export interface ApiPodView {
  apiPodByUid(uid: string): StaticPod | undefined;
  apiPods(): readonly StaticPod[];
  /** Each API pod the desired set lets go of (deleted, or replaced under its name). */
  onRemoved(listener: (pod: StaticPod) => void): void;
  /** Each API pod the desired set takes on or changes (ADD, UPDATE), in the turn of the change: its objects are registered then. */
  onDesired?(listener: (pod: StaticPod) => void): void;
}
