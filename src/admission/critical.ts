// kubetypes.IsCriticalPod: a static pod, a mirror pod, or a pod whose priority is at least
// system-cluster-critical's. Only a critical pod may preempt, and never another critical one.
import type { Pod } from 'kubernetes-types/core/v1';

/** scheduling.SystemCriticalPriority (2 * HighestUserDefinablePriority). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

const CONFIG_SOURCE = 'kubernetes.io/config.source';
const CONFIG_MIRROR = 'kubernetes.io/config.mirror';

export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata?.annotations?.[CONFIG_SOURCE];
  return source !== undefined && source !== 'api';
}

export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod)) return true;
  if (pod.metadata?.annotations?.[CONFIG_MIRROR] !== undefined) return true;
  return pod.spec?.priority !== undefined && pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY;
}
