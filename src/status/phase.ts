// The pod phase from its container statuses (getPhase in kubelet_pods.go, without the
// ContainerRestartRules gate). Static pods are never forced terminal when they are stopped.
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { isRestartableInit, podRestartPolicy } from '../k8s/restart.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

interface Counts {
  pendingInit: number;
  pendingSidecars: number;
  failedInit: number;
  unknown: number;
  running: number;
  waiting: number;
  stopped: number;
  succeeded: number;
}

function countInit(pod: Pod, byName: Map<string, ContainerStatus>, n: Counts): void {
  for (const c of pod.spec?.initContainers ?? []) {
    const s = byName.get(c.name);
    if (isRestartableInit(c)) {
      if (!s) {
        n.pendingSidecars++;
        n.unknown++;
      } else if (s.state?.running) {
        if (s.started !== true) n.pendingSidecars++;
        n.running++;
      } else if (s.state?.waiting && !s.lastState?.terminated) {
        n.pendingSidecars++;
        n.waiting++;
      } else if (!s.state?.terminated && !s.state?.waiting) {
        n.pendingSidecars++;
        n.unknown++;
      }
      // A sidecar that ended (or is restarting after ending) does not count towards the phase.
      continue;
    }
    if (!s || s.state?.running) {
      n.pendingInit++;
    } else if (s.state?.terminated) {
      if (s.state.terminated.exitCode !== 0) n.failedInit++;
    } else if (s.state?.waiting && s.lastState?.terminated) {
      if (s.lastState.terminated.exitCode !== 0) n.failedInit++;
    } else {
      n.pendingInit++;
    }
  }
}

function countRegular(pod: Pod, byName: Map<string, ContainerStatus>, n: Counts): void {
  for (const c of pod.spec?.containers ?? []) {
    const s = byName.get(c.name);
    if (!s) n.unknown++;
    else if (s.state?.running) n.running++;
    else if (s.state?.terminated) {
      n.stopped++;
      if (s.state.terminated.exitCode === 0) n.succeeded++;
    } else if (s.state?.waiting) {
      // Waiting after having run (crash loop, back-off) counts as stopped, not as never started.
      if (s.lastState?.terminated) n.stopped++;
      else n.waiting++;
    } else n.unknown++;
  }
}

/**
 * @param statuses init and regular container statuses together
 * @param hasInitialized a regular container exists in the current sandbox: restarting sidecars
 *   must not send an initialized pod back to Pending
 */
export function podPhase(pod: Pod, statuses: readonly ContainerStatus[], hasInitialized: boolean): PodPhase {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  const n: Counts = {
    pendingInit: 0,
    pendingSidecars: 0,
    failedInit: 0,
    unknown: 0,
    running: 0,
    waiting: 0,
    stopped: 0,
    succeeded: 0,
  };
  countInit(pod, byName, n);
  countRegular(pod, byName, n);
  const policy = podRestartPolicy(pod.spec?.restartPolicy);

  if (n.failedInit > 0 && policy === 'Never') return 'Failed';
  if (n.pendingInit > 0 || (n.pendingSidecars > 0 && !hasInitialized)) return 'Pending';
  if (n.waiting > 0) return 'Pending';
  if (n.running > 0 && n.unknown === 0) return 'Running';
  if (n.running === 0 && n.stopped > 0 && n.unknown === 0) {
    if (policy === 'Always') return 'Running';
    if (n.stopped === n.succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}
