// The vocabulary shared by the probe handlers, the workers and the manager.

export type ProbeType = 'liveness' | 'readiness' | 'startup';

/**
 * What one probe execution found. `unknown` means the probe could not be run (a port name that does
 * not resolve, a runtime error other than a timeout): as the kubelet, such a result is thrown away
 * rather than counted as a failure.
 */
export interface ProbeOutcome {
  result: 'success' | 'failure' | 'unknown';
  output: string;
  /** A success the kubelet reports as `ProbeWarning` (an HTTP redirect to another host). */
  warning?: boolean;
}

/** The state a probe worker holds for the current container, as the kubelet's results manager. */
export type ProbeState = 'success' | 'failure' | 'unknown';

/** Emitted each time a worker records a result (a threshold was reached). */
export interface ProbeResultEvent {
  podUid: string;
  containerName: string;
  containerId: string;
  probeType: ProbeType;
  result: 'success' | 'failure';
  output: string;
  /** False when the recorded result equals the one before (a steady readiness success, say). */
  changed: boolean;
}

/**
 * Emitted when liveness or startup crossed its failure threshold: the pod worker is expected to kill
 * the container (and restart it as its restart policy says). The prober only reports.
 */
export interface ProbeFailureEvent {
  type: 'livenessFailed' | 'startupFailed';
  podUid: string;
  containerName: string;
  containerId: string;
  /** The kubelet's `Killing` message: "Container c failed liveness probe, will be restarted". */
  message: string;
  /** The container status reason the kubelet records for such a kill. */
  reason: 'LivenessProbe' | 'StartupProbe';
  output: string;
  /** The probe's own terminationGracePeriodSeconds, which overrides the pod's for this kill. */
  terminationGracePeriodSeconds?: number;
}

export interface DriftStats {
  /** Number of scheduled probe ticks measured. */
  count: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}
