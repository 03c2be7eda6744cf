// What pod workers tell the parts after them (prober, status): events, never calls back in.
import type { RuntimePod } from '../runtime/runtime-pods.js';
import type { DesiredPod } from './pod-runtime.js';

export interface PodWorkerObserver {
  /** After each sync of a running pod, with the runtime state that sync saw. */
  podSynced?(pod: DesiredPod, runtime: RuntimePod | undefined): void;
  /** The pod started terminating (manifest removed or replaced, orphan). */
  podTerminating?(uid: string): void;
  /** Everything of the pod has been removed. */
  podRemoved?(uid: string): void;
}

/** Calls every observer; one that throws is logged by the caller and does not stop the others. */
export function notify(observers: readonly PodWorkerObserver[], call: (o: PodWorkerObserver) => void, onError: (err: unknown) => void): void {
  for (const o of observers) {
    try {
      call(o);
    } catch (err) {
      onError(err);
    }
  }
}
