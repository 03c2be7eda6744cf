// The status of a pod refused at admission, as the kubelet's rejectPod sets it: phase Failed, the
// admission reason and message, the QoS class and the generation refused; no containers ever ran.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1';
import { qosClass } from '../k8s/qos.js';
import { observedGenerationOf } from '../k8s/pod-generation.js';

export function refusedPodStatus(pod: Pod, reason: string, message: string): PodStatus {
  const observedGeneration = observedGenerationOf(pod);
  return {
    ...(observedGeneration ? { observedGeneration } : {}),
    phase: 'Failed',
    reason,
    message,
    qosClass: qosClass(pod),
  };
}
