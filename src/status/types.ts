// The inputs the pod status is computed from, as small interfaces of our own so that status
// depends on no other part's classes (the prober, the pod workers) but only on what they report.
import type { PodStatus } from 'kubernetes-types/core/v1';
import type { StaticPod } from '../config/types.js';
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { ResizeState } from './resize-status.js';

/**
 * Probe results by pod UID and container name; undefined for a pod or container the prober does
 * not know, and for a container found running at the agent's start whose probe has no result yet.
 */
export interface ProbeState {
  ready(uid: string, containerName: string): boolean | undefined;
  started(uid: string, containerName: string): boolean | undefined;
}

/** Why a container is not running, as the last sync of its pod found (the kubelet's reason cache). */
export interface WaitingReason {
  readonly reason: string;
  readonly message: string;
}

export interface GenerateInput {
  readonly pod: StaticPod['pod'];
  readonly runtime: RuntimePod | undefined;
  readonly probes: ProbeState;
  /** By container name: CrashLoopBackOff, ErrImagePull, CreateContainerConfigError, ... */
  readonly waiting: ReadonlyMap<string, WaitingReason>;
  /** Set when the worker gave the pod up for good (an init container failed under Never). */
  readonly podFailed?: string;
  readonly nodeIP: string;
  /** From CRI Version: the scheme of every containerID (`containerd://...`). */
  readonly runtimeName: string;
  /**
   * What the API server held for the pod when this agent first saw it (the listed API pod, or the
   * static pod's mirror): a container found running at the agent's start keeps its `ready` and
   * `started` from there until its probes answer (KEP-4781).
   */
  readonly reported?: PodStatus;
  /** The status computed last time: transition times, startTime and terminal phases are kept from it. */
  readonly previous?: PodStatus;
  readonly now: Date;
  /** The pod is being stopped: nothing will be restarted, so no waiting reason is shown. */
  readonly terminating?: boolean;
  /**
   * By container id: what the container wrote to its terminationMessagePath (or log tail), read
   * by whoever can reach the file; joined to the runtime's message as the kubelet does.
   */
  readonly terminationMessages?: ReadonlyMap<string, string>;
  /** The pod's in-place resize: pending (from its allocation) and the last attempt's error. */
  readonly resize?: ResizeState;
}
