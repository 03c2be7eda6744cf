// The status of a pod the agent stopped for good while its manifest stays (the node's shutdown):
// terminal, with the reason and message the kubelet's status function sets, and the
// DisruptionTarget condition (PodDisruptionConditions, on by default since 1.31).
import type { PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import { apiTime } from '../util/api-time.js';

export interface StoppedFor {
  readonly reason: string;
  readonly message: string;
}

/** What the kubelet's eviction and shutdown give as DisruptionTarget's reason. */
const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

export function stoppedStatus(status: PodStatus, stoppedFor: StoppedFor, previous: PodStatus | undefined, now: Date): PodStatus {
  const prev = previous?.conditions?.find((c) => c.type === 'DisruptionTarget');
  const disruption: PodCondition = {
    type: 'DisruptionTarget',
    status: 'True',
    reason: TERMINATION_BY_KUBELET,
    message: stoppedFor.message,
    lastTransitionTime: prev?.status === 'True' && prev.lastTransitionTime ? prev.lastTransitionTime : apiTime(now),
  };
  return {
    ...status,
    phase: status.phase === 'Succeeded' ? 'Succeeded' : 'Failed',
    reason: stoppedFor.reason,
    message: stoppedFor.message,
    conditions: [disruption, ...(status.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget')],
  };
}
