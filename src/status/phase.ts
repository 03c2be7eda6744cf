// The pod phase from its container statuses (getPhase in kubelet_pods.go, with the
// ContainerRestartRules gate on, as in 1.35+): a stopped container counts as restarting when its
// rules, its own restartPolicy or the pod's would run it again after its last exit code. Static
// pods are never forced terminal when they are stopped.
import type { Container, ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { containerShouldRestart, isRestartableInit } from '../k8s/restart.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

interface Counts {
  pendingInit: number;
  pendingSidecars: number;
  failedInit: number;
  unknown: number;
  running: number;
  waiting: number;
  stopped: number;
  /** Stopped containers that no rule or policy runs again. */
  stoppedNotRestartable: number;
  succeeded: number;
}

const restarts = (pod: Pod, c: Container, exitCode: number): boolean =>
  containerShouldRestart(c, pod.spec?.restartPolicy, exitCode);

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
      continue;
    }
    const ended = s.state?.terminated ?? (s.state?.waiting ? s.lastState?.terminated : undefined);
    if (!ended) n.pendingInit++;
    // A failed init container its rules or policy restart is on its way again, not a failure.
    else if (ended.exitCode !== 0 && !restarts(pod, c, ended.exitCode)) n.failedInit++;
  }
}

function countRegular(pod: Pod, byName: Map<string, ContainerStatus>, n: Counts): void {
  for (const c of pod.spec?.containers ?? []) {
    const s = byName.get(c.name);
    if (!s) n.unknown++;
    else if (s.state?.running) n.running++;
    else if (s.state?.terminated) {
      n.stopped++;
      if (!restarts(pod, c, s.state.terminated.exitCode)) n.stoppedNotRestartable++;
      if (s.state.terminated.exitCode === 0) n.succeeded++;
    } else if (s.state?.waiting) {
      // Waiting after having run (crash loop, back-off) counts as stopped, not as never started.
      if (s.lastState?.terminated) {
        n.stopped++;
        if (!restarts(pod, c, s.lastState.terminated.exitCode)) n.stoppedNotRestartable++;
      } else n.waiting++;
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
    stoppedNotRestartable: 0,
    succeeded: 0,
  };
  countInit(pod, byName, n);
  countRegular(pod, byName, n);

  if (n.failedInit > 0) return 'Failed';
  if (n.pendingInit > 0 || (n.pendingSidecars > 0 && !hasInitialized)) return 'Pending';
  if (n.waiting > 0) return 'Pending';
  if (n.running > 0 && n.unknown === 0) return 'Running';
  if (n.running === 0 && n.stopped > 0 && n.unknown === 0) {
    // Some container is on its way to run again.
    if (n.stopped !== n.stoppedNotRestartable) return 'Running';
    if (n.stopped === n.succeeded) return 'Succeeded';
    return 'Failed';
  }
  return 'Pending';
}
