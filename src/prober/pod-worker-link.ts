// Connects the prober to the pod workers: what the workers see running is probed, and a failed
// liveness or startup probe wakes that pod's worker, whose sync reads the result and plans the kill.
import type { ProberManager } from '../prober/prober-manager.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import { ContainerState } from '../cri/cri-types.js';
import { newestByName } from '../kuberuntime/runtime-pods.js';

export function linkProber(prober: ProberManager, workers: PodWorkers, nodeIP: string): PodWorkerObserver {
  // The result itself is read by the pod's next sync (computePodActions); this only wakes it.
  prober.onFailure((e) => workers.wake(e.podUid));
  return {
    podSynced(pod, runtime) {
      const uid = pod.metadata.uid;
      // As the kubelet probes status.podIP: a pod-network pod's is its newest sandbox's (none yet: the
      // node's, corrected by the sync after the sandbox is made).
      prober.addPod(pod, pod.spec?.hostNetwork ? nodeIP : runtime?.sandboxes[0]?.ip || nodeIP);
      const newest = newestByName(runtime?.containers ?? []);
      for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
        const inst = newest.get(c.name);
        if (inst?.state === ContainerState.CONTAINER_RUNNING)
          prober.containerStarted(uid, c.name, inst.id, Math.floor(inst.startedAt / 1e6));
        else prober.containerStopped(uid, c.name);
      }
    },
    podTerminating: (uid) => prober.stopLivenessAndStartup(uid),
    podRemoved: (uid) => prober.removePod(uid),
  };
}
