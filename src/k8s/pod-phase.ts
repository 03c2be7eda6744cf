// The pod phases after which nothing of a pod runs again (v1.PodSucceeded, v1.PodFailed): the kubelet
// never restarts a pod in one, admission no longer counts it against the node, and a status that
// reached one keeps it.
import type { PodStatus } from 'kubernetes-types/core/v1';

export type TerminalPhase = 'Succeeded' | 'Failed';

export function isTerminalPhase(phase: PodStatus['phase']): phase is TerminalPhase {
  return phase === 'Succeeded' || phase === 'Failed';
}
