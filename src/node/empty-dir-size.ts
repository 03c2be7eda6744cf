// The size of a medium: Memory emptyDir's tmpfs, as the kubelet gives it with SizeMemoryBackedVolumes
// (on by default, GA): node allocatable memory, cut to the pod's memory limit when it has one (a pod
// cannot use more than that anyway), cut to the volume's sizeLimit when that is smaller still. Without
// it the tmpfs would get the kernel's default of half the machine's memory, whatever the pod may use.
import type { Pod, Volume } from 'kubernetes-types/core/v1';
import { podMemoryLimitBytes } from '../k8s/pod-resource-totals.js';
import { parseQuantity } from '../k8s/quantity.js';
import { errorMessage } from '../util/error-message.js';
import { VolumeError } from './volume-errors.js';

/** Bytes for the tmpfs `size=` option (undefined: no usable size, the kernel's default). */
export function memoryBackedEmptyDirBytes(pod: Pod, v: Volume, nodeAllocatableMemoryBytes: number): number | undefined {
  let size = nodeAllocatableMemoryBytes;
  const podLimit = podMemoryLimitBytes(pod);
  if (podLimit !== undefined && podLimit > 0 && podLimit <= size) size = podLimit;
  const sizeLimit = sizeLimitBytes(v);
  if (sizeLimit !== undefined && sizeLimit > 0 && sizeLimit <= size) size = sizeLimit;
  // A zero size would be tmpfs' "no limit".
  return size > 0 ? size : undefined;
}

function sizeLimitBytes(v: Volume): number | undefined {
  const q = v.emptyDir?.sizeLimit;
  if (q === undefined) return undefined;
  try {
    return parseQuantity(q).value();
  } catch (err) {
    throw new VolumeError(
      `volume ${JSON.stringify(v.name)}: invalid sizeLimit ${JSON.stringify(q)}: ${errorMessage(err)}`,
    );
  }
}
