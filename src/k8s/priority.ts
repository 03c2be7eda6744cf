// A pod's priority as the API server's Priority admission plugin resolves it, done locally: a
// static pod never passes through admission, so its `priorityClassName` would otherwise order
// nothing (k/k#133535). Only the two system classes can be known without a server; a pod that
// names another class keeps the cluster's default when no class is global default: 0.
import type { Pod } from 'kubernetes-types/core/v1';
import { CONFIG_SOURCE, isMirrorPod } from './annotations.js';

/** scheduling.SystemPriorityClasses: the names and values every API server has built in. */
export const SYSTEM_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-node-critical': 2_000_001_000,
  'system-cluster-critical': 2_000_000_000,
};

/** scheduling.SystemCriticalPriority: at or above it a pod is critical by priority. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
/** scheduling.DefaultPriorityWhenNoDefaultClassExists. */
export const DEFAULT_PRIORITY = 0;

/**
 * spec.priority when the pod has one (an API pod: admission set it), else the value of its
 * system priority class, else the default.
 */
export function podPriority(pod: Pod): number {
  if (typeof pod.spec?.priority === 'number') return pod.spec.priority;
  const cls = pod.spec?.priorityClassName;
  return (cls !== undefined && SYSTEM_PRIORITY_CLASSES[cls]) || DEFAULT_PRIORITY;
}

/** types.IsStaticPod: made from a source other than the API server. */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata?.annotations?.[CONFIG_SOURCE];
  return source !== undefined && source !== 'api';
}

/**
 * types.IsCriticalPod: a static pod, a mirror pod, or a priority at or above
 * SystemCriticalPriority. With the priority resolved locally, a pod read from the API with a
 * system class is critical too.
 */
export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod)) return true;
  if (isMirrorPod(pod)) return true;
  return podPriority(pod) >= SYSTEM_CRITICAL_PRIORITY;
}

/** types.IsNodeCriticalPod: critical and of class system-node-critical. */
export function isNodeCriticalPod(pod: Pod): boolean {
  return isCriticalPod(pod) && pod.spec?.priorityClassName === 'system-node-critical';
}
