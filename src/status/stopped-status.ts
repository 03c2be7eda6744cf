// The status of a pod the agent stopped for good while its manifest stays (the node's shutdown, a
// preemption for a critical pod): terminal, with the reason and message the kubelet's status
// function sets, and the DisruptionTarget condition (PodDisruptionConditions, on by default since 1.31).
import type { PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import { DISRUPTION_TARGET, TERMINATION_BY_KUBELET } from '../k8s/disruption.js';
import { isTerminalPhase } from '../k8s/pod-phase.js';
import { isLiveContainer, type RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { PodStatusOverride } from '../podworkers/termination-request.js';
import { apiTime } from '../util/api-time.js';

/** The status with the stop's override (termination-request.ts) laid over it. */
export function stoppedStatus(
  status: PodStatus,
  override: PodStatusOverride,
  previous: PodStatus | undefined,
  now: Date,
): PodStatus {
  const prev = previous?.conditions?.find((c) => c.type === DISRUPTION_TARGET);
  const disruption: PodCondition = {
    type: DISRUPTION_TARGET,
    // The generation of the pod stopped, as the status it is laid over has it (KEP-5067).
    ...(status.observedGeneration ? { observedGeneration: status.observedGeneration } : {}),
    status: 'True',
    reason: TERMINATION_BY_KUBELET,
    message: override.conditionMessage ?? override.message,
    lastTransitionTime: prev?.status === 'True' && prev.lastTransitionTime ? prev.lastTransitionTime : apiTime(now),
  };
  return {
    ...status,
    phase: status.phase === 'Succeeded' && !override.alwaysFailed ? 'Succeeded' : 'Failed',
    reason: override.reason,
    message: override.message,
    conditions: [disruption, ...(status.conditions ?? []).filter((c) => c.type !== DISRUPTION_TARGET)],
  };
}

/**
 * A pod whose manifest was removed, once none of its containers runs: terminal, as the kubelet
 * makes a deleted pod's last status (Succeeded when every container exited 0, else Failed), so
 * the mirror's last status before it goes is the true end rather than Running.
 */
export function removedStatus(status: PodStatus, runtime: RuntimePod | undefined): PodStatus {
  if ((runtime?.containers ?? []).some(isLiveContainer)) return status;
  if (isTerminalPhase(status.phase)) return status;
  const all = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  const regular = status.containerStatuses ?? [];
  const exitedZero = regular.length > 0 && regular.every((c) => c.state?.terminated?.exitCode === 0);
  return { ...status, phase: exitedZero && all.every((c) => !c.state?.running) ? 'Succeeded' : 'Failed' };
}
