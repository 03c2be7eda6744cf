// The API pods' ConfigMaps, Secrets and tokens reach the pods that use them: a referenced object
// that changed syncs its pods again (a container whose env could not be built is created now; the
// volumes rewrite themselves), and an API pod's new labels or annotations (same UID) reach its
// downwardAPI files at once. Standalone there are no such objects.
import type { PodConfig } from '../config/pod-config/pod-config.js';
import type { Logger } from '../log/logger.js';
import type { PodObjects } from '../node/pod-objects.js';
import { volumeManagerFor } from '../node/volumes.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';

export function linkPodObjects(
  podObjects: PodObjects | undefined,
  d: { readonly workers: PodWorkers; readonly podConfig: PodConfig; readonly logger: Logger },
): void {
  if (!podObjects) return;
  podObjects.onChange((uids) => {
    for (const uid of uids) d.workers.wake(uid);
  });
  const volumes = volumeManagerFor(podObjects, d.logger);
  d.podConfig.subscribe((u) => {
    if (u.op === 'UPDATE' && u.previous.uid === u.pod.uid) volumes.podUpdated(u.pod.pod);
  });
}
