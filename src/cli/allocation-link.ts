// The resources allocated to resized pods (admission/pod-allocations.ts), loaded from the kubelet's
// checkpoint in the root directory before anything is admitted, and the desired set as the workers
// and the pod cgroups read it: each pod with its allocation in place of its spec's resources (the
// kubelet's UpdatePodFromAllocation before SyncPod).
import { AllocationCheckpoint } from '../admission/allocation-checkpoint.js';
import { PodAllocations } from '../admission/pod-allocations.js';
import type { DesiredPodLookup, StaticPod } from '../config/types.js';
import type { Logger } from '../log/logger.js';

export async function linkAllocations(rootDir: string, logger: Logger): Promise<PodAllocations> {
  const allocations = new PodAllocations(new AllocationCheckpoint(rootDir, logger.with({ component: 'allocation' })));
  await allocations.restore();
  return allocations;
}

/** The desired set by UID and key, each pod as allocated. */
export function allocatedLookup(desired: DesiredPodLookup, allocations: PodAllocations): DesiredPodLookup {
  const allocated = (sp: StaticPod | undefined): StaticPod | undefined => {
    if (!sp) return undefined;
    const pod = allocations.allocatedPod(sp.pod);
    return pod === sp.pod ? sp : { ...sp, pod };
  };
  return {
    podByUid: (uid) => allocated(desired.podByUid(uid)),
    podByKey: (key) => allocated(desired.podByKey(key)),
  };
}
