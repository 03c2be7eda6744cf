// Connects the prober to the pod workers: what the workers see running is probed, and a failed
// liveness or startup probe becomes a kill request to that pod's worker.
import type { ProberManager } from '../prober/prober-manager.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import { ContainerState } from '../runtime/cri-types.js';

export function linkProber(prober: ProberManager, workers: PodWorkers, nodeIP: string): PodWorkerObserver {
  prober.onFailure((e) => workers.containerUnhealthy(e.podUid, e.containerId, e.containerName, e.message, e.terminationGracePeriodSeconds));
  return {
    podSynced(pod, runtime) {
      const uid = pod.metadata.uid;
      prober.addPod(pod, nodeIP);
      const newest = new Map<string, NonNullable<typeof runtime>['containers'][number]>();
      for (const c of runtime?.containers ?? []) if (!newest.has(c.name)) newest.set(c.name, c);
      for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
        const inst = newest.get(c.name);
        if (inst?.state === ContainerState.CONTAINER_RUNNING) prober.containerStarted(uid, c.name, inst.id, Math.floor(inst.startedAt / 1e6));
        else prober.containerStopped(uid, c.name);
      }
    },
    podTerminating: (uid) => prober.stopLivenessAndStartup(uid),
    podRemoved: (uid) => prober.removePod(uid),
  };
}
