// Which pod-worker and probe events make a pod's status worth recomputing. Each only nudges the
// status manager; the recomputation runs in the background, so the worker never waits for it.
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { StatusManager } from './status-manager.js';

/**
 * To push into the pod workers' observers: a pod's arrival, every sync, start of termination and removal. The
 * status is computed from the pod cache, where the sync read its pod.
 */
export function statusObserver(status: Pick<StatusManager, 'update' | 'resizeApplied'>): PodWorkerObserver {
  return {
    podResized: (uid, error) => status.resizeApplied(uid, error),
    podAdded: (uid) => status.update(uid),
    podSynced: (pod) => status.update(pod.metadata.uid),
    podTerminating: (uid) => status.update(uid),
    podRemoved: (uid) => status.update(uid),
  };
}

/** A probe result that changed (ready/started flipped) changes the pod's status. */
export function onProbeResult(
  status: Pick<StatusManager, 'update'>,
): (e: { podUid: string; changed: boolean }) => void {
  return (e) => {
    if (e.changed) status.update(e.podUid);
  };
}
