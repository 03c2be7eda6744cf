// What a pod worker's state says about its pod, for the parts that read the workers (status, node
// shutdown, systemd): typed predicates, so that no state name is compared anywhere else (the kubelet's
// podWorkers.CouldHaveRunningContainers, IsPodTerminationRequested, ...).
import type { PodWorkerStateName } from './worker-context.js';

interface HasState {
  readonly state: PodWorkerStateName;
}

/** Wanted and not being stopped: waiting for its turn to start, or syncing. */
export function isActive(w: HasState): boolean {
  return w.state === 'WaitingToStart' || w.state === 'Syncing';
}

/** Being stopped, or stopped with its clean-up to come: nothing of it is restarted. */
export function isTerminating(w: HasState): boolean {
  return w.state === 'Terminating' || w.state === 'Terminated';
}

/** Something of the pod may still run: its worker has not seen it stopped yet. */
export function couldHaveRunningContainers(w: HasState): boolean {
  return isActive(w) || w.state === 'Terminating';
}

/** Nothing of the pod runs any more (its clean-up may follow), or its worker has ended. */
export function hasStopped(w: HasState): boolean {
  return !couldHaveRunningContainers(w);
}

/** Its worker has ended: the pod is gone from the workers. */
export function isDone(w: HasState): boolean {
  return w.state === 'Done';
}
