// Pod generation (KEP-5067, PodObservedGenerationTracking, GA in 1.35): the API server counts the
// pod's spec changes in metadata.generation (1 at create, +1 on each spec change and on the first
// graceful delete); the kubelet writes the generation of the pod it acted on as
// status.observedGeneration and as the observedGeneration of each condition it sets, so a
// controller can tell that a change was seen. A static pod has none (its manifest's is not used):
// 0, which the API leaves out.
import type { Pod } from 'kubernetes-types/core/v1';

/** The generation the kubelet reports for this pod, or undefined where it writes none (0). */
export function observedGenerationOf(pod: Pick<Pod, 'metadata'>): number | undefined {
  const g = pod.metadata?.generation;
  return typeof g === 'number' && g > 0 ? g : undefined;
}
