// The restart rules of a pod's containers: the pod's restartPolicy, a container's own restartPolicy
// and restartPolicyRules (KEP-5307, ContainerRestartRules, on by default since 1.35), and the
// restartable init containers of KEP-753 (a sidecar is an init container whose own policy is
// Always). One rule for all of them: ContainerShouldRestart and IsContainerRestartable in
// pkg/api/v1/pod/util.go, which the kubelet's ShouldContainerBeRestarted, computePodActions, the
// prober and getPhase all read.
import type { Container } from 'kubernetes-types/core/v1';

/** The values the API accepts for a pod's restartPolicy, in its order. */
export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const;

export type PodRestartPolicy = (typeof RESTART_POLICIES)[number];

/** The pod's restartPolicy; `Always` when unset, as the scheme defaults it. */
export function podRestartPolicy(policy: string | undefined): PodRestartPolicy {
  return policy === 'OnFailure' || policy === 'Never' ? policy : 'Always';
}

/** A container's own restartPolicy values, as validation lists them (sorted). */
export const CONTAINER_RESTART_POLICIES = ['Always', 'Never', 'OnFailure'] as const;
/** restartPolicyRules[].action: what a matching rule does. RestartAllContainers is KEP-5532's. */
export const RESTART_RULE_ACTION = 'Restart';
export const RESTART_ALL_CONTAINERS_ACTION = 'RestartAllContainers';
/** restartPolicyRules[].exitCodes.operator values, as validation lists them. */
export const RESTART_RULE_OPERATORS = ['In', 'NotIn'] as const;
/** The most rules a container may have, and the most exit codes a rule may list. */
export const MAX_RESTART_RULES = 20;
export const MAX_RULE_EXIT_CODES = 255;

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

/** A policy (the container's own, else the pod's) applied to an exit code. */
function policyRestarts(policy: string, exitCode: number): boolean {
  if (policy === 'OnFailure') return exitCode !== 0;
  return policy !== 'Never';
}

/**
 * The first of the container's rules its exit code satisfies, in order (In: the code is listed;
 * NotIn: it is not). A rule of another operator, or without exitCodes, matches nothing.
 */
export function matchingRestartRule(c: Container, exitCode: number): { action: string } | undefined {
  return (c.restartPolicyRules ?? []).find((rule) => {
    const codes = rule.exitCodes;
    if (!codes) return false;
    const listed = (codes.values ?? []).includes(exitCode);
    if (codes.operator === 'In') return listed;
    if (codes.operator === 'NotIn') return !listed;
    return false;
  });
}

/**
 * Whether a container that exited with `exitCode` runs again (ContainerShouldRestart): a matching
 * rule whose action is Restart restarts it; otherwise its own restartPolicy decides; otherwise the
 * pod's. Rules count only beside the container's own restartPolicy (validation requires it). A
 * sidecar's own policy is Always, so it always runs again.
 */
export function containerShouldRestart(c: Container, podPolicy: string | undefined, exitCode: number): boolean {
  if (c.restartPolicy === undefined) return policyRestarts(podRestartPolicy(podPolicy), exitCode);
  if (matchingRestartRule(c, exitCode)?.action === RESTART_RULE_ACTION) return true;
  return policyRestarts(c.restartPolicy, exitCode);
}

/**
 * Whether a running container killed by a failed liveness or startup probe is started again: its own
 * restartPolicy, else the pod's, Never or not. Its rules are not read, as no exit code is known yet.
 */
export function restartsAfterProbeFailure(c: Container, podPolicy: string | undefined): boolean {
  return (c.restartPolicy ?? podRestartPolicy(podPolicy)) !== 'Never';
}
