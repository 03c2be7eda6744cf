// What pod workers tell the parts after them (prober, status): events, never calls back in.
import type { RuntimePod } from '../runtime/runtime-pods.js';
import type { DesiredPod } from './pod-runtime.js';

/** What `kubectl describe pod` shows under Events, with the kubelet's reasons and words. */
export interface PodEvent {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** The container it is about, if any (for the event's fieldPath). */
  readonly container?: string;
  readonly initContainer?: boolean;
}

export interface PodWorkerObserver {
  /**
   * After each sync of a running pod, with the runtime state that sync saw. `acted` says whether
   * the sync changed the runtime after reading it; if not, `runtime` is still the pod's state.
   */
  podSynced?(pod: DesiredPod, runtime: RuntimePod | undefined, acted: boolean): void;
  /** The pod started terminating (manifest removed or replaced, orphan). */
  podTerminating?(uid: string): void;
  /** Everything of the pod has been removed. */
  podRemoved?(uid: string): void;
  /** Something an operator reads in `kubectl describe pod` happened. */
  podEvent?(e: PodEvent): void;
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
