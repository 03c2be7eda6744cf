// Which pods stop together, and with how much time, when the node shuts down: the kubelet's
// migrateConfig and groupByPriority, with the pod's priority resolved locally (static pods never
// went through admission) and the control plane ordered within a group.
import type { Pod } from 'kubernetes-types/core/v1';
import { DEFAULT_PRIORITY, podPriority, SYSTEM_CRITICAL_PRIORITY } from '../k8s/priority.js';

export interface ShutdownPriorityPeriod {
  readonly priority: number;
  readonly shutdownGracePeriodSeconds: number;
}

export interface ShutdownGroup<P> {
  readonly priority: number;
  readonly shutdownGracePeriodSeconds: number;
  /** Stopped one after the other: a wave starts once the previous one has stopped or run out of time. */
  readonly waves: P[][];
}

/**
 * The periods by priority, lowest first. shutdownGracePeriodByPodPriority when given; otherwise
 * shutdownGracePeriod split into ordinary pods (the rest) and critical pods (the critical part).
 * Empty: graceful shutdown is off.
 */
export function shutdownPeriods(
  gracePeriodSeconds: number,
  criticalSeconds: number,
  byPriority: readonly ShutdownPriorityPeriod[],
): ShutdownPriorityPeriod[] {
  if (byPriority.length > 0) return [...byPriority].sort((a, b) => a.priority - b.priority);
  if (gracePeriodSeconds <= 0) return [];
  const ordinary = gracePeriodSeconds - criticalSeconds;
  if (ordinary < 0) return [];
  return [
    { priority: DEFAULT_PRIORITY, shutdownGracePeriodSeconds: ordinary },
    { priority: SYSTEM_CRITICAL_PRIORITY, shutdownGracePeriodSeconds: gracePeriodSeconds - ordinary },
  ];
}

/** What logind's InhibitDelayMaxSec must allow at least: every group's time, one after the other. */
export function periodRequestedSeconds(periods: readonly ShutdownPriorityPeriod[]): number {
  return periods.reduce((s, p) => s + p.shutdownGracePeriodSeconds, 0);
}

/**
 * The group of a priority: the highest period at or below it; above the highest, the highest;
 * below the lowest, the lowest.
 */
function groupIndex(periods: readonly ShutdownPriorityPeriod[], priority: number): number {
  let index = 0;
  for (let i = 0; i < periods.length; i++) if (periods[i].priority <= priority) index = i;
  return index;
}

/**
 * The control plane's reverse dependency order, by kubeadm's `component` label: what talks to
 * the API server first, then the API server, then etcd, which must get its full time.
 */
export function controlPlaneWave(pod: Pod): number {
  const component = pod.metadata?.labels?.component;
  if (component === 'etcd') return 2;
  if (component === 'kube-apiserver') return 1;
  return 0;
}

/** Groups lowest priority first, each with its pods in waves; groups with no pod are left out. */
export function groupByPriority<P>(
  periods: readonly ShutdownPriorityPeriod[],
  pods: readonly P[],
  podOf: (p: P) => Pod,
): ShutdownGroup<P>[] {
  const groups = periods.map((p) => ({ ...p, waves: [[], [], []] as P[][] }));
  for (const p of pods) {
    const pod = podOf(p);
    groups[groupIndex(periods, podPriority(pod))].waves[controlPlaneWave(pod)].push(p);
  }
  return groups.map((g) => ({ ...g, waves: g.waves.filter((w) => w.length > 0) })).filter((g) => g.waves.length > 0);
}

/** The pod's own terminationGracePeriodSeconds, as defaulted (30). */
export function podGraceSeconds(pod: Pod): number {
  return pod.spec?.terminationGracePeriodSeconds ?? 30;
}

/** The most a wave's pods may want of its group: their own grace, capped by the group's period. */
function waveNeedSeconds<P>(group: ShutdownGroup<P>, wave: readonly P[], podOf: (p: P) => Pod): number {
  return Math.max(...wave.map((p) => Math.min(podGraceSeconds(podOf(p)), group.shutdownGracePeriodSeconds)));
}

/**
 * How long wave `index` may take when it starts with `remainingMs` of its group's time left. The
 * next wave starts as soon as this one has exited, so unused time flows on to the later waves, and
 * the last one (etcd) has everything that remains. An earlier wave leaves the later ones what they
 * need (their pods' grace, capped by the group's), but never more than an even share each of what
 * is left: with a group shorter than etcd's grace the API server still gets time of its own before
 * etcd is asked to stop, rather than being stopped with it.
 */
export function waveBudgetMs<P>(
  group: ShutdownGroup<P>,
  index: number,
  remainingMs: number,
  podOf: (p: P) => Pod,
): number {
  const later = group.waves.slice(index + 1);
  if (later.length === 0) return Math.max(0, remainingMs);
  const needMs = later.reduce((s, w) => s + waveNeedSeconds(group, w, podOf) * 1000, 0);
  const shareMs = (remainingMs * later.length) / (later.length + 1);
  return Math.max(0, remainingMs - Math.min(needMs, shareMs));
}
