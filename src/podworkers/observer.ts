// What pod workers tell the parts after them (prober, status): events, never calls back in.
import type { RuntimePod } from '../kuberuntime/runtime-pods.js';
import type { ContainerType } from './compute-actions.js';
import type { DefaultedPod } from '../k8s/pod.js';

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
  podSynced?(pod: DefaultedPod, runtime: RuntimePod | undefined, acted: boolean): void;
  /**
   * A wanted pod's worker was made (admitted, not an orphan): it has a status from then on, Pending
   * while it waits for a start slot, as the kubelet lists every pod its pod manager holds.
   */
  podAdded?(uid: string): void;
  /** The pod started terminating (manifest removed or replaced, orphan). */
  podTerminating?(uid: string): void;
  /** Everything of the pod has been removed. */
  podRemoved?(uid: string): void;
  /** Something an operator reads in `kubectl describe pod` happened. */
  podEvent?(e: PodEvent): void;
  /**
   * One step of the pod's worker finished, named as the kubelet labels its pod worker durations:
   * create (first sync), update (spec changed), sync, kill (terminating), terminated (clean-up).
   */
  podWorkerStep?(uid: string, operationType: string, durationMs: number): void;
  /** A container is about to be created and started. */
  containerStartAttempt?(uid: string, type: ContainerType): void;
  /** It started; `pullMs` when its image had to be pulled first, `pulledAtMs` when that pull ended. */
  containerStarted?(uid: string, type: ContainerType, pull?: { pullMs: number; pulledAtMs: number }): void;
  /** It did not start; `reason` is the waiting reason it leaves (ErrImagePull, CreateContainerError, ...). */
  containerStartFailed?(uid: string, type: ContainerType, reason: string): void;
  /** An in-place resize was applied (`error` undefined) or failed with `error`. */
  podResized?(uid: string, error?: string): void;
  /** A pod came back with the same UID while its previous run was still being stopped (kubelet_restarted_pods_total). */
  podRestarted?(uid: string): void;
}

/** Calls every observer; one that throws is logged by the caller and does not stop the others. */
export function notify(
  observers: readonly PodWorkerObserver[],
  call: (o: PodWorkerObserver) => void,
  onError: (err: unknown) => void,
): void {
  for (const o of observers) {
    try {
      call(o);
    } catch (err) {
      onError(err);
    }
  }
}
