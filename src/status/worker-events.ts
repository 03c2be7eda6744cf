// Which pod-worker and probe events make a pod's status worth recomputing. Each only nudges the
// status manager; the recomputation runs in the background, so the worker never waits for it.
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { StatusManager } from './status-manager.js';

/**
 * To push into the pod workers' observers: every sync, start of termination and removal. A sync
 * that changed nothing hands over the runtime state it read, so the status is computed without
 * reading the runtime a second time (every periodic resync of an idle pod is such a sync).
 */
export function statusObserver(status: Pick<StatusManager, 'update'>): PodWorkerObserver {
  return {
    podSynced: (pod, runtime, acted) => status.update(pod.metadata.uid, acted ? undefined : { runtime }),
    podTerminating: (uid) => status.update(uid),
    podRemoved: (uid) => status.update(uid),
  };
}

/** A probe result that changed (ready/started flipped) changes the pod's status. */
export function onProbeResult(status: Pick<StatusManager, 'update'>): (e: { podUid: string; changed: boolean }) => void {
  return (e) => {
    if (e.changed) status.update(e.podUid);
  };
}
