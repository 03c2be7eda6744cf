// Everything the pod workers know of one pod UID, in one place (the kubelet's podSyncStatus): its
// worker, the pod it was last given, the request that stops it, a restart waiting for the stop, the
// last restart asked through the API, and who waits for it to have stopped. A record lives as long
// as its worker; dropping it forgets all of that at once.
import type { DefaultedPod } from '../k8s/pod.js';
import { hasStopped } from './pod-states.js';
import type { PodWorker } from './pod-worker.js';
import type { SlotMember } from './start-slots.js';
import type { TerminationRequest } from './termination-request.js';

export class PodRecord implements SlotMember {
  /** `<namespace>/<name>`. */
  readonly key: string;
  /** Set once, right after the record is made (the worker reads the record through its context). */
  worker!: PodWorker;
  /**
   * The pod of the last update: what the worker works with once its pod has left the desired set (it
   * is being stopped, as the kubelet's kill request carries the pod), or when there is no set to
   * read; undefined for a runtime pod found with no source that gives it.
   */
  given: DefaultedPod | undefined;
  /** Set once the pod is to stop; replaced only by a cancelled shutdown (`restart`). */
  termination: TerminationRequest | undefined;
  /** The pod given again under this UID while it stops: started anew once it has (the kubelet's restartRequested). */
  restartAs: DefaultedPod | undefined;
  /** The last restart of its containers asked through the API (a mirror's restartedAt). */
  restartRequest: string | undefined;
  /** It left the desired set while stopped for the node's shutdown: a cancel does not start it again. */
  leftSet = false;
  private stopWaiters: (() => void)[] = [];

  constructor(
    readonly uid: string,
    readonly namespace: string,
    readonly name: string,
    /** Its same-name slot (k8s/pod-slot.ts). */
    readonly slot: string,
    given: DefaultedPod | undefined,
  ) {
    this.key = `${namespace}/${name}`;
    this.given = given;
  }

  hasStopped(): boolean {
    return hasStopped(this.worker);
  }

  wake(): void {
    this.worker.wake();
  }

  /** Stopped for good (its manifest removed or replaced, an orphan, preempted): not for the node's shutdown, not to start again. */
  get removing(): boolean {
    return this.termination !== undefined && this.termination.reason !== 'node-shutdown' && !this.restartAs;
  }

  /** Resolves once nothing of the pod runs (or its worker has ended). */
  whenStopped(): Promise<void> {
    if (this.hasStopped()) return Promise.resolve();
    return new Promise<void>((resolve) => this.stopWaiters.push(resolve));
  }

  /** Nothing of it runs any more, or a stop for the node's shutdown was cancelled: every waiter goes on. */
  releaseStopWaiters(): void {
    for (const resolve of this.stopWaiters.splice(0)) resolve();
  }
}
