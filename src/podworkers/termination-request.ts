// Why and how a pod is stopped (the kubelet's KillPodOptions): every stop the agent makes goes through
// one request carried in the pod's record, read by its worker's steps and by the status.

/**
 * Why the pod is stopped: it left the desired set (manifest removed, or replaced under a new UID), it
 * runs with no source that gives it (found at start), a critical pod preempted it, or the node
 * shuts down. A cancelled shutdown turns its request into `restart`: what is left of the stop is
 * removed and the pod starts anew under its UID.
 */
export type TerminationReason = 'removed' | 'orphan' | 'preempted' | 'node-shutdown' | 'restart';

/**
 * The status the pod reports for the stop, as the kubelet's PodStatusFunc sets it: reason, message
 * and the DisruptionTarget condition (PodDisruptionConditions, on by default since 1.31).
 */
export interface PodStatusOverride {
  readonly reason: string;
  readonly message: string;
  /** DisruptionTarget's message when it is not the status message (a preemption's). */
  readonly conditionMessage?: string;
  /**
   * Failed from the moment the stop is asked, whatever the containers do (a preemption's status
   * function). Without it the status turns terminal once nothing runs, and stays Succeeded when every
   * container exited 0 (the node's shutdown).
   */
  readonly alwaysFailed?: boolean;
}

export interface TerminationRequest {
  readonly reason: TerminationReason;
  /** The grace in place of the pod's own (the kubelet's PodTerminationGracePeriodSecondsOverride). */
  readonly graceSeconds?: number;
  readonly status?: PodStatusOverride;
}

/**
 * The node goes down: what exited stays for the status to show until the shutdown is cancelled (then
 * the pod starts anew) or the node is gone.
 */
export function keepsStoppedContainers(t: TerminationRequest | undefined): boolean {
  return t?.reason === 'node-shutdown';
}
