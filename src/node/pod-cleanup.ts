// Removing what the node keeps for a pod that is gone, in the order that cannot hurt the host:
// first the subPath binds come off, then the tmpfs volumes (found in mountinfo, so also those an
// earlier run of the agent mounted), then the pod directory goes, by a remove that refuses to
// cross into any mount that is still there.
import { objectVolumeWritesSettled } from './object-volumes.js';
import { podDir } from './pod-dirs.js';
import type { PodObjects } from './pod-objects.js';
import { unmountTmpfsUnder } from './tmpfs-volumes.js';
import { existingVolumeManager } from './volume-manager.js';
import { removeTreeOnOneMount } from './remove-tree.js';
import { cleanSubPathMounts } from './subpath-mounts.js';

/**
 * Removes <root-dir>/pods/<uid>. Throws UnsafePathComponentError for a uid that cannot name a
 * pod directory (none was ever made for it) and PodCleanupError when something is still mounted
 * or an I/O step failed: nothing was crossed, and calling again later finishes the job.
 */
export async function removePodDirs(rootDir: string, uid: string, podObjects?: PodObjects): Promise<void> {
  const dir = podDir(rootDir, uid);
  // No rewrite may write into a volume that is being taken away.
  if (podObjects) existingVolumeManager(podObjects)?.forgetPod(uid);
  await objectVolumeWritesSettled(dir);
  await cleanSubPathMounts(rootDir, uid);
  await unmountTmpfsUnder(dir);
  await removeTreeOnOneMount(dir);
}
