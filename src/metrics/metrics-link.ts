// Connects the agent's parts to its metrics registry: pod worker steps, container starts and
// restarts, pod start latency from status changes, and probe runs. The parts only emit events;
// the names and labels the kubelet gives them are decided here and in src/metrics.
import { registerRequestResult } from '../apiserver/client/request-metrics.js';
import type { AgentMetrics, ContainerTypeLabel, ProbeTypeLabel } from '../metrics/agent-metrics.js';
import { PodStartTracker } from '../metrics/pod-start-tracker.js';
import type { ContainerType } from '../podworkers/compute-actions.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { ProbeRunEvent } from '../prober/prober-manager.js';
import { operationType, type CriCallObserver } from '../cri/operation-type.js';
import type { StatusManager } from '../status/status-manager.js';

const CONTAINER_TYPE: Record<ContainerType, ContainerTypeLabel> = {
  container: 'container',
  init: 'init_container',
  ephemeral: 'ephemeral_container',
};
const PROBE_TYPE: Record<ProbeRunEvent['probeType'], ProbeTypeLabel> = {
  liveness: 'Liveness',
  readiness: 'Readiness',
  startup: 'Startup',
};

/** For connectRuntime's onCall: every CRI call under the kubelet's operation name. */
export function criCallMetrics(metrics: AgentMetrics): CriCallObserver {
  return (method, ms, failed) => metrics.runtimeOperation(operationType(method), ms / 1000, failed);
}

/** For the PLEG's onRelist. */
export function relistMetrics(metrics: AgentMetrics): (durationMs: number, intervalMs: number | undefined) => void {
  return (d, i) => metrics.plegRelist(d / 1000, i === undefined ? undefined : i / 1000);
}

/** For the prober's onProbeRun. */
export function probeMetrics(metrics: AgentMetrics): (e: ProbeRunEvent) => void {
  return (e) =>
    metrics.probeResult(
      {
        probeType: PROBE_TYPE[e.probeType],
        container: e.containerName,
        pod: e.podName,
        namespace: e.namespace,
        podUid: e.podUid,
      },
      e.result === 'success' ? 'successful' : 'failed',
    );
}

/** Counts API server requests of every client (rest_client_requests_total). */
export function registerRestClientMetrics(metrics: AgentMetrics): void {
  registerRequestResult((code, method, host) => metrics.restRequest(code, method, host));
}

/** The pod workers' and the status manager's events, as metrics. */
export function linkMetrics(metrics: AgentMetrics, status: StatusManager): PodWorkerObserver {
  const starts = new PodStartTracker(metrics);
  status.onChange((uid, entry) => starts.statusChanged(uid, entry));
  return {
    podWorkerStep: (_uid, op, ms) => metrics.podWorkerStep(op, ms / 1000),
    containerStartAttempt: (_uid, type) => metrics.containerStartAttempt(CONTAINER_TYPE[type]),
    containerStarted: (uid, _type, pull) => {
      if (pull) starts.pulled(uid, pull.pullMs, pull.pulledAtMs);
    },
    containerStartFailed: (_uid, type, reason) => metrics.containerStartError(CONTAINER_TYPE[type], reason),
    podRestarted: () => metrics.podRestarted(true),
    podRemoved: (uid) => metrics.forgetPod(uid),
  };
}
