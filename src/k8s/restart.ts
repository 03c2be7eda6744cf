// The restart rules of a pod's containers (ShouldContainerBeRestarted in
// pkg/kubelet/container/helpers.go, and the restartable init containers of KEP-753).
import type { Container } from 'kubernetes-types/core/v1';

/** The values the API accepts for a pod's restartPolicy, in its order. */
export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;

export type PodRestartPolicy = (typeof RESTART_POLICIES)[number];

/** The pod's restartPolicy; `Always` when unset, as the scheme defaults it. */
export function podRestartPolicy(policy: string | undefined): PodRestartPolicy {
  return policy === 'OnFailure' || policy === 'Never' ? policy : 'Always';
}

/**
 * A sidecar: an init container with `restartPolicy: Always`. It is started in order with the
 * init containers, kept running beside the app containers, probed, and restarted whatever the
 * pod's policy says.
 */
export function isRestartableInit(c: Container | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

/** The sidecars among a pod's init containers, in order. */
export function restartableInitContainers(initContainers: readonly Container[] | undefined): Container[] {
  return (initContainers ?? []).filter(isRestartableInit);
}

/** Whether a (regular) container that exited with `exitCode` runs again under the pod's policy. */
export function shouldRestart(policy: PodRestartPolicy, exitCode: number): boolean {
  if (policy === 'Always') return true;
  if (policy === 'OnFailure') return exitCode !== 0;
  return false;
}
